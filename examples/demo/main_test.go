package main

import "testing"

// The README's first command, as a newcomer runs it: on moto as
// installed, with nothing but AWS_ENDPOINT_URL pointing infra at it.
func TestTheDemoRunsOnStockMoto(t *testing.T) {
	t.Chdir("../..")
	if code := run(); code != 0 {
		t.Fatalf("the demo exited %d", code)
	}
}

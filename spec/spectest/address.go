package spectest

import "github.com/infra-iac/infra/spec"

// Address parses an address written in a test. A malformed literal is the
// test's own mistake, so it panics; spec itself never does.
func Address(s string) spec.Address {
	a, err := spec.ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

package estate_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestTheReadmeShowsTheCode: every Go block of README.md is in one of the
// estate's sources as it is, so the page cannot drift from the fleets the
// other test applies.
func TestTheReadmeShowsTheCode(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, p := range []string{"contract/contract.go", "network/main.go", "dns/main.go", "app/main.go"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(b))
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md shows no Go block")
	}
	for _, b := range blocks {
		found := false
		for _, s := range sources {
			found = found || strings.Contains(s, b[1])
		}
		if !found {
			t.Errorf("README.md shows code that no source of the estate has; copy it from the source again:\n%s", b[1])
		}
	}
}

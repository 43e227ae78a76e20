// Package golden compares test output with files under testdata, for the
// tests of several packages: INFRA_UPDATE_GOLDEN=1 rewrites the files.
package golden

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Check compares got with testdata/name, in the calling test's package;
// with INFRA_UPDATE_GOLDEN=1 it writes got there instead.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("INFRA_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (INFRA_UPDATE_GOLDEN=1 writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what the code makes (INFRA_UPDATE_GOLDEN=1 rewrites it): %s", path, FirstDifference(string(want), got))
	}
}

// FirstDifference names the first line where got leaves want, with both.
func FirstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + a + "\n  got  " + b
		}
	}
	return ""
}

// Package testbin builds the infra command once per test binary, for tests
// that run it as a separate process, the way a shell or CI does.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string
	path string
	err  error
)

// Remove deletes the binary Infra built, if any. Call it from TestMain
// after m.Run: each is 150 MB, and left behind they filled the disk of a
// CI run.
func Remove() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// Infra returns the path of an infra binary built from this checkout.
func Infra(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		var root string
		if dir, err = os.MkdirTemp("", "infra-bin"); err != nil {
			return
		}
		var out []byte
		if out, err = exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output(); err != nil {
			err = fmt.Errorf("find the module root: %w", err)
			return
		}
		root = strings.TrimSpace(string(out))
		path = filepath.Join(dir, "infra")
		if out, berr := exec.Command("go", "build", "-o", path, filepath.Join(root, "cmd", "infra")).CombinedOutput(); berr != nil {
			err = fmt.Errorf("go build: %v\n%s", berr, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// FleetProgram writes files (a fleet program's Go sources) into a
// throwaway module that requires this checkout through a replace, as a
// user's module would, runs `go run . synth` there and returns what it
// printed.
func FleetProgram(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("find the module root: %v", err)
	}
	root := strings.TrimSpace(string(out))
	dir := t.TempDir()
	gomod := "module example.com/imported\n\ngo 1.26\n\nrequire github.com/infra-iac/infra v0.0.0-00010101000000-000000000000\n\nreplace github.com/infra-iac/infra => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum}
	for name, src := range files {
		all[name] = src
	}
	for name, src := range all {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", ".", "synth")
	cmd.Dir = dir
	// -mod=mod lets go add the requirements the replaced module brings;
	// the copied go.sum vouches for every one of them.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go run . synth: %v\n%s\n%s", err, stderr.String(), files["imported.go"])
	}
	return []byte(stdout.String())
}

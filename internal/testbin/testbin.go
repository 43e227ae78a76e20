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
	path string
	err  error
)

// Infra returns the path of an infra binary built from this checkout.
func Infra(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		var dir, root string
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

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Tools the tests run are Go modules at pinned versions, installed by the
// test itself (go install into a temporary GOBIN): CI needs nothing
// installed beforehand, and the Go build cache makes a second install take
// seconds.
const (
	actionlintModule = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"
	actModule        = "github.com/nektos/act@v0.2.89"
)

var (
	toolsOnce sync.Once
	toolsDir  string
	toolsErr  error
	toolMu    sync.Mutex
	installed = map[string]string{}
)

// tool installs module (path@version) and returns the binary's path.
func tool(t *testing.T, module string) string {
	t.Helper()
	toolsOnce.Do(func() { toolsDir, toolsErr = os.MkdirTemp("", "infra-action-tools-") })
	if toolsErr != nil {
		t.Fatal(toolsErr)
	}
	toolMu.Lock()
	defer toolMu.Unlock()
	if bin, ok := installed[module]; ok {
		return bin
	}
	cmd := exec.Command("go", "install", module)
	// Outside this module, so its go.mod neither pins nor records the tool.
	cmd.Dir = toolsDir
	cmd.Env = append(os.Environ(), "GOBIN="+toolsDir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s: %v\n%s", module, err, out)
	}
	path, _, _ := strings.Cut(module, "@")
	bin := filepath.Join(toolsDir, filepath.Base(path))
	installed[module] = bin
	return bin
}

// repoRoot is the module's root: this package is cmd/infra-action.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// copyFile copies src to dst, making dst's directory.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(b))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

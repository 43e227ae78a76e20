package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The scaffold's fleet program compiles against this checkout's SDK, and
// with every example's call uncommented it is a valid fleet: check passes.
// The SDK changing under the template fails here, not in a user's first
// minute.
func TestInitScaffoldCompilesAndChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fleet program")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	f := DefaultFactory()
	f.IO = Test(strings.NewReader(""), &out, &errOut)
	if code := RunWith(f, []string{"init", dir, "--name", "demo"}, nil); code != ExitOK {
		t.Fatalf("init: exit %d: %s", code, errOut.String())
	}
	main := filepath.Join(dir, "infra", "main.go")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	// A module that uses this checkout as the SDK, offline: every module
	// the SDK needs is in the cache already, since this test is built.
	gomod := "module example.com/demo\n\ngo 1.26\n\nrequire github.com/infra-iac/infra v0.0.0\n\nreplace github.com/infra-iac/infra => " + repo + "\n"
	write(t, filepath.Join(dir, "go.mod"), gomod)
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.sum"), string(sum))
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	goCmd("vet", "./infra")
	if got := goCmd("run", "./infra", "check"); !strings.Contains(got, "ok: fleet demo, 1 resource(s)") {
		t.Fatalf("the scaffold as written:\n%s", got)
	}

	// Every example enabled.
	var lines []string
	enabled := 0
	for _, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, "\t// ") && strings.Contains(l, "(") && strings.HasSuffix(strings.Fields(l)[1], ")") {
			l = "\t" + strings.TrimPrefix(l, "\t// ")
			enabled++
		}
		lines = append(lines, l)
	}
	if enabled != 7 {
		t.Fatalf("uncommented %d example calls, want 7", enabled)
	}
	write(t, main, strings.Join(lines, "\n"))
	goCmd("vet", "./infra")
	got := goCmd("run", "./infra", "check")
	if !strings.Contains(got, "ok: fleet demo, 15 resource(s), no problems") {
		t.Fatalf("the scaffold with every example:\n%s", got)
	}
	doc := goCmd("run", "./infra", "synth")
	for _, kind := range []string{"object-store", "s3-bucket", "queues", "secrets", "postgres", "iam", "image-registry", "compute",
		"security-group", "aws-instance", "scaleway-function-namespace", "scaleway-function", "scaleway-container-namespace", "scaleway-container"} {
		if !strings.Contains(doc, "/"+kind+"/") {
			t.Errorf("no example of kind %s", kind)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

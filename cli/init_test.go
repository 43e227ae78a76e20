package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/cli/workflows"
	"github.com/infra-iac/infra/internal/moto"
)

// initProject runs infra init in a new, empty directory with this
// checkout as the SDK (--sdk-replace) and returns the directory and the
// next steps init printed, one command each, without their comments.
func initProject(t *testing.T, name string) (string, []string) {
	t.Helper()
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	f := DefaultFactory()
	f.IO = Test(strings.NewReader(""), &out, &errOut)
	if code := RunWith(f, []string{"init", dir, "--name", name, "--sdk-replace", repo}, nil); code != ExitOK {
		t.Fatalf("init: exit %d: %s", code, errOut.String())
	}
	_, next, ok := strings.Cut(out.String(), "Next:\n")
	if !ok {
		t.Fatalf("init printed no next steps:\n%s", out.String())
	}
	var steps []string
	for _, l := range strings.Split(next, "\n") {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		cmd, _, _ := strings.Cut(l, "#")
		steps = append(steps, strings.TrimSpace(cmd))
	}
	return dir, steps
}

// shell runs one command line the way a user types it, in dir, with the
// environment of this test plus env: the real module proxy, no GOFLAGS
// of the test's making, so that a module missing from go.mod or go.sum
// fails here as it would for the user.
func shell(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	return string(b)
}

// infra init in an empty directory leaves a project where the printed next
// steps work, typed as printed: tidy fetches what the SDK needs, check
// passes, and plan reaches the cloud (moto here).
func TestInitNextStepsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fleet program")
	}
	srv := moto.Shared(t)
	dir, steps := initProject(t, "newcomer")
	want := []string{"cd " + dir, "go mod tidy", "go run ./infra check", "go run ./infra plan"}
	if strings.Join(steps, "\n") != strings.Join(want, "\n") {
		t.Fatalf("next steps %q, want %q", steps, want)
	}
	// One shell session, started elsewhere, as a user types them.
	got := shell(t, t.TempDir(), append(srv.Env(), "NO_COLOR=1"), "set -e\n"+strings.Join(steps, "\n"))
	for _, want := range []string{"ok: fleet newcomer, 1 resource(s)", "+ aws/object-store/newcomer-assets", "Plan: 1 to create"} {
		if !strings.Contains(got, want) {
			t.Errorf("the next steps printed no %q:\n%s", want, got)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after the next steps: %v", err)
		}
	}
}

// The go line init writes is the SDK's: a lower one would make go mod tidy
// rewrite it, a higher one would demand a Go the SDK does not.
func TestInitGoLineIsTheSDKs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\ngo "+sdkGoVersion+"\n") {
		t.Fatalf("go.mod has no line go %s:\n%s", sdkGoVersion, b)
	}
}

// The scaffold's fleet program compiles against this checkout's SDK, and
// with every example's call uncommented it is a valid fleet: check passes.
// The SDK changing under the template fails here, not in a user's first
// minute.
func TestInitScaffoldCompilesAndChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fleet program")
	}
	dir, _ := initProject(t, "demo")
	main := filepath.Join(dir, "infra", "main.go")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	shell(t, dir, nil, "go mod tidy")
	goCmd := func(args ...string) string {
		t.Helper()
		return shell(t, dir, nil, "go "+strings.Join(args, " "))
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
	if enabled != 8 {
		t.Fatalf("uncommented %d example calls, want 8", enabled)
	}
	write(t, main, strings.Join(lines, "\n"))
	goCmd("vet", "./infra")
	got := goCmd("run", "./infra", "check")
	if !strings.Contains(got, "ok: fleet demo, 19 resource(s), no problems") {
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

// The apply before merge is opt-in: init writes its workflow only with
// --pr-apply, as cli/workflows has it; the four others either way.
func TestInitWritesThePRApplyWorkflowOnlyWhenAsked(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--pr-apply"}, true}} {
		dir := t.TempDir()
		var out, errOut bytes.Buffer
		f := DefaultFactory()
		f.IO = Test(strings.NewReader(""), &out, &errOut)
		if code := RunWith(f, append([]string{"init", dir, "--name", "demo"}, c.args...), nil); code != ExitOK {
			t.Fatalf("init %v: exit %d: %s", c.args, code, errOut.String())
		}
		for _, n := range []string{"plan", "apply", "sweep", "drift"} {
			if _, err := os.Stat(filepath.Join(dir, ".github", "workflows", "infra-"+n+".yml")); err != nil {
				t.Errorf("init %v: %v", c.args, err)
			}
		}
		got, err := os.ReadFile(filepath.Join(dir, ".github", "workflows", "infra-pr-apply.yml"))
		if (err == nil) != c.want || strings.Contains(out.String(), "wrote .github/workflows/infra-pr-apply.yml") != c.want {
			t.Fatalf("init %v: infra-pr-apply.yml written: %v, want %v\n%s", c.args, err == nil, c.want, out.String())
		}
		if want, _ := workflows.Files.ReadFile("pr-apply.yml"); c.want && string(got) != string(want) {
			t.Errorf("infra-pr-apply.yml is not cli/workflows/pr-apply.yml")
		}
	}
}

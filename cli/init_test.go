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
	declarations := filepath.Join(dir, "infra", "declare", "declare.go")
	src, err := os.ReadFile(declarations)
	if err != nil {
		t.Fatal(err)
	}
	shell(t, dir, nil, "go mod tidy")
	goCmd := func(args ...string) string {
		t.Helper()
		return shell(t, dir, nil, "go "+strings.Join(args, " "))
	}
	goCmd("vet", "./...")
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
	write(t, declarations, strings.Join(lines, "\n"))
	goCmd("vet", "./...")
	// The database example's password comes from DB_PASSWORD: check warns
	// of it where it is unset, and has nothing to say where it is set.
	got := shell(t, dir, []string{"DB_PASSWORD="}, "go run ./infra check")
	if !strings.Contains(got, "DB_PASSWORD, which is not set") || !strings.Contains(got, "[env-unset]") || !strings.Contains(got, "0 error(s), 1 warning(s)") {
		t.Fatalf("the scaffold with every example, without DB_PASSWORD:\n%s", got)
	}
	got = shell(t, dir, []string{"DB_PASSWORD=example"}, "go run ./infra check")
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

// The scaffold builds with the commands anyone runs in a Go repository
// first. go build ./... with one main package among the packages writes a
// binary named after its directory, here over the directory infra/ itself:
// the fleet program is a main package and a library, so it writes none.
func TestInitScaffoldBuildsWithTheUsualCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fleet program")
	}
	dir, _ := initProject(t, "usual")
	shell(t, dir, nil, "go mod tidy")
	for _, line := range []string{"go build ./...", "go vet ./...", "go test ./..."} {
		shell(t, dir, nil, line)
	}
	if fi, err := os.Stat(filepath.Join(dir, "infra")); err != nil || !fi.IsDir() {
		t.Fatalf("after go build ./...: infra is not the fleet program's directory: %v", err)
	}
}

// runInitIn runs infra init DIR and returns its exit code, stdout and
// stderr.
func runInitIn(t *testing.T, dir string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := DefaultFactory()
	f.IO = Test(strings.NewReader(""), &out, &errOut)
	code := RunWith(f, []string{"init", dir, "--name", "demo"}, nil)
	return code, out.String(), errOut.String()
}

// A directory in no git repository becomes one, on branch main (the one
// infra-apply.yml applies), so that actionlint and the workflows find it;
// a directory inside a repository is left in it, with no repository nested
// in it; and with no git installed, init says so and writes the rest.
func TestInitRunsGitInitOnlyOutsideARepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	// No configuration of this machine's: init.defaultBranch is unset.
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	git := func(dir string, args ...string) string {
		t.Helper()
		b, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}

	fresh := filepath.Join(t.TempDir(), "shop")
	code, out, errOut := runInitIn(t, fresh)
	if code != ExitOK {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	if fi, err := os.Stat(filepath.Join(fresh, ".git")); err != nil || !fi.IsDir() {
		t.Fatalf("a fresh directory got no .git: %v\n%s", err, out)
	}
	if !strings.Contains(out, "\nran git init (branch main): ") {
		t.Errorf("init did not say it ran git init:\n%s", out)
	}
	if got := git(fresh, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("HEAD is %s, want refs/heads/main", got)
	}

	repo := t.TempDir()
	git(repo, "init", "-q")
	sub := filepath.Join(repo, "deploy")
	code, out, errOut = runInitIn(t, sub)
	if code != ExitOK {
		t.Fatalf("init inside a repository: exit %d: %s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(sub, ".git")); err == nil {
		t.Errorf("init inside a repository nested one in it")
	}
	if strings.Contains(out+errOut, "git init") {
		t.Errorf("init inside a repository mentions git init:\n%s%s", out, errOut)
	}
	if got, _ := filepath.EvalSymlinks(git(sub, "rev-parse", "--show-toplevel")); got != mustEval(t, repo) {
		t.Errorf("the project is in repository %s, want %s", got, repo)
	}

	t.Setenv("PATH", t.TempDir())
	nogit := filepath.Join(t.TempDir(), "nogit")
	code, out, errOut = runInitIn(t, nogit)
	if code != ExitOK {
		t.Fatalf("init with no git: exit %d: %s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(nogit, ".git")); err == nil {
		t.Errorf("init with no git made a .git")
	}
	if _, err := os.Stat(filepath.Join(nogit, "infra", "main.go")); err != nil {
		t.Errorf("init with no git: %v", err)
	}
	if n := strings.Count(errOut, "\n"); n != 1 || !strings.Contains(errOut, "git is not installed") {
		t.Errorf("init with no git said, on stderr:\n%s", errOut)
	}
}

func mustEval(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

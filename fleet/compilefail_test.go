package fleet_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestCompileFail builds small fleet modules with the real Go toolchain:
// each script's bad/ program must fail to compile with the compiler's own
// message, and its good/ twin, which differs from it in one line, must
// build. That the twins differ in exactly one line is checked too, so each
// case proves that line is the cause.
func TestCompileFail(t *testing.T) {
	testscript.Run(t, moduleParams(t, "testdata/compilefail"))
}

// TestTutorial runs docs/sdk.md's tutorial, from an empty module to check
// (plan needs credentials, so it stops there).
func TestTutorial(t *testing.T) {
	testscript.Run(t, moduleParams(t, "testdata/tutorial"))
}

// moduleParams runs the scripts in dir, each in a fresh module that
// requires this one through a replace, as a user's module would.
func moduleParams(t *testing.T, dir string) testscript.Params {
	if testing.Short() {
		t.Skip("builds Go modules")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The scripts run with the machine's own caches and proxy, so they
	// build offline from the module cache, and the same in CI.
	goEnv := map[string]string{}
	for _, k := range []string{"GOMODCACHE", "GOCACHE", "GOPROXY", "GOPATH", "GOTOOLCHAIN", "GONOSUMDB", "GOPRIVATE", "GOSUMDB"} {
		out, err := exec.Command(goBin, "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		goEnv[k] = strings.TrimSpace(string(out))
	}
	return testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			for k, v := range goEnv {
				env.Setenv(k, v)
			}
			env.Setenv("INFRA_ROOT", root)
			// -mod=mod lets go add the requirements the replaced module
			// brings; the copied go.sum vouches for every one of them.
			env.Setenv("GOFLAGS", "-mod=mod")
			env.Setenv("HOME", env.WorkDir)
			gomod := "module example.com/shop\n\ngo 1.26\n\n" +
				"require github.com/infra-iac/infra v0.0.0-00010101000000-000000000000\n\n" +
				"replace github.com/infra-iac/infra => " + root + "\n"
			if err := os.WriteFile(filepath.Join(env.WorkDir, "go.mod"), []byte(gomod), 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.WorkDir, "go.sum"), goSum, 0o644)
		},
	}
}

// TestCompileFailTwins checks that every case has a bad and a good program
// and that they differ in exactly one line.
func TestCompileFailTwins(t *testing.T) {
	scripts, err := filepath.Glob("testdata/compilefail/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) < 8 {
		t.Fatalf("found %d compile-fail cases, want at least 8", len(scripts))
	}
	for _, path := range scripts {
		a, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range a.Files {
			files[f.Name] = f.Data
		}
		bad, good := files["bad/main.go"], files["good/main.go"]
		if bad == nil || good == nil {
			t.Errorf("%s: want bad/main.go and good/main.go", path)
			continue
		}
		bl, gl := bytes.Split(bad, []byte("\n")), bytes.Split(good, []byte("\n"))
		if len(bl) != len(gl) {
			t.Errorf("%s: the twins have %d and %d lines; they must differ in one line only", path, len(bl), len(gl))
			continue
		}
		var diff []int
		for i := range bl {
			if !bytes.Equal(bl[i], gl[i]) {
				diff = append(diff, i+1)
			}
		}
		if len(diff) != 1 {
			t.Errorf("%s: the twins differ in lines %v; they must differ in exactly one", path, diff)
		}
		if !bytes.Contains(a.Comment, []byte("! exec go build")) {
			t.Errorf("%s: the script must expect the bad program to fail to build", path)
		}
	}
}

// TestTutorialMatchesTheDocs keeps the tutorial script and docs/sdk.md
// telling the same story: the script's program is the page's first two Go
// blocks (the declarations, then the main package), and what it expects
// synth to print is the page's first JSON block.
func TestTutorialMatchesTheDocs(t *testing.T) {
	page, err := os.ReadFile("../docs/sdk.md")
	if err != nil {
		t.Fatal(err)
	}
	a, err := txtar.ParseFile("testdata/tutorial/tutorial.txtar")
	if err != nil {
		t.Fatal(err)
	}
	goBlocks := strings.SplitN(string(page), "```go\n", 3)
	second := ""
	if len(goBlocks) == 3 {
		second = firstBlock("```go\n"+goBlocks[2], "go")
	}
	for file, block := range map[string]string{
		"infra/declare/declare.go": firstBlock(string(page), "go"),
		"infra/main.go":            second,
		"want.json":                firstBlock(string(page), "json"),
	} {
		var script []byte
		for _, f := range a.Files {
			if f.Name == file {
				script = f.Data
			}
		}
		if block == "" || string(script) != block {
			t.Errorf("docs/sdk.md's block for %s and the tutorial script's differ:\n%s\n---\n%s", file, block, script)
		}
	}
}

func firstBlock(page, lang string) string {
	start := strings.Index(page, "```"+lang+"\n")
	if start < 0 {
		return ""
	}
	rest := page[start+len("```"+lang+"\n"):]
	end := strings.Index(rest, "```\n")
	if end < 0 {
		return ""
	}
	return rest[:end]
}

// Package layering holds the test that keeps the dependency direction:
// only providers/ imports cloud SDKs, spec does no I/O and imports nothing
// of the project, no lower layer imports a higher one, and no product code
// depends on examples/.
package layering

import (
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	// EmbedFiles are the files the package's //go:embed lines match,
	// relative to its directory.
	EmbedFiles []string
}

func list(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "github.com/infra-iac/infra/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

const mod = "github.com/infra-iac/infra/"

// cloudSDKs are the modules only providers/ may import directly.
var cloudSDKs = []string{"github.com/aws/aws-sdk-go-v2", "github.com/scaleway/scaleway-sdk-go", "cloud.google.com/go", "google.golang.org/api", "github.com/fsouza/fake-gcs-server"}

func TestOnlyProvidersImportCloudSDKs(t *testing.T) {
	for _, p := range list(t) {
		rel := strings.TrimPrefix(p.ImportPath, mod)
		if strings.HasPrefix(rel, "providers/") || strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "bench") {
			continue // drivers; test harnesses and the benchmark drive the emulators
		}
		for _, imp := range p.Imports {
			for _, sdk := range cloudSDKs {
				if strings.HasPrefix(imp, sdk) {
					t.Errorf("%s imports %s: only providers/ may import a cloud SDK", rel, imp)
				}
			}
		}
	}
}

// below lists, for a layer, the project packages it must never depend on.
var below = map[string][]string{
	"spec":       {"fleet", "engine", "state", "providers", "ownership", "sweep", "executor", "cli", "operations", "render"},
	"ownership":  {"engine", "state", "providers", "sweep", "executor", "cli", "fleet", "operations", "render"},
	"providers":  {"engine", "sweep", "executor", "cli", "fleet", "ownership", "operations", "render"},
	"state":      {"engine", "providers", "sweep", "executor", "cli", "fleet", "operations", "render"},
	"engine":     {"sweep", "executor", "cli", "fleet", "operations", "render"},
	"sweep":      {"engine", "executor", "cli", "fleet", "operations", "render"},
	"render":     {"executor", "cli", "fleet", "operations"},
	"operations": {"executor", "cli", "fleet", "render"},
	"executor":   {"cli", "fleet"},
}

// frontEnds are the packages people and machines drive infra through. They
// reach what is under them only through the operations and the renderers;
// spec is the document they read, and a front end may use another's
// protocol (the command line invokes the executor, the Action reuses the
// command line's escaping).
var frontEnds = []string{"cli", "executor", "cmd"}

var frontEndMay = []string{"operations", "render", "spec", "cli", "executor", "fleet"}

func TestFrontEndsGoThroughOperations(t *testing.T) {
	for _, p := range list(t) {
		rel := strings.TrimPrefix(p.ImportPath, mod)
		layer, _, _ := strings.Cut(rel, "/")
		if !slices.Contains(frontEnds, layer) || strings.HasSuffix(rel, "test") {
			continue // executor/executortest is a harness that drives the emulators
		}
		for _, imp := range p.Imports {
			r, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			il, _, _ := strings.Cut(r, "/")
			if !slices.Contains(frontEndMay, il) {
				t.Errorf("%s imports %s: a front end reaches %s only through operations (or render, to print)", rel, r, il)
			}
		}
	}
}

// Only the operations package puts the engine, the state and the clouds
// together; everything above it asks it to.
func TestOnlyOperationsJoinsEngineStateAndProviders(t *testing.T) {
	for _, p := range list(t) {
		rel := strings.TrimPrefix(p.ImportPath, mod)
		if rel == "operations" || strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "bench") {
			continue // test harnesses and the benchmark wire the emulators themselves
		}
		has := map[string]bool{}
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, mod); ok {
				l, _, _ := strings.Cut(r, "/")
				has[l] = true
			}
		}
		if has["engine"] && has["state"] && has["providers"] {
			t.Errorf("%s imports engine, state and providers together: only operations may", rel)
		}
	}
}

func TestDependenciesPointDown(t *testing.T) {
	for _, p := range list(t) {
		rel := strings.TrimPrefix(p.ImportPath, mod)
		layer, _, _ := strings.Cut(rel, "/")
		forbidden := below[layer]
		for _, d := range p.Deps {
			if !strings.HasPrefix(d, mod) {
				continue
			}
			dl, _, _ := strings.Cut(strings.TrimPrefix(d, mod), "/")
			for _, f := range forbidden {
				if dl == f {
					t.Errorf("%s depends on %s: %s must not depend on %s", rel, strings.TrimPrefix(d, mod), layer, f)
				}
			}
		}
	}
}

// spec does no I/O: it imports no package that reaches the network, the
// file system or a process.
func TestSpecDoesNoIO(t *testing.T) {
	banned := []string{"os", "net", "net/http", "os/exec", "io/ioutil", "syscall"}
	for _, p := range list(t) {
		rel := strings.TrimPrefix(p.ImportPath, mod)
		if rel != "spec" {
			continue
		}
		for _, imp := range p.Imports {
			for _, b := range banned {
				if imp == b {
					t.Errorf("spec imports %s", imp)
				}
			}
		}
	}
}

// examples/ is only examples: no package outside it depends on one inside
// it, directly or not, and none embeds a file from it. Go embeds only files
// in a package's own directory tree, so only a package at the module's root
// could embed from examples/ without importing an examples package. Tests
// (not listed here) may read examples.
func TestNothingDependsOnExamples(t *testing.T) {
	inExamples := func(rel string) bool { return rel == "examples" || strings.HasPrefix(rel, "examples/") }
	for _, p := range list(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, strings.TrimSuffix(mod, "/")), "/")
		if inExamples(rel) {
			continue
		}
		for _, d := range p.Deps {
			if dr, ok := strings.CutPrefix(d, mod); ok && inExamples(dr) {
				t.Errorf("%s depends on %s: product code must not depend on examples/", p.ImportPath, d)
			}
		}
		for _, f := range p.EmbedFiles {
			if file := path.Join(rel, f); inExamples(file) {
				t.Errorf("%s embeds %s: product code must not embed from examples/", p.ImportPath, file)
			}
		}
	}
}

package gcpfake

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModuleDir: the google.golang.org/api this binary links is found
// without the go command, and go list agrees. A test binary's build info
// lists no dependencies (golang/go#76926): should that change, it must
// agree too.
func TestModuleDir(t *testing.T) {
	dir, ok := dirFromLinkedSource()
	if !ok {
		t.Fatal("google.golang.org/api not found from the linked source path")
	}
	if _, err := os.Stat(filepath.Join(dir, "secretmanager", "v1", "secretmanager-api.json")); err != nil {
		t.Fatal(err)
	}
	listed, err := dirFromGoList()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Clean(listed) != filepath.Clean(dir) {
		t.Fatalf("linked source says %s, go list says %s", dir, listed)
	}
	if fromInfo, ok := dirFromBuildInfo(); ok && fromInfo != dir {
		t.Fatalf("build info says %s, linked source %s", fromInfo, dir)
	}
	if got, err := apiModuleDir(); err != nil || got != dir {
		t.Fatalf("apiModuleDir: %s, %v", got, err)
	}
}

func TestLoadDoc(t *testing.T) {
	d, err := LoadDoc("secretmanager", "v1")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := LoadDoc("secretmanager", "v1")
	if again != d {
		t.Fatal("the document was parsed twice")
	}
	m := d.Method("secretmanager.projects.secrets.addVersion")
	if m == nil || m.HTTPMethod != "POST" || m.FlatPath != "v1/projects/{projectsId}/secrets/{secretsId}:addVersion" ||
		m.Path != "v1/{+parent}:addVersion" || m.Request.Ref != "AddSecretVersionRequest" || m.Response.Ref != "SecretVersion" || m.Doc() != d {
		t.Fatalf("addVersion: %+v", m)
	}
	if p := m.Parameters["parent"]; p.Location != "path" || !p.Required || p.Pattern != "^projects/[^/]+/secrets/[^/]+$" {
		t.Fatalf("parent: %+v", p)
	}
	list := d.Method("secretmanager.projects.secrets.list")
	if p := list.Parameters["pageSize"]; p.Location != "query" || p.Type != "integer" || p.Format != "int32" {
		t.Fatalf("pageSize: %+v", p)
	}
	for _, name := range []string{"alt", "$.xgafv", "fields", "prettyPrint"} {
		if d.Parameters[name] == nil || d.Parameters[name].Location != "query" {
			t.Errorf("system parameter %s: %+v", name, d.Parameters[name])
		}
	}
	if s := d.Schemas["SecretVersion"].Properties["state"]; len(s.Enum) != 4 || !s.ReadOnly {
		t.Fatalf("SecretVersion.state: %+v", s)
	}
	if _, err := LoadDoc("nosuchapi", "v9"); err == nil {
		t.Fatal("a missing document loaded")
	}
}

func TestEscapeModulePath(t *testing.T) {
	if got := escapeModulePath("github.com/BurntSushi/toml"); got != "github.com/!burnt!sushi/toml" {
		t.Fatal(got)
	}
}

package scaleway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccountIsTheConfiguredProjectOrTheKeysDefault: SCW_DEFAULT_PROJECT_ID
// wins; without it, the API key's default project; a project the key
// cannot read is an error, never a pass.
func TestAccountIsTheConfiguredProjectOrTheKeysDefault(t *testing.T) {
	e := newEnv(t, "shop")
	got, err := e.backend.Account(t.Context())
	if err != nil || got != testProject {
		t.Fatalf("configured project: %q, %v", got, err)
	}

	t.Setenv("SCW_DEFAULT_PROJECT_ID", "")
	os.Unsetenv("SCW_DEFAULT_PROJECT_ID")
	b, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Account(t.Context()); err != nil || got != testProject {
		t.Fatalf("the key's default project: %q, %v", got, err)
	}

	t.Setenv("SCW_DEFAULT_PROJECT_ID", "33333333-4444-5555-6666-777777777777")
	b, err = New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Account(t.Context()); err == nil || !strings.Contains(err.Error(), "read project 33333333") {
		t.Fatalf("an unreadable project: %v", err)
	}
}

// TestConfigFileProfile: the active profile of the config file is used
// when the environment says nothing.
func TestConfigFileProfile(t *testing.T) {
	e := newEnv(t, "shop")
	for _, k := range []string{"SCW_ACCESS_KEY", "SCW_SECRET_KEY", "SCW_DEFAULT_PROJECT_ID", "SCW_DEFAULT_REGION", "SCW_API_URL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	conf := "access_key: " + testAccess + "\nsecret_key: " + testSecret + "\ndefault_project_id: " + testProject +
		"\ndefault_region: fr-par\napi_url: " + e.fake.URL + "\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCW_CONFIG_PATH", path)
	b, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Account(t.Context()); err != nil || got != testProject || b.Region() != "fr-par" {
		t.Fatalf("from the config file: %q in %q, %v", got, b.Region(), err)
	}
}

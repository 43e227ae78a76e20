package executor

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/infra-iac/infra/internal/gcpfake"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// The GCP backend is built from the credentials secret's key and project,
// as Scaleway's is: it reaches the project with that key. A secret without
// the key names what is missing, and no message shows the key.
func TestGCPBackendFromTheCredentialsSecret(t *testing.T) {
	fake := gcpfake.New(t, gcpfake.Options{Projects: []string{"shop-prod-1"}})
	t.Setenv("INFRA_GCP_API_URL", fake.URL())
	key, err := os.ReadFile(fake.ServiceAccountKey(t, "shop-prod-1", "executor@shop-prod-1.iam.gserviceaccount.com"))
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := json.Marshal(map[string]string{GCPCredentialsJSON: string(key), "GOOGLE_CLOUD_PROJECT": "shop-prod-1"})
	c, err := parseCredentials("infra/creds", spec.NewSensitive(string(secret)))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	b, why, err := gcpBackend(c, operations.CallLogOptions(&log, "debug", nil))
	if err != nil || b == nil || why != "" {
		t.Fatalf("backend %v, reason %q, err %v", b, why, err)
	}
	if got, err := b.Account(context.Background()); err != nil || got != "shop-prod-1" {
		t.Fatalf("Account = %q, %v", got, err)
	}
	// The function's INFRA_LOG reaches the GCP backend's calls too.
	if want := `call: provider=gcp service=cloudresourcemanager operation="GET /v3/projects/shop-prod-1"`; !strings.Contains(log.String(), want) {
		t.Errorf("the call log %q lacks %s", log.String(), want)
	}
	partial, _ := parseCredentials("infra/creds", spec.NewSensitive(`{"GOOGLE_CLOUD_PROJECT": "shop-prod-1"}`))
	if b, why, err = gcpBackend(partial, operations.BackendOptions{}); err != nil || b != nil || !strings.Contains(why, GCPCredentialsJSON) {
		t.Fatalf("partial: backend %v, reason %q, err %v", b, why, err)
	}
	if _, why, _ = gcpBackend(nil, operations.BackendOptions{}); !strings.Contains(why, EnvCredentialsSecret) {
		t.Fatalf("no secret: %q", why)
	}
	if strings.Contains(c.String(), "PRIVATE KEY") {
		t.Fatal("the credentials print the key")
	}
}

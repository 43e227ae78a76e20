package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// The Scaleway backend is built from the credentials secret, never from the
// function's environment; a secret without the keys names what is missing.
func TestScalewayBackendFromTheCredentialsSecret(t *testing.T) {
	c, err := parseCredentials("infra/creds", spec.NewSensitive(`{"SCW_ACCESS_KEY": "SCWXXXXXXXXXXXXXXXXX",
	  "SCW_SECRET_KEY": "11111111-1111-1111-1111-111111111111", "SCW_DEFAULT_PROJECT_ID": "11111111-2222-3333-4444-555555555555",
	  "SCW_DEFAULT_REGION": "fr-par"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, why, err := scalewayBackend(context.Background(), c, operations.BackendOptions{})
	if err != nil || b == nil || why != "" {
		t.Fatalf("backend %v, reason %q, err %v", b, why, err)
	}
	if b.Provider() != spec.Scaleway {
		t.Fatalf("provider %s", b.Provider())
	}
	partial, _ := parseCredentials("infra/creds", spec.NewSensitive(`{"SCW_ACCESS_KEY": "SCWXXXXXXXXXXXXXXXXX"}`))
	b, why, err = scalewayBackend(context.Background(), partial, operations.BackendOptions{})
	if err != nil || b != nil || !strings.Contains(why, "SCW_SECRET_KEY") {
		t.Fatalf("partial: backend %v, reason %q, err %v", b, why, err)
	}
}

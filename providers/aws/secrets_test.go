package aws

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestSecretsConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	d, _ := b.Driver(spec.Secrets)
	d.(*secrets).pageSize = 2
	conformance(t, b, srv, drivertest.Case{
		Kind:   spec.Secrets,
		Create: map[string]any{"value": spec.NewSensitive("first value"), "description": "made by the suite"},
		Updates: []map[string]any{
			{"description": "changed"},
			{"value": spec.NewSensitive("second value")},
			// Not "": moto keeps the old description when sent an empty one.
			{"description": "third description", "value": spec.NewSensitive("third value")},
		},
		OddNames: []string{"path/to/secret", "with_+=.@-all", strings.Repeat("s", 512)},
		PageSize: 2,
	})
}

// A create retried with the same fleet and name (a crash after the request
// left) finds the first secret instead of failing or adding a version.
func TestSecretCreateIsIdempotent(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.Secrets)
	tg := providers.Target{Name: "db-password", Region: testRegion, Owner: "shop",
		Fields: map[string]any{"value": spec.NewSensitive("hunter2")}}
	first, err := d.Create(t.Context(), tg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.Create(t.Context(), tg)
	if err != nil {
		t.Fatalf("retried create: %v", err)
	}
	if first.Attributes["version"] == "" || again.Attributes["version"] != first.Attributes["version"] {
		t.Errorf("retried create: version %q, first %q", again.Attributes["version"], first.Attributes["version"])
	}
	c := d.(*secrets).clients.get(testRegion)
	vs, err := c.ListSecretVersionIds(t.Context(), &secretsmanager.ListSecretVersionIdsInput{SecretId: aws.String(tg.Name)})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Versions) != 1 {
		t.Errorf("%d versions after a retried create, want 1", len(vs.Versions))
	}
	if got := aws.ToString(vs.Versions[0].VersionId); got != createToken("shop", "db-password") {
		t.Errorf("version id %q is not the create token", got)
	}
	// Another fleet's create of the same name is not a retry.
	other := tg
	other.Owner = "other"
	if _, err := d.Create(t.Context(), other); b.ErrorCode(err) != providers.AlreadyExists {
		t.Errorf("another fleet's create: %v (code %s), want already exists", err, b.ErrorCode(err))
	}
}

// A secret scheduled for deletion (by someone else, with a recovery
// window) reads as absent and is not listed.
func TestSecretScheduledForDeletionIsAbsent(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.Secrets)
	tg := providers.Target{Name: "going", Region: testRegion, Owner: "shop", Fields: map[string]any{"value": spec.NewSensitive("x")}}
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	c := d.(*secrets).clients.get(testRegion)
	if _, err := c.DeleteSecret(t.Context(), &secretsmanager.DeleteSecretInput{SecretId: aws.String("going"), RecoveryWindowInDays: aws.Int64(7)}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(t.Context(), testRegion, "going"); b.ErrorCode(err) != providers.NotFound {
		t.Errorf("read: %v (code %s), want not found", err, b.ErrorCode(err))
	}
	rs, err := d.List(t.Context(), testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 0 {
		t.Errorf("listed %v", drivertest.Names(rs))
	}
}

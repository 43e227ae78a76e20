package fleet_test

import (
	"reflect"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/scaleway"
	"github.com/infra-iac/infra/spec"
)

// A slot's secret export fills a field that takes a secret, on either
// cloud, and so does a string export whose secrecy is secret: the field
// reads the provider's secret by its reference.
func TestASlotsSecretExportFillsASecretField(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	scw := scaleway.Use(f, scwProject, scaleway.Paris)
	jobs := fleet.Use(f, "jobs", jobQueue)
	fleet.Wire(f, jobs, "jobs", "main")
	x := jobs.Exports()
	caches := fleet.Use(f, "cache", cache)
	fleet.Wire(f, caches, "cache", "main")
	cloud.Postgres("replica", "shop", fleet.SecretFrom[aws.Secrets](x.Token), fleet.PostgresSpec{})
	own := scw.Secrets("own", fleet.FromEnv("OWN"), fleet.SecretsSpec{})
	cns := scw.ContainerNamespace("apps", scaleway.ContainerNamespaceSpec{})
	scw.Container("web", cns, fleet.Lit("nginx:1.27"), scaleway.ContainerSpec{
		SecretEnv: map[string]fleet.SecretField[scaleway.Secrets]{"PW": fleet.SecretFrom[scaleway.Secrets](x.Token), "OWN": own,
			"DSN": fleet.SecretFrom[scaleway.Secrets](caches.Exports().DSN)},
	})
	doc, diags := synth(t, f)
	noErrors(t, diags)

	imported := map[string]any{"use": "jobs", "export": "token"}
	if got := specOf(t, doc, "aws/postgres/replica")["masterPasswordSecret"]; !reflect.DeepEqual(got, imported) {
		t.Errorf("masterPasswordSecret = %v, want %v", got, imported)
	}
	wantEnv := map[string]any{"PW": imported, "OWN": map[string]any{"ref": "scaleway/secrets/own"}, "DSN": map[string]any{"use": "cache", "export": "dsn"}}
	if got := specOf(t, doc, "scaleway/scaleway-container/web")["secretEnv"]; !reflect.DeepEqual(got, wantEnv) {
		t.Errorf("secretEnv = %v, want %v", got, wantEnv)
	}

	// spec reads both as a secret export standing in for a secret.
	m, diags := spec.Compile(doc)
	noErrors(t, diags)
	pg, _ := m.Lookup(spec.Address{Provider: spec.AWS, Kind: spec.Postgres, Name: "replica"})
	if im, ok := pg.Fields["masterPasswordSecret"].(spec.Import); !ok || !im.SecretField || im.Slot != "jobs" || im.Export != "token" {
		t.Errorf("spec reads masterPasswordSecret as %#v", pg.Fields["masterPasswordSecret"])
	}
}

// What is not a secret export read through a slot is refused in a secret
// field by Synth; a handle of another kind or cloud does not compile
// there (testdata/compilefail/ref_of_another_kind_in_secret_field.txtar).
func TestASecretFieldRefusesWhatIsNoSecret(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	scw := scaleway.Use(f, scwProject, scaleway.Paris)
	pw := cloud.Secrets("pw", fleet.FromEnv("PW"), fleet.SecretsSpec{})
	spw := scw.Secrets("spw", fleet.FromEnv("SPW"), fleet.SecretsSpec{})
	cloud.Postgres("bound", "shop", fleet.SecretFrom[aws.Secrets](aws.SecretRefOf(pw)), fleet.PostgresSpec{})
	cloud.Postgres("definition", "shop", fleet.SecretFrom[aws.Secrets](jobQueue.Exports().Token), fleet.PostgresSpec{})
	cloud.Postgres("unset", "shop", fleet.SecretFrom[aws.Secrets](fleet.SecretExport{}), fleet.PostgresSpec{})
	cloud.Postgres("zero", "shop", fleet.Ref[aws.Secrets]{}, fleet.PostgresSpec{})
	cloud.Postgres("none", "shop", nil, fleet.PostgresSpec{})
	cns := scw.ContainerNamespace("apps", scaleway.ContainerNamespaceSpec{})
	scw.Container("web", cns, fleet.Lit("nginx:1.27"), scaleway.ContainerSpec{
		SecretEnv: map[string]fleet.SecretField[scaleway.Secrets]{"NIL": nil, "BOUND": fleet.SecretFrom[scaleway.Secrets](scaleway.SecretRefOf(spw))},
	})

	_, diags := f.Synth()
	wantRow(t, diags, "aws/postgres/bound", `field "masterPasswordSecret"`, "aws.SecretRefOf(aws/secrets/pw) binds an export of fleet.Provide")
	wantRow(t, diags, "aws/postgres/definition", `field "masterPasswordSecret"`, "the interface's definition, not a value")
	wantRow(t, diags, "aws/postgres/unset", `field "masterPasswordSecret"`, "an unset fleet.SecretExport")
	wantRow(t, diags, "aws/postgres/zero", `field "masterPasswordSecret"`, "a zero fleet.Ref")
	wantRow(t, diags, "aws/postgres/none", "masterPasswordSecret")
	wantRow(t, diags, "scaleway/scaleway-container/web", `field "secretEnv": "NIL": nil`)
	wantRow(t, diags, "scaleway/scaleway-container/web", `field "secretEnv": "BOUND": scaleway.SecretRefOf(scaleway/secrets/spw) binds`)
}

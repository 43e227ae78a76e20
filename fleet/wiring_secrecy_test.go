package fleet_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

// cacheExports is an interface with a string export whose secrecy is
// secret (DSN) and a public one a provider may raise (URL).
type cacheExports struct {
	DSN fleet.SecretExport
	URL fleet.Output[string]
}

var cache = fleet.DefineInterface("cache", cacheExports{
	DSN: fleet.NewSecretStringExport("dsn", fleet.AfterApply, fleet.AccountLocal),
	URL: fleet.NewExport[string]("url", fleet.AtPlan|fleet.AfterApply, fleet.Global|fleet.AccountLocal),
})

// cacheProvider binds dsn to a secret and raises url to another.
func cacheProvider() *fleet.Fleet {
	f := fleet.New("cache")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	dsn := cloud.Secrets("cache-dsn", fleet.FromEnv("CACHE_DSN"), fleet.SecretsSpec{})
	url := cloud.Secrets("cache-url", fleet.FromEnv("CACHE_URL"), fleet.SecretsSpec{})
	fleet.Expose(f, fleet.Provide(f, "main", cache, cacheExports{
		DSN: aws.SecretRefOf(dsn),
		URL: fleet.Raise(aws.SecretRefOf(url)),
	}))
	return f
}

func TestSecretStringExportAndRaise(t *testing.T) {
	doc, diags := synth(t, cacheProvider())
	noErrors(t, diags) // Synth runs spec.Validate

	in := doc.Interfaces["cache"]
	wantDocs := map[string]spec.ExportDoc{
		"dsn": {Type: "string", Lifecycle: spec.Tags{"apply"}, Locality: spec.Tags{"account"}, Secrecy: "secret"},
		"url": {Type: "string", Lifecycle: spec.Tags{"plan", "apply"}, Locality: spec.Tags{"global", "account"}},
	}
	if !reflect.DeepEqual(in.Exports, wantDocs) {
		t.Errorf("interfaces.cache.exports = %+v\nwant %+v", in.Exports, wantDocs)
	}
	// What synth prints, as the document reads.
	b, _ := json.Marshal(in.Exports["dsn"])
	if got := string(b); got != `{"type":"string","lifecycle":"apply","locality":"account","secrecy":"secret"}` {
		t.Errorf("dsn is written %s", got)
	}
	wantExports := map[string]any{
		"dsn": map[string]any{"secret": "aws/secrets/cache-dsn"},
		"url": map[string]any{"secret": "aws/secrets/cache-url"},
	}
	if got := doc.Provides["main"].Exports; !reflect.DeepEqual(got, wantExports) {
		t.Errorf("provides.main.exports = %v", got)
	}

	// spec reads dsn as secret and url as public, raised by its binding;
	// the hash is spec's.
	m, diags := spec.Compile(doc)
	noErrors(t, diags)
	if got := m.Interfaces["cache"]; got.Hash != cache.Hash() || !got.Exports["dsn"].Secret || got.Exports["url"].Secret {
		t.Errorf("spec reads interface cache as %+v, the SDK hashed it %s", got, cache.Hash())
	}
	for _, e := range []string{"dsn", "url"} {
		if b := m.Provides["main"].Bindings[e]; !b.Secret {
			t.Errorf("binding %s = %+v, want secret", e, b)
		}
	}
}

func TestASecretStringExportIsReadWhereASecretIsTaken(t *testing.T) {
	f := fleet.New("web")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	slot := fleet.Use(f, "cache", cache)
	fleet.Wire(f, slot, "cache", "main")
	x := slot.Exports()
	cloud.Secrets("web-cache", fleet.Composed("{}?app=web", x.DSN), fleet.SecretsSpec{})
	if fmt.Sprint(x.DSN) != spec.Redacted {
		t.Errorf("a secret string export prints %v", x.DSN)
	}
	doc, diags := synth(t, f)
	noErrors(t, diags)
	want := map[string]any{"composed": map[string]any{"format": "{0}?app=web", "args": []any{map[string]any{"use": "cache", "export": "dsn"}}}}
	if got := specOf(t, doc, "aws/secrets/web-cache")["value"]; !reflect.DeepEqual(got, want) {
		t.Errorf("value = %v", got)
	}
	// A requirement on it does not compile (SecretExport is no Output):
	// fleet.Equals(cache.Exports().DSN, "x").
}

func TestARaisedBindingIsNoValue(t *testing.T) {
	f := fleet.New("cache")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	pw := cloud.Secrets("pw", fleet.FromEnv("PW"), fleet.SecretsSpec{})
	raised := fleet.Raise(aws.SecretRefOf(pw))
	if fmt.Sprint(raised) != spec.Redacted {
		t.Errorf("a raised binding prints %v", raised)
	}
	cloud.Compute("api", fleet.Lit("nginx"), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{Env: fleet.Env{"URL": raised}})
	cloud.Compute("api2", fleet.Format("{}/x", raised), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{})
	cloud.Secrets("s", fleet.Composed("{}", raised), fleet.SecretsSpec{})
	slot := fleet.Use(f, "other", cache)
	fleet.Wire(f, slot, "elsewhere", "main")
	fleet.Provide(f, "bad", cache, cacheExports{
		DSN: aws.SecretRefOf(pw),
		URL: fleet.Raise(slot.Exports().DSN),
	})
	fleet.Provide(f, "zero", cache, cacheExports{
		DSN: aws.SecretRefOf(pw),
		URL: fleet.Raise(aws.SecretRefOf(fleet.Ref[aws.Secrets]{})),
	})
	_, diags := f.Synth()
	for _, at := range []string{"aws/compute/api", "aws/compute/api2", "aws/secrets/s"} {
		wantRow(t, diags, at, "fleet.Raise(aws/secrets/pw) binds an export of fleet.Provide, and is not a value")
	}
	wantRow(t, diags, "provides.bad.exports.url", "fleet.Raise takes one of this fleet's secrets")
	wantRow(t, diags, "provides.zero.exports.url", "a secret never declared")
}

// TestARaisedExportReadInAPlainField pins what the SDK and spec do with a
// consumer that reads a raised export in a plain field: the interface says
// public, so the consumer's Go type is an Output[string], the field
// compiles and check accepts it; the published record says secret, so the
// consumer's plan refuses it (docs/sdk.md).
func TestARaisedExportReadInAPlainField(t *testing.T) {
	provider, _ := synth(t, cacheProvider())
	pm, diags := spec.Compile(provider)
	noErrors(t, diags)

	f := fleet.New("web")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	slot := fleet.Use(f, "cache", cache)
	fleet.Wire(f, slot, "cache", "main")
	cloud.Compute("api", fleet.Lit("nginx"), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{
		Env: fleet.Env{"CACHE_URL": slot.Exports().URL},
	})
	doc, diags := synth(t, f)
	noErrors(t, diags)
	m, diags := spec.Compile(doc)
	noErrors(t, diags)

	exports := map[string]spec.PublishedExport{}
	for e, b := range pm.Provides["main"].Bindings {
		exports[e] = spec.PublishedExport{Type: pm.Interfaces["cache"].Exports[e].Type, Lifecycle: b.Lifecycle, Locality: b.Locality,
			Provider: spec.AWS, Account: awsAccount, Secret: b.Secret, Value: "arn:aws:secretsmanager:eu-west-3:" + awsAccount + ":secret:cache-" + e}
	}
	rec := &spec.Published{Fleet: "cache", Capabilities: map[string]spec.PublishedCapability{"main": {
		Interface: "cache", InterfaceHash: cache.Hash(), Consumers: "many", Exposed: true, Exports: exports}}}
	rec.Seal()
	diags = spec.ResolveWires(m, map[string]spec.Far{"cache": {Record: rec}})
	wantRow(t, diags, "aws/compute/api", `field "env" reads cache:main.url, which cache publishes as a secret, into a field that does not take a secret`)
	if w := m.Wired[spec.Import{Slot: "cache", Export: "url"}]; !w.Export.Secret {
		t.Errorf("the consumer's plan reads url as %+v, want secret", w.Export)
	}
}

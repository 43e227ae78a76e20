package render

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// A consumer's comment says what it reads from which fleet and what is
// pending; a provider's names its consumers, and a consumer-protected
// error shows as blocking. Names from documents are escaped.
func TestMarkdownWiringSections(t *testing.T) {
	consumer := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop-eu", ID: "sha256:" + strings.Repeat("c", 64),
		Actions: []engine.Action{{Address: addr("aws/secrets/shop-db-url"), Action: engine.Create, Region: "eu-west-3",
			Changes: []engine.Change{{Field: "value", Sensitive: true, From: []string{"pg-shared:eu.endpoint", "pg-shared:eu.password", "pg-shared:eu.username"}}}}},
		Summary: engine.Summary{Create: 1}, Applicable: true}
	md := Markdown(consumer, MarkdownOptions{Reads: []Read{
		{Slot: "db", Fleet: "pg-shared", Capability: "eu", Beside: true, Pending: []string{"endpoint", "password"}},
		{Slot: "cache", Fleet: "redis|x", Capability: "eu"},
	}})
	contains(t, "the consumer's comment", md,
		"#### Reads from other fleets",
		"| `db` | `pg-shared:eu` | `endpoint`, `password`, `username` | `endpoint`, `password` |",
		"| `cache` | `redis\\|x:eu` | none | none |",
		"`pg-shared` is planned in this run, before this fleet",
		"Read from what `redis\\|x` published at its last apply.")
	if strings.Contains(Markdown(consumer, MarkdownOptions{}), "other fleets") {
		t.Error("a section with nothing to say")
	}

	provider := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "pg-shared", ID: "sha256:" + strings.Repeat("d", 64),
		Diagnostics: []spec.Diagnostic{{Severity: spec.Error, ID: spec.RowConsumerProtected, Subject: "provides.eu",
			Message: "this plan stops exposing capability eu, which shop-eu read(s)"}}}
	md = Markdown(provider, MarkdownOptions{Consumers: []Consumer{{Capability: "eu", Fleet: "shop-eu", Claimed: true}, {Capability: "eu", Fleet: "shop-us"}}})
	contains(t, "the provider's comment", md,
		"#### Read by other fleets",
		"| `eu` | `shop-eu` | holds a claim (it has applied) |",
		"| `eu` | `shop-us` | planned in this run, applied after this fleet |",
		"> **Blocking: this plan breaks what 1 consumer claim(s) read; apply refuses it**",
		"> - `provides.eu`: this plan stops exposing capability eu, which shop-eu read(s)")
}

func contains(t *testing.T, what, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, md)
		}
	}
}

package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// adoptDoc is doc with an adopt list.
func adoptDoc(adopt []string, resources ...string) string {
	d := doc(resources...)
	list := `"` + strings.Join(adopt, `", "`) + `"`
	return strings.TrimSuffix(d, "}") + `, "adopt": [` + list + `]}`
}

func hasRow(p *Plan, id spec.RowID, subject string) bool {
	for _, d := range p.Diagnostics {
		if d.ID == id && d.Subject == subject {
			return true
		}
	}
	return false
}

// An unmarked resource the document adopts is an adopt that writes the
// ownership tag; apply tags and records it, and the next plan is empty.
// Without the adopt entry the same resource is left alone.
func TestAdoptTakesOverAnUnmarkedResource(t *testing.T) {
	f := newFixture(t)
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "jobs", Region: "eu-west-3",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0, "tags": map[string]any{"team": "mail"}}})
	const tagged = `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30, "tags": {"team": "mail"}}}`

	if p := f.plan(doc(tagged), false); len(p.Actions) != 0 || !hasRow(p, spec.RowForeignOwner, "aws/queues/jobs") {
		t.Fatalf("without adopt: actions %v, diagnostics %v; want none and a foreign-owner row", actionsOf(p), p.Diagnostics)
	}
	d := adoptDoc([]string{"aws/queues/jobs"}, tagged)
	p := f.plan(d, false)
	a := actionAt(t, p, "aws/queues/jobs")
	if a.Action != Adopt || !p.Applicable || !strings.Contains(a.Reason, "imported") {
		t.Fatalf("got %s (%s), applicable %v", a.Action, a.Reason, p.Applicable)
	}
	if len(a.Changes) != 1 || a.Changes[0].Field != "tags" || !strings.Contains(fmt.Sprint(a.Changes[0].After), spec.OwnershipTagKey) {
		t.Fatalf("changes %+v: want the tags written with the ownership tag", a.Changes)
	}
	if got, _ := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); got.Owner != "" {
		t.Fatalf("the plan tagged it: %v", got.Owner)
	}
	f.mustApply(d)
	got, _ := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs")
	if got.Owner != "shop" {
		t.Fatalf("after apply the owner is %q", got.Owner)
	}
	if _, ok := f.store.ledger.Get(spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs"}); !ok {
		t.Fatal("not recorded")
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Fatalf("next plan: %v", actionsOf(again))
	}
}

// Adopt never takes another fleet's resource, never creates, never
// replaces, and destroying leaves an unmarked resource alone.
func TestAdoptRefusals(t *testing.T) {
	f := newFixture(t)
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "billing", Region: "eu-west-3", Owner: "billing",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0}})
	f.cloud.Put(spec.AWS, spec.SecurityGroup, providers.Resource{Name: "web", Region: "eu-west-3",
		Fields: map[string]any{"description": "by hand", "ingress": []any{}}})
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "mail", Region: "eu-west-3",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0}})
	d := adoptDoc([]string{"aws/queues/billing", "aws/queues/missing", "aws/security-group/web"},
		`{"address": "aws/queues/billing", "spec": {}}`,
		`{"address": "aws/queues/missing", "spec": {}}`,
		`{"address": "aws/security-group/web", "spec": {"description": "web tier"}}`)
	p := f.plan(d, false)
	for _, c := range []struct {
		id      spec.RowID
		subject string
	}{
		{spec.RowAdoptForeign, "aws/queues/billing"},
		{spec.RowAdoptMissing, "aws/queues/missing"},
		{spec.RowAdoptReplace, "aws/security-group/web"},
	} {
		if !hasRow(p, c.id, c.subject) {
			t.Errorf("no %s row for %s in %v", c.id, c.subject, p.Diagnostics)
		}
	}
	if p.Applicable || len(p.Actions) != 0 {
		t.Fatalf("applicable %v, actions %v: want refused with no action", p.Applicable, actionsOf(p))
	}
	destroy := f.plan(adoptDoc([]string{"aws/queues/mail"}, `{"address": "aws/queues/mail", "spec": {}}`), true)
	if len(destroy.Actions) != 0 {
		t.Fatalf("destroy plans %v for a resource never tagged", actionsOf(destroy))
	}
}

// Unowned offers what no mark claims and the fleet does not know, reads
// each candidate once, and offers a bucket as the twin its settings need.
func TestUnownedOffersOnlyWhatNobodyOwns(t *testing.T) {
	f := newFixture(t)
	put := func(k spec.Kind, name, owner string, fields map[string]any) {
		f.cloud.Put(spec.AWS, k, providers.Resource{Name: name, Region: "eu-west-3", Owner: owner, Fields: fields})
	}
	put(spec.Queues, "mail", "", map[string]any{"visibilityTimeoutSec": 45.0})
	put(spec.Queues, "billing", "billing", map[string]any{"visibilityTimeoutSec": 30.0})
	put(spec.Queues, "jobs", "", map[string]any{"visibilityTimeoutSec": 30.0}) // declared below
	put(spec.Queues, "legacy-1", "", map[string]any{"visibilityTimeoutSec": 30.0})
	put(spec.S3Bucket, "logs", "", map[string]any{"versioning": true, "objectLock": false})
	put(spec.S3Bucket, "vault", "", map[string]any{"versioning": true, "objectLock": true})
	d := `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + acct + `"}, "placement": {"aws": "eu-west-3"},
		"exclusions": [{"address": "aws/queues/legacy-*", "why": "the old mail system"}], "resources": [` + queue + `]}`
	m := model(t, d)
	got, err := f.engine().Unowned(context.Background(), m, nil, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, x := range got.Found {
		addrs = append(addrs, x.Address.String()+"@"+x.Region)
	}
	want := "aws/object-store/logs@eu-west-3 aws/queues/mail@eu-west-3 aws/s3-bucket/vault@eu-west-3"
	if strings.Join(addrs, " ") != want {
		t.Fatalf("found %v, want %s", addrs, want)
	}
	if got.Owned != 1 || got.Known != 2 {
		t.Fatalf("owned %d, known %d: want 1 and 2", got.Owned, got.Known)
	}
	if _, has := got.Found[0].Fields["objectLock"]; has {
		t.Fatalf("an object-store offers no objectLock: %v", got.Found[0].Fields)
	}
	prefixed, err := f.engine().Unowned(context.Background(), m, nil, ImportOptions{NamePrefix: "ma", Kinds: []spec.Kind{spec.Queues}})
	if err != nil || len(prefixed.Found) != 1 || prefixed.Found[0].Address.Name != "mail" {
		t.Fatalf("with a prefix and a kind: %+v, %v", prefixed, err)
	}
}

// Where the name is the mark (a Scaleway queue), nothing can be adopted:
// import does not list the kind at all.
func TestUnownedSkipsKindsMarkedByName(t *testing.T) {
	f := newFixture(t)
	f.cloud.Put(spec.Scaleway, spec.Queues, providers.Resource{Name: "mail", Region: "fr-par", Fields: map[string]any{}})
	f.cloud.Put(spec.Scaleway, spec.Secrets, providers.Resource{Name: "token", Region: "fr-par", Fields: map[string]any{}})
	d := `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"scaleway": "11111111-2222-3333-4444-555555555555"},
		"placement": {"scaleway": "fr-par"}, "resources": []}`
	got, err := f.engine(spec.Scaleway).Unowned(context.Background(), model(t, d), nil, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Found) != 1 || got.Found[0].Address.String() != "scaleway/secrets/token" {
		t.Fatalf("found %+v, want only the secret", got.Found)
	}
}

// An adopt whose declaration leaves the tags unset keeps the tags the
// resource has: unset is unknown, not empty. The plan shows them, with
// the mark beside them, and apply writes exactly that.
func TestAdoptKeepsUndeclaredTags(t *testing.T) {
	f := newFixture(t)
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "jobs", Region: "eu-west-3",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0, "tags": map[string]any{"team": "mail", "cost": "42"}}})
	d := adoptDoc([]string{"aws/queues/jobs"}, `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30}}`)
	p := f.plan(d, false)
	a := actionAt(t, p, "aws/queues/jobs")
	if len(a.Changes) != 1 || fmt.Sprint(a.Changes[0].After) != "map[cost:42 managed-by-infra:shop team:mail]" {
		t.Fatalf("changes %+v", a.Changes)
	}
	f.mustApply(d)
	got, _ := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs")
	if tags := fmt.Sprint(got.Fields["tags"]); got.Owner != "shop" || tags != "map[cost:42 managed-by-infra:shop team:mail]" {
		t.Fatalf("after apply: owner %q, tags %s", got.Owner, tags)
	}
}

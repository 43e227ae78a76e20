package gcp

import (
	"fmt"
	"sort"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/lifecycle"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// TestOwnedFindsEveryMarkedResource: the scan finds what carries any
// fleet's mark, in the region asked, and not what carries none.
func TestOwnedFindsEveryMarkedResource(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	make := func(k spec.Kind, name, owner, region string, fields map[string]any) {
		t.Helper()
		d, _ := e.backend.Driver(k)
		if _, err := d.Create(ctx, providers.Target{Name: name, Region: region, Owner: owner, Fields: fields}); err != nil {
			t.Fatalf("%s/%s: %v", k, name, err)
		}
	}
	make(spec.ObjectStore, "shop-assets", "shop", testRegion, nil)
	make(spec.ObjectStore, "theirs", "other", testRegion, nil)
	make(spec.ObjectStore, "nobody", "", testRegion, nil)
	make(spec.ObjectStore, "elsewhere", "shop", otherRegion, nil)
	make(spec.Queues, "jobs", "shop", testRegion, nil)
	make(spec.Queues, "unmarked", "", testRegion, nil)
	make(spec.Secrets, "s", "shop", testRegion, map[string]any{"value": spec.NewSensitive("v")})
	owned, err := e.backend.Owned(ctx, testRegion, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range owned {
		got = append(got, fmt.Sprintf("%s/%s=%s", o.Kind, o.Name, o.Owner))
		if o.Tags[spec.OwnershipTagKey] != o.Owner {
			t.Errorf("%s/%s: tags %v do not carry the mark", o.Kind, o.Name, o.Tags)
		}
	}
	sort.Strings(got)
	want := []string{"object-store/shop-assets=shop", "object-store/theirs=other", "queues/jobs=shop", "secrets/s=shop"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("owned:\n got %v\nwant %v", got, want)
	}
}

// TestDiscoverRebuildsTheLedger: after the full stage's fleet is applied,
// a lost ledger is rebuilt from the labels, and the next plan is empty.
func TestDiscoverRebuildsTheLedger(t *testing.T) {
	e := fastEnv(t)
	eng := gcpEngine(e)
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	m := lifecycle.Compile(t, full.document(testProject))
	ctx := t.Context()
	p, err := eng.Plan(ctx, m, nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, p, engine.ApplyOptions{Store: store}); err != nil {
		t.Fatal(err)
	}
	dx, err := eng.Discover(ctx, m, state.NewLedger())
	if err != nil {
		t.Fatal(err)
	}
	if len(dx.Ledger.Rows) != 11 || len(dx.Foreign) != 0 {
		t.Fatalf("discovered %d rows (%v), foreign %v", len(dx.Ledger.Rows), dx.Added, dx.Foreign)
	}
	again, err := eng.Plan(ctx, m, nil, dx.Ledger, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.HasChanges() {
		t.Fatalf("after discover:\n%s", lifecycle.Render(again))
	}
}

package scaleway

import (
	"fmt"
	"sort"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// TestOwnedFindsEveryMarkedResource: the scan finds what carries the mark
// of any fleet (tags, description) or this fleet's name prefix, and not
// what carries none.
func TestOwnedFindsEveryMarkedResource(t *testing.T) {
	e := newEnv(t, "shop")
	ctx := t.Context()
	make := func(k spec.Kind, name, owner string, fields map[string]any) {
		t.Helper()
		d, _ := e.backend.Driver(k)
		tg := target(k, name, fields)
		tg.Owner = owner
		if _, err := d.Create(ctx, tg); err != nil {
			t.Fatalf("%s/%s: %v", k, name, err)
		}
	}
	make(spec.ObjectStore, "shop-assets", "shop", nil)
	make(spec.ObjectStore, "theirs", "other", nil)
	make(spec.ObjectStore, "nobody", "", nil)
	make(spec.Queues, "shop-jobs", "shop", nil)
	make(spec.Secrets, "s", "shop", map[string]any{"value": spec.NewSensitive("v")})
	make(spec.ImageRegistry, "shop-images", "shop", nil)
	make(spec.Postgres, "shop-db", "shop", map[string]any{"masterUsername": "x"})
	make(spec.ScalewayContainerNS, "cns", "shop", nil)
	make(spec.ScalewayContainer, "web", "shop", map[string]any{"namespace": "cns", "image": "x"})
	owned, err := e.backend.Owned(ctx, testRegion, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range owned {
		got = append(got, fmt.Sprintf("%s/%s=%s", o.Kind, o.Name, o.Owner))
	}
	sort.Strings(got)
	want := []string{"image-registry/shop-images=shop", "object-store/shop-assets=shop", "object-store/theirs=other",
		"postgres/shop-db=shop", "queues/shop-jobs=shop", "scaleway-container-namespace/cns=shop",
		"scaleway-container/web=shop", "secrets/s=shop"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("owned:\n got %v\nwant %v", got, want)
	}
	e.assertScoped(t)
}

// TestDiscoverRebuildsTheLedger: after the full stage's fleet is applied,
// a lost ledger is rebuilt from the marks, and the next plan is empty.
func TestDiscoverRebuildsTheLedger(t *testing.T) {
	e := newEnv(t, "shop")
	eng := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.Scaleway: e.backend},
		Getenv: func(string) string { return "base" }})
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	full := life{visibility: 30, maxScale: 1, memory: 256, greeting: "hello", team: "web", nsDoc: "f"}
	m := compile(t, full.document(testProject))
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
	// The container is found as scaleway-container, which is what it was
	// declared as; all twelve come back.
	if len(dx.Ledger.Rows) != 12 || len(dx.Foreign) != 0 {
		t.Fatalf("discovered %d rows (%v), foreign %v", len(dx.Ledger.Rows), dx.Added, dx.Foreign)
	}
	again, err := eng.Plan(ctx, m, nil, dx.Ledger, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.HasChanges() {
		t.Fatalf("after discover:\n%s", render(again))
	}
}

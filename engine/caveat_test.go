package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// caveatBackend makes every bucket with a caveat, as the bucket driver
// does at an endpoint that serves no bucket ABAC.
type caveatBackend struct{ providers.Backend }

func (b caveatBackend) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	if ok && k == spec.ObjectStore {
		return caveatDriver{d}, true
	}
	return d, ok
}

type caveatDriver struct{ providers.Driver }

const noABAC = "bucket ABAC is not served here"

func (d caveatDriver) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	r, err := d.Driver.Create(ctx, t)
	r.Caveat = noABAC
	return r, err
}

// A caveat is said once an apply, however many resources it holds for;
// the ledger keeps it, and every later plan says it again as a warning
// that is not attention (the cloud matches the fleet), until the
// resource is gone.
func TestACaveatIsWarnedOnceAndEveryPlanSaysIt(t *testing.T) {
	f := newFixture(t)
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: caveatBackend{f.cloud.Backend(spec.AWS)}},
		Getenv: func(string) string { return "" }, Parallelism: 4, Progress: f.progress})
	buckets := []string{bucket,
		`{"address": "aws/object-store/logs", "spec": {}}`, `{"address": "aws/object-store/media", "spec": {}}`}
	m := model(t, doc(append(buckets, queue)...))
	p, err := e.Plan(t.Context(), m, nil, nil, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(t.Context(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	warned := 0
	for _, ev := range f.events {
		if ev.Kind == EventWarning && ev.Message == noABAC {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("the apply warned of the caveat %d times, want once", warned)
	}
	l, _ := f.store.LoadLedger(t.Context())
	for _, r := range l.Rows {
		if want := map[spec.Kind]string{spec.ObjectStore: noABAC}[r.Kind]; r.Caveat != want {
			t.Errorf("ledger row %s: caveat %q, want %q", r.Address(), r.Caveat, want)
		}
	}

	next, err := e.Plan(t.Context(), m, nil, l, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []spec.Diagnostic
	for _, d := range next.Diagnostics {
		if d.ID == spec.RowCaveat {
			rows = append(rows, d)
		}
	}
	if len(next.Actions) != 0 || len(next.Attention) != 0 || len(rows) != 1 || rows[0].Severity != spec.Warning ||
		rows[0].Message != noABAC || !strings.Contains(rows[0].Evidence, "aws/object-store/logs") {
		t.Fatalf("the next plan: actions %v, attention %v, caveat rows %+v; want no action, no attention, one warning naming the buckets",
			actionsOf(next), next.Attention, rows)
	}

	// Once the buckets are no longer declared, their deletes say it no
	// more, and a destroy never does.
	for _, destroy := range []bool{false, true} {
		gone, err := e.Plan(t.Context(), model(t, doc(queue)), nil, l, PlanOptions{Destroy: destroy})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range gone.Diagnostics {
			if d.ID == spec.RowCaveat {
				t.Errorf("destroy %v: a plan that deletes the buckets still says %v", destroy, d)
			}
		}
	}
}

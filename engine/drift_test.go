package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/infra-iac/infra/spec"
)

func (f *fixture) drift(doc string) *Drift {
	f.t.Helper()
	l, _ := f.store.LoadLedger(context.Background())
	d, err := f.engine().Drift(context.Background(), model(f.t, doc), l, f.store.cache)
	if err != nil {
		f.t.Fatalf("drift: %v", err)
	}
	return d
}

// Drift reports what changed out of band since the last apply, and never
// what the document asks for and nobody applied.
func TestDriftIsWhatChangedOutOfBand(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue, bucket))
	if d := f.drift(doc(sg, queue, bucket)); d.HasDrift() || d.Checked != 3 {
		t.Fatalf("right after the apply: %+v", d)
	}

	// A pending change of the document is not drift.
	if d := f.drift(doc(sg, `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 90}}`, bucket)); d.HasDrift() {
		t.Fatalf("a change the document asks for is reported as drift: %+v", d.Resources)
	}

	// Someone changes the queue, removes the bucket's team tag, re-tags
	// the security group for another fleet.
	q, _ := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs")
	q.Fields["visibilityTimeoutSec"] = 45.0
	f.cloud.Put(spec.AWS, spec.Queues, q)
	b, _ := f.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets")
	b.Fields["tags"] = map[string]any{}
	f.cloud.Put(spec.AWS, spec.ObjectStore, b)
	g, _ := f.cloud.Get(spec.AWS, spec.SecurityGroup, "eu-west-3", "web")
	g.Owner = "billing"
	f.cloud.Put(spec.AWS, spec.SecurityGroup, g)

	d := f.drift(doc(sg, queue, bucket))
	got := fmt.Sprint(d.Resources)
	want := "[{aws/object-store/assets eu-west-3 false [] [{tags map[team:web] map[] false false false [] []}] } " +
		"{aws/queues/jobs eu-west-3 false [] [{visibilityTimeoutSec 30 45 false false false [] []}] } " +
		"{aws/security-group/web eu-west-3 false [shop billing] [] }]"
	if got != want {
		t.Fatalf("drift:\n got %s\nwant %s", got, want)
	}

	// Deleted out of band.
	f.cloud.Remove(spec.AWS, spec.Queues, "eu-west-3", "jobs")
	d = f.drift(doc(sg, queue, bucket))
	if len(d.Resources) != 3 || d.Resources[1].Address.String() != "aws/queues/jobs" || !d.Resources[1].Gone {
		t.Fatalf("a deleted queue: %+v", d.Resources)
	}

	// A managed resource the cache has no record of has no baseline.
	delete(f.store.cache.Resources, "aws/security-group/web")
	d = f.drift(doc(sg, queue, bucket))
	if fmt.Sprint(d.Unknown) != "[aws/security-group/web]" || d.Checked != 2 {
		t.Fatalf("no baseline: %+v", d)
	}
}

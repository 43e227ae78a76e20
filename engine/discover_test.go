package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
)

func TestTaggedOrphanNotInTheLedgerIsDeletedWithTheReason(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue, bucket))
	f.store.ledger = nil // lost
	p := f.plan(doc(sg, bucket), false)
	var del *Action
	for i := range p.Actions {
		if p.Actions[i].Action == Delete {
			del = &p.Actions[i]
		}
	}
	if del == nil || del.Address.String() != "aws/queues/jobs" || del.Reason != "tagged for this fleet, not in the ledger" {
		t.Fatalf("plan: %v", actionsOf(p))
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); ok {
		t.Fatal("the tagged orphan survived")
	}
}

func TestTagScanNeverTouchesOtherFleetsOrUntagged(t *testing.T) {
	f := newFixture(t)
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "billing-jobs", Region: "eu-west-3", Owner: "billing"})
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "handmade", Region: "eu-west-3"})
	f.mustApply(doc(sg))
	if got := f.cloud.Addresses(); fmt.Sprint(got) != "[aws/queues/billing-jobs aws/queues/handmade aws/security-group/web]" {
		t.Fatalf("cloud: %v", got)
	}
}

func TestDiscoverRebuildsTheLedgerAndReportsOthers(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue, bucket))
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "billing-jobs", Region: "eu-west-3", Owner: "billing"})
	want := f.store.ledger.Clone()
	stale := f.store.ledger.Clone()
	stale.Remove(spectest.Address("aws/queues/jobs"))
	stale.Put(rowOf("aws/queues/gone", "eu-west-3"))
	dx, err := f.engine().Discover(context.Background(), model(t, doc(sg, queue, bucket)), stale)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(dx.Ledger.Rows) != fmt.Sprint(want.Rows) {
		t.Fatalf("rebuilt %v, want %v", dx.Ledger.Rows, want.Rows)
	}
	if fmt.Sprint(dx.Added) != fmt.Sprint([]any{rowOf("aws/queues/jobs", "eu-west-3")}) || fmt.Sprint(dx.Removed) != fmt.Sprint([]any{rowOf("aws/queues/gone", "eu-west-3")}) {
		t.Fatalf("added %v removed %v", dx.Added, dx.Removed)
	}
	if len(dx.Foreign) != 1 || dx.Foreign[0].Owner != "billing" {
		t.Fatalf("foreign %v", dx.Foreign)
	}
	// With the rebuilt ledger the next plan is empty.
	f.store.ledger = dx.Ledger
	if p := f.plan(doc(sg, queue, bucket), false); len(p.Actions) != 0 {
		t.Fatalf("plan after discover: %v", actionsOf(p))
	}
}

func TestExclusionWinsOverTheTag(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue))
	excluded := `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + acct + `"},
	"placement": {"aws": "eu-west-3"}, "exclusions": [{"address": "aws/queues/jobs", "why": "handed to the data team"}],
	"resources": [` + sg + `]}`
	p := f.plan(excluded, false)
	if len(p.Actions) != 0 {
		t.Fatalf("planned %v", actionsOf(p))
	}
	if len(p.Diagnostics) != 1 || p.Diagnostics[0].Subject != "aws/queues/jobs" || p.Diagnostics[0].Severity != spec.Warning {
		t.Fatalf("diagnostics %v", p.Diagnostics)
	}
	f.store.ledger = nil // and the tag scan does not claim it either
	if p := f.plan(excluded, false); len(p.Actions) != 1 || p.Actions[0].Action != Adopt {
		t.Fatalf("planned %v", actionsOf(p))
	}
}

// A refused or throttled tag scan fails the plan: a partial scan is never
// "all", and reading it as empty could hide an orphan.
func TestFailedTagScanFailsThePlan(t *testing.T) {
	f := newFixture(t)
	f.cloud.Inject(memory.Fault{Op: "owned", Err: providers.Errorf(providers.Throttled, "ThrottlingException: rate exceeded")})
	_, err := f.engine().Plan(context.Background(), model(t, doc(queue)), nil, nil, PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "aws in eu-west-3: scan ownership tags: throttled: ThrottlingException") {
		t.Fatalf("got %v", err)
	}
	_, err = f.engine().Discover(context.Background(), model(t, doc(queue)), nil)
	if err == nil {
		t.Fatal("discover read a failed scan as empty")
	}
}

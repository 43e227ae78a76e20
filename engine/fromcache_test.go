package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// fromDisk is the cache as a later run reads it back: through its JSON,
// so that numbers are float64 as they are from cache.json.
func fromDisk(t testing.TB, c *state.Cache) *state.Cache {
	t.Helper()
	b, err := state.EncodeCache(c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := state.DecodeCache(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// planFromCache plans doc against the fixture's last saved cache with an
// engine that has no backend at all: a call would fail the plan.
func (f *fixture) planFromCache(doc string, cache *state.Cache) *Plan {
	f.t.Helper()
	l, _ := f.store.LoadLedger(context.Background())
	p, err := New(Options{}).PlanFromCache(context.Background(), model(f.t, doc), nil, l, cache, PlanOptions{})
	if err != nil {
		f.t.Fatalf("plan from the cache: %v", err)
	}
	return p
}

func actionsJSON(t *testing.T, p *Plan) string {
	t.Helper()
	b, err := json.Marshal(p.Actions)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A plan from the cache decides what the refreshed plan decides, when
// the cloud is as the cache says: updates, creates, ledger deletes, and
// the delete of what only the tag scan knows. It makes no call, is
// marked, and its id is not the refreshed plan's.
func TestPlanFromCacheIsTheRefreshedPlanUnrefreshed(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "pw"
	f.mustApply(doc(sg, queue, bucket, password))
	// The bucket's row is lost: only its ownership tag says it is ours.
	f.store.ledger.Remove(spec.Address{Provider: spec.AWS, Kind: spec.ObjectStore, Name: "assets"})

	edited := doc(sg, `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 90}}`, instance)
	calls := len(f.cloud.Calls())
	cached := f.planFromCache(edited, fromDisk(t, f.store.cache))
	if n := len(f.cloud.Calls()) - calls; n != 0 {
		t.Fatalf("the plan from the cache made %d calls", n)
	}
	fresh := f.plan(edited, false)

	want := "[create aws/aws-instance/web-1 update aws/queues/jobs delete aws/object-store/assets delete aws/secrets/db-password]"
	if got := fmt.Sprint(actionsOf(fresh)); got != want {
		t.Fatalf("the refreshed plan: %s, want %s", got, want)
	}
	if a, b := actionsJSON(t, cached), actionsJSON(t, fresh); a != b {
		t.Fatalf("the plan from the cache differs from the refreshed one:\ncache   %s\nrefresh %s", a, b)
	}
	if fresh.FromCache != nil {
		t.Fatalf("the refreshed plan is marked as from the cache: %+v", fresh.FromCache)
	}
	if cached.FromCache == nil || cached.FromCache.Entries != 4 || cached.FromCache.Seen.IsZero() {
		t.Fatalf("the plan from the cache is not marked with what it used: %+v", cached.FromCache)
	}
	if cached.ID == fresh.ID {
		t.Fatalf("the plan from the cache has the refreshed plan's id %s", fresh.ID)
	}
	if len(cached.Accounts) != 1 || cached.Accounts[0].Account != acct || !cached.Accounts[0].Unverified || fresh.Accounts[0].Unverified {
		t.Fatalf("accounts: from the cache %+v, refreshed %+v", cached.Accounts, fresh.Accounts)
	}
	if cached.Summary != fresh.Summary || cached.Applicable != fresh.Applicable {
		t.Fatalf("summary %+v/%v, refreshed %+v/%v", cached.Summary, cached.Applicable, fresh.Summary, fresh.Applicable)
	}
}

// The id binds the mark, not only the actions: with nothing to do, the
// two plans agree on everything else and still differ.
func TestPlanFromCacheWithNoChangesHasItsOwnID(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue))
	cached, fresh := f.planFromCache(doc(sg, queue), fromDisk(t, f.store.cache)), f.plan(doc(sg, queue), false)
	if cached.HasChanges() || fresh.HasChanges() {
		t.Fatalf("changes: cache %v, refreshed %v", actionsOf(cached), actionsOf(fresh))
	}
	if cached.ID == fresh.ID {
		t.Fatal("a plan from the cache with no changes has the refreshed plan's id")
	}
	// Not only through the accounts' mark: the same plan unmarked is
	// another plan.
	unmarked := *cached
	unmarked.FromCache = nil
	if unmarked.computeID() == cached.ID {
		t.Fatal("the id does not bind FromCache")
	}
	again := f.planFromCache(doc(sg, queue), fromDisk(t, f.store.cache))
	if again.ID != cached.ID {
		t.Fatalf("two plans from the same cache: %s and %s", cached.ID, again.ID)
	}
}

// An entry the cache lacks is a resource that does not exist: the plan
// creates it, though the cloud has it.
func TestPlanFromCacheMissingAnEntryPlansItsCreate(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue))
	c := fromDisk(t, f.store.cache)
	delete(c.Resources, "aws/queues/jobs")
	p := f.planFromCache(doc(sg, queue), c)
	if got := fmt.Sprint(actionsOf(p)); got != "[create aws/queues/jobs]" {
		t.Fatalf("actions: %s", got)
	}
	if p.FromCache.Entries != 1 {
		t.Fatalf("entries used: %d", p.FromCache.Entries)
	}
	if fresh := f.plan(doc(sg, queue), false); fresh.HasChanges() {
		t.Fatalf("the cloud has the queue, yet the refreshed plan has %v", actionsOf(fresh))
	}
}

// A cached entry seen in another region than the one planned is not
// found there, as a listing of that region would not find it.
func TestPlanFromCacheMatchesEntriesByRegion(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(queue))
	c := fromDisk(t, f.store.cache)
	o := c.Resources["aws/queues/jobs"]
	o.Region = "us-east-1"
	c.Resources["aws/queues/jobs"] = o
	if got := fmt.Sprint(actionsOf(f.planFromCache(doc(queue), c))); got != "[create aws/queues/jobs]" {
		t.Fatalf("actions: %s", got)
	}
}

// Apply never carries out a plan from the cache: it did not look.
func TestApplyRefusesAPlanFromTheCache(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg))
	p := f.planFromCache(doc(sg, queue), fromDisk(t, f.store.cache))
	if !p.HasChanges() {
		t.Fatal("expected the queue's create")
	}
	calls := len(f.cloud.Calls())
	_, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store})
	if !errors.Is(err, ErrFromCache) {
		t.Fatalf("apply of a plan from the cache: %v", err)
	}
	if n := len(f.cloud.Calls()) - calls; n != 0 {
		t.Fatalf("the refused apply made %d calls", n)
	}
}

package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
)

// lostCreate makes the next create of addr happen in the cloud without
// its ownership mark and then fail with err, as a process that dies (or a
// response lost) between S3's CreateBucket and TagResource does.
func lostCreate(addr string, err error) memory.Fault {
	return memory.Fault{Op: "create", Address: addr, After: true, Untagged: true, Times: 1, Err: err}
}

// A create that the cloud carried out, untagged, before the run died is
// this fleet's on the next run: adopted, tagged, recorded, and so
// destroyed with the rest.
func TestInterruptedCreateIsAdoptedAndTaggedNextRun(t *testing.T) {
	f := newFixture(t)
	d := doc(bucket, queue)
	f.cloud.Inject(lostCreate("aws/object-store/assets", providers.Errorf(providers.Unknown, "connection reset by peer")))
	if _, _, err := f.apply(d); err == nil {
		t.Fatal("apply succeeded although the create failed")
	}
	if _, ok := f.store.ledger.Intent(spectest.Address("aws/object-store/assets")); !ok {
		t.Fatalf("no intent recorded for the interrupted create: %+v", f.store.ledger)
	}
	if got, _ := f.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets"); got.Owner != "" {
		t.Fatalf("the fault did not leave the bucket untagged")
	}

	p := f.plan(d, false)
	a := actionAt(t, p, "aws/object-store/assets")
	if a.Action != Adopt || !strings.Contains(a.Reason, "stopped before tagging") || len(a.Changes) == 0 {
		t.Fatalf("want an adopt that tags it, got %+v", a)
	}
	for _, dg := range p.Diagnostics {
		if strings.Contains(dg.Message, "no managed-by-infra") || strings.Contains(dg.Message, "carries no") {
			t.Errorf("warned instead of claiming: %s", dg.Message)
		}
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if got, _ := f.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets"); got.Owner != "shop" {
		t.Errorf("not tagged: owner %q", got.Owner)
	}
	if _, ok := f.store.ledger.Get(spectest.Address("aws/object-store/assets")); !ok || len(f.store.ledger.Intents) != 0 {
		t.Errorf("ledger: %+v", f.store.ledger)
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Errorf("next plan: %v", actionsOf(again))
	}
	dp := f.plan(d, true)
	if _, err := f.engine().Apply(context.Background(), dp, ApplyOptions{Store: f.store}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if left := f.cloud.Addresses(); len(left) != 0 {
		t.Errorf("destroy left %v", left)
	}
}

// The SDK retried a create the cloud had carried out: the retry gets
// "already exists" for a resource that is not tagged yet. It is the same
// resource, finished and recorded in this run, not a failure.
func TestRetriedCreateThatAlreadyHappenedIsOurs(t *testing.T) {
	f := newFixture(t)
	d := doc(bucket)
	f.cloud.Inject(lostCreate("aws/object-store/assets", providers.Errorf(providers.AlreadyExists, "BucketAlreadyOwnedByYou: Your previous request to create the named bucket succeeded and you already own it.")))
	if _, _, err := f.apply(d); err != nil {
		t.Fatalf("apply: %v", err)
	}
	got, _ := f.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets")
	if got.Owner != "shop" || got.Fields["tags"].(map[string]any)["team"] != "web" {
		t.Errorf("not finished: %+v", got)
	}
	if len(f.store.ledger.Rows) != 1 || len(f.store.ledger.Intents) != 0 {
		t.Errorf("ledger: %+v", f.store.ledger)
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Errorf("next plan: %v", actionsOf(again))
	}
}

// Another fleet's resource of the same name is still refused.
func TestCreateOfAnotherFleetsResourceIsRefused(t *testing.T) {
	f := newFixture(t)
	f.cloud.Inject(memory.Fault{Op: "create", Address: "aws/object-store/assets", After: true, Times: 1,
		Err: providers.Errorf(providers.AlreadyExists, "BucketAlreadyExists")})
	p := f.plan(doc(bucket), false)
	// Someone else takes the name between the plan and the create.
	f.cloud.Put(spec.AWS, spec.ObjectStore, providers.Resource{Name: "assets", Region: "eu-west-3", Owner: "other"})
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err == nil {
		t.Fatal("adopted another fleet's bucket")
	}
}

// An intent whose resource never appeared is dropped; one whose resource
// appeared untagged and is no longer declared is deleted.
func TestIntentsOfUndeclaredResources(t *testing.T) {
	f := newFixture(t)
	f.cloud.Inject(memory.Fault{Op: "create", Address: "aws/queues/jobs", Times: 1, Err: providers.Errorf(providers.Unknown, "connection refused")})
	f.cloud.Inject(lostCreate("aws/object-store/assets", providers.Errorf(providers.Unknown, "connection reset by peer")))
	if _, _, err := f.apply(doc(bucket, queue)); err == nil {
		t.Fatal("apply succeeded")
	}
	if n := len(f.store.ledger.Intents); n != 2 {
		t.Fatalf("want 2 intents, got %+v", f.store.ledger.Intents)
	}
	d := doc(password)
	f.env["DB_PASSWORD"] = "x"
	p := f.plan(d, false)
	a := actionAt(t, p, "aws/object-store/assets")
	if a.Action != Delete || !strings.Contains(a.Reason, "no longer declared") {
		t.Fatalf("want the untagged leftover deleted, got %+v", a)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if left := f.cloud.Addresses(); strings.Join(left, ",") != "aws/secrets/db-password" {
		t.Errorf("cloud: %v", left)
	}
	if len(f.store.ledger.Intents) != 0 {
		t.Errorf("intents left: %+v", f.store.ledger.Intents)
	}
}

// Rebuilding the ledger from the tags keeps the intents: they are the only
// evidence of an untagged leftover.
func TestDiscoverKeepsIntents(t *testing.T) {
	f := newFixture(t)
	f.cloud.Inject(lostCreate("aws/object-store/assets", providers.Errorf(providers.Unknown, "connection reset by peer")))
	if _, _, err := f.apply(doc(bucket, queue)); err == nil {
		t.Fatal("apply succeeded")
	}
	dx, err := f.engine().Discover(context.Background(), model(t, doc(bucket, queue)), f.store.ledger)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := dx.Ledger.Intent(spectest.Address("aws/object-store/assets")); !ok {
		t.Fatalf("discover dropped the intent: %+v", dx.Ledger)
	}
}

// A create that made and tagged a secret, then stopped before its value
// was written (GCP and Scaleway write it as a second call, a version): the
// next plan cannot see the value, which is never compared, so it adopts
// the secret and writes the value again; the apply does, and records it.
func TestAMarkedResourceOfAnInterruptedCreateIsFinished(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "hunter2"
	d := doc(password)
	f.cloud.Inject(memory.Fault{Op: "create", Address: "aws/secrets/db-password", After: true, Times: 1,
		Err: providers.Errorf(providers.Unknown, "connection reset by peer")})
	if _, _, err := f.apply(d); err == nil {
		t.Fatal("apply succeeded although the create failed")
	}
	// What the interrupted create left: the secret, marked, without a value.
	f.cloud.Put(spec.AWS, spec.Secrets, providers.Resource{Name: "db-password", Region: "eu-west-3", Owner: "shop"})
	p := f.plan(d, false)
	a := actionAt(t, p, "aws/secrets/db-password")
	if a.Action != Adopt || !strings.Contains(a.Reason, "stopped before recording it, perhaps before writing its value") ||
		len(a.Changes) != 1 || a.Changes[0].Field != "value" || !a.Changes[0].Sensitive {
		t.Fatalf("want an adopt that writes the value, got %+v", a)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	b := f.cloud.Backend(spec.AWS)
	dr, _ := b.Driver(spec.Secrets)
	if v, err := dr.(providers.SecretReader).ReadSecretValue(context.Background(), "eu-west-3", "db-password"); err != nil || v.Reveal() != "hunter2" {
		t.Errorf("the value was not written: %v", err)
	}
	if _, ok := f.store.ledger.Get(spectest.Address("aws/secrets/db-password")); !ok || len(f.store.ledger.Intents) != 0 {
		t.Errorf("ledger: %+v", f.store.ledger)
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Errorf("next plan: %v", actionsOf(again))
	}
}

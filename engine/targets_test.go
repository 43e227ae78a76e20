package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

func addrs(t *testing.T, ss ...string) []spec.Address {
	t.Helper()
	var out []spec.Address
	for _, s := range ss {
		a, err := spec.ParseAddress(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// planScoped plans doc with targets and forced replaces.
func (f *fixture) planScoped(doc string, opts PlanOptions) (*Plan, error) {
	f.t.Helper()
	l, _ := f.store.LoadLedger(context.Background())
	return f.engine().Plan(context.Background(), model(f.t, doc), nil, l, opts)
}

// A target plans itself and what it references, transitively, and
// nothing else; the id is not the full plan's, nor another target set's.
func TestTargetPlansOnlyItAndItsDependencies(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "hunter2"
	d := doc(sg, instance, queue, password, db, dbURL)
	full := f.plan(d, false)

	p, err := f.planScoped(d, PlanOptions{Targets: addrs(t, "aws/secrets/db-url")})
	if err != nil {
		t.Fatal(err)
	}
	want := "create aws/secrets/db-password, create aws/postgres/main, create aws/secrets/db-url"
	if got := strings.Join(actionsOf(p), ", "); got != want {
		t.Fatalf("plan: %s\nwant: %s", got, want)
	}
	if len(p.Targets) != 1 || p.Targets[0].String() != "aws/secrets/db-url" {
		t.Errorf("targets %v", p.Targets)
	}
	other, err := f.planScoped(d, PlanOptions{Targets: addrs(t, "aws/aws-instance/web-1")})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actionsOf(other), ", "); got != "create aws/security-group/web, create aws/aws-instance/web-1" {
		t.Errorf("instance target: %s", got)
	}
	all, err := f.planScoped(d, PlanOptions{Targets: addrs(t, "aws/aws-instance/web-1", "aws/queues/jobs", "aws/secrets/db-url", "aws/aws-instance/web-1")})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Actions) != len(full.Actions) || len(all.Targets) != 3 {
		t.Fatalf("every resource targeted: %v, targets %v", actionsOf(all), all.Targets)
	}
	ids := map[string]string{full.ID: "full", p.ID: "db-url", other.ID: "instance"}
	if len(ids) != 3 || all.ID == full.ID || all.ID == p.ID {
		t.Errorf("ids collide: full %s, db-url %s, instance %s, all %s", full.ID, p.ID, other.ID, all.ID)
	}
	again, _ := f.planScoped(d, PlanOptions{Targets: addrs(t, "aws/secrets/db-url")})
	if again.ID != p.ID {
		t.Errorf("the same targets gave another id")
	}

	// Applied, the partial plan made only what it showed.
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); ok {
		t.Errorf("the queue, not targeted, was created")
	}
	if len(f.store.ledger.Rows) != 3 {
		t.Errorf("ledger rows %v", f.store.ledger.Rows)
	}
}

// An undeclared ledger row is deleted by a partial plan only when it is
// itself a target, and never as a target's dependency.
func TestTargetDeletesAnUndeclaredRowOnlyByAddress(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue, bucket))
	d := doc(sg) // the queue and the bucket are no longer declared
	p, err := f.planScoped(d, PlanOptions{Targets: addrs(t, "aws/queues/jobs")})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actionsOf(p), ", "); got != "delete aws/queues/jobs" {
		t.Fatalf("plan: %s", got)
	}
	p, err = f.planScoped(d, PlanOptions{Targets: addrs(t, "aws/security-group/web")})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) != 0 {
		t.Fatalf("a declared target deleted what is no longer declared: %v", actionsOf(p))
	}
}

func TestUnknownTargetOrReplaceIsRefusedByAddress(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg))
	// Another fleet's queue, and an unmarked one the document adopts.
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "billing", Region: "eu-west-3", Owner: "billing",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0}})
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "mail", Region: "eu-west-3",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0}})
	d := doc(sg, queue, `{"address": "aws/queues/billing", "spec": {}}`)
	for _, tc := range []struct {
		opts       PlanOptions
		option     string
		addr, hint string
		why        string
	}{
		{PlanOptions{Targets: addrs(t, "aws/queues/job")}, "target", "aws/queues/job", "aws/queues/jobs", "neither declared nor in the ledger"},
		{PlanOptions{Targets: addrs(t, "aws/queues/zzzzzzzzzzzz")}, "target", "aws/queues/zzzzzzzzzzzz", "", "neither declared"},
		{PlanOptions{Replace: addrs(t, "aws/security-group/wbe")}, "replace", "aws/security-group/wbe", "aws/security-group/web", "not declared"},
		{PlanOptions{Replace: addrs(t, "aws/queues/jobs")}, "replace", "aws/queues/jobs", "", "not yet created"},
		{PlanOptions{Replace: addrs(t, "aws/queues/billing")}, "replace", "aws/queues/billing", "", "tagged managed-by-infra=billing: this fleet will not replace it"},
	} {
		_, err := f.planScoped(d, tc.opts)
		var te *TargetError
		if !errors.As(err, &te) || te.Option != tc.option || te.Address.String() != tc.addr || te.Hint != tc.hint || !strings.Contains(te.Why, tc.why) {
			t.Errorf("%s %s: got %v (%+v)", tc.option, tc.addr, err, te)
			continue
		}
		if !strings.Contains(err.Error(), tc.addr) {
			t.Errorf("the error does not name the address: %v", err)
		}
	}
	if _, err := f.planScoped(d, PlanOptions{Destroy: true, Targets: addrs(t, "aws/queues/jobs")}); !errors.Is(err, ErrTargetsWithDestroy) {
		t.Errorf("destroy with targets: %v", err)
	}
	// A forced replace of what the fleet adopts but does not own yet is
	// the adopt-replace row: replacing would delete what it never took.
	p, err := f.planScoped(adoptDoc([]string{"aws/queues/mail"}, sg, `{"address": "aws/queues/mail", "spec": {}}`), PlanOptions{Replace: addrs(t, "aws/queues/mail")})
	if err != nil || p.Applicable || !hasRow(p, spec.RowAdoptReplace, "aws/queues/mail") || len(p.Actions) != 0 {
		t.Errorf("a forced replace of an import: %v, %v, %v", err, actionsOf(p), p.Diagnostics)
	}
}

// A forced replace of a group replaces it with the cause, and what holds
// it (the instance) and what reads its id (the secret) follow as for any
// replace of the group; the id binds the forced set.
func TestForcedReplacePropagatesToWhatReadsIt(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, instance, sgIDSecret, queue))
	oldID := mustGroupID(t, f)
	d := doc(sg, instance, sgIDSecret, queue)
	plain := f.plan(d, false)
	if len(plain.Actions) != 0 {
		t.Fatalf("not converged: %v", actionsOf(plain))
	}
	p, err := f.planScoped(d, PlanOptions{Replace: addrs(t, "aws/security-group/web")})
	if err != nil {
		t.Fatal(err)
	}
	want := "replace aws/security-group/web, replace aws/aws-instance/web-1, update aws/secrets/web-group"
	if got := strings.Join(actionsOf(p), ", "); got != want {
		t.Fatalf("plan: %s\nwant: %s", got, want)
	}
	group := actionAt(t, p, "aws/security-group/web")
	if group.Cause != ForcedCause || !strings.HasPrefix(group.Reason, ForcedCause) {
		t.Errorf("group cause %q, reason %q", group.Cause, group.Reason)
	}
	if inst := actionAt(t, p, "aws/aws-instance/web-1"); !strings.Contains(inst.Cause, "aws/security-group/web, which is replaced") {
		t.Errorf("instance cause %q", inst.Cause)
	}
	if p.ID == plain.ID || len(p.Replace) != 1 {
		t.Errorf("id %s, replace %v", p.ID, p.Replace)
	}
	if got := f.applyCalls(p); !strings.Contains(got, "delete aws/security-group/web, create aws/security-group/web") {
		t.Errorf("calls: %s", got)
	}
	if mustGroupID(t, f) == oldID {
		t.Errorf("the group kept its id")
	}
	f.converged(d)
}

// A forced replace with a target keeps, of what the replace propagates
// to, the replaces (the instance, attached to the group), and leaves the
// rest to a later plan.
func TestForcedReplaceWithinTargets(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, instance, sgIDSecret))
	d := doc(sg, instance, sgIDSecret)
	p, err := f.planScoped(d, PlanOptions{Targets: addrs(t, "aws/security-group/web"), Replace: addrs(t, "aws/security-group/web")})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/security-group/web, replace aws/aws-instance/web-1" {
		t.Fatalf("plan: %s", got)
	}
}

// The brake counts forced replaces like any other destroy.
func TestBrakeCountsForcedReplaces(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue, bucket))
	d := doc(sg, queue, bucket)
	p, err := f.planScoped(d, PlanOptions{Replace: addrs(t, "aws/queues/jobs", "aws/object-store/assets")})
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Replace != 2 {
		t.Fatalf("plan: %v", actionsOf(p))
	}
	_, err = f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store})
	var brake *BrakeError
	if !errors.As(err, &brake) || brake.Destructive != 2 || brake.Managed != 3 {
		t.Fatalf("want the brake on 2 of 3, got %v", err)
	}
}

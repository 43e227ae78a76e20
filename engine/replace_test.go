package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
)

// The memory cloud, like AWS, refuses to delete a security group while an
// instance is attached to it, and records the attachment by the group's
// id, which a replacement changes.

const (
	sgRenamed  = `{"address": "aws/security-group/web", "spec": {"description": "web tier", "ingress": [{"port": 443, "cidr": "0.0.0.0/0"}]}}`
	instance2  = `{"address": "aws/aws-instance/web-2", "spec": {"imageId": "latest", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/web"}}}`
	sgIDSecret = `{"address": "aws/secrets/web-group", "spec": {"value": {"composed": {"format": "group={0}", "args": [{"observed": "aws/security-group/web", "attribute": "groupId"}]}}}}`
)

func actionAt(t *testing.T, p *Plan, addr string) Action {
	t.Helper()
	for _, a := range p.Actions {
		if a.Address.String() == addr {
			return a
		}
	}
	t.Fatalf("no action for %s in %v", addr, actionsOf(p))
	return Action{}
}

// converged checks that every reference in the cloud points at a live
// resource and that the next plan is empty.
func (f *fixture) converged(d string) {
	f.t.Helper()
	for _, name := range []string{"web-1", "web-2"} {
		inst, ok := f.cloud.Get(spec.AWS, spec.AWSInstance, "eu-west-3", name)
		if !ok {
			continue
		}
		group, ok := f.cloud.Get(spec.AWS, spec.SecurityGroup, "eu-west-3", "web")
		if !ok || inst.Fields["securityGroup"] != group.Attributes["groupId"] {
			f.t.Errorf("%s is attached to %v; the group web is %v", name, inst.Fields["securityGroup"], group.Attributes["groupId"])
		}
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		f.t.Errorf("next plan not empty: %v", actionsOf(again))
	}
}

// Replacing a security group replaces the instance attached to it around
// it: the instance goes first, the group is made again, then the instance.
func TestReplacePropagatesToWhatHoldsIt(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, instance))
	d := doc(sgRenamed, instance)
	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/security-group/web, replace aws/aws-instance/web-1" {
		t.Fatalf("plan: %s", got)
	}
	group, inst := actionAt(t, p, "aws/security-group/web"), actionAt(t, p, "aws/aws-instance/web-1")
	if group.Order != DeleteFirst || !strings.Contains(group.Reason, "description forces replacement") ||
		!strings.Contains(group.Reason, "aws/aws-instance/web-1 is deleted before it and created after") {
		t.Errorf("group: order %q, reason %q", group.Order, group.Reason)
	}
	if !strings.Contains(inst.Reason, "aws/security-group/web is replaced") {
		t.Errorf("instance reason %q", inst.Reason)
	}
	// render's TestReplaceCauseIsShown reads the cause in text and markdown.
	want := "delete aws/aws-instance/web-1, delete aws/security-group/web, create aws/security-group/web, create aws/aws-instance/web-1"
	if got := f.applyCalls(p); got != want {
		t.Errorf("calls: %s\nwant:  %s", got, want)
	}
	f.converged(d)
}

// One replaced group, two dependents: an instance, which the cloud holds
// attached, is replaced around it; a secret composed from its id is
// updated after it.
func TestReplaceWithDependentsOfDifferentMutability(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, instance, sgIDSecret))
	oldID := mustGroupID(t, f)
	d := doc(sgRenamed, instance, sgIDSecret)
	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/security-group/web, replace aws/aws-instance/web-1, update aws/secrets/web-group" {
		t.Fatalf("plan: %s", got)
	}
	sec := actionAt(t, p, "aws/secrets/web-group")
	if sec.Reason != "aws/security-group/web is replaced" || len(sec.Changes) != 1 || !sec.Changes[0].Sensitive {
		t.Errorf("secret: %+v", sec)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store, Force: true}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	newID := mustGroupID(t, f)
	if newID == oldID {
		t.Fatalf("the group kept its id %s", oldID)
	}
	if !strings.Contains(string(f.cloud.Dump()), "group="+newID) {
		t.Errorf("the secret does not hold the new group id %s", newID)
	}
	f.converged(d)
}

// applyCalls applies p (past the brake) and lists the mutating calls it
// made, in order.
func (f *fixture) applyCalls(p *Plan) string {
	f.t.Helper()
	before := len(f.cloud.Calls())
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store, Force: true}); err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	var order []string
	for _, c := range f.cloud.Calls()[before:] {
		if c.Op == "create" || c.Op == "delete" || c.Op == "update" {
			order = append(order, c.Op+" "+c.Address)
		}
	}
	return strings.Join(order, ", ")
}

func mustGroupID(t *testing.T, f *fixture) string {
	t.Helper()
	g, ok := f.cloud.Get(spec.AWS, spec.SecurityGroup, "eu-west-3", "web")
	if !ok {
		t.Fatal("no group web")
	}
	return g.Attributes["groupId"]
}

// A secret composed from a replaced database's endpoint is written again
// after the database is made again.
func TestReplacedDatabaseRewritesComposedSecret(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "hunter2"
	f.mustApply(doc(password, db, dbURL))
	d := doc(password, strings.Replace(db, `"dbadmin"`, `"owner"`, 1), dbURL)
	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/postgres/main, update aws/secrets/db-url" {
		t.Fatalf("plan: %s", got)
	}
	if r := actionAt(t, p, "aws/secrets/db-url").Reason; r != "aws/postgres/main is replaced" {
		t.Errorf("secret reason %q", r)
	}
	if got := f.applyCalls(p); got != "delete aws/postgres/main, create aws/postgres/main, update aws/secrets/db-url" {
		t.Errorf("calls: %s", got)
	}
	f.converged(d)
}

// An instance attached to a group other than the one declared — here one
// of the same name's predecessor, gone — is drift, repaired in place.
func TestReferenceToForeignIdentityIsDrift(t *testing.T) {
	f := newFixture(t)
	d := doc(sg, instance)
	f.mustApply(d)
	inst, _ := f.cloud.Get(spec.AWS, spec.AWSInstance, "eu-west-3", "web-1")
	inst.Fields["securityGroup"] = "sg-0deadbeef"
	f.cloud.Put(spec.AWS, spec.AWSInstance, inst)
	p := f.plan(d, false)
	a := actionAt(t, p, "aws/aws-instance/web-1")
	if a.Action != Update || len(a.Changes) != 1 || a.Changes[0].Before != "sg-0deadbeef" || a.Changes[0].After != mustGroupID(t, f) {
		t.Fatalf("want an update of securityGroup from the dead id, got %+v", a)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store, Force: true}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	f.converged(d)
}

// What a replace drags along counts toward the brake.
func TestBrakeCountsPropagatedReplaces(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, instance, instance2, queue))
	p := f.plan(doc(sgRenamed, instance, instance2, queue), false)
	if p.Summary.Replace != 3 {
		t.Fatalf("want 3 replaces, got %v", actionsOf(p))
	}
	f.wantBrake(p, 3, 4)
}

// wantBrake applies p without force and wants the brake to refuse it,
// counting destructive of managed.
func (f *fixture) wantBrake(p *Plan, destructive, managed int) {
	f.t.Helper()
	_, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store})
	var brake *BrakeError
	if !errors.As(err, &brake) || brake.Destructive != destructive || brake.Managed != managed {
		f.t.Fatalf("want the brake to count %d of %d, got %v", destructive, managed, err)
	}
}

// When the group's own deletion fails, nothing attached to it is made
// again on a missing group, and a re-run converges.
func TestReplaceFailureOfHeldResourceConverges(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, instance))
	d := doc(sgRenamed, instance)
	f.force = true
	f.cloud.Inject(memFault("delete", "aws/security-group/web"))
	if _, _, err := f.apply(d); err == nil {
		t.Fatal("apply succeeded despite the refused delete")
	}
	f.mustApply(d)
	f.converged(d)
}

func memFault(op, addr string) memory.Fault {
	return memory.Fault{Op: op, Address: addr, Err: providers.Errorf(providers.PermissionDenied, "AccessDenied: injected"), Times: 1}
}

// Cloud SQL keeps a deleted instance's name for up to a week, so a
// replace of a GCP postgres would delete the database and then fail to
// make it again: the plan shows the replace with an error row that says
// so and what to do, apply refuses it, and the database stays.
func TestAReplaceUnderAKeptNameIsRefused(t *testing.T) {
	cloud := memory.NewCloud(map[spec.Provider]string{spec.GCP: "shop-prod-1"})
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.GCP: cloud.Backend(spec.GCP)}, Parallelism: 2,
		Getenv: func(string) string { return "hunter2" }})
	store := &memStore{}
	doc := func(user string) *spec.Model {
		return model(t, `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"gcp": "shop-prod-1"}, "placement": {"gcp": "europe-west9"}, "resources": [
 {"address": "gcp/secrets/db-password", "spec": {"value": {"fromEnv": "DB_PASSWORD"}}},
 {"address": "gcp/postgres/main", "spec": {"masterUsername": "`+user+`", "masterPasswordSecret": {"ref": "gcp/secrets/db-password"}, "minCapacity": 2, "maxCapacity": 2}}]}`)
	}
	ctx := context.Background()
	plan := func(m *spec.Model) *Plan {
		l, _ := store.LoadLedger(ctx)
		p, err := e.Plan(ctx, m, nil, l, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := e.Apply(ctx, plan(doc("app")), ApplyOptions{Store: store}); err != nil {
		t.Fatal(err)
	}
	p := plan(doc("owner"))
	if a := actionAt(t, p, "gcp/postgres/main"); a.Action != Replace {
		t.Fatalf("want the replace shown, got %+v", a)
	}
	var row *spec.Diagnostic
	for i, d := range p.Diagnostics {
		if d.ID == spec.RowReplaceKeptName {
			row = &p.Diagnostics[i]
		}
	}
	if row == nil || row.Severity != spec.Error || !strings.Contains(row.Message, "keeps a deleted resource's name for up to a week") ||
		!strings.HasPrefix(row.Resolution, "rename it") {
		t.Fatalf("want the replace-kept-name error, got %+v", p.Diagnostics)
	}
	if _, err := e.Apply(ctx, p, ApplyOptions{Store: store}); !errors.Is(err, ErrPlanHasErrors) {
		t.Fatalf("apply: %v", err)
	}
	if got, ok := cloud.Get(spec.GCP, spec.Postgres, "europe-west9", "main"); !ok || got.Fields["masterUsername"] != "app" {
		t.Errorf("the database was touched: %+v", got)
	}
}

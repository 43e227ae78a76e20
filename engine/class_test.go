package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// planWith plans m against the fixture's cloud and ledger with opts, on
// the providers ps (AWS when none).
func (f *fixture) planWith(m *spec.Model, opts PlanOptions, ps ...spec.Provider) *Plan {
	f.t.Helper()
	l, _ := f.store.LoadLedger(context.Background())
	p, err := f.engine(ps...).Plan(context.Background(), m, nil, l, opts)
	if err != nil {
		f.t.Fatalf("plan: %v", err)
	}
	return p
}

func TestUpdateIsClassedInPlaceWithTheFieldsThatChange(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(bucket))
	p := f.plan(doc(strings.NewReplacer(`"versioning": true`, `"versioning": false`, `"web"`, `"ops"`).Replace(bucket)), false)
	a := actionAt(t, p, "aws/object-store/assets")
	if a.Action != Update || a.Class != ClassUpdateInPlace || a.Cause != "changes: versioning, tags" {
		t.Fatalf("want update-in-place with cause %q, got %s %s %q", "changes: versioning, tags", a.Action, a.Class, a.Cause)
	}
}

// A replace names the field that forces it; one forced through a
// reference names what it reads, and what the plan does to that.
func TestReplaceCauseNamesTheFieldAndWhatItReads(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, instance))
	p := f.plan(doc(sgRenamed, instance), false)
	if a := actionAt(t, p, "aws/security-group/web"); a.Class != ClassReplace || a.Cause != `field "description" forces a replace` {
		t.Errorf("group: %s %q", a.Class, a.Cause)
	}
	want := `field "securityGroup" forces a replace; it reads aws/security-group/web, which is replaced`
	if a := actionAt(t, p, "aws/aws-instance/web-1"); a.Class != ClassReplace || a.Cause != want {
		t.Errorf("instance: %s %q, want %q", a.Class, a.Cause, want)
	}
}

// No kind today has a field that both forces a replace and takes an
// expression, so the compiled model is edited to reach the case: an
// instance whose imageId reads a database's endpoint, then another
// fleet's value.
func TestReplaceCauseNamesTheObservedValueItReads(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "hunter2"
	d := doc(sg, instance, password, db)
	f.mustApply(d)
	m := model(t, d)
	for i := range m.Resources {
		if m.Resources[i].Address.String() == "aws/aws-instance/web-1" {
			m.Resources[i].Fields["imageId"] = spec.Observed{Of: addrOf(t, "aws/postgres/main"), Attribute: "endpoint"}
		}
	}
	p := f.planWith(m, PlanOptions{})
	want := `field "imageId" forces a replace; it reads aws/postgres/main.endpoint`
	if a := actionAt(t, p, "aws/aws-instance/web-1"); a.Action != Replace || a.Cause != want {
		t.Fatalf("instance: %s %q, want %q", a.Action, a.Cause, want)
	}
	// Read from another fleet instead, the value is named as the wire
	// names it (Change.From).
	im := spec.Import{Slot: "images", Export: "web"}
	m.Wired = map[spec.Import]spec.Wired{im: {Ref: "images:web", Fleet: "images", Export: spec.PublishedExport{Value: "ami-new"}}}
	for i := range m.Resources {
		if m.Resources[i].Address.String() == "aws/aws-instance/web-1" {
			m.Resources[i].Fields["imageId"] = im
		}
	}
	p = f.planWith(m, PlanOptions{})
	want = `field "imageId" forces a replace; it reads images:web`
	if a := actionAt(t, p, "aws/aws-instance/web-1"); a.Action != Replace || a.Cause != want {
		t.Fatalf("instance: %s %q, want %q", a.Action, a.Cause, want)
	}
}

func addrOf(t *testing.T, s string) spec.Address {
	t.Helper()
	a, err := spec.ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const (
	scwFleet     = `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"scaleway": "11111111-2222-3333-4444-555555555555"}, "placement": {"scaleway": "fr-par"}, "resources": [%s]}`
	scwNS        = `{"address": "scaleway/scaleway-container-namespace/apps", "spec": {}}`
	scwSecret    = `{"address": "scaleway/secrets/shop-db-url", "spec": {"value": {"fromEnv": "DB_URL"}, "description": "v1"}}`
	scwContainer = `{"address": "scaleway/scaleway-container/api", "spec": {"namespace": {"ref": "scaleway/scaleway-container-namespace/apps"}, "image": "rg.fr-par.scw.cloud/apps/api:1", "secretEnv": {"DB_URL": {"ref": "scaleway/secrets/shop-db-url"}}}}`
)

func scwDoc(resources ...string) string { return fmt.Sprintf(scwFleet, strings.Join(resources, ",")) }

// A container reads its secretEnv when it starts: an update of the secret
// sends it nothing, and the plan says so with a contract, which changes
// neither the counts of changes nor the id.
func TestRunTimeReferenceToAnUpdatedSecretIsAContract(t *testing.T) {
	f := newFixture(t)
	f.env["DB_URL"] = "postgres://a"
	if _, err := f.engine(spec.Scaleway).Apply(context.Background(),
		f.planWith(model(t, scwDoc(scwNS, scwSecret, scwContainer)), PlanOptions{}, spec.Scaleway), ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(scwSecret, `"v1"`, `"v2"`, 1)
	members := func(a spec.Address) (string, string) {
		if a.Kind == spec.ScalewayContainer {
			return "shop-a", "api"
		}
		return "", ""
	}
	p := f.planWith(model(t, scwDoc(scwNS, changed, scwContainer)), PlanOptions{Members: members}, spec.Scaleway)
	if got := strings.Join(actionsOf(p), ", "); got != "update scaleway/secrets/shop-db-url" {
		t.Fatalf("plan: %s", got)
	}
	want := Contract{Address: addrOf(t, "scaleway/scaleway-container/api"), Field: "secretEnv", Reads: addrOf(t, "scaleway/secrets/shop-db-url"),
		Change: Update, Component: "shop-a", Member: "api",
		Cause: "reads scaleway/secrets/shop-db-url at run time, which changes; no action on scaleway/scaleway-container/api"}
	if len(p.Contracts) != 1 || fmt.Sprint(p.Contracts[0]) != fmt.Sprint(want) {
		t.Fatalf("contracts: %+v\nwant: %+v", p.Contracts, want)
	}
	if p.Summary.Contract != 1 || p.Summary.Changes() != 1 || p.Summary.Update != 1 {
		t.Errorf("summary %+v", p.Summary)
	}
	stripped := *p
	stripped.Contracts = nil
	if stripped.computeID() != p.ID {
		t.Error("the contracts are part of the id")
	}
	// The same cloud and change, planned without the run-time field: no
	// contract, and the same plan.
	without := strings.Replace(scwContainer, `, "secretEnv": {"DB_URL": {"ref": "scaleway/secrets/shop-db-url"}}`, "", 1)
	q := f.planWith(model(t, scwDoc(scwNS, changed, without)), PlanOptions{}, spec.Scaleway)
	if len(q.Contracts) != 0 || q.ID != p.ID {
		t.Errorf("without the reference: contracts %+v, id %s, want no contract and id %s", q.Contracts, q.ID, p.ID)
	}
	// A replaced reference says so.
	if c := (&planner{}).contract(want.Address, "secretEnv", want.Reads, Replace); c.Cause !=
		"reads scaleway/secrets/shop-db-url at run time, which is replaced; no action on scaleway/scaleway-container/api" {
		t.Errorf("replace: %q", c.Cause)
	}
	// Nothing changes: no contract either.
	if r := f.planWith(model(t, scwDoc(scwNS, scwSecret, scwContainer)), PlanOptions{}, spec.Scaleway); len(r.Contracts) != 0 || len(r.Actions) != 0 {
		t.Errorf("an empty plan has %v and contracts %+v", actionsOf(r), r.Contracts)
	}
}

// cutBucket is a CutOf hook saying the bucket went with member db of
// shop-a.
func cutBucket(a spec.Address) string {
	if a.Kind == spec.ObjectStore {
		return "shop-a.db"
	}
	return ""
}

func TestCutHookNamesTheCutMember(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(queue, bucket))
	p := f.planWith(model(t, doc(queue)), PlanOptions{CutOf: cutBucket})
	a := actionAt(t, p, "aws/object-store/assets")
	if a.Action != Delete || a.Class != ClassDelete || a.Cut != "shop-a.db" || a.Cause != "cut: members.db" ||
		a.Component != "shop-a" || a.Member != "db" || a.Reason != "no longer declared" {
		t.Fatalf("cut delete: %+v", a)
	}
	// Without the hook it is a plain delete, and the id is the same: the
	// cut explains the delete, it does not decide it.
	plain := f.planWith(model(t, doc(queue)), PlanOptions{})
	if b := actionAt(t, plain, "aws/object-store/assets"); b.Cut != "" || b.Cause != "no longer declared" || b.Component != "" {
		t.Errorf("without the hook: %+v", b)
	}
	if plain.ID != p.ID {
		t.Errorf("the cut changed the id")
	}
	// A destroy is the cause of everything it deletes.
	d := f.planWith(model(t, doc(queue)), PlanOptions{CutOf: cutBucket, Destroy: true})
	if b := actionAt(t, d, "aws/object-store/assets"); b.Cut != "" || b.Cause != "destroy" {
		t.Errorf("destroy: %+v", b)
	}
}

// The brake counts a cut delete as the delete it is.
func TestBrakeCountsCutDeletes(t *testing.T) {
	f := newFixture(t)
	other := strings.Replace(bucket, "assets", "media", 1)
	f.mustApply(doc(queue, bucket, other))
	p := f.planWith(model(t, doc(queue)), PlanOptions{CutOf: cutBucket})
	for _, a := range p.Actions {
		if a.Cut == "" {
			t.Fatalf("not a cut delete: %+v", a)
		}
	}
	f.wantBrake(p, 2, 3)
}

// Every action carries the component and member the hook gives, and the
// id does not.
func TestMembersHookPlacesEveryAction(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(queue, bucket))
	d := doc(strings.Replace(queue, "30", "31", 1), sg)
	members := func(a spec.Address) (string, string) { return "shop-" + string(a.Kind), a.Name }
	p := f.planWith(model(t, d), PlanOptions{Members: members})
	if len(p.Actions) != 3 {
		t.Fatalf("plan: %v", actionsOf(p))
	}
	for _, a := range p.Actions {
		if a.Component != "shop-"+string(a.Address.Kind) || a.Member != a.Address.Name {
			t.Errorf("%s: component %q member %q", a.Address, a.Component, a.Member)
		}
	}
	if q := f.planWith(model(t, d), PlanOptions{}); q.ID != p.ID {
		t.Error("the component map changed the id")
	}
	for _, a := range p.Actions {
		if a.Class != ClassOf(a.Action) || a.Cause == "" {
			t.Errorf("%s %s: class %q cause %q", a.Action, a.Address, a.Class, a.Cause)
		}
	}
}

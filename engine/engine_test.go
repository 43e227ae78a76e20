package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
	"github.com/infra-iac/infra/state"
)

const acct = "123456789012"

// memStore is a state.Store in memory that keeps every saved ledger, so a
// test can check what was recorded after each action.
type memStore struct {
	mu       sync.Mutex
	ledger   *state.Ledger
	cache    *state.Cache
	saves    [][]byte
	caches   [][]byte
	failFrom int // fail every ledger save from the n-th on (1-based); 0 never
	failOnly int // fail the n-th ledger save alone (1-based); 0 never
	nsaves   int
	delay    time.Duration // each ledger save takes this long
}

func (s *memStore) Lock(ctx context.Context, info state.LockInfo) (state.Lock, error) {
	return nil, errors.New("not used")
}
func (s *memStore) Unlock(ctx context.Context, id string) error { return nil }
func (s *memStore) LoadLedger(ctx context.Context) (*state.Ledger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ledger == nil {
		return state.NewLedger(), nil
	}
	return s.ledger.Clone(), nil
}
func (s *memStore) SaveLedger(ctx context.Context, l *state.Ledger) error {
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nsaves++
	if (s.failFrom > 0 && s.nsaves >= s.failFrom) || s.nsaves == s.failOnly {
		return errors.New("disk full")
	}
	s.ledger = l.Clone()
	b, _ := json.Marshal(l)
	s.saves = append(s.saves, b)
	return nil
}
func (s *memStore) LoadCache(ctx context.Context) (*state.Cache, error) { return state.NewCache(), nil }
func (s *memStore) SaveCache(ctx context.Context, c *state.Cache) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache = c
	b, _ := json.Marshal(c)
	s.caches = append(s.caches, b)
	return nil
}
func (s *memStore) Where() string { return "memory" }

// fixture is a fleet, a memory cloud and a store.
type fixture struct {
	t      *testing.T
	cloud  *memory.Cloud
	store  *memStore
	env    map[string]string
	events []Event
	mu     sync.Mutex
	force  bool
	// onEvent, when set, sees each event as the engine emits it, on the
	// engine's goroutine: a test can hold the run there.
	onEvent func(Event)
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, cloud: memory.NewCloud(map[spec.Provider]string{spec.AWS: acct, spec.Scaleway: "11111111-2222-3333-4444-555555555555"}),
		store: &memStore{}, env: map[string]string{}}
}

// progress records the engine's events, and shows each to onEvent.
func (f *fixture) progress(ev Event) {
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.mu.Unlock()
	if f.onEvent != nil {
		f.onEvent(ev)
	}
}

func (f *fixture) engine(ps ...spec.Provider) *Engine {
	if len(ps) == 0 {
		ps = []spec.Provider{spec.AWS}
	}
	backends := map[spec.Provider]providers.Backend{}
	for _, p := range ps {
		backends[p] = f.cloud.Backend(p)
	}
	return New(Options{Backends: backends, Getenv: func(k string) string { return f.env[k] }, Parallelism: 4,
		Progress: f.progress})
}

func model(t *testing.T, doc string) *spec.Model {
	t.Helper()
	d, err := spec.DecodeDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	m, diags := spec.Compile(d)
	if spec.HasErrors(diags) {
		t.Fatalf("document has errors: %v", diags)
	}
	return m
}

func (f *fixture) plan(doc string, destroy bool) *Plan {
	f.t.Helper()
	m := model(f.t, doc)
	l, _ := f.store.LoadLedger(context.Background())
	p, err := f.engine().Plan(context.Background(), m, nil, l, PlanOptions{Destroy: destroy})
	if err != nil {
		f.t.Fatalf("plan: %v", err)
	}
	return p
}

func (f *fixture) apply(doc string) (*Plan, *Report, error) {
	f.t.Helper()
	p := f.plan(doc, false)
	r, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store, Force: f.force})
	return p, r, err
}

func (f *fixture) mustApply(doc string) *Plan {
	f.t.Helper()
	p, _, err := f.apply(doc)
	if err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	return p
}

func actionsOf(p *Plan) []string {
	var out []string
	for _, a := range p.Actions {
		out = append(out, string(a.Action)+" "+a.Address.String())
	}
	return out
}

func doc(resources ...string) string {
	return `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + acct + `"},
	"placement": {"aws": "eu-west-3"}, "resources": [` + strings.Join(resources, ",") + `]}`
}

const (
	sg       = `{"address": "aws/security-group/web", "spec": {"description": "web", "ingress": [{"port": 443, "cidr": "0.0.0.0/0"}]}}`
	instance = `{"address": "aws/aws-instance/web-1", "spec": {"imageId": "latest", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/web"}}}`
	queue    = `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30}}`
	bucket   = `{"address": "aws/object-store/assets", "spec": {"versioning": true, "tags": {"team": "web"}}}`
	password = `{"address": "aws/secrets/db-password", "spec": {"value": {"fromEnv": "DB_PASSWORD"}}}`
	db       = `{"address": "aws/postgres/main", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "aws/secrets/db-password"}, "minCapacity": 0.5, "maxCapacity": 4}}`
	dbURL    = `{"address": "aws/secrets/db-url", "spec": {"value": {"composed": {"format": "postgres://dbadmin:{0}@{1}/main", "args": [{"secretValue": "aws/secrets/db-password"}, {"observed": "aws/postgres/main", "attribute": "endpoint"}]}}}}`
)

func TestFreshApplyCreatesInDependencyOrderThenPlansNothing(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "hunter2"
	d := doc(instance, sg, queue, bucket, dbURL, db, password)
	p := f.mustApply(d)
	if p.Summary.Create != 7 {
		t.Fatalf("want 7 creates, got %v", actionsOf(p))
	}
	// Every create call comes after the create calls of its dependencies.
	pos := map[string]int{}
	for i, c := range f.cloud.Calls() {
		if c.Op == "create" {
			pos[c.Address] = i
		}
	}
	for _, pair := range [][2]string{
		{"aws/security-group/web", "aws/aws-instance/web-1"},
		{"aws/secrets/db-password", "aws/postgres/main"},
		{"aws/postgres/main", "aws/secrets/db-url"},
		{"aws/secrets/db-password", "aws/secrets/db-url"},
	} {
		if pos[pair[0]] >= pos[pair[1]] {
			t.Errorf("%s was created after %s", pair[0], pair[1])
		}
	}
	// The plan lists dependencies first too.
	idx := map[string]int{}
	for i, a := range p.Actions {
		idx[a.Address.String()] = i
	}
	if idx["aws/postgres/main"] > idx["aws/secrets/db-url"] || idx["aws/security-group/web"] > idx["aws/aws-instance/web-1"] {
		t.Errorf("plan order: %v", actionsOf(p))
	}
	if len(f.store.ledger.Rows) != 7 {
		t.Errorf("ledger has %d rows", len(f.store.ledger.Rows))
	}
	again := f.plan(d, false)
	if len(again.Actions) != 0 {
		t.Fatalf("second plan not empty: %v", actionsOf(again))
	}
}

func TestEveryResourceCarriesTheOwnershipTag(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "x"
	f.mustApply(doc(sg, instance, queue, bucket, password, db, dbURL))
	for _, k := range []spec.Kind{spec.SecurityGroup, spec.AWSInstance, spec.Queues, spec.ObjectStore, spec.Secrets, spec.Postgres} {
		ds, _ := f.cloud.Backend(spec.AWS).Driver(k)
		rs, _ := ds.List(context.Background(), "eu-west-3")
		for _, r := range rs {
			if r.Owner != "shop" {
				t.Errorf("%s/%s: owner %q", k, r.Name, r.Owner)
			}
			tags, _ := r.Fields["tags"].(map[string]any)
			if tags[spec.OwnershipTagKey] != "shop" {
				t.Errorf("%s/%s: tags %v", k, r.Name, r.Fields["tags"])
			}
		}
	}
}

func TestMutableChangeUpdatesAndForcingChangeReplaces(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue))
	p := f.plan(doc(strings.Replace(sg, `"description": "web"`, `"description": "web tier"`, 1),
		strings.Replace(queue, "30", "120", 1)), false)
	got := actionsOf(p)
	want := []string{"update aws/queues/jobs", "replace aws/security-group/web"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	upd := p.Actions[0].Changes
	if len(upd) != 1 || upd[0].Field != "visibilityTimeoutSec" || upd[0].Before != 30.0 || upd[0].After != 120.0 || upd[0].ForcesReplacement {
		t.Errorf("update changes: %+v", upd)
	}
	rep := p.Actions[1].Changes
	if len(rep) != 1 || rep[0].Field != "description" || !rep[0].ForcesReplacement {
		t.Errorf("replace changes: %+v", rep)
	}
	// render's TestTextShowsUpdateAndReplace reads this plan as text.
	before := len(f.cloud.Calls())
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range f.cloud.Calls()[before:] {
		ops = append(ops, c.Op+" "+c.Address)
	}
	// Replace is delete, then create, of the same name.
	di, ci := indexOf(ops, "delete aws/security-group/web"), indexOf(ops, "create aws/security-group/web")
	if di < 0 || ci < 0 || di > ci {
		t.Errorf("replace calls: %v", ops)
	}
	if p := f.plan(doc(strings.Replace(sg, `"description": "web"`, `"description": "web tier"`, 1),
		strings.Replace(queue, "30", "120", 1)), false); len(p.Actions) != 0 {
		t.Errorf("not converged: %v", actionsOf(p))
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func TestUnknownIsNotDriftAndSetsCompareAsSets(t *testing.T) {
	f := newFixture(t)
	two := `{"address": "aws/security-group/web", "spec": {"description": "web", "ingress": [{"port": 443, "cidr": "0.0.0.0/0"}, {"port": 80, "cidr": "10.0.0.0/8"}]}}`
	f.mustApply(doc(two, `{"address": "aws/iam/ci", "spec": {"policies": ["arn:b", "arn:a"]}}`))
	swapped := `{"address": "aws/security-group/web", "spec": {"description": "web", "ingress": [{"port": 80, "cidr": "10.0.0.0/8"}, {"port": 443, "cidr": "0.0.0.0/0"}]}}`
	// The queue field omitted entirely is unknown, not "reset to default".
	p := f.plan(doc(swapped, `{"address": "aws/iam/ci", "spec": {"policies": ["arn:a", "arn:b"]}}`), false)
	if len(p.Actions) != 0 {
		t.Fatalf("reordered sets planned %v", actionsOf(p))
	}
	f.force = true
	f.mustApply(doc(queue))
	p = f.plan(doc(`{"address": "aws/queues/jobs", "spec": {}}`), false)
	if len(p.Actions) != 0 {
		t.Fatalf("an unset field planned %v", actionsOf(p))
	}
}

func TestOwnershipTagNeverCausesAnUpdate(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(bucket))
	r, _ := f.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets")
	if r.Fields["tags"].(map[string]any)[spec.OwnershipTagKey] != "shop" {
		t.Fatalf("tags: %v", r.Fields["tags"])
	}
	if p := f.plan(doc(bucket), false); len(p.Actions) != 0 {
		t.Fatalf("planned %v", actionsOf(p))
	}
	// And a tag change keeps the ownership tag.
	f.mustApply(doc(strings.Replace(bucket, `"web"`, `"data"`, 1)))
	r, _ = f.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets")
	if r.Fields["tags"].(map[string]any)[spec.OwnershipTagKey] != "shop" || r.Owner != "shop" {
		t.Fatalf("update lost the ownership tag: %v", r.Fields["tags"])
	}
}

func TestDeletedLineIsDeletedThroughTheLedgerAndForgetLeavesIt(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue, bucket))
	p := f.plan(doc(sg, bucket), false)
	if got := actionsOf(p); fmt.Sprint(got) != "[delete aws/queues/jobs]" || p.Actions[0].Reason != "no longer declared" {
		t.Fatalf("got %v", got)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); ok {
		t.Fatal("queue still exists")
	}
	if _, ok := f.store.ledger.Get(spectest.Address("aws/queues/jobs")); ok {
		t.Fatal("queue still in the ledger")
	}

	forget := strings.Replace(doc(sg), `"resources"`, `"forget": ["aws/object-store/assets"], "resources"`, 1)
	p = f.plan(forget, false)
	if got := actionsOf(p); fmt.Sprint(got) != "[forget aws/object-store/assets]" {
		t.Fatalf("got %v", got)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	r, ok := f.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets")
	if !ok {
		t.Fatal("forget deleted the bucket")
	}
	tags := r.Fields["tags"].(map[string]any)
	if _, has := tags[spec.OwnershipTagKey]; has || tags["team"] != "web" {
		t.Fatalf("forget should drop only our tag: %v", tags)
	}
	if _, ok := f.store.ledger.Get(spectest.Address("aws/object-store/assets")); ok {
		t.Fatal("forget kept the row")
	}
	if p := f.plan(forget, false); len(p.Actions) != 0 {
		t.Fatalf("after forget: %v", actionsOf(p))
	}
}

func TestBrake(t *testing.T) {
	four := []string{sg, queue, bucket, `{"address": "aws/queues/other", "spec": {}}`}
	t.Run("fires at 3 of 4", func(t *testing.T) {
		f := newFixture(t)
		f.mustApply(doc(four...))
		_, _, err := f.apply(doc(sg))
		var brake *BrakeError
		if !errors.As(err, &brake) || brake.Destructive != 3 || brake.Managed != 4 {
			t.Fatalf("want the brake, got %v", err)
		}
		// The way out is each front end's to say (--force, options.force):
		// the engine names no flag.
		if !strings.Contains(err.Error(), "not a teardown") || strings.Contains(err.Error(), "--force") {
			t.Errorf("message: %v", err)
		}
		if len(f.cloud.Addresses()) != 4 {
			t.Fatal("the brake let something through")
		}
		f.force = true
		if _, _, err := f.apply(doc(sg)); err != nil {
			t.Fatalf("--force: %v", err)
		}
	})
	t.Run("does not fire at 2 of 4", func(t *testing.T) {
		f := newFixture(t)
		f.mustApply(doc(four...))
		if _, _, err := f.apply(doc(sg, queue)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("does not fire on destroy or an empty declaration", func(t *testing.T) {
		f := newFixture(t)
		f.mustApply(doc(four...))
		p := f.plan(doc(four...), true)
		if p.Summary.Delete != 4 {
			t.Fatalf("destroy plan: %v", actionsOf(p))
		}
		if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
			t.Fatal(err)
		}
		if n := len(f.cloud.Addresses()); n != 0 {
			t.Fatalf("%d left", n)
		}
		f.mustApply(doc(four...))
		if _, _, err := f.apply(doc()); err != nil {
			t.Fatalf("empty declaration: %v", err)
		}
		if n := len(f.cloud.Addresses()); n != 0 {
			t.Fatalf("%d left", n)
		}
	})
}

func TestCycleIsReportedWithItsMembers(t *testing.T) {
	a := `{"address": "aws/secrets/a", "spec": {"value": {"composed": {"format": "{0}", "args": [{"secretValue": "aws/secrets/b"}]}}}}`
	b := `{"address": "aws/secrets/b", "spec": {"value": {"composed": {"format": "{0}", "args": [{"secretValue": "aws/secrets/a"}]}}}}`
	d, _ := spec.DecodeDocument([]byte(doc(a, b, queue)))
	diags := spec.Validate(d)
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "dependency cycle among: aws/secrets/a, aws/secrets/b") {
		t.Fatalf("diags: %v", diags)
	}
	// The engine's own ordering refuses a cycle too, naming its members.
	_, err := order([]Action{{Address: spectest.Address("aws/secrets/a")}, {Address: spectest.Address("aws/secrets/b")}},
		map[spec.Address][]spec.Address{
			spectest.Address("aws/secrets/a"): {spectest.Address("aws/secrets/b")},
			spectest.Address("aws/secrets/b"): {spectest.Address("aws/secrets/a")},
		})
	if err == nil || !strings.Contains(err.Error(), "aws/secrets/a, aws/secrets/b") {
		t.Fatalf("order: %v", err)
	}
}

func TestCanarySecretNeverLeaks(t *testing.T) {
	const canary = "CANARY-s3cr3t-7f1e"
	f := newFixture(t)
	f.env["DB_PASSWORD"] = canary
	d := doc(password, db, dbURL)
	p := f.mustApply(d)
	var out bytes.Buffer
	// What every rendering draws from: the plan itself (render's tests
	// hold each renderer to it).
	js, _ := json.Marshal(p)
	out.Write(js)
	fmt.Fprintf(&out, "%+v", p)
	for _, ev := range f.events {
		fmt.Fprintf(&out, "%v %+v %#v\n", ev, ev, ev)
	}
	for _, s := range f.store.saves {
		out.Write(s)
	}
	for _, c := range f.store.caches {
		out.Write(c)
	}
	if strings.Contains(out.String(), canary) {
		t.Fatal("the canary leaked into output, ledger or cache")
	}
	// The cloud did receive it, composed with the endpoint.
	rd, _ := f.cloud.Backend(spec.AWS).Driver(spec.Secrets)
	v, err := rd.(providers.SecretReader).ReadSecretValue(context.Background(), "eu-west-3", "db-url")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://dbadmin:" + canary + "@main.eu-west-3.memory.invalid:5432/main"; v.Reveal() != want {
		t.Fatalf("composed value %q, want %q", v.Reveal(), want)
	}
	// Changing the source does not show up as a diff: secrets are
	// create-only and never compared.
	f.env["DB_PASSWORD"] = "other"
	if p := f.plan(d, false); len(p.Actions) != 0 {
		t.Fatalf("planned %v", actionsOf(p))
	}
}

func TestComposedSecretSettlesFromTheCloudWhenTheVariableIsGone(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "first"
	f.mustApply(doc(password, db))
	delete(f.env, "DB_PASSWORD")
	f.mustApply(doc(password, db, dbURL))
	rd, _ := f.cloud.Backend(spec.AWS).Driver(spec.Secrets)
	v, _ := rd.(providers.SecretReader).ReadSecretValue(context.Background(), "eu-west-3", "db-url")
	if !strings.Contains(v.Reveal(), ":first@") {
		t.Fatalf("got %q", v.Reveal())
	}
}

func TestSamePlanSameID(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "x"
	d := doc(sg, instance, queue, bucket)
	a, b := f.plan(d, false), f.plan(d, false)
	if a.ID != b.ID || !strings.HasPrefix(a.ID, "sha256:") {
		t.Fatalf("ids differ: %s %s", a.ID, b.ID)
	}
	f.mustApply(d)
	c := f.plan(strings.Replace(d, `"visibilityTimeoutSec": 30`, `"visibilityTimeoutSec": 31`, 1), false)
	e := f.plan(strings.Replace(d, `"visibilityTimeoutSec": 30`, `"visibilityTimeoutSec": 32`, 1), false)
	if c.ID == e.ID {
		t.Fatal("different changes gave the same id")
	}
}

func TestOrphanDeletesAreRetriedInRounds(t *testing.T) {
	f := newFixture(t)
	scw := `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"scaleway": "11111111-2222-3333-4444-555555555555"},
	"placement": {"scaleway": "fr-par"}, "resources": [%s]}`
	ns := `{"address": "scaleway/scaleway-container-namespace/apps", "spec": {}}`
	ctr := `{"address": "scaleway/scaleway-container/api", "spec": {"namespace": {"ref": "scaleway/scaleway-container-namespace/apps"}, "image": "rg.fr-par.scw.cloud/apps/api:1"}}`
	keep := `{"address": "scaleway/queues/shop-keep", "spec": {}}`
	// One action at a time, so the order is the plan's: with no
	// declaration there are no edges, and the namespace sorts before the
	// container that lives in it.
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.Scaleway: f.cloud.Backend(spec.Scaleway)}, Parallelism: 1,
		Progress: f.progress})
	run := func(d string) (*Plan, *Report, error) {
		p, err := e.Plan(context.Background(), model(t, d), nil, f.store.ledger, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Apply(context.Background(), p, ApplyOptions{Store: f.store, Force: true})
		return p, r, err
	}
	if _, _, err := run(fmt.Sprintf(scw, ns+","+ctr+","+keep)); err != nil {
		t.Fatal(err)
	}
	p, rep, err := run(fmt.Sprintf(scw, keep))
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if got := actionsOf(p); fmt.Sprint(got) != "[delete scaleway/scaleway-container-namespace/apps delete scaleway/scaleway-container/api]" {
		t.Fatalf("plan: %v", got)
	}
	if got := f.cloud.Addresses(); fmt.Sprint(got) != "[scaleway/queues/shop-keep]" {
		t.Fatalf("left: %v", got)
	}
	var deferred []string
	for _, ev := range f.events {
		if ev.Kind == EventDeferred {
			deferred = append(deferred, ev.Address.String())
		}
	}
	if fmt.Sprint(deferred) != "[scaleway/scaleway-container-namespace/apps]" {
		t.Fatalf("deferred: %v", deferred)
	}
	for _, a := range rep.Applied {
		if a.Status != StatusDone {
			t.Errorf("%s: %s %s", a.Address, a.Status, a.Error)
		}
	}
}

func TestOrphanRefusedForEverFailsWithTheProvidersWords(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(sg, queue))
	f.cloud.Inject(memory.Fault{Op: "delete", Address: "aws/security-group/web",
		Err: providers.Errorf(providers.Conflict, "DependencyViolation: resource sg-123 has a dependent object")})
	_, _, err := f.apply(doc(queue))
	if err == nil || !strings.Contains(err.Error(), "aws/security-group/web: delete: conflict: DependencyViolation: resource sg-123 has a dependent object") {
		t.Fatalf("got %v", err)
	}
	if _, ok := f.store.ledger.Get(spectest.Address("aws/security-group/web")); !ok {
		t.Fatal("a failed delete dropped the row")
	}
}

func TestForeignDeclaredResourceIsWarnedAndLeftAlone(t *testing.T) {
	f := newFixture(t)
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "jobs", Region: "eu-west-3", Owner: "billing",
		Fields: map[string]any{"visibilityTimeoutSec": 5.0, "tags": map[string]any{spec.OwnershipTagKey: "billing"}}})
	f.cloud.Put(spec.AWS, spec.ObjectStore, providers.Resource{Name: "assets", Region: "eu-west-3",
		Fields: map[string]any{"versioning": false}})
	p := f.plan(doc(queue, bucket), false)
	if len(p.Actions) != 0 {
		t.Fatalf("planned %v", actionsOf(p))
	}
	if len(p.Diagnostics) != 2 || !strings.Contains(p.Diagnostics[1].Message, "tagged managed-by-infra=billing") ||
		!strings.Contains(p.Diagnostics[0].Message, "carries no managed-by-infra tag") {
		t.Fatalf("diagnostics: %v", p.Diagnostics)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if f.store.ledger != nil && len(f.store.ledger.Rows) != 0 {
		t.Fatalf("adopted a foreign resource: %v", f.store.ledger.Rows)
	}
}

func TestAdoptRecordsWhatExistsAndIsOurs(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(queue, sg))
	f.store.ledger = nil // the ledger is lost
	p := f.plan(doc(queue, sg), false)
	if got := actionsOf(p); fmt.Sprint(got) != "[adopt aws/queues/jobs adopt aws/security-group/web]" {
		t.Fatalf("got %v", got)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if len(f.store.ledger.Rows) != 2 {
		t.Fatalf("rows %v", f.store.ledger.Rows)
	}
	// Recorded before any mutation: an apply that also updates records the
	// adoption in its first save.
	f.store.ledger = nil
	f.store.saves = nil
	f.mustApply(doc(strings.Replace(queue, "30", "99", 1), sg))
	if len(f.store.saves) == 0 || !strings.Contains(string(f.store.saves[0]), `"security-group"`) {
		t.Fatalf("first save: %s", f.store.saves)
	}
}

func TestUnreachableBackendIsRefused(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(queue))
	// The document now names no AWS resource and no AWS account: no AWS
	// backend is built. The ledger still records the queue.
	empty := `{"apiVersion": "infra/v1", "fleet": "shop", "resources": []}`
	m := model(t, empty)
	e := New(Options{Backends: map[spec.Provider]providers.Backend{},
		Unreachable: map[spec.Provider]string{spec.AWS: "no aws credentials were loaded, because this declaration names no aws resources"}})
	p, err := e.Plan(context.Background(), m, nil, f.store.ledger, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !spec.HasErrors(p.Diagnostics) {
		t.Fatalf("no error row: %v", p.Diagnostics)
	}
	_, err = e.Apply(context.Background(), p, ApplyOptions{Store: f.store})
	if err == nil {
		t.Fatal("apply went ahead")
	}
	if _, ok := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); !ok || len(f.store.ledger.Rows) != 1 {
		t.Fatal("something was lost")
	}
}

func TestWrongAccountIsRefusedBeforeAnyListing(t *testing.T) {
	f := newFixture(t)
	d := strings.Replace(doc(queue), acct, "999999999999", 1)
	_, err := f.engine().Plan(context.Background(), model(t, d), nil, nil, PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "belong to account 123456789012, but the fleet is for 999999999999") {
		t.Fatalf("got %v", err)
	}
	for _, c := range f.cloud.Calls() {
		if c.Op != "account" {
			t.Fatalf("a %s call reached the cloud", c.Op)
		}
	}
}

func TestReadErrorOtherThanNotFoundFailsTheRun(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(queue))
	f.cloud.Inject(memory.Fault{Op: "read", Address: "aws/queues/jobs", Err: providers.Errorf(providers.PermissionDenied, "AccessDenied: no")})
	_, err := f.engine().Plan(context.Background(), model(t, doc(queue)), nil, f.store.ledger, PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "aws/queues/jobs: read: permission denied: AccessDenied") {
		t.Fatalf("got %v", err)
	}
}

func TestFailedActionSkipsDependantsAndDeletesAndRerunConverges(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(queue))
	f.cloud.Inject(memory.Fault{Op: "create", Address: "aws/security-group/web", Err: providers.Errorf(providers.Throttled, "Throttling"), Times: 1})
	f.force = true
	_, rep, err := f.apply(doc(sg, instance, bucket))
	if err == nil {
		t.Fatal("want the failure")
	}
	status := map[string]Status{}
	for _, a := range rep.Applied {
		status[a.Address.String()] = a.Status
	}
	if status["aws/aws-instance/web-1"] != StatusSkipped || status["aws/queues/jobs"] != StatusSkipped || status["aws/object-store/assets"] != StatusDone {
		t.Fatalf("statuses %v", status)
	}
	p := f.mustApply(doc(sg, instance, bucket))
	if got := actionsOf(p); fmt.Sprint(got) != "[create aws/security-group/web create aws/aws-instance/web-1 delete aws/queues/jobs]" {
		t.Fatalf("rerun: %v", got)
	}
	if p := f.plan(doc(sg, instance, bucket), false); len(p.Actions) != 0 {
		t.Fatalf("not converged: %v", actionsOf(p))
	}
}

func TestCrashAfterEverySaveConverges(t *testing.T) {
	d := doc(sg, instance, queue, bucket, password, db, dbURL)
	for k := 1; k <= 7; k++ {
		f := newFixture(t)
		f.env["DB_PASSWORD"] = "pw"
		// Saves that fail from the k-th on stand for a crash after the
		// one before: what was made since exists, the ledger holds at
		// most its intent.
		f.store.failFrom = k
		f.apply(d)
		f.store.failFrom = 0
		f.mustApply(d)
		if p := f.plan(d, false); len(p.Actions) != 0 {
			t.Fatalf("k=%d: not converged: %v", k, actionsOf(p))
		}
		if len(f.store.ledger.Rows) != 7 || len(f.cloud.Addresses()) != 7 {
			t.Fatalf("k=%d: ledger %d rows, cloud %v", k, len(f.store.ledger.Rows), f.cloud.Addresses())
		}
	}
}

func rowOf(addr, region string) state.Row {
	a := spectest.Address(addr)
	return state.Row{Provider: a.Provider, Kind: a.Kind, Name: a.Name, Region: region}
}

func TestCancelledApplyStopsStartingAndReportsIncomplete(t *testing.T) {
	f := newFixture(t)
	p := f.plan(doc(sg, instance, queue, bucket), false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := f.engine().Apply(ctx, p, ApplyOptions{Store: f.store})
	if rep == nil || !rep.Incomplete {
		t.Fatalf("report %+v, err %v", rep, err)
	}
	if n := len(f.cloud.Addresses()); n != 0 {
		t.Fatalf("a cancelled apply created %d resources", n)
	}
	// The next apply finishes the job.
	f.mustApply(doc(sg, instance, queue, bucket))
	if p := f.plan(doc(sg, instance, queue, bucket), false); len(p.Actions) != 0 {
		t.Fatalf("not converged: %v", actionsOf(p))
	}
}

// fleetScoped records the fleet the engine hands a name-prefix backend.
type fleetScoped struct {
	providers.Backend
	fleet string
}

func (b *fleetScoped) SetFleet(f string) { b.fleet = f }

func TestFleetScopedBackendsLearnTheFleetBeforeAnyRead(t *testing.T) {
	f := newFixture(t)
	b := &fleetScoped{Backend: f.cloud.Backend(spec.AWS)}
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
	if _, err := e.Plan(context.Background(), model(t, doc(queue)), nil, nil, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if b.fleet != "shop" {
		t.Fatalf("fleet %q", b.fleet)
	}
}

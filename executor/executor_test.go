package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor/executortest"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

const acct = "123456789012"

// slowBackend makes every create take a while, so a deadline can fall in
// the middle of an apply.
type slowBackend struct {
	providers.Backend
	delay time.Duration
}

func (b slowBackend) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	if !ok {
		return nil, false
	}
	return slowDriver{d, b.delay}, true
}

func (b slowBackend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	return b.Backend.(providers.Discoverer).Owned(ctx, region, deep)
}

type slowDriver struct {
	providers.Driver
	delay time.Duration
}

func (d slowDriver) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	time.Sleep(d.delay)
	return d.Driver.Create(ctx, t)
}

type fixture struct {
	t     *testing.T
	cloud *memory.Cloud
	blobs *executortest.MemBlobs
	h     *Handler
	log   bytes.Buffer
	delay time.Duration
	env   map[string]string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, cloud: memory.NewCloud(map[spec.Provider]string{spec.AWS: acct}), blobs: executortest.NewMemBlobs(),
		env: map[string]string{}}
	f.h = New(Config{
		State: func(ctx context.Context) (state.Blobs, string, error) { return f.blobs, "teams/web", nil },
		Backends: func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
			out := map[spec.Provider]providers.Backend{}
			why := map[spec.Provider]string{}
			for _, p := range ps {
				if p == spec.AWS {
					out[p] = slowBackend{f.cloud.Backend(p), f.delay}
				} else {
					why[p] = "not in this test"
				}
			}
			return out, why, nil
		},
		Getenv:      func(k string) string { return f.env[k] },
		Parallelism: 1,
		Log:         &f.log,
	})
	return f
}

func queuesDoc(names ...string) json.RawMessage {
	var rs []string
	for _, n := range names {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/%s", "spec": {"visibilityTimeoutSec": 30}}`, n))
	}
	return json.RawMessage(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + acct + `"},
		"placement": {"aws": "eu-west-3"}, "resources": [` + strings.Join(rs, ",") + `]}`)
}

func (f *fixture) do(ctx context.Context, req Request) Response {
	f.t.Helper()
	resp, err := f.h.Handle(ctx, req)
	if err != nil {
		f.t.Fatalf("Handle returned an error: %v", err)
	}
	if resp.ProtocolVersion != ProtocolVersion || resp.Operation != string(req.Operation) {
		f.t.Fatalf("response header: %+v", resp)
	}
	// Every response must survive the wire.
	if _, err := json.Marshal(resp); err != nil {
		f.t.Fatalf("marshal the response: %v", err)
	}
	return resp
}

func (f *fixture) plan(doc json.RawMessage) *engine.Plan {
	f.t.Helper()
	resp := f.do(context.Background(), Request{Operation: OpPlan, Document: doc})
	if resp.Status != StatusDone || resp.Plan == nil {
		f.t.Fatalf("plan: %+v", resp)
	}
	return resp.Plan
}

func TestPlanThenApplyWithTheReviewedID(t *testing.T) {
	f := newFixture(t)
	doc := queuesDoc("jobs", "mail")
	p := f.plan(doc)
	if p.Summary.Create != 2 {
		t.Fatalf("plan: %+v", p.Summary)
	}
	resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, ExpectPlanID: p.ID, RunID: "run-1"})
	if resp.Status != StatusDone {
		t.Fatalf("apply: %s: %s", resp.Status, resp.Message)
	}
	if len(resp.Applied) != 2 || resp.Applied[0].Status != engine.StatusDone {
		t.Fatalf("applied: %+v", resp.Applied)
	}
	if got := fmt.Sprint(f.cloud.Addresses()); got != "[aws/queues/jobs aws/queues/mail]" {
		t.Fatalf("cloud: %s", got)
	}
	// The lock is released once done.
	if f.blobs.Has("teams/web/shop/" + state.LockFile) {
		t.Fatal("the lock was left behind")
	}
	if !f.blobs.Has("teams/web/shop/" + state.LedgerFile) {
		t.Fatal("no ledger in the state")
	}
	// A second apply of the converged fleet does nothing.
	again := f.plan(doc)
	resp = f.do(context.Background(), Request{Operation: OpApply, Document: doc, ExpectPlanID: again.ID, RunID: "run-2"})
	if resp.Status != StatusDone || !strings.Contains(resp.Message, "nothing to do") {
		t.Fatalf("second apply: %s: %s", resp.Status, resp.Message)
	}
}

func TestApplyWithAStaleIDIsRefusedWithTheFreshPlan(t *testing.T) {
	f := newFixture(t)
	reviewed := f.plan(queuesDoc("jobs"))
	// Something changes after the review: the merged document differs.
	doc := queuesDoc("jobs", "mail")
	resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, ExpectPlanID: reviewed.ID, RunID: "run-1"})
	if resp.Status != StatusRefused {
		t.Fatalf("want refused, got %s: %s", resp.Status, resp.Message)
	}
	if resp.Plan == nil || resp.Plan.ID == reviewed.ID || resp.Plan.Summary.Create != 2 {
		t.Fatalf("the refusal must carry the fresh plan: %+v", resp.Plan)
	}
	if !strings.Contains(resp.Message, reviewed.ID) || !strings.Contains(resp.Message, resp.Plan.ID) {
		t.Fatalf("message names neither id: %s", resp.Message)
	}
	if len(f.cloud.Addresses()) != 0 {
		t.Fatalf("a refused apply changed the cloud: %v", f.cloud.Addresses())
	}
	if f.blobs.Has("teams/web/shop/" + state.LockFile) {
		t.Fatal("the lock was left behind")
	}
}

func TestApplyWithoutAReviewedPlanIsRefused(t *testing.T) {
	f := newFixture(t)
	doc := queuesDoc("jobs")
	resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc})
	if resp.Status != StatusFailed || !strings.Contains(resp.Message, "expectPlanId") || resp.Plan == nil {
		t.Fatalf("got %s: %s", resp.Status, resp.Message)
	}
	if len(f.cloud.Addresses()) != 0 {
		t.Fatal("applied without a reviewed plan")
	}
	resp = f.do(context.Background(), Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}})
	if resp.Status != StatusDone || len(f.cloud.Addresses()) != 1 {
		t.Fatalf("unreviewed apply: %s: %s", resp.Status, resp.Message)
	}
}

func TestDeadlineGivesIncompleteThenResumeConverges(t *testing.T) {
	f := newFixture(t)
	f.delay = 40 * time.Millisecond
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	doc := queuesDoc(names...)
	reviewed := f.plan(doc)
	req := Request{Operation: OpApply, Document: doc, ExpectPlanID: reviewed.ID, RunID: "run-7"}
	var statuses []Status
	total := 0
	for i := 0; i < 20; i++ {
		// 200ms of which the last fifth is the margin: about four
		// creates fit in each invocation.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		resp := f.do(ctx, req)
		cancel()
		statuses = append(statuses, resp.Status)
		for _, a := range resp.Applied {
			if a.Status == engine.StatusDone {
				total++
			}
		}
		if resp.Status != StatusIncomplete {
			if resp.Status != StatusDone {
				t.Fatalf("invocation %d: %s: %s", i+1, resp.Status, resp.Message)
			}
			break
		}
		if !f.blobs.Has("teams/web/shop/" + operations.RunFile) {
			t.Fatal("incomplete, but the accepted plan was not remembered")
		}
		if f.blobs.Has("teams/web/shop/" + state.LockFile) {
			t.Fatal("incomplete left the lock behind")
		}
		// The ledger already records what this invocation created.
		data, _, err := f.blobs.Get(context.Background(), "teams/web/shop/"+state.LedgerFile)
		if err != nil {
			t.Fatal(err)
		}
		l, err := state.DecodeLedger(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Rows) != len(f.cloud.Addresses()) {
			t.Fatalf("ledger has %d rows for %d resources", len(l.Rows), len(f.cloud.Addresses()))
		}
	}
	if len(statuses) < 2 || statuses[0] != StatusIncomplete || statuses[len(statuses)-1] != StatusDone {
		t.Fatalf("statuses: %v", statuses)
	}
	if total != len(names) || len(f.cloud.Addresses()) != len(names) {
		t.Fatalf("done %d, cloud %v", total, f.cloud.Addresses())
	}
	// The same request again (a lost response, a re-run) finds nothing
	// left, but another run with the same old id is refused.
	if resp := f.do(context.Background(), req); resp.Status != StatusDone || !strings.Contains(resp.Message, "nothing left") {
		t.Fatalf("again: %s: %s", resp.Status, resp.Message)
	}
	other := req
	other.RunID = "run-8"
	if resp := f.do(context.Background(), other); resp.Status != StatusRefused {
		t.Fatalf("another run: %s: %s", resp.Status, resp.Message)
	}
	t.Logf("statuses: %v", statuses)
}

func TestResumeRefusesWhatWasNotReviewed(t *testing.T) {
	f := newFixture(t)
	f.delay = 40 * time.Millisecond
	doc := queuesDoc("a", "b", "c", "d", "e", "f", "g", "h")
	reviewed := f.plan(doc)
	req := Request{Operation: OpApply, Document: doc, ExpectPlanID: reviewed.ID, RunID: "run-7"}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	resp := f.do(ctx, req)
	cancel()
	if resp.Status != StatusIncomplete {
		t.Fatalf("want incomplete, got %s: %s", resp.Status, resp.Message)
	}
	// Another run with the same reviewed id may not take over.
	other := req
	other.RunID = "run-8"
	if resp := f.do(context.Background(), other); resp.Status != StatusRefused || !strings.Contains(resp.Message, "run-7") {
		t.Fatalf("another run: %s: %s", resp.Status, resp.Message)
	}
	// The same run with another document may not either.
	changed := req
	changed.Document = queuesDoc("a", "b", "c", "d", "e", "f", "g", "h", "extra")
	if resp := f.do(context.Background(), changed); resp.Status != StatusRefused {
		t.Fatalf("another document: %s: %s", resp.Status, resp.Message)
	}
	// Someone deletes a queue the first invocation created: its create
	// again is still what was reviewed.
	f.delay = 0
	if resp := f.do(context.Background(), req); resp.Status != StatusDone {
		t.Fatalf("resume: %s: %s", resp.Status, resp.Message)
	}
	if len(f.cloud.Addresses()) != 8 {
		t.Fatalf("cloud: %v", f.cloud.Addresses())
	}
}

func TestDocumentErrorsFailWithDiagnostics(t *testing.T) {
	f := newFixture(t)
	doc := json.RawMessage(`{"apiVersion": "infra/v1", "fleet": "shop", "resources": [{"address": "aws/nope/x", "spec": {}}]}`)
	resp := f.do(context.Background(), Request{Operation: OpPlan, Document: doc})
	if resp.Status != StatusFailed || len(resp.Diagnostics) == 0 {
		t.Fatalf("got %+v", resp)
	}
	for _, r := range []Request{
		{Operation: OpPlan},
		{Operation: OpPlan, Document: json.RawMessage(`[1]`)},
		{Operation: "frobnicate", Document: doc},
		{Document: doc},
	} {
		if resp := f.do(context.Background(), r); resp.Status != StatusFailed || resp.Message == "" {
			t.Fatalf("%+v: got %+v", r, resp)
		}
	}
}

func TestSweepThroughTheExecutor(t *testing.T) {
	f := newFixture(t)
	for name, owner := range map[string]string{"ci-tests-a": "", "ci-tests-shop": "shop", "keep": ""} {
		f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: name, Region: "eu-west-3", Owner: owner})
	}
	req := Request{Operation: OpSweep, Options: Options{Prefix: "ci-tests-", Regions: []string{"eu-west-3"}}}
	dry := f.do(context.Background(), req)
	if dry.Status != StatusDone || dry.Sweep == nil || len(dry.Sweep.Candidates) != 1 || !strings.Contains(dry.Message, "ci-tests-a") {
		t.Fatalf("dry run: %s %+v", dry.Message, dry.Sweep)
	}
	if got := f.cloud.Addresses(); len(got) != 3 {
		t.Fatalf("a dry run deleted: %v", got)
	}
	req.Options.Yes = true
	if resp := f.do(context.Background(), req); resp.Status != StatusDone {
		t.Fatalf("sweep: %s", resp.Message)
	}
	if got := f.cloud.Addresses(); strings.Join(got, " ") != "aws/queues/ci-tests-shop aws/queues/keep" {
		t.Fatalf("left: %v", got)
	}
	if resp := f.do(context.Background(), Request{Operation: OpSweep, Options: Options{Prefix: "ci"}}); resp.Status != StatusFailed {
		t.Fatalf("a two-letter prefix: %+v", resp)
	}
}

// A sweeper (INFRA_SWEEP_PREFIX) sweeps its prefix, or a narrower one, and
// refuses any other before listing anything: its role could delete nothing
// else.
func TestSweeperSweepsOnlyItsPrefix(t *testing.T) {
	f := newFixture(t)
	f.h.cfg.SweepPrefix = "ci-tests-"
	for _, name := range []string{"ci-tests-a", "ci-tests-run7-b", "prod-c"} {
		f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: name, Region: "eu-west-3"})
	}
	other := f.do(context.Background(), Request{Operation: OpSweep, Options: Options{Prefix: "prod-", Regions: []string{"eu-west-3"}, Yes: true}})
	if other.Status != StatusFailed || !strings.Contains(other.Message, "this function sweeps only names starting with ci-tests- (INFRA_SWEEP_PREFIX)") {
		t.Fatalf("another prefix: %s %s", other.Status, other.Message)
	}
	narrower := f.do(context.Background(), Request{Operation: OpSweep, Options: Options{Prefix: "ci-tests-run7-", Regions: []string{"eu-west-3"}, Yes: true}})
	if narrower.Status != StatusDone {
		t.Fatalf("a narrower prefix: %s %s", narrower.Status, narrower.Message)
	}
	if got := strings.Join(f.cloud.Addresses(), " "); got != "aws/queues/ci-tests-a aws/queues/prod-c" {
		t.Fatalf("left: %s", got)
	}
	if cfg := FromEnv(func(k string) string { return map[string]string{EnvSweepPrefix: "ci-tests-"}[k] }, nil); cfg.SweepPrefix != "ci-tests-" {
		t.Fatalf("INFRA_SWEEP_PREFIX read as %q", cfg.SweepPrefix)
	}
}

func TestLockHeldByAnotherRunFails(t *testing.T) {
	f := newFixture(t)
	doc := queuesDoc("jobs")
	store, err := state.OpenBlobs(f.blobs, "teams/web", "shop")
	if err != nil {
		t.Fatal(err)
	}
	held, err := store.Lock(context.Background(), state.LockInfo{ID: "laptop", Holder: "ana@laptop", Command: "apply", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}})
	if resp.Status != StatusFailed || !strings.Contains(resp.Message, "ana@laptop") {
		t.Fatalf("got %s: %s", resp.Status, resp.Message)
	}
	if err := held.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A lock left by a killed executor invocation long ago is broken.
	if _, err := store.Lock(context.Background(), state.LockInfo{ID: "dead", Holder: "infra-executor request 1", Command: "executor apply",
		Created: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	resp = f.do(context.Background(), Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}})
	if resp.Status != StatusDone {
		t.Fatalf("stale executor lock: %s: %s", resp.Status, resp.Message)
	}
	if !strings.Contains(f.log.String(), "breaking the lock dead") {
		t.Fatalf("log: %s", f.log.String())
	}
}

func TestDiscoverWritesOnlyWhenAsked(t *testing.T) {
	f := newFixture(t)
	doc := queuesDoc("jobs")
	if resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}}); resp.Status != StatusDone {
		t.Fatal(resp.Message)
	}
	key := "teams/web/shop/" + state.LedgerFile
	if err := f.blobs.Delete(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	resp := f.do(context.Background(), Request{Operation: OpDiscover, Document: doc})
	if resp.Status != StatusDone || resp.Discovery == nil || len(resp.Discovery.Added) != 1 || f.blobs.Has(key) {
		t.Fatalf("dry discover: %+v", resp)
	}
	resp = f.do(context.Background(), Request{Operation: OpDiscover, Document: doc, Options: Options{Write: true}})
	if resp.Status != StatusDone || !f.blobs.Has(key) {
		t.Fatalf("discover --write: %+v", resp)
	}
}

func TestDestroyNeedsTheReviewedTeardown(t *testing.T) {
	f := newFixture(t)
	doc := queuesDoc("jobs", "mail")
	if resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}}); resp.Status != StatusDone {
		t.Fatal(resp.Message)
	}
	// The apply plan's id is not the teardown's.
	p := f.plan(doc)
	resp := f.do(context.Background(), Request{Operation: OpDestroy, Document: doc, ExpectPlanID: p.ID, RunID: "r"})
	if resp.Status != StatusRefused || resp.Plan == nil || !resp.Plan.Destroy {
		t.Fatalf("got %s: %s", resp.Status, resp.Message)
	}
	resp = f.do(context.Background(), Request{Operation: OpDestroy, Document: doc, ExpectPlanID: resp.Plan.ID, RunID: "r"})
	if resp.Status != StatusDone || len(f.cloud.Addresses()) != 0 {
		t.Fatalf("destroy: %s: %s (%v)", resp.Status, resp.Message, f.cloud.Addresses())
	}
}

func TestCredentialsNeverPrint(t *testing.T) {
	secret := `{"SCW_SECRET_KEY": "hunter2-very-secret", "DB_PASSWORD": "pw-xyz"}`
	p := startCredentials("infra/creds", func(ctx context.Context, id string) (spec.Sensitive, error) {
		return spec.NewSensitive(secret), nil
	})
	c, err := p.wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Lookup("DB_PASSWORD"); !ok || v.Reveal() != "pw-xyz" {
		t.Fatal("lookup")
	}
	out := fmt.Sprintf("%v %+v %#v %s %v", c, c, c, c.Names(), []*Credentials{c})
	b, _ := json.Marshal(c)
	for _, s := range []string{out, string(b)} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "pw-xyz") {
			t.Fatalf("a credential printed: %s", s)
		}
	}
	// A malformed secret's error does not quote it.
	p = startCredentials("infra/creds", func(ctx context.Context, id string) (spec.Sensitive, error) {
		return spec.NewSensitive(`{"SCW_SECRET_KEY": "hunter2-very-secret",}`), nil
	})
	if _, err := p.wait(context.Background()); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("malformed: %v", err)
	}
	p = startCredentials("infra/creds", func(ctx context.Context, id string) (spec.Sensitive, error) {
		return spec.Sensitive{}, errors.New("AccessDeniedException: no")
	})
	if _, err := p.wait(context.Background()); err == nil || !strings.Contains(err.Error(), "INFRA_CREDENTIALS_SECRET") {
		t.Fatalf("read error: %v", err)
	}
}

func TestFromEnvReportsMisconfiguration(t *testing.T) {
	env := map[string]string{EnvState: "gs://nope", EnvStopMargin: "soon"}
	h := New(FromEnv(func(k string) string { return env[k] }, nil))
	resp, _ := h.Handle(context.Background(), Request{Operation: OpPlan, Document: queuesDoc("a")})
	if resp.Status != StatusFailed || !strings.Contains(resp.Message, EnvState) || !strings.Contains(resp.Message, EnvStopMargin) {
		t.Fatalf("got %+v", resp)
	}
	// No state location at all is said plainly.
	h = New(FromEnv(func(string) string { return "" }, nil))
	resp, _ = h.Handle(context.Background(), Request{Operation: OpPlan, Document: queuesDoc("a")})
	if resp.Status != StatusFailed || !strings.Contains(resp.Message, EnvState) {
		t.Fatalf("got %+v", resp)
	}
}

func TestBudget(t *testing.T) {
	now := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(15*time.Minute))
	defer cancel()
	b := newBudget(ctx, now, 0)
	if got := now.Add(15 * time.Minute).Sub(b.stopAt); got != 30*time.Second {
		t.Fatalf("15 min: margin %s", got)
	}
	if got := now.Add(15 * time.Minute).Sub(b.deadline); got != 3*time.Second {
		t.Fatalf("15 min: reserve %s", got)
	}
	ctx2, cancel2 := context.WithDeadline(context.Background(), now.Add(3*time.Second))
	defer cancel2()
	b = newBudget(ctx2, now, 0)
	if got := now.Add(3 * time.Second).Sub(b.stopAt); got != 600*time.Millisecond {
		t.Fatalf("3 s: margin %s", got)
	}
	if b := newBudget(context.Background(), now, 0); !b.stopAt.IsZero() || !b.deadline.IsZero() {
		t.Fatal("no deadline must mean no stop")
	}
}

func TestOperationsAllowList(t *testing.T) {
	f := newFixture(t)
	f.h.cfg.Operations = []Operation{OpPlan}
	doc := queuesDoc("jobs")
	if resp := f.do(context.Background(), Request{Operation: OpPlan, Document: doc}); resp.Status != StatusDone {
		t.Fatalf("plan: %s", resp.Message)
	}
	resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}})
	if resp.Status != StatusFailed || !strings.Contains(resp.Message, "serves only plan") || len(f.cloud.Addresses()) != 0 {
		t.Fatalf("apply on a plan-only function: %s: %s", resp.Status, resp.Message)
	}
	cfg := FromEnv(func(k string) string {
		return map[string]string{EnvOperations: "plan, discover"}[k]
	}, nil)
	if fmt.Sprint(cfg.Operations) != "[plan discover]" {
		t.Fatalf("parsed %v", cfg.Operations)
	}
	cfg = FromEnv(func(k string) string { return map[string]string{EnvOperations: "plan,nuke"}[k] }, nil)
	if err := cfg.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "nuke") {
		t.Fatalf("bad operation: %v", err)
	}
}

// The brake's remedy is the protocol's: options.force, not a CLI flag.
func TestBrakeNamesOptionsForce(t *testing.T) {
	f := newFixture(t)
	four := queuesDoc("a", "b", "c", "d")
	if resp := f.do(context.Background(), Request{Operation: OpApply, Document: four, Options: Options{Unreviewed: true}}); resp.Status != StatusDone {
		t.Fatalf("apply: %s: %s", resp.Status, resp.Message)
	}
	one := queuesDoc("a")
	resp := f.do(context.Background(), Request{Operation: OpApply, Document: one, Options: Options{Unreviewed: true}})
	if resp.Status != StatusFailed || !strings.Contains(resp.Message, "options.force") || strings.Contains(resp.Message, "--force") {
		t.Fatalf("got %s: %s", resp.Status, resp.Message)
	}
	if len(f.cloud.Addresses()) != 4 {
		t.Fatal("the brake let something through")
	}
	resp = f.do(context.Background(), Request{Operation: OpApply, Document: one, Options: Options{Unreviewed: true, Force: true}})
	if resp.Status != StatusDone || len(f.cloud.Addresses()) != 1 {
		t.Fatalf("forced: %s: %s", resp.Status, resp.Message)
	}
}

// Errors the plan finds (here a ledger row of a cloud this executor cannot
// reach) come back with the plan that carries them: plan answers it, apply
// refuses it and returns it too.
func TestPlanFoundErrorsComeWithThePlan(t *testing.T) {
	f := newFixture(t)
	store, err := state.OpenBlobs(f.blobs, "teams/web", "shop")
	if err != nil {
		t.Fatal(err)
	}
	ledger := state.NewLedger()
	ledger.Rows = append(ledger.Rows, state.Row{Provider: spec.Scaleway, Kind: spec.Queues, Name: "old", Region: "fr-par"})
	if err := store.SaveLedger(context.Background(), ledger); err != nil {
		t.Fatal(err)
	}
	doc := queuesDoc("jobs")
	resp := f.do(context.Background(), Request{Operation: OpPlan, Document: doc})
	if resp.Status != StatusDone || resp.Plan == nil || resp.Plan.Applicable || !spec.HasErrors(resp.Diagnostics) {
		t.Fatalf("plan: %s: %s (plan %v)", resp.Status, resp.Message, resp.Plan != nil)
	}
	resp = f.do(context.Background(), Request{Operation: OpApply, Document: doc, ExpectPlanID: resp.Plan.ID, RunID: "run-1"})
	if resp.Status != StatusFailed || resp.Plan == nil || !strings.Contains(resp.Message, "the plan has 1 error(s)") {
		t.Fatalf("apply: %s: %s (plan %v)", resp.Status, resp.Message, resp.Plan != nil)
	}
	if len(f.cloud.Addresses()) != 0 {
		t.Fatal("applied a plan with errors")
	}
}

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
	"github.com/infra-iac/infra/state"
)

// storeConfig is a secret composed from another secret's value and
// literals: editing a literal changes the value, though nothing the cloud
// reports does.
func storeConfig(format, mode string) string {
	return `{"address": "aws/secrets/store-config", "spec": {"value": {"composed": {"format": "` + format + `",
		"args": [{"secretValue": "aws/secrets/db-password"}, "` + mode + `"]}}}}`
}

// secretValue is what the memory cloud holds as the secret's value.
func (f *fixture) secretValue(name string) string {
	f.t.Helper()
	rs, _ := providers.ResourcesOf(f.cloud.Backend(spec.AWS), spec.Secrets)
	v, err := rs.ReadSecretValue(context.Background(), "eu-west-3", name)
	if err != nil {
		f.t.Fatalf("read the value of %s: %v", name, err)
	}
	return v.Reveal()
}

// callsOn counts the driver calls of op on addr.
func (f *fixture) callsOn(op, addr string) int {
	n := 0
	for _, c := range f.cloud.Calls() {
		if c.Op == op && c.Address == addr {
			n++
		}
	}
	return n
}

func rowAt(t *testing.T, l *state.Ledger, addr string) state.Row {
	t.Helper()
	r, ok := l.Get(spectest.Address(addr))
	if !ok {
		t.Fatalf("no ledger row for %s", addr)
	}
	return r
}

// Issue 33 §2: editing a literal (or the format) of a composed secret used
// to plan "No changes" and never send the value. The apply that sends a
// value records what it was made of; a plan that finds the document
// composing it otherwise updates it, saying why and never what.
func TestAChangedCompositionOfASecretIsSent(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "hunter2-canary"
	f.mustApply(doc(password, storeConfig("store={0} mode={1}", "fast")))
	if got := f.secretValue("store-config"); got != "store=hunter2-canary mode=fast" {
		t.Fatalf("value %q", got)
	}
	row := rowAt(t, f.store.ledger, "aws/secrets/store-config")
	if row.ValueInputs.Sources == "" || row.ValueInputs.Values == "" {
		t.Fatalf("the create recorded no inputs: %+v", row)
	}
	for _, b := range f.store.saves {
		if strings.Contains(string(b), "hunter2") {
			t.Fatalf("a ledger save holds the secret value: %s", b)
		}
	}
	if p := f.plan(doc(password, storeConfig("store={0} mode={1}", "fast")), false); len(p.Actions) != 0 {
		t.Fatalf("unchanged document: %v", actionsOf(p))
	}
	// The value of an input that is a secret is never part of the
	// fingerprint: a new DB_PASSWORD alone is not seen (docs say so).
	f.env["DB_PASSWORD"] = "rotated-canary"
	if p := f.plan(doc(password, storeConfig("store={0} mode={1}", "fast")), false); len(p.Actions) != 0 {
		t.Fatalf("a new variable value changed the plan, so something hashed it: %v", actionsOf(p))
	}
	f.env["DB_PASSWORD"] = "hunter2-canary"

	for i, edit := range []struct{ format, mode, want string }{
		{"store={0} mode={1}", "safe", "store=hunter2-canary mode=safe"}, // a literal
		{"store={0};mode={1}", "safe", "store=hunter2-canary;mode=safe"}, // the format
	} {
		d := doc(password, storeConfig(edit.format, edit.mode))
		p := f.plan(d, false)
		if len(p.Actions) != 1 {
			t.Fatalf("edit %d: plan %v, want one update", i, actionsOf(p))
		}
		a := actionAt(t, p, "aws/secrets/store-config")
		if a.Action != Update || len(a.Changes) != 1 || a.Changes[0].Field != "value" || !a.Changes[0].Sensitive ||
			a.Changes[0].After != nil || !strings.Contains(a.Reason, "value: its format, a literal or an input it names changed") {
			t.Fatalf("edit %d: %+v", i, a)
		}
		b, _ := json.Marshal(p)
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), edit.want) {
			t.Fatalf("edit %d: the plan shows the value: %s", i, b)
		}
		if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
			t.Fatal(err)
		}
		if got := f.secretValue("store-config"); got != edit.want {
			t.Fatalf("edit %d: value %q, want %q", i, got, edit.want)
		}
		if again := f.plan(d, false); len(again.Actions) != 0 {
			t.Fatalf("edit %d: after the apply: %v", i, actionsOf(again))
		}
	}
}

// A fromEnv secret's source is the variable's name: renaming it sends the
// value again, and so does every secret composed from it; a variable
// that is not set is a row, as for a create.
func TestARenamedVariableSendsTheSecretAgain(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "old-pw"
	f.mustApply(doc(password, storeConfig("store={0} mode={1}", "fast")))
	renamed := strings.Replace(password, `"DB_PASSWORD"`, `"DB_PASSWORD_V2"`, 1)
	d := doc(renamed, storeConfig("store={0} mode={1}", "fast"))

	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "update aws/secrets/db-password, update aws/secrets/store-config" {
		t.Fatalf("plan: %s", got)
	}
	if a := actionAt(t, p, "aws/secrets/db-password"); !strings.Contains(a.Reason, "now read from DB_PASSWORD_V2") {
		t.Fatalf("reason: %q", a.Reason)
	}
	if p.Applicable || !hasEnvRow(p, spec.RowEnvUnset, "aws/secrets/db-password", "DB_PASSWORD_V2") {
		t.Fatalf("DB_PASSWORD_V2 is not set: want an env-unset row, got %v", p.Diagnostics)
	}

	f.env["DB_PASSWORD_V2"] = "new-pw"
	f.mustApply(d)
	if got := f.secretValue("db-password") + " " + f.secretValue("store-config"); got != "new-pw store=new-pw mode=fast" {
		t.Fatalf("values: %q", got)
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Fatalf("after the apply: %v", actionsOf(again))
	}
}

// A public value a composition reads (a group's id) that changed since
// the apply that sent it is sent again, though the resource it comes from
// was not replaced by this fleet.
func TestAChangedObservedInputSendsTheSecretAgain(t *testing.T) {
	f := newFixture(t)
	d := doc(sg, sgIDSecret)
	f.mustApply(d)
	group, _ := f.cloud.Get(spec.AWS, spec.SecurityGroup, "eu-west-3", "web")
	group.Attributes["groupId"] = "sg-made-again-by-hand"
	f.cloud.Put(spec.AWS, spec.SecurityGroup, group)

	p := f.plan(d, false)
	a := actionAt(t, p, "aws/secrets/web-group")
	if len(p.Actions) != 1 || a.Action != Update || !strings.Contains(a.Reason, "a value its composition reads changed") {
		t.Fatalf("plan: %v %+v", actionsOf(p), a)
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if got := f.secretValue("web-group"); got != "group=sg-made-again-by-hand" {
		t.Fatalf("value %q", got)
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Fatalf("after the apply: %v", actionsOf(again))
	}
}

// A ledger an older build wrote has no fingerprints: upgrading must not
// update every secret. The first apply records them without sending
// anything, and from then on a change is seen. Re-recording a row (the
// adoption every apply makes, an update that does not send the value)
// keeps what it holds.
func TestRowsWithoutInputsAreAdoptedSilently(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "pw"
	f.mustApply(doc(password, storeConfig("store={0} mode={1}", "fast")))
	recorded := rowAt(t, f.store.ledger, "aws/secrets/store-config").ValueInputs
	old := f.store.ledger.Clone()
	for i := range old.Rows {
		old.Rows[i].ValueInputs = state.ValueInputs{}
	}
	f.store.ledger = old

	if p := f.plan(doc(password, storeConfig("store={0} mode={1}", "fast")), false); len(p.Actions) != 0 {
		t.Fatalf("an older ledger planned %v", actionsOf(p))
	}
	// Any apply records them; this one creates a queue, and sends no
	// secret.
	f.mustApply(doc(password, storeConfig("store={0} mode={1}", "fast"), queue))
	if n := f.callsOn("update", "aws/secrets/store-config") + f.callsOn("update", "aws/secrets/db-password"); n != 0 {
		t.Fatalf("the upgrade's apply updated a secret %d time(s)", n)
	}
	if got := rowAt(t, f.store.ledger, "aws/secrets/store-config").ValueInputs; got != recorded {
		t.Fatalf("adopted %+v, want what the create recorded, %+v", got, recorded)
	}
	// Another apply that does not touch the secrets keeps them.
	f.mustApply(doc(password, storeConfig("store={0} mode={1}", "fast"), queue, bucket))
	if got := rowAt(t, f.store.ledger, "aws/secrets/store-config").ValueInputs; got != recorded {
		t.Fatalf("an unrelated apply left %+v, want %+v", got, recorded)
	}
	p := f.plan(doc(password, storeConfig("store={0} mode={1}", "safe"), queue, bucket), false)
	if got := strings.Join(actionsOf(p), ", "); got != "update aws/secrets/store-config" {
		t.Fatalf("after the upgrade, an edit plans %s", got)
	}
}

// An update that does not send a secret's value (a Scaleway secret's
// description) keeps what the row recorded of it.
func TestAnUpdateThatDoesNotSendTheValueKeepsItsInputs(t *testing.T) {
	f := newFixture(t)
	f.env["DB_URL"] = "postgres://x"
	d := scwDoc(scwSecret)
	if _, err := f.engine(spec.Scaleway).Apply(context.Background(), f.planWith(model(t, d), PlanOptions{}, spec.Scaleway), ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	recorded := rowAt(t, f.store.ledger, "scaleway/secrets/shop-db-url").ValueInputs
	changed := scwDoc(strings.Replace(scwSecret, `"v1"`, `"v2"`, 1))
	p := f.planWith(model(t, changed), PlanOptions{}, spec.Scaleway)
	if got := strings.Join(actionsOf(p), ", "); got != "update scaleway/secrets/shop-db-url" || p.Actions[0].Changes[0].Field != "description" {
		t.Fatalf("plan: %s %+v", got, p.Actions)
	}
	if _, err := f.engine(spec.Scaleway).Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if got := rowAt(t, f.store.ledger, "scaleway/secrets/shop-db-url").ValueInputs; recorded.IsZero() || got != recorded {
		t.Fatalf("inputs %+v after the update, want %+v", got, recorded)
	}
}

func hasEnvRow(p *Plan, id spec.RowID, subject, evidence string) bool {
	for _, d := range p.Diagnostics {
		if d.ID == id && d.Subject == subject && d.Evidence == evidence && d.Severity == spec.Error {
			return true
		}
	}
	return false
}

// Issue 33 §2: a fromEnv variable the run lacks was found only halfway
// through the apply ("1 created, 2 failed, 1 not run"). The plan says so
// first, one row per action that needs it, and apply refuses before the
// first call.
func TestAnUnsetVariableIsARowBeforeAnythingIsMade(t *testing.T) {
	f := newFixture(t)
	d := doc(queue, password, db, dbURL)
	p := f.plan(d, false)
	if p.Applicable || len(p.Attention) != 0 {
		t.Fatalf("a plan whose creates need an unset variable: applicable %v, attention %v", p.Applicable, p.Attention)
	}
	for _, a := range []string{"aws/secrets/db-password", "aws/postgres/main", "aws/secrets/db-url"} {
		if !hasEnvRow(p, spec.RowEnvUnset, a, "DB_PASSWORD") {
			t.Errorf("no env-unset row for %s: %v", a, p.Diagnostics)
		}
	}
	for _, d := range p.Diagnostics {
		if d.ID == spec.RowEnvUnset && (d.Subject == "aws/queues/jobs" || !strings.Contains(d.Resolution, "set DB_PASSWORD in the environment")) {
			t.Errorf("row: %+v", d)
		}
	}
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); !errors.Is(err, ErrPlanHasErrors) {
		t.Fatalf("apply: %v", err)
	}
	for _, c := range f.cloud.Calls() {
		if c.Op == "create" || c.Op == "update" {
			t.Fatalf("a call was made: %+v", c)
		}
	}

	// Once the secret exists, a create that reads it reads it back from
	// the cloud: the variable is needed no more.
	f.env["DB_PASSWORD"] = "pw"
	f.mustApply(doc(queue, password))
	delete(f.env, "DB_PASSWORD")
	p = f.plan(d, false)
	if !p.Applicable || p.Summary.Create != 2 {
		t.Fatalf("the secret exists: plan %v, rows %v", actionsOf(p), p.Diagnostics)
	}
	// A plan that does not send the value needs no variable either.
	f.env["DB_PASSWORD"] = "pw"
	f.mustApply(d)
	delete(f.env, "DB_PASSWORD")
	if p := f.plan(d, false); !p.Applicable || len(p.Actions) != 0 {
		t.Fatalf("converged: plan %v, rows %v", actionsOf(p), p.Diagnostics)
	}
}

// A plan made where the variable is set, applied by an engine whose
// environment lacks it (another process, the executor), is refused by
// the apply before its first call.
func TestApplyChecksTheVariablesAgainBeforeTheFirstCall(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "pw"
	p := f.plan(doc(queue, password), false)
	if !p.Applicable {
		t.Fatalf("plan: %v", p.Diagnostics)
	}
	delete(f.env, "DB_PASSWORD")
	_, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store})
	var unset *EnvUnsetError
	if !errors.As(err, &unset) || len(unset.Diagnostics) != 1 || unset.Diagnostics[0].Subject != "aws/secrets/db-password" ||
		!strings.Contains(err.Error(), "DB_PASSWORD") {
		t.Fatalf("apply: %v", err)
	}
	for _, c := range f.cloud.Calls() {
		if c.Op == "create" {
			t.Fatalf("a create was made: %+v", c)
		}
	}
}

// An update of the value that fails leaves the row as it was, so the
// next plan sends the value again rather than take the edit as made.
func TestAFailedUpdateOfTheValueIsPlannedAgain(t *testing.T) {
	f := newFixture(t)
	f.env["DB_PASSWORD"] = "pw"
	f.mustApply(doc(password, storeConfig("store={0} mode={1}", "fast")))
	d := doc(password, storeConfig("store={0} mode={1}", "safe"), queue)
	f.cloud.Inject(memory.Fault{Op: "update", Address: "aws/secrets/store-config", Err: errors.New("throttled"), Times: 1})
	if _, _, err := f.apply(d); err == nil {
		t.Fatal("the update did not fail")
	}
	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "update aws/secrets/store-config" {
		t.Fatalf("after the failed update: %s", got)
	}
}

// Every apply re-records the declared resources it finds ours; that
// keeps what their rows hold (a caveat), which it used to drop.
func TestReRecordingARowKeepsItsCaveat(t *testing.T) {
	f := newFixture(t)
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: caveatBackend{f.cloud.Backend(spec.AWS)}},
		Getenv: func(string) string { return "" }, Parallelism: 4, Progress: f.progress})
	for _, d := range []string{doc(bucket), doc(bucket, queue)} {
		l, _ := f.store.LoadLedger(t.Context())
		p, err := e.Plan(t.Context(), model(t, d), nil, l, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Apply(t.Context(), p, ApplyOptions{Store: f.store}); err != nil {
			t.Fatal(err)
		}
	}
	if got := rowAt(t, f.store.ledger, "aws/object-store/assets").Caveat; got != noABAC {
		t.Fatalf("after a second apply the bucket's caveat is %q", got)
	}
}

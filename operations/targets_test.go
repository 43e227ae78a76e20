package operations

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// A partial apply of a provider publishes its whole record, from the whole
// document and the observed cloud: a capability whose resources the
// targets did not touch is still in it, as it was.
func TestPartialApplyPublishesEveryCapability(t *testing.T) {
	r := newWiringRig(t)
	ctx := context.Background()
	password := spec.Address{Provider: spec.AWS, Kind: spec.Secrets, Name: "pg-eu-password"}
	partial := func(sc Scope) *ApplyResult {
		t.Helper()
		res, err := r.ops.Apply(ctx, ApplyRequest{Document: r.doc("pg-shared", nil), Scope: sc, Confirm: func(*engine.Plan) error { return nil }})
		if err != nil {
			t.Fatalf("apply %+v: %v", sc, err)
		}
		return res
	}
	export := func(name string) spec.PublishedExport {
		t.Helper()
		out, err := r.ops.Output(ctx, OutputRequest{Fleet: "pg-shared"})
		if err != nil {
			t.Fatal(err)
		}
		return out.Capabilities["eu"].Exports[name]
	}

	// Only the password exists: the endpoint is published pending.
	if res := partial(Scope{Targets: []spec.Address{password}}); len(res.Plan.Actions) != 1 {
		t.Fatalf("partial plan: %+v", res.Plan.Actions)
	}
	if pw, ep := export("password"), export("endpoint"); !strings.HasPrefix(pw.Value.(string), "arn:aws:secretsmanager:") || !ep.Pending {
		t.Fatalf("after the partial apply: password %+v, endpoint %+v", pw, ep)
	}
	r.apply(r.doc("pg-shared", nil))
	endpoint := export("endpoint").Value
	if endpoint == nil || endpoint == "" {
		t.Fatalf("no endpoint after the full apply")
	}

	// A forced replace of the password alone keeps the endpoint, which
	// the targets did not touch, as it was.
	if res := partial(Scope{Targets: []spec.Address{password}, Replace: []spec.Address{password}}); res.Plan.Summary.Replace != 1 || len(res.Plan.Actions) != 1 {
		t.Fatalf("forced partial plan: %+v", res.Plan.Actions)
	}
	if ep := export("endpoint"); ep.Value != endpoint || ep.Pending {
		t.Fatalf("the partial apply dropped the untouched endpoint: %+v, was %v", ep, endpoint)
	}
}

// The record of a partial apply keeps what the last record wired and read
// and this document does not: the resources outside the targets were not
// changed and may still read it. What both read is this run's.
func TestPartialApplyKeepsTheReadsItDidNotTouch(t *testing.T) {
	prev := &spec.Published{
		Wires: map[string]spec.Wire{"db": {Fleet: "pg-shared", Provides: "eu"}, "cache": {Fleet: "cache", Provides: "eu"}},
		Reads: map[string]any{"db.endpoint": "old:5432", "cache.url": "redis://old"},
	}
	rec := &spec.Published{
		Wires: map[string]spec.Wire{"db": {Fleet: "pg-shared", Provides: "eu"}},
		Reads: map[string]any{"db.endpoint": "new:5432"},
	}
	keepUntouchedReads(rec, prev)
	if w, ok := rec.Wires["cache"]; !ok || w.Fleet != "cache" {
		t.Errorf("the untouched wire is gone: %+v", rec.Wires)
	}
	if rec.Reads["cache.url"] != "redis://old" {
		t.Errorf("the untouched read is gone: %+v", rec.Reads)
	}
	if rec.Reads["db.endpoint"] != "new:5432" {
		t.Errorf("this run's read was overwritten by the last record's: %+v", rec.Reads)
	}
}

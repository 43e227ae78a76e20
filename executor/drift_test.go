package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// The drift operation is infra drift's report: nothing after an apply, the
// out-of-band change once someone makes one, and a refusal for a broken
// document.
func TestDriftThroughTheExecutor(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	doc := queuesDoc("jobs", "mail")
	if resp := f.do(ctx, Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}}); resp.Status != StatusDone {
		t.Fatalf("apply: %s: %s", resp.Status, resp.Message)
	}
	resp := f.do(ctx, Request{Operation: OpDrift, Document: doc})
	if resp.Status != StatusDone || resp.Drift == nil || resp.Drift.HasDrift() || resp.Drift.Checked != 2 ||
		!strings.HasPrefix(resp.Message, "No drift: the 2 managed resource(s)") {
		t.Fatalf("drift after the apply: %s: %s %+v", resp.Status, resp.Message, resp.Drift)
	}
	q, _ := f.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "mail")
	q.Fields["visibilityTimeoutSec"] = 120.0
	f.cloud.Put(spec.AWS, spec.Queues, q)
	resp = f.do(ctx, Request{Operation: OpDrift, Document: doc})
	if resp.Status != StatusDone || len(resp.Drift.Resources) != 1 || resp.Drift.Resources[0].Address.String() != "aws/queues/mail" ||
		!strings.HasPrefix(resp.Message, "Drift: 1 of 2 managed resource(s) changed out of band") {
		t.Fatalf("drift after a change by hand: %s: %s %+v", resp.Status, resp.Message, resp.Drift)
	}
	if resp := f.do(ctx, Request{Operation: OpDrift, Document: []byte(`{"apiVersion": "infra/v1", "fleet": "Bad Name", "resources": []}`)}); resp.Status != StatusFailed || len(resp.Diagnostics) == 0 {
		t.Fatalf("a broken document: %s: %s", resp.Status, resp.Message)
	}
}

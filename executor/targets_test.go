package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers/memory"
)

// decodeRequest reads a request as the Lambda runtime does, so that the
// test holds the wire names of the fields.
func decodeRequest(t *testing.T, s string) Request {
	t.Helper()
	var req Request
	if err := json.Unmarshal([]byte(s), &req); err != nil {
		t.Fatal(err)
	}
	return req
}

// A partial plan made through the executor is applied, with the same
// targets, exactly: the target alone. Without them the fresh plan is the
// whole fleet's, another id, and the apply is refused.
func TestTargetsThroughTheExecutor(t *testing.T) {
	f := newFixture(t)
	doc := string(queuesDoc("jobs", "mail"))
	plan := f.do(context.Background(), decodeRequest(t, `{"operation": "plan", "document": `+doc+`, "targets": ["aws/queues/jobs"]}`))
	if plan.Status != StatusDone || plan.Plan == nil || len(plan.Plan.Actions) != 1 || len(plan.Plan.Targets) != 1 {
		t.Fatalf("plan: %s: %s %+v", plan.Status, plan.Message, plan.Plan)
	}
	id := plan.Plan.ID
	whole := f.do(context.Background(), decodeRequest(t, `{"operation": "apply", "document": `+doc+`, "expectPlanId": "`+id+`", "runId": "r1"}`))
	if whole.Status != StatusRefused || len(f.cloud.Addresses()) != 0 {
		t.Fatalf("apply without the targets: %s: %s; cloud %v", whole.Status, whole.Message, f.cloud.Addresses())
	}
	resp := f.do(context.Background(), decodeRequest(t, `{"operation": "apply", "document": `+doc+`, "expectPlanId": "`+id+`", "runId": "r2", "targets": ["aws/queues/jobs"]}`))
	if resp.Status != StatusDone {
		t.Fatalf("apply: %s: %s", resp.Status, resp.Message)
	}
	if got := fmt.Sprint(f.cloud.Addresses()); got != "[aws/queues/jobs]" {
		t.Fatalf("cloud: %s", got)
	}

	bad := f.do(context.Background(), decodeRequest(t, `{"operation": "plan", "document": `+doc+`, "replace": ["aws/queues/mail"]}`))
	if bad.Status != StatusFailed || !strings.Contains(bad.Message, `"replace" names aws/queues/mail, which is not yet created`) {
		t.Fatalf("replace of what does not exist: %s: %s", bad.Status, bad.Message)
	}
	forced := f.do(context.Background(), decodeRequest(t, `{"operation": "plan", "document": `+doc+`, "replace": ["aws/queues/jobs"], "targets": ["aws/queues/jobs"]}`))
	if forced.Status != StatusDone || forced.Plan.Summary.Replace != 1 || len(forced.Plan.Actions) != 1 {
		t.Fatalf("forced: %s: %s %v", forced.Status, forced.Message, forced.Plan)
	}
}

// A forced replace whose create failed after its delete is resumed by the
// same run: the fresh plan creates the resource instead of refusing a
// forced replace of nothing, and the run finishes.
func TestForcedReplaceResumesAfterItsDelete(t *testing.T) {
	f := newFixture(t)
	doc := queuesDoc("jobs")
	f.plan(doc)
	if resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, RunID: "r0", Options: Options{Unreviewed: true}}); resp.Status != StatusDone {
		t.Fatalf("first apply: %s: %s", resp.Status, resp.Message)
	}
	jobs := decodeRequest(t, `{"replace": ["aws/queues/jobs"]}`).Replace
	plan := f.do(context.Background(), Request{Operation: OpPlan, Document: doc, Replace: jobs})
	if plan.Status != StatusDone || plan.Plan.Summary.Replace != 1 {
		t.Fatalf("plan: %s: %s", plan.Status, plan.Message)
	}
	f.cloud.Inject(memory.Fault{Op: "create", Address: "aws/queues/jobs", Err: errors.New("throttled"), Times: 1})
	req := Request{Operation: OpApply, Document: doc, ExpectPlanID: plan.Plan.ID, RunID: "r1", Replace: jobs}
	if resp := f.do(context.Background(), req); resp.Status != StatusFailed || len(f.cloud.Addresses()) != 0 {
		t.Fatalf("want the create to fail after the delete: %s: %s; cloud %v", resp.Status, resp.Message, f.cloud.Addresses())
	}
	// Another run is no resume: its forced replace names nothing.
	other := req
	other.RunID = "r2"
	if resp := f.do(context.Background(), other); resp.Status != StatusFailed || !strings.Contains(resp.Message, "not yet created") {
		t.Fatalf("another run: %s: %s", resp.Status, resp.Message)
	}
	resp := f.do(context.Background(), req)
	if resp.Status != StatusDone || fmt.Sprint(f.cloud.Addresses()) != "[aws/queues/jobs]" {
		t.Fatalf("resume: %s: %s; cloud %v", resp.Status, resp.Message, f.cloud.Addresses())
	}
}

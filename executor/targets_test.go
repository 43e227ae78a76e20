package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
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

package executor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// A fromEnv variable comes from the executor's own credentials secret:
// the plan it makes and the apply it runs both read that, never the
// caller's environment. A plan reviewed where the variable was set has
// the same id as the executor's fresh plan without it (rows are not part
// of the id), so the apply is refused for the variable, by its row,
// before its first call; with the variable, the same reviewed id applies.
func TestAnUnsetVariableRefusesTheApplyBeforeItsFirstCall(t *testing.T) {
	f := newFixture(t)
	doc := json.RawMessage(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + acct + `"},
		"placement": {"aws": "eu-west-3"}, "resources": [
		{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30}},
		{"address": "aws/secrets/db-password", "spec": {"value": {"fromEnv": "DB_PASSWORD"}}}]}`)
	f.env["DB_PASSWORD"] = "pw-set-where-reviewed"
	reviewed := f.plan(doc)
	if !reviewed.Applicable {
		t.Fatalf("reviewed plan: %v", reviewed.Diagnostics)
	}

	delete(f.env, "DB_PASSWORD")
	resp := f.do(context.Background(), Request{Operation: OpApply, Document: doc, ExpectPlanID: reviewed.ID, RunID: "run-1"})
	if resp.Status != StatusFailed || !strings.Contains(resp.Message, "the plan has 1 error(s)") || resp.Plan == nil || resp.Plan.ID != reviewed.ID {
		t.Fatalf("apply without the variable: %s: %s", resp.Status, resp.Message)
	}
	found := false
	for _, d := range resp.Diagnostics {
		found = found || (d.ID == spec.RowEnvUnset && d.Subject == "aws/secrets/db-password" && d.Evidence == "DB_PASSWORD")
	}
	if !found {
		t.Fatalf("no env-unset row: %v", resp.Diagnostics)
	}
	if got := f.cloud.Addresses(); len(got) != 0 {
		t.Fatalf("the refused apply made %v", got)
	}

	f.env["DB_PASSWORD"] = "pw-in-the-credentials-secret"
	resp = f.do(context.Background(), Request{Operation: OpApply, Document: doc, ExpectPlanID: reviewed.ID, RunID: "run-2"})
	if resp.Status != StatusDone || len(f.cloud.Addresses()) != 2 {
		t.Fatalf("apply with the variable: %s: %s, cloud %v", resp.Status, resp.Message, f.cloud.Addresses())
	}
}

package executor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// wiringDoc reads a document of spec/testdata/wiring, for the memory
// cloud: the consumer's version requirement is dropped (the memory
// cloud's version is no number), and so is the password from its
// composed secret (the memory cloud cannot read a secret back).
func wiringDoc(t *testing.T, name string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "spec", "testdata", "wiring", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["accounts"] = map[string]any{"aws": acct}
	if uses, ok := m["uses"].(map[string]any); ok {
		delete(uses["db"].(map[string]any), "requires")
		composed := m["resources"].([]any)[0].(map[string]any)["spec"].(map[string]any)["value"].(map[string]any)["composed"].(map[string]any)
		composed["format"] = "postgres://{0}@{1}/shop"
		composed["args"] = []any{map[string]any{"use": "db", "export": "username"}, map[string]any{"use": "db", "export": "endpoint"}}
	}
	out, _ := json.Marshal(m)
	return out
}

// handlerInvoker is the handler behind the Lambda API, for the client.
type handlerInvoker struct{ h *Handler }

func (i handlerInvoker) Invoke(ctx context.Context, function string, payload []byte) ([]byte, error) {
	var req Request
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, err
	}
	resp, _ := i.h.Handle(ctx, req)
	return json.Marshal(resp)
}

// A CI run without state credentials reads a fleet's outputs through the
// executor: by document or by name, narrowed to a capability or an export,
// a secret as its reference; before the fleet has published, the answer
// says so. A consumer planned beside its provider (upstream) plans its
// values as pending, and the provider's plan names who reads it.
func TestOutputThroughTheExecutor(t *testing.T) {
	f := newFixture(t)
	f.env["PG_EU_PASSWORD"] = "canary-executor-output"
	ctx := context.Background()
	provider, consumer := wiringDoc(t, "pg-shared"), wiringDoc(t, "shop-eu")
	client := Client{Invoker: handlerInvoker{f.h}, Function: "infra-executor"}

	resp := f.do(ctx, Request{Operation: OpOutput, Fleet: "pg-shared"})
	if resp.Status != StatusDone || resp.Output != nil || !strings.Contains(resp.Message, "published nothing") {
		t.Fatalf("output before the provider applied: %s: %s", resp.Status, resp.Message)
	}
	if _, err := client.Output(ctx, nil, "pg-shared", ""); !errors.Is(err, operations.ErrNothingPublished) ||
		strings.Count(err.Error(), "published nothing") != 1 {
		t.Fatalf("the client before the provider applied: %v", err)
	}

	// The provider's plan answers what it will publish; the consumer
	// planned beside it (sent over the wire) plans it pending, not missing.
	resp = f.do(ctx, Request{Operation: OpPlan, Document: provider})
	if resp.Plan.Publishes == nil || !resp.Plan.Publishes.Capabilities["eu"].Exports["endpoint"].Pending {
		t.Fatalf("the provider's plan publishes %+v", resp.Plan.Publishes)
	}
	var req Request
	b, _ := json.Marshal(Request{Operation: OpPlan, Document: consumer, Upstream: map[string]*spec.Published{"pg-shared": resp.Plan.Publishes}})
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	resp = f.do(ctx, req)
	if resp.Status != StatusDone || resp.Plan == nil || !resp.Plan.Applicable {
		t.Fatalf("the consumer planned beside its provider: %s: %s %v", resp.Status, resp.Message, resp.Diagnostics)
	}
	reviewed := resp.Plan.ID

	if resp := f.do(ctx, Request{Operation: OpApply, Document: provider, Options: Options{Unreviewed: true}}); resp.Status != StatusDone {
		t.Fatalf("apply the provider: %s: %s", resp.Status, resp.Message)
	}
	resp = f.do(ctx, Request{Operation: OpOutput, Fleet: "pg-shared"})
	if resp.Status != StatusDone || resp.Output == nil {
		t.Fatalf("output: %s: %s", resp.Status, resp.Message)
	}
	eu := resp.Output.Capabilities["eu"]
	if pw := eu.Exports["password"]; !pw.Secret || !strings.Contains(pw.Value.(string), "pg-eu-password") {
		t.Fatalf("the password export is %+v, want the secret's reference", pw)
	}
	if b, _ := json.Marshal(resp); strings.Contains(string(b), "canary-executor-output") {
		t.Fatal("the output carries the secret's value")
	}
	out, err := client.Output(ctx, provider, "", "eu.endpoint")
	if err != nil {
		t.Fatal(err)
	}
	if e := out.Capabilities["eu"].Exports; len(e) != 1 || e["endpoint"].Value == nil || out.Fleet != "pg-shared" {
		t.Fatalf("output eu.endpoint: %+v", out)
	}
	if _, err := client.Output(ctx, nil, "pg-shared", "ue"); err == nil || !strings.Contains(err.Error(), `no capability "ue"`) {
		t.Fatalf("a typo in the selection: %v", err)
	}
	if resp := f.do(ctx, Request{Operation: OpOutput}); resp.Status != StatusFailed || !strings.Contains(resp.Message, `neither "document" nor "fleet"`) {
		t.Fatalf("output of nothing: %s: %s", resp.Status, resp.Message)
	}
	if resp := f.do(ctx, Request{Operation: OpOutput, Document: provider, Fleet: "shop-eu"}); resp.Status != StatusFailed {
		t.Fatalf("a document and another fleet's name: %s: %s", resp.Status, resp.Message)
	}

	// The reviewed consumer plan is the one its apply accepts, and then
	// the provider's plan names its consumer.
	if resp := f.do(ctx, Request{Operation: OpApply, Document: consumer, ExpectPlanID: reviewed, RunID: "run-2"}); resp.Status != StatusDone {
		t.Fatalf("apply the reviewed consumer plan: %s: %s", resp.Status, resp.Message)
	}
	resp = f.do(ctx, Request{Operation: OpPlan, Document: provider})
	if got := resp.Consumers["eu"]; len(got) != 1 || got[0] != "shop-eu" {
		t.Fatalf("the provider's consumers: %v", resp.Consumers)
	}

	// A function that serves plan alone serves no output.
	f.h.cfg.Operations = []Operation{OpPlan}
	if resp := f.do(ctx, Request{Operation: OpOutput, Fleet: "pg-shared"}); resp.Status != StatusFailed || !strings.Contains(resp.Message, "serves only plan") {
		t.Fatalf("output on a plan-only function: %s: %s", resp.Status, resp.Message)
	}
}

// A wire's own state is opened with the function's role, and only in S3:
// a directory would be the function's own disk.
func TestFarStateIsS3Only(t *testing.T) {
	if _, err := farState(context.Background(), "/srv/state", "pg-shared"); err == nil || !strings.Contains(err.Error(), "only in S3, not at /srv/state") {
		t.Fatalf("a directory as a far state: %v", err)
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// scripted answers invocations from a script and records the requests.
type scripted struct {
	answers  []string
	requests []executor.Request
}

func (s *scripted) Invoke(ctx context.Context, function string, payload []byte) ([]byte, error) {
	var req executor.Request
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, err
	}
	s.requests = append(s.requests, req)
	if len(s.answers) == 0 {
		return nil, errors.New("the script ran out")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	if strings.HasPrefix(a, "ERROR ") {
		return nil, &awsprovider.FunctionError{Function: function, Message: strings.TrimPrefix(a, "ERROR ")}
	}
	return []byte(a), nil
}

func response(t *testing.T, r executor.Response) string {
	t.Helper()
	r.ProtocolVersion = executor.ProtocolVersion
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func applied(name string) []engine.Applied {
	return []engine.Applied{{Address: spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: name}, Action: engine.Create, Status: engine.StatusDone, ElapsedMs: 5}}
}

// The action invokes again, with the same request, while the executor
// answers incomplete, and adds up what each invocation did.
func TestRemoteApplyLoopsOnIncomplete(t *testing.T) {
	p := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop", ID: "sha256:" + strings.Repeat("a", 64), Summary: engine.Summary{Create: 3}}
	s := &scripted{answers: []string{
		response(t, executor.Response{Status: executor.StatusIncomplete, Plan: p, Applied: applied("a")}),
		response(t, executor.Response{Status: executor.StatusIncomplete, Plan: &engine.Plan{ID: "sha256:rest"}, Applied: applied("b")}),
		response(t, executor.Response{Status: executor.StatusDone, Applied: applied("c")}),
	}}
	r := remote{inv: s, function: "infra-executor", runID: "run-1", log: io.Discard}
	o, err := r.Apply(context.Background(), &fleetDoc{Name: "shop", Doc: []byte(`{}`)}, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != executor.StatusDone || o.Invocations != 3 || len(o.Applied) != 3 || o.Plan == nil || o.Plan.ID != p.ID ||
		o.Count != "Applied: 3 created, 0 updated, 0 replaced, 0 deleted." {
		t.Fatalf("outcome %+v", o)
	}
	for i, req := range s.requests {
		if req.Operation != executor.OpApply || req.ExpectPlanID != p.ID || req.RunID != "run-1" || req.Options.Unreviewed {
			t.Fatalf("request %d: %+v", i, req)
		}
	}
}

func TestRemoteApplyGivesUpAfterMaxInvocations(t *testing.T) {
	s := &scripted{}
	for i := 0; i < maxInvocations+5; i++ {
		s.answers = append(s.answers, response(t, executor.Response{Status: executor.StatusIncomplete}))
	}
	r := remote{inv: s, function: "f", log: io.Discard}
	o, err := r.Apply(context.Background(), &fleetDoc{Name: "shop"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != executor.StatusFailed || o.Invocations != maxInvocations || !strings.Contains(o.Message, "re-run the workflow to resume") {
		t.Fatalf("outcome %+v", o)
	}
	if !s.requests[0].Options.Unreviewed {
		t.Fatal("an apply without a reviewed id was not marked unreviewed")
	}
}

func TestRemoteReportsWhatTheExecutorCannotSay(t *testing.T) {
	for _, c := range []struct{ answer, want string }{
		{"ERROR Task timed out after 3.00 seconds", "Task timed out"},
		{`{"hello": "world"}`, "not an executor response"},
		{response(t, executor.Response{Status: executor.StatusFailed, Message: "the state bucket is gone"}), "plan failed: the state bucket is gone"},
	} {
		r := remote{inv: &scripted{answers: []string{c.answer}}, function: "f", log: io.Discard}
		_, err := r.Plan(context.Background(), &fleetDoc{Name: "shop"}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.answer, err, c.want)
		}
	}
	// A document with errors is a plan of its diagnostics: the comment
	// shows them.
	d := []spec.Diagnostic{spec.Errorf(spec.RowUnknownField, "aws/queues/jobs", "", "unknown field")}
	r := remote{inv: &scripted{answers: []string{response(t, executor.Response{Status: executor.StatusFailed, Diagnostics: d})}}, function: "f", log: io.Discard}
	p, err := r.Plan(context.Background(), &fleetDoc{Name: "shop"}, nil)
	if err != nil || len(p.Diagnostics) != 1 || p.Fleet != "shop" {
		t.Fatalf("plan %+v, %v", p, err)
	}
}

// In executor mode a refused apply posts the executor's fresh plan and
// changes nothing; the request carried the reviewed id.
// A sweep the executor fails is an error that carries the executor's own
// words; the action matches no text of it.
func TestRemoteSweepFailure(t *testing.T) {
	r := remote{inv: &scripted{answers: []string{response(t, executor.Response{Status: executor.StatusFailed,
		Message: "sweep needs regions: send options.regions, or a document with a placement"})}}, function: "f", log: io.Discard}
	_, err := r.Sweep(context.Background(), nil, sweepOptions{prefix: "ci-tests-"})
	if err == nil || !strings.Contains(err.Error(), "executor f: sweep failed: sweep needs regions") {
		t.Fatalf("got %v", err)
	}
}

func TestExecutorModeRefusalPostsTheFreshPlan(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	reviewed := "sha256:" + strings.Repeat("1", 64)
	fresh := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop", ID: "sha256:" + strings.Repeat("2", 64),
		Actions: []engine.Action{{Address: spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "late"}, Action: engine.Create, Region: "eu-west-3"}},
		Summary: engine.Summary{Create: 1}}
	s := &scripted{answers: []string{response(t, executor.Response{Status: executor.StatusRefused, Plan: fresh, Message: "the plan changed"})}}
	h.inv = s
	h.gh.addComment(7, "github-actions[bot]", render.PlanMarker("shop")+"\n<!-- infra:plan-id "+reviewed+" head=abc -->\n")
	h.gh.merged("0e9e9e9e", 7)
	r := h.run("push", pushEvent("0e9e9e9e"), applyInputs())
	if r.code != 1 || len(s.requests) != 1 || s.requests[0].ExpectPlanID != reviewed {
		t.Fatalf("exit %d, requests %+v:\n%s", r.code, s.requests, r.log)
	}
	bodies := h.gh.bodies(7)
	if len(bodies) != 2 || !strings.Contains(bodies[1], "refused") || !strings.Contains(bodies[1], "aws/queues/late") || !strings.Contains(bodies[1], fresh.ID) {
		t.Fatalf("comments: %q", bodies)
	}
}

package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// A plan with the targets input is partial, says so in the comment, and
// its merge applies exactly it: the comment carries the targets, so the
// apply needs no input to find the same plan.
func TestTargetedPlanIsCommentedAndItsMergeAppliesExactlyIt(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue, bucket)
	in := planInputs()
	in["targets"] = "aws/queues/jobs"
	plan := h.run("pull_request", prEvent(7, "abc"), in)
	if plan.code != 0 {
		t.Fatalf("exit %d:\n%s", plan.code, plan.log)
	}
	body := h.gh.bodies(7)[0]
	if !strings.Contains(body, "> "+render.PartialPrefix+"`aws/queues/jobs`") || strings.Contains(body, "aws/object-store/assets") {
		t.Fatalf("comment:\n%s", body)
	}
	h.gh.take()
	h.gh.merged(mergeSHA1, 7)
	r := h.run("push", pushEvent(mergeSHA1), applyInputs())
	if r.code != 0 || r.outputs["plan-id"] != plan.outputs["plan-id"] {
		t.Fatalf("exit %d, outputs %v:\n%s", r.code, r.outputs, r.log)
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); !ok {
		t.Fatal("the target was not created")
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets"); ok {
		t.Fatal("the bucket, not targeted, was created")
	}

	// Inputs that contradict the reviewed scope are refused.
	h.gh.merged("0e2e2e2e", 7)
	bad := h.run("push", pushEvent("0e2e2e2e"), applyInputs("replace", "aws/queues/jobs"))
	if bad.code != 1 || !strings.Contains(bad.log, "but the reviewed plan was made with [aws/queues/jobs]") {
		t.Fatalf("exit %d:\n%s", bad.code, bad.log)
	}
}

func TestScopeInputsAreChecked(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	for _, c := range []struct {
		in   map[string]string
		want string
	}{
		{map[string]string{"command": "plan", "targets": "jobs"}, `input targets: address "jobs"`},
		{map[string]string{"command": "plan", "replace": "aws/queues/jobs", "fleet": "a.json\nb.json"}, "name resources of one fleet"},
		{map[string]string{"command": "apply", "lock-timeout": "soon"}, `input lock-timeout is "soon"; want a duration`},
	} {
		r := h.run("pull_request", prEvent(7, "abc"), c.in)
		if r.code != 1 || !strings.Contains(r.log, c.want) {
			t.Errorf("%v: exit %d, log:\n%s", c.in, r.code, r.log)
		}
	}
}

// Through the executor, the scope travels in the request's targets and
// replace fields, on the plan and on the apply.
func TestRemoteSendsTheScope(t *testing.T) {
	p := &operations.Plan{FormatVersion: operations.FormatVersion, Fleet: "shop", ID: "sha256:" + strings.Repeat("b", 64)}
	s := &scripted{answers: []string{
		response(t, executor.Response{Status: executor.StatusDone, Plan: p}),
		response(t, executor.Response{Status: executor.StatusDone, Plan: p}),
	}}
	r := remote{inv: s, function: "infra-executor", runID: "run-1", lockTimeout: 2 * time.Minute, log: io.Discard}
	jobs := spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs"}
	f := &fleetDoc{Name: "shop", Doc: []byte(`{}`), scope: operations.Scope{Targets: []spec.Address{jobs}, Replace: []spec.Address{jobs}}}
	if _, err := r.Plan(context.Background(), f, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(context.Background(), f, p.ID); err != nil {
		t.Fatal(err)
	}
	if got := s.requests[1].Options.LockTimeout; got != "2m0s" {
		t.Errorf("the apply sends options.lockTimeout %q, want the input's 2m0s", got)
	}
	for i, req := range s.requests {
		if len(req.Targets) != 1 || req.Targets[0] != jobs || len(req.Replace) != 1 || req.Replace[0] != jobs {
			t.Errorf("request %d: targets %v, replace %v", i, req.Targets, req.Replace)
		}
	}
}

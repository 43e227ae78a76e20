package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

func applyInputs(extra ...string) map[string]string {
	in := map[string]string{"command": "apply"}
	for i := 0; i+1 < len(extra); i += 2 {
		in[extra[i]] = extra[i+1]
	}
	return in
}

const (
	pullsOfMerge1 = "GET /repos/acme/shop/commits/0e1e1e1e/pulls?per_page=100"
	mergeSHA1     = "0e1e1e1e"
)

// The reviewed plan is applied on merge, the result is posted on the
// pull request, and a second merge with no change applies nothing.
func TestApplyAppliesTheReviewedPlanAndPostsTheResult(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue, bucket)
	plan := h.run("pull_request", prEvent(7, "abc"), planInputs())
	h.gh.take()
	h.gh.merged(mergeSHA1, 7)

	r := h.run("push", pushEvent(mergeSHA1), applyInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, pullsOfMerge1, listComments7, listComments7, createOn7)
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); !ok {
		t.Fatal("the queue was not created")
	}
	bodies := h.gh.bodies(7)
	if len(bodies) != 2 || !strings.HasPrefix(bodies[1], ApplyMarker("shop")+"\n") {
		t.Fatalf("comments on #7: %q", bodies)
	}
	for _, want := range []string{"### infra apply for fleet `shop`: applied", "Merge commit `" + mergeSHA1 + "`", plan.outputs["plan-id"],
		"**Applied: 2 created, 0 updated, 0 replaced, 0 deleted.**"} {
		if !strings.Contains(bodies[1], want) {
			t.Errorf("the result lacks %q:\n%s", want, bodies[1])
		}
	}
	if r.outputs["plan-id"] != plan.outputs["plan-id"] || r.outputs["summary"] != "Applied: 2 created, 0 updated, 0 replaced, 0 deleted." {
		t.Errorf("outputs %v", r.outputs)
	}
	if !strings.Contains(r.summary, "infra apply for fleet `shop`: applied") {
		t.Errorf("job summary:\n%s", r.summary)
	}

	// A second pull request with no change: its plan is empty, and its
	// merge applies nothing.
	h.run("pull_request", prEvent(9, "def"), planInputs())
	h.gh.merged("0e2e2e2e", 9)
	h.gh.take()
	r = h.run("push", pushEvent("0e2e2e2e"), applyInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	result := h.gh.bodies(9)[1]
	if !strings.Contains(result, "Nothing to apply") || r.outputs["has-changes"] != "false" {
		t.Fatalf("second merge: outputs %v, result:\n%s", r.outputs, result)
	}
}

// Anyone may comment on a public pull request: a comment that copies the
// marker is neither edited as the plan nor read for the plan id.
func TestACopiedMarkerIsNotTrusted(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	forged := render.PlanMarker("shop") + "\n<!-- infra:plan-id sha256:" + strings.Repeat("6", 64) + " head=evil -->\n"
	h.gh.addComment(7, "mallory", forged)
	r := h.run("pull_request", prEvent(7, "abc"), planInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, listComments7, createOn7)
	h.gh.merged(mergeSHA1, 7)
	r = h.run("push", pushEvent(mergeSHA1), applyInputs())
	if r.code != 0 || r.outputs["plan-id"] == "sha256:"+strings.Repeat("6", 64) {
		t.Fatalf("exit %d, outputs %v:\n%s", r.code, r.outputs, r.log)
	}
}

// When the cloud moved between review and merge, the apply refuses, posts
// the fresh plan and changes nothing; with on-plan-changed: apply it
// applies the fresh plan and says so.
func TestApplyRefusesAPlanThatChangedSinceReview(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	h.run("pull_request", prEvent(7, "abc"), planInputs())
	h.gh.merged(mergeSHA1, 7)
	// main moved on before the merge landed: the merged fleet also
	// declares a bucket, which nobody reviewed on #7.
	h.writeFleet(queue, bucket)
	h.gh.take()

	r := h.run("push", pushEvent(mergeSHA1), applyInputs())
	if r.code != 1 || !strings.Contains(r.log, "refused: the plan changed since review") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); ok {
		t.Fatal("a refused apply changed the cloud")
	}
	bodies := h.gh.bodies(7)
	if len(bodies) != 2 || !strings.Contains(bodies[1], "refused: the plan changed after review") || !strings.Contains(bodies[1], "aws/object-store/assets") {
		t.Fatalf("comments: %q", bodies)
	}
	if r.outputs["summary"] != "Refused: the plan changed since review." {
		t.Errorf("outputs %v", r.outputs)
	}

	r = h.run("push", pushEvent(mergeSHA1), applyInputs("on-plan-changed", "apply"))
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	bodies = h.gh.bodies(7)
	if len(bodies) != 2 {
		t.Fatalf("the result was not edited in place: %d comments", len(bodies))
	}
	if !strings.Contains(bodies[1], "The plan changed after review") || !strings.Contains(bodies[1], "The plan that was applied") ||
		!strings.Contains(bodies[1], "Applied: 2 created") {
		t.Fatalf("result:\n%s", bodies[1])
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets"); !ok {
		t.Fatal("the fresh plan was not applied")
	}
}

func TestApplyWithoutAReviewedPlanRefusesUnlessToldOtherwise(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	r := h.run("push", pushEvent("0e3e3e3e"), applyInputs())
	if r.code != 1 || !strings.Contains(r.log, "no reviewed plan to apply (the pushed commit merged no pull request)") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); ok {
		t.Fatal("an unreviewed plan was applied")
	}
	r = h.run("push", pushEvent("0e3e3e3e"), applyInputs("on-plan-changed", "apply"))
	if r.code != 0 || !strings.Contains(r.summary, "No plan was reviewed") {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.log, r.summary)
	}
	// A push to another branch is never applied.
	ev := pushEvent("0e4e4e4e")
	ev["ref"] = "refs/heads/feature"
	if r := h.run("push", ev, applyInputs()); r.code != 1 || !strings.Contains(r.log, "not to refs/heads/feature") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
}

// A secret's value reaches the cloud and nothing else: not the comment,
// the summary, the outputs, the log or any request.
func TestNoSecretLeavesTheCloud(t *testing.T) {
	const canary = "CANARY-action-s3cr3t-5d2c"
	h := newHarness(t)
	h.vars["DB_PASSWORD"] = canary
	h.writeFleet(`{"address": "aws/secrets/db-password", "spec": {"value": {"fromEnv": "DB_PASSWORD"}}}`,
		`{"address": "aws/postgres/main", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "aws/secrets/db-password"}}}`,
		`{"address": "aws/secrets/db-url", "spec": {"value": {"composed": {"format": "postgres://dbadmin:{0}@{1}/main", "args": [{"secretValue": "aws/secrets/db-password"}, {"observed": "aws/postgres/main", "attribute": "endpoint"}]}}}}`)
	var everything strings.Builder
	r := h.run("pull_request", prEvent(7, "abc"), planInputs())
	everything.WriteString(r.log + r.summary + strings.Join(mapValues(r.outputs), "\n"))
	h.gh.merged(mergeSHA1, 7)
	r = h.run("push", pushEvent(mergeSHA1), applyInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	everything.WriteString(r.log + r.summary + strings.Join(mapValues(r.outputs), "\n"))
	for _, req := range h.gh.take() {
		everything.WriteString(req.Path + req.Body)
	}
	if strings.Contains(everything.String(), canary) {
		t.Fatal("the secret left the cloud")
	}
	if !strings.Contains(strings.Join(h.gh.bodies(7), ""), spec.Redacted) {
		t.Fatal("the secret's change is not shown as (sensitive)")
	}
	files := 0
	err := filepath.WalkDir(h.state, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), canary) {
			t.Errorf("the secret is in the state file %s", path)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("read the state: %d files, %v", files, err)
	}
	if _, _, ok := render.ReadMarkdownPlanID(h.gh.bodies(7)[0]); !ok {
		t.Fatal("no plan id in the plan comment")
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

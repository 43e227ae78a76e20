package main

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// noBuckets is a policy over the plan JSON: it refuses a plan that
// creates an object store, as a conftest rule would.
const noBuckets = `if grep -q '"address": "aws/object-store/' "$INFRA_PLAN_JSON"; then echo "fleet $INFRA_FLEET: buckets need the data team's review" >&2; exit 3; fi; jq -e .fleet >/dev/null`

// A policy that refuses the plan is a blocking row in the comment and
// fails the step; one that passes changes nothing; at the merge it runs
// again on what would be applied, and a refusal changes nothing.
func TestPolicyBlocksThePlanAndTheApply(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	in := planInputs()
	in["policy"] = noBuckets
	if r := h.run("pull_request", prEvent(7, "abc"), in); r.code != 0 || strings.Contains(h.gh.bodies(7)[0], "policy-failed") {
		t.Fatalf("a passing policy: exit %d:\n%s", r.code, r.log)
	}

	h.writeFleet(queue, bucket)
	r := h.run("pull_request", prEvent(7, "abd"), in)
	body := h.gh.bodies(7)[len(h.gh.bodies(7))-1]
	if r.code != 1 || !strings.Contains(body, "policy-failed") || !strings.Contains(body, "buckets need the data team") ||
		!strings.Contains(r.log, "the policy command refuses the plan of fleet shop: it exited 3") {
		t.Fatalf("a refusing policy: exit %d\nlog:\n%s\ncomment:\n%s", r.code, r.log, body)
	}

	// Merged anyway: the apply runs the policy first and changes nothing.
	h.gh.take()
	h.gh.merged(mergeSHA1, 7)
	ap := applyInputs("policy", noBuckets)
	r = h.run("push", pushEvent(mergeSHA1), ap)
	if r.code != 1 || !strings.Contains(r.log, "refused: the policy command refuses the plan") {
		t.Fatalf("apply under a refusing policy: exit %d:\n%s", r.code, r.log)
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); ok {
		t.Fatal("the apply changed the cloud though the policy refused its plan")
	}
}

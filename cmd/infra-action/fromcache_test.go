package main

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/render"
)

// Once the fleet has a cache, a pull request's plan first puts the plan
// from the cache in the comment, then replaces it with the refreshed
// plan, whose id is the one reviewed. A re-run for the same commit
// touches neither.
func TestPlanCommentsFromTheCacheFirstThenRefreshes(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	h.run("pull_request", prEvent(7, "abc"), planInputs())
	h.gh.take()
	h.gh.merged(mergeSHA1, 7)
	if r := h.run("push", pushEvent(mergeSHA1), applyInputs()); r.code != 0 {
		t.Fatalf("apply: exit %d:\n%s", r.code, r.log)
	}

	const list9, create9, edit = "GET /repos/acme/shop/issues/9/comments?per_page=100", "POST /repos/acme/shop/issues/9/comments",
		"PATCH /repos/acme/shop/issues/comments/1002"
	h.writeFleet(queue, bucket)
	h.gh.take()
	r := h.run("pull_request", prEvent(9, "2222222222222222222222222222222222222222"), planInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	reqs := h.gh.assertRequests(t, list9, create9, list9, edit)
	first, final := reqs[1].Body, h.gh.bodies(9)
	if !strings.Contains(first, "Planned from the cache (last observed ") || !strings.Contains(first, "Made from the cache: no apply accepts this plan.") ||
		!strings.Contains(first, "aws/object-store/assets") {
		t.Fatalf("the first comment is not the plan from the cache:\n%s", first)
	}
	if len(final) != 1 || strings.Contains(final[0], "from the cache") {
		t.Fatalf("comments on #9 after the refreshed plan: %q", final)
	}
	cached, _, _ := render.ReadMarkdownPlanID(first)
	reviewed, head, ok := render.ReadMarkdownPlanID(final[0])
	if !ok || reviewed != r.outputs["plan-id"] || head != "2222222222222222222222222222222222222222" || cached == reviewed {
		t.Fatalf("the comment's id %q (from the cache %q), output %q", reviewed, cached, r.outputs["plan-id"])
	}
	if !strings.Contains(r.log, "plan of fleet shop from the cache is on #9") {
		t.Errorf("log:\n%s", r.log)
	}

	// A re-run for the same commit keeps the refreshed comment.
	h.run("pull_request", prEvent(9, "2222222222222222222222222222222222222222"), planInputs())
	h.gh.assertRequests(t, list9, list9)
	if got := h.gh.bodies(9); len(got) != 1 || got[0] != final[0] {
		t.Fatalf("the re-run changed the comment: %q", got)
	}
}

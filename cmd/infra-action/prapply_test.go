package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v2"

	"github.com/infra-iac/infra/cli/workflows"
	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

const (
	head1 = "a1a1a1a1"
	head2 = "b2b2b2b2"

	permAlice = "GET /repos/acme/shop/collaborators/alice/permission"
	permBob   = "GET /repos/acme/shop/collaborators/bob/permission"
	getPR7    = "GET /repos/acme/shop/pulls/7"
	reviews7  = "GET /repos/acme/shop/pulls/7/reviews?per_page=100"
	patch1001 = "PATCH /repos/acme/shop/issues/comments/1001"
)

// commentEvent is the issue_comment event of user's comment body on
// pull request number, as GitHub sends it.
func commentEvent(number int, user, body string) map[string]any {
	return map[string]any{"action": "created",
		"issue":      map[string]any{"number": number, "state": "open", "pull_request": map[string]any{"url": "https://api.github.example/repos/acme/shop/pulls/7"}},
		"comment":    map[string]any{"id": 77, "body": body, "user": map[string]any{"login": user}},
		"repository": map[string]any{"full_name": "acme/shop", "default_branch": "main"}}
}

func prApplyInputs() map[string]string { return map[string]string{"command": "pr-apply"} }

// reviewedPR is pull request 7 planned at head1 (a queue and a bucket),
// open, approved at head1 by bob; alice and bob may write.
func reviewedPR(t *testing.T) (*harness, result) {
	h := newHarness(t)
	h.writeFleet(queue, bucket)
	plan := h.run("pull_request", prEvent(7, head1), planInputs())
	if plan.code != 0 {
		t.Fatalf("plan: exit %d:\n%s", plan.code, plan.log)
	}
	h.gh.pullRequest(7, "open", head1, false)
	h.gh.perms["alice"], h.gh.perms["bob"] = "write", "write"
	h.gh.review(7, "bob", "APPROVED", head1)
	h.gh.take()
	return h, plan
}

// assertNothingApplied fails the test when the cloud holds the queue.
func assertNothingApplied(t *testing.T, h *harness) {
	t.Helper()
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); ok {
		t.Fatal("a refused /infra apply changed the cloud")
	}
}

// lastBody is the newest comment on pull request number.
func lastBody(t *testing.T, h *harness, number int) string {
	t.Helper()
	b := h.gh.bodies(number)
	if len(b) == 0 {
		t.Fatalf("no comment on #%d", number)
	}
	return b[len(b)-1]
}

// /infra apply on an approved pull request applies the reviewed plan
// through the merge's path and posts the result; the merge afterwards
// applies nothing new and says so, and so does a re-run of it.
func TestPRApplyAppliesTheReviewedPlanAndTheMergeAppliesNothingNew(t *testing.T) {
	h, plan := reviewedPR(t)
	r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply\r\nplease"), prApplyInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, permAlice, getPR7, reviews7, permBob, listComments7, listComments7, listComments7, createOn7)
	if _, ok := h.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets"); !ok {
		t.Fatal("the bucket was not created")
	}
	result := lastBody(t, h, 7)
	for _, want := range []string{ApplyMarker("shop") + "\n", "### infra apply for fleet `shop`: applied",
		"Applied from the pull request at head `" + head1 + "` on `/infra apply` by @alice", plan.outputs["plan-id"],
		render.PRAppliedLine(plan.outputs["plan-id"], head1), "**Applied: 2 created, 0 updated, 0 replaced, 0 deleted.**"} {
		if !strings.Contains(result, want) {
			t.Errorf("the result lacks %q:\n%s", want, result)
		}
	}
	if strings.Contains(result, "Merge commit") || r.outputs["plan-id"] != plan.outputs["plan-id"] {
		t.Errorf("outputs %v, result:\n%s", r.outputs, result)
	}

	// Asked again: the reviewed plan is applied already.
	r = h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs())
	if r.code != 0 || !strings.Contains(lastBody(t, h, 7), "was applied from it already") {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.log, lastBody(t, h, 7))
	}
	h.gh.take()

	// The merge: its fresh plan is empty, which is the review's outcome.
	h.gh.merged(mergeSHA1, 7)
	r = h.run("push", pushEvent(mergeSHA1), applyInputs())
	if r.code != 0 {
		t.Fatalf("merge: exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, pullsOfMerge1, listComments7, listComments7, patch1001)
	merged := h.gh.bodies(7)[1]
	for _, want := range []string{"Merge commit `" + mergeSHA1 + "`: already applied from the pull request at " + head1 + "; nothing new to apply.",
		"by @alice", "| `+` | `aws/queues/jobs` | create | done |", render.PRAppliedLine(plan.outputs["plan-id"], head1)} {
		if !strings.Contains(merged, want) {
			t.Errorf("the merge's result lacks %q:\n%s", want, merged)
		}
	}
	if r.outputs["has-changes"] != "false" || !strings.HasPrefix(r.outputs["summary"], "Nothing new to apply: already applied from the pull request at "+head1) ||
		!strings.Contains(r.summary, "nothing new to apply") {
		t.Errorf("outputs %v, summary:\n%s", r.outputs, r.summary)
	}
	// A re-run of the merge writes nothing new.
	if r = h.run("push", pushEvent(mergeSHA1), applyInputs()); r.code != 0 {
		t.Fatalf("re-run: exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, pullsOfMerge1, listComments7)
}

// After an apply from the pull request, a merge whose fleet plans changes
// is an ordinary merge: against the reviewed plan, so it is refused when
// main moved on, and it applies a plan reviewed at a later head.
func TestMergeAfterPRApplyWithChangesFollowsTheReviewedPlan(t *testing.T) {
	h, _ := reviewedPR(t)
	if r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs()); r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	// main gained a security group nobody reviewed on #7.
	h.writeFleet(queue, bucket, sg)
	h.gh.merged(mergeSHA1, 7)
	r := h.run("push", pushEvent(mergeSHA1), applyInputs())
	if r.code != 1 || !strings.Contains(r.log, "refused: the plan changed since review") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.SecurityGroup, "eu-west-3", "web"); ok {
		t.Fatal("an unreviewed change was applied on merge")
	}
	// A push to #7 re-plans it: that plan is the reviewed one now.
	h.run("pull_request", prEvent(7, head2), planInputs())
	h.gh.merged("0e5e5e5e", 7)
	r = h.run("push", pushEvent("0e5e5e5e"), applyInputs())
	if r.code != 0 || !strings.Contains(h.gh.bodies(7)[1], "Applied: 1 created") {
		t.Fatalf("exit %d:\n%s\n%q", r.code, r.log, h.gh.bodies(7))
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.SecurityGroup, "eu-west-3", "web"); !ok {
		t.Fatal("the plan reviewed at the later head was not applied")
	}
}

// Each refusal answers on the pull request with the reason and the fix,
// after exactly the requests it needs, changes nothing, and is no failure
// of the run.
func TestPRApplyRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		// setup changes reviewedPR's pull request; nil keeps it.
		setup    func(h *harness)
		event    map[string]any
		requests []string
		want     []string
	}{
		{name: "not a pull request",
			event:    map[string]any{"action": "created", "issue": map[string]any{"number": 7}, "comment": map[string]any{"body": "/infra apply", "user": map[string]any{"login": "alice"}}},
			requests: []string{createOn7},
			want:     []string{"#7 is an issue, not a pull request", "comment `/infra apply` on the pull request"}},
		{name: "closed", setup: func(h *harness) { h.gh.pullRequest(7, "closed", head1, false) },
			requests: []string{permAlice, getPR7, createOn7},
			want:     []string{"#7 is closed", "reopen it"}},
		{name: "merged", setup: func(h *harness) { h.gh.pullRequest(7, "closed", head1, true) },
			requests: []string{permAlice, getPR7, createOn7},
			want:     []string{"#7 is merged already, and its merge applies its reviewed plan"}},
		{name: "not into the default branch", setup: func(h *harness) { h.gh.base(7, "release") },
			requests: []string{permAlice, getPR7, createOn7},
			want: []string{"#7 merges into `release`, not into the default branch `main`",
				"change the base of #7 to `main`, wait for its plan, review it, then comment `/infra apply` again"}},
		{name: "not into the default branch the API names", setup: func(h *harness) { h.gh.defaultBranch = "trunk" },
			event: func() map[string]any {
				ev := commentEvent(7, "alice", "/infra apply")
				delete(ev["repository"].(map[string]any), "default_branch")
				return ev
			}(),
			requests: []string{permAlice, getPR7, "GET /repos/acme/shop", createOn7},
			want:     []string{"#7 merges into `main`, not into the default branch `trunk`"}},
		{name: "read access", setup: func(h *harness) { h.gh.perms["alice"] = "read" },
			requests: []string{permAlice, createOn7},
			want:     []string{"@alice has read permission on this repository; an apply from a pull request needs write, maintain or admin", "ask someone with write access"}},
		{name: "no access", event: commentEvent(7, "mallory", "/infra apply"),
			requests: []string{"GET /repos/acme/shop/collaborators/mallory/permission", createOn7},
			want:     []string{"@mallory has none permission"}},
		{name: "not approved", setup: func(h *harness) { h.gh.reviews[7] = nil },
			requests: []string{permAlice, getPR7, reviews7, createOn7},
			want:     []string{"#7 is not approved at its head `" + head1 + "`", "have a reviewer with write access approve the head commit"}},
		{name: "approved an earlier commit", setup: func(h *harness) {
			h.gh.reviews[7] = nil
			h.gh.review(7, "bob", "APPROVED", "c0c0c0c0")
		},
			requests: []string{permAlice, getPR7, reviews7, createOn7},
			want:     []string{"not approved at its head", "@bob approved an earlier commit"}},
		{name: "approved without write access", setup: func(h *harness) { h.gh.perms["bob"] = "read" },
			requests: []string{permAlice, getPR7, reviews7, permBob, createOn7},
			want:     []string{"not approved at its head", "@bob approved without write access"}},
		{name: "changes requested", setup: func(h *harness) { h.gh.review(7, "dave", "CHANGES_REQUESTED", head1) },
			requests: []string{permAlice, getPR7, reviews7, createOn7},
			want:     []string{"changes are requested on #7 by @dave", "dismiss the review"}},
		{name: "head moved", setup: func(h *harness) {
			h.gh.pullRequest(7, "open", head2, false)
			h.gh.review(7, "bob", "APPROVED", head2)
		},
			requests: []string{permAlice, getPR7, reviews7, permBob, listComments7, createOn7},
			want: []string{"the plan comment of fleet `shop` is for commit `" + head1 + "`, but the head of #7 is now `" + head2 + "`: the head is not the reviewed commit",
				"wait for the plan workflow to plan the head"}},
		{name: "no plan comment", setup: func(h *harness) { h.gh.comments[7] = nil },
			requests: []string{permAlice, getPR7, reviews7, permBob, listComments7, createOn7},
			want:     []string{"fleet `shop` has no plan comment on #7", "wait for the plan workflow to comment the plan"}},
		{name: "unknown fleet", event: commentEvent(7, "alice", "/infra apply billing"),
			requests: []string{permAlice, getPR7, reviews7, permBob, createOn7},
			want:     []string{"no fleet of this workflow is named `billing`; its fleets are `shop`"}},
		{name: "too many words", event: commentEvent(7, "alice", "/infra apply shop now"),
			requests: []string{createOn7},
			want:     []string{"the command is `/infra apply`, or `/infra apply FLEET`"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _ := reviewedPR(t)
			if c.setup != nil {
				c.setup(h)
			}
			ev := c.event
			if ev == nil {
				ev = commentEvent(7, "alice", "/infra apply")
			}
			before := len(h.gh.bodies(7))
			r := h.run("issue_comment", ev, prApplyInputs())
			if r.code != 0 || !strings.Contains(r.log, "::warning::/infra apply on #7 refused: ") {
				t.Fatalf("exit %d:\n%s", r.code, r.log)
			}
			h.gh.assertRequests(t, c.requests...)
			assertNothingApplied(t, h)
			bodies := h.gh.bodies(7)
			if len(bodies) != before+1 {
				t.Fatalf("%d new comments, want the one reply", len(bodies)-before)
			}
			reply := bodies[len(bodies)-1]
			for _, want := range append(c.want, "refused: ", "**Nothing was changed.**", "To apply: ") {
				if !strings.Contains(reply, want) {
					t.Errorf("the reply lacks %q:\n%s", want, reply)
				}
			}
			if !strings.Contains(r.summary, c.want[0]) {
				t.Errorf("the job summary lacks the refusal:\n%s", r.summary)
			}
		})
	}
}

// The approval is each reviewer's latest review that approves, requests
// changes or was dismissed: a later approval lifts a changes request, a
// later comment changes nothing, a dismissal withdraws an approval.
func TestPRApplyApprovalIsEachReviewersLatestReview(t *testing.T) {
	for _, c := range []struct {
		name     string
		reviews  [][2]string // user, state; all of head1
		approved bool
	}{
		{"changes then approval", [][2]string{{"bob", "CHANGES_REQUESTED"}, {"bob", "APPROVED"}}, true},
		{"approval then comment", [][2]string{{"bob", "APPROVED"}, {"bob", "COMMENTED"}}, true},
		{"approval then changes", [][2]string{{"bob", "APPROVED"}, {"bob", "CHANGES_REQUESTED"}}, false},
		{"approval dismissed", [][2]string{{"bob", "APPROVED"}, {"bob", "DISMISSED"}}, false},
		{"a comment only", [][2]string{{"bob", "COMMENTED"}}, false},
		{"someone else's changes", [][2]string{{"bob", "APPROVED"}, {"dave", "CHANGES_REQUESTED"}, {"dave", "COMMENTED"}}, false},
		// Every page is read: the approval is the 151st review.
		{"approval on the second page", append(make([][2]string, 150), [2]string{"bob", "APPROVED"}), true},
		{"changes on the second page", append(append([][2]string{{"bob", "APPROVED"}}, make([][2]string, 150)...), [2]string{"dave", "CHANGES_REQUESTED"}), false},
	} {
		for i, r := range c.reviews {
			if r[0] == "" {
				c.reviews[i] = [2]string{"carol", "COMMENTED"}
			}
		}
		t.Run(c.name, func(t *testing.T) {
			h, _ := reviewedPR(t)
			h.gh.reviews[7] = nil
			for _, r := range c.reviews {
				h.gh.review(7, r[0], r[1], head1)
			}
			r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs())
			_, applied := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs")
			if r.code != 0 || applied != c.approved {
				t.Fatalf("exit %d, applied %v, want %v:\n%s", r.code, applied, c.approved, lastBody(t, h, 7))
			}
		})
	}
}

// Comments that are no /infra apply, and edits, are ignored: no request,
// no reply.
func TestPRApplyIgnoresOtherComments(t *testing.T) {
	h, _ := reviewedPR(t)
	for _, body := range []string{"LGTM", "/infra plan", "/infra applied", "please /infra apply", "/infraapply", "/infra  apply", "/infra\tapply"} {
		if r := h.run("issue_comment", commentEvent(7, "alice", body), prApplyInputs()); r.code != 0 {
			t.Fatalf("%q: exit %d:\n%s", body, r.code, r.log)
		}
	}
	ev := commentEvent(7, "alice", "/infra apply")
	ev["action"] = "edited"
	if r := h.run("issue_comment", ev, prApplyInputs()); r.code != 0 {
		t.Fatalf("edited: exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t)
	assertNothingApplied(t, h)
	// pr-apply is for issue_comment, and only for the reviewed plan.
	if r := h.run("pull_request", prEvent(7, head1), prApplyInputs()); r.code != 1 || !strings.Contains(r.log, "runs on an issue_comment event") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	if r := h.run("issue_comment", ev, map[string]string{"command": "pr-apply", "on-plan-changed": "apply"}); r.code != 1 ||
		!strings.Contains(r.log, "applies only the reviewed plan") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
}

// What the comment quotes (a fleet name, a login) reaches the reply, the
// log and the summary escaped.
func TestPRApplyRefusalEscapesTheComment(t *testing.T) {
	h, _ := reviewedPR(t)
	h.gh.perms["ev"+evil] = "read"
	r := h.run("issue_comment", commentEvent(7, "ev"+evil, "/infra apply x"+evil), prApplyInputs())
	if r.code != 0 || !printable(r.log) || !printable(r.summary) {
		t.Fatalf("exit %d:\n%q\n%q", r.code, r.log, r.summary)
	}
	if reply := lastBody(t, h, 7); !printable(reply) || !strings.Contains(reply, "has read permission") {
		t.Fatalf("reply:\n%q", reply)
	}
	h.gh.perms["ev"+evil] = "write"
	r = h.run("issue_comment", commentEvent(7, "ev"+evil, "/infra apply x"+evil), prApplyInputs())
	if reply := lastBody(t, h, 7); r.code != 0 || !printable(reply) || !strings.Contains(reply, "no fleet of this workflow is named") {
		t.Fatalf("exit %d, reply:\n%q", r.code, reply)
	}
}

// Through the executor, /infra apply sends the reviewed id, as a merge
// does, and the result names the executor.
func TestPRApplyThroughTheExecutorSendsTheReviewedID(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	reviewed := "sha256:" + strings.Repeat("3", 64)
	p := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop", ID: reviewed, Summary: engine.Summary{Create: 1}}
	s := &scripted{answers: []string{response(t, executor.Response{Status: executor.StatusDone, Plan: p, Applied: applied("jobs")})}}
	h.inv = s
	h.gh.addComment(7, "github-actions[bot]", render.PlanMarker("shop")+"\n<!-- infra:plan-id "+reviewed+" head="+head1+" -->\n")
	h.gh.pullRequest(7, "open", head1, false)
	h.gh.perms["alice"], h.gh.perms["bob"] = "admin", "write"
	h.gh.review(7, "bob", "APPROVED", head1)
	r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply shop"), prApplyInputs())
	if r.code != 0 || len(s.requests) != 1 {
		t.Fatalf("exit %d, %d invocations:\n%s", r.code, len(s.requests), r.log)
	}
	if req := s.requests[0]; req.Operation != executor.OpApply || req.ExpectPlanID != reviewed || req.Options.Unreviewed {
		t.Fatalf("request %+v", req)
	}
	result := lastBody(t, h, 7)
	if !strings.Contains(result, "by @alice: plan `"+reviewed+"`, applied by the executor `function` (1 invocation(s))") ||
		!strings.Contains(result, render.PRAppliedLine(reviewed, head1)) {
		t.Fatalf("result:\n%s", result)
	}
}

// A refused fresh plan (the cloud moved since review) posts it, changes
// nothing and fails the run, as on merge, with the pull request's fix.
func TestPRApplyRefusesAPlanThatChangedSinceReview(t *testing.T) {
	h, _ := reviewedPR(t)
	h.writeFleet(queue, bucket, sg) // the checkout is not what was planned
	r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs())
	if r.code != 1 || !strings.Contains(r.log, "refused: the plan changed since review") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	assertNothingApplied(t, h)
	if result := lastBody(t, h, 7); !strings.Contains(result, "comment `/infra apply` again") || strings.Contains(result, "infra:pr-applied") {
		t.Fatalf("result:\n%s", result)
	}
}

// A push re-planned the pull request after /infra apply was checked and
// before the apply read its plan comment: the new plan is for a commit
// nobody approved, and nothing is applied.
func TestPRApplyRefusesAPlanCommentThatChangedDuringTheRun(t *testing.T) {
	h, _ := reviewedPR(t)
	h.gh.hook = func(n int) {
		if n == 5 { // permission, pull request, reviews, bob's permission, the comments checked
			c := h.gh.comments[7][0]
			c.Body = strings.Replace(c.Body, "head="+head1, "head="+head2, 1)
		}
	}
	r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs())
	if r.code != 1 || !strings.Contains(r.log, "the plan comment changed during this run") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, permAlice, getPR7, reviews7, permBob, listComments7, listComments7)
	assertNothingApplied(t, h)
}

// programFleet makes the fleet input a Go fleet program directory, whose
// synthesis answers the document writeFleet wrote and is counted: the
// program is what runs with the invoke role, so a refusal must come
// before it runs.
func programFleet(t *testing.T, h *harness) *int {
	t.Helper()
	dir := filepath.Join(h.dir, "infra")
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/shop\n")
	doc, runs := h.fleet, 0
	h.synth = func(context.Context, string) ([]byte, error) {
		runs++
		return os.ReadFile(doc)
	}
	h.fleet = dir
	return &runs
}

// refusedBeforeTheFleetRuns runs /infra apply on reviewedPR's #7 with
// checkout as the lookup of the commit checked out and a counted fleet
// program, and checks that it is refused with a reply holding want, after
// the checks that need no fleet and before the program runs. It returns
// the harness and the count, for what the test does next.
func refusedBeforeTheFleetRuns(t *testing.T, checkout func(context.Context) (string, error), want ...string) (*harness, *int) {
	t.Helper()
	h, _ := reviewedPR(t)
	synths := programFleet(t, h)
	h.checkout = checkout
	r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs())
	if r.code != 0 || !strings.Contains(r.log, "::warning::/infra apply on #7 refused: ") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, permAlice, getPR7, createOn7)
	assertNothingApplied(t, h)
	if *synths != 0 {
		t.Fatalf("the fleet program ran %d time(s) from a checkout that is not known to be the approved head", *synths)
	}
	reply := lastBody(t, h, 7)
	for _, w := range append(want, "**Nothing was changed.**") {
		if !strings.Contains(reply, w) {
			t.Errorf("the reply lacks %q:\n%s", w, reply)
		}
	}
	if !printable(reply) {
		t.Errorf("the reply is not printable:\n%q", reply)
	}
	return h, synths
}

// The workflow checked out refs/pull/7/head when the job started, and the
// head GitHub answers later may be another commit: a push of H2 before the
// checkout and a force-push back to the approved H1 before the API read.
// The checkout is compared with the approved head before the fleet program
// runs, so H2's program never runs.
func TestPRApplyRefusesACheckoutThatIsNotTheApprovedHead(t *testing.T) {
	h, synths := refusedBeforeTheFleetRuns(t, func(context.Context) (string, error) { return head2, nil },
		"the commit checked out, `"+head2+"`, is not the head of #7, `"+head1+"`",
		"check that the head of #7 is the commit you reviewed, then comment `/infra apply` again")
	// Checked out at the approved head, the same request synthesizes the
	// program once and applies.
	h.checkout = func(context.Context) (string, error) { return head1, nil }
	r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs())
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "jobs"); r.code != 0 || *synths != 1 || !ok {
		t.Fatalf("exit %d, %d synthesis, applied %v:\n%s", r.code, *synths, ok, r.log)
	}
}

// Where the commit checked out cannot be read (no git checkout), nothing
// can be compared with the approved head: refused, before anything runs.
func TestPRApplyRefusesWithoutAGitCheckout(t *testing.T) {
	notGit := t.TempDir()
	refusedBeforeTheFleetRuns(t, func(ctx context.Context) (string, error) { return gitHead(ctx, notGit) },
		"the commit checked out in the working directory cannot be read", "not a git repository",
		"so it cannot be compared with the head of #7, `"+head1+"`", "`ref: refs/pull/${{ github.event.issue.number }}/head`")
}

// gitHead, the action's lookup of the checkout, reads the commit checked
// out in the directory.
func TestPRApplyReadsTheCheckoutWithGit(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	want := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	if got, err := gitHead(context.Background(), dir); err != nil || got != want || len(got) != 40 {
		t.Fatalf("gitHead = %q, %v; want %q", got, err, want)
	}
}

// A re-plan at the same head between the check and the apply (a re-run of
// the plan workflow, the cloud changed) is a plan nobody saw: the apply
// takes exactly the plan id checked, or nothing.
func TestPRApplyRefusesASameHeadReplanDuringTheRun(t *testing.T) {
	h, reviewed := reviewedPR(t)
	// What the re-plan plans: the fleet as it is checked out now.
	h.writeFleet(queue, bucket, sg)
	replan := h.run("pull_request", prEvent(8, head1), planInputs())
	if replan.code != 0 || replan.outputs["plan-id"] == reviewed.outputs["plan-id"] {
		t.Fatalf("re-plan: exit %d, outputs %v:\n%s", replan.code, replan.outputs, replan.log)
	}
	h.gh.take()
	h.gh.hook = func(n int) {
		if n == 5 { // permission, pull request, reviews, bob's permission, the comments checked
			c := h.gh.comments[7][0]
			c.Body = strings.Replace(c.Body, reviewed.outputs["plan-id"], replan.outputs["plan-id"], 1)
		}
	}
	r := h.run("issue_comment", commentEvent(7, "alice", "/infra apply"), prApplyInputs())
	if r.code != 1 || !strings.Contains(r.log, "the plan comment changed during this run") ||
		!strings.Contains(r.log, replan.outputs["plan-id"]) || !strings.Contains(r.log, reviewed.outputs["plan-id"]) {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, permAlice, getPR7, reviews7, permBob, listComments7, listComments7)
	assertNothingApplied(t, h)
	if _, ok := h.cloud.Get(spec.AWS, spec.SecurityGroup, "eu-west-3", "web"); ok {
		t.Fatal("the re-plan nobody reviewed was applied")
	}
}

// pr-apply.yml starts the job for every comment the action reads as a
// command: the if: is GitHub's contains() (case-insensitive) of what
// every command's first line begins with, and the action parses the rest.
func TestPRApplyWorkflowStartsForEveryCommand(t *testing.T) {
	b, err := workflows.Files.ReadFile("pr-apply.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			If string `yaml:"if"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^contains\(github\.event\.comment\.body, '([^']*)'\)$`).FindStringSubmatch(wf.Jobs["apply"].If)
	if m == nil {
		t.Fatalf("the job's if: is %q; want contains(github.event.comment.body, '...')", wf.Jobs["apply"].If)
	}
	starts := func(body string) bool { return strings.Contains(strings.ToLower(body), strings.ToLower(m[1])) }
	for _, body := range []string{"/infra apply", "  /infra apply", "\t/infra apply shop", "/infra apply\r\nplease", "/infra apply shop now",
		"/infra  apply", "/infra\tapply", "/infra apply\u00a0shop", " \u3000/infra apply", "LGTM", "/infra plan"} {
		if _, isCommand, _ := applyCommand(body); isCommand && !starts(body) {
			t.Errorf("%q is a command to the action, but the workflow does not start for it", body)
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/infra-iac/infra/render"
)

// prRequest is a /infra apply comment: who wrote it on which pull
// request, and, once checked, the head commit that was approved, planned
// and checked out, and each fleet's plan id checked at that head. Set on
// the action, it makes the apply one from the pull request, of exactly
// those plan ids.
type prRequest struct {
	number int
	user   string
	head   string
	// planIDs maps each fleet to apply to the id of its plan comment when
	// it was checked.
	planIDs map[string]string
}

// refusal is why a /infra apply is not carried out and what to do about
// it, in markdown whose quoted parts are escaped.
type refusal struct{ why, fix string }

// prApply runs on an issue_comment: a "/infra apply" comment on an open,
// approved pull request, by someone with write access, applies the plan
// reviewed there before the merge, through the merge's own apply path
// (docs/ci.md#apply-before-merge). Any other comment is ignored. A refused
// request is answered on the pull request and is no failure of the run:
// the workflow did what it should.
func (a *action) prApply(ctx context.Context) error {
	if a.gctx.EventName != "issue_comment" {
		return fmt.Errorf("command: pr-apply runs on an issue_comment event, whose comment asks for the apply; this run is a %q event", a.gctx.EventName)
	}
	if act := a.eventString("action"); act != "created" {
		fmt.Fprintf(a.log, "the comment was %s, not created: nothing to do\n", act)
		return nil
	}
	fleet, isCommand, bad := applyCommand(a.eventString("comment", "body"))
	if !isCommand {
		fmt.Fprintln(a.log, "the comment is no /infra apply: nothing to do")
		return nil
	}
	number, err := strconv.Atoi(a.eventString("issue", "number"))
	if err != nil {
		return errors.New("the issue_comment event names no issue number; the action reads GITHUB_EVENT_PATH as GitHub writes it")
	}
	req := &prRequest{number: number, user: a.eventString("comment", "user", "login")}
	api, err := a.github()
	if err != nil {
		return err
	}
	if bad {
		return a.refuse(ctx, api, req, &refusal{"the command is `/infra apply`, or `/infra apply FLEET` for one fleet",
			"comment it again with at most one fleet name"})
	}
	pr, r, err := a.checkRequest(ctx, api, req)
	if r != nil || err != nil {
		return errors.Join(err, a.refuse(ctx, api, req, r))
	}
	fleets, failures := a.synthAll(ctx)
	if fleet != "" {
		fleets, r = pickFleet(fleets, fleet, len(failures) > 0)
		if r != nil {
			return errors.Join(append(failures, a.refuse(ctx, api, req, r))...)
		}
	}
	ordered, err := orderFleets(fleets)
	if err != nil {
		return errors.Join(append(failures, err)...)
	}
	todo, r, err := a.reviewedAtHead(ctx, api, req, ordered)
	if r != nil || err != nil {
		return errors.Join(append(failures, err, a.refuse(ctx, api, req, r))...)
	}
	fmt.Fprintf(a.log, "#%d: /infra apply by %s at %s: approved, applying\n", req.number, req.user, req.head)
	a.request = req
	return errors.Join(append(failures, a.applyAll(ctx, api, pr, req.head, todo))...)
}

// applyCommand reads a comment's first line: "/infra apply" for every
// fleet, "/infra apply FLEET" for one. isCommand is false for any other
// comment; bad is true for a /infra apply with more words. The line must
// begin with "/infra apply" itself, one space between the words, which
// is what pr-apply.yml's if: looks for: a comment the job does not start
// for is none the action would read as a command.
func applyCommand(body string) (fleet string, isCommand, bad bool) {
	line := firstLine(body)
	words := strings.Fields(line)
	if len(words) < 2 || words[0] != "/infra" || words[1] != "apply" || !strings.HasPrefix(line, "/infra apply") {
		return "", false, false
	}
	switch len(words) {
	case 2:
		return "", true, false
	case 3:
		return words[2], true, false
	}
	return "", true, true
}

// checkRequest checks what needs no fleet, before any fleet program runs:
// the comment is on an open pull request into the default branch, its
// author may write to the repository, the commit checked out is the pull
// request's head, and the pull request is approved at its head. It sets
// req.head.
func (a *action) checkRequest(ctx context.Context, api *repoAPI, req *prRequest) (*github.PullRequest, *refusal, error) {
	if _, ok := a.eventValue("issue", "pull_request").(map[string]any); !ok {
		return nil, &refusal{fmt.Sprintf("#%d is an issue, not a pull request", req.number),
			"comment `/infra apply` on the pull request whose plan is to be applied"}, nil
	}
	perm, err := api.permission(ctx, req.user)
	if err != nil {
		return nil, nil, err
	}
	if !mayWrite(perm) {
		return nil, &refusal{fmt.Sprintf("%s has %s permission on this repository; an apply from a pull request needs write, maintain or admin", mention(req.user), perm),
			"ask someone with write access to comment `/infra apply`"}, nil
	}
	pr, err := api.pullRequest(ctx, req.number)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case pr.GetMerged() || pr.MergedAt != nil:
		return nil, &refusal{fmt.Sprintf("#%d is merged already, and its merge applies its reviewed plan", req.number),
			"nothing to do here: the apply workflow's result is on this pull request"}, nil
	case pr.GetState() != "open":
		return nil, &refusal{fmt.Sprintf("#%d is closed", req.number), "reopen it, then comment `/infra apply` again"}, nil
	}
	if r, err := a.intoDefaultBranch(ctx, api, req, pr); r != nil || err != nil {
		return nil, r, err
	}
	req.head = pr.GetHead().GetSHA()
	if r := a.checkedOutHead(ctx, req); r != nil {
		return nil, r, nil
	}
	r, err := a.approved(ctx, api, req)
	return pr, r, err
}

// intoDefaultBranch checks that pr merges into the repository's default
// branch (the event's repository.default_branch, else GitHub's): only a
// merge there applies, so only such a pull request's plan may be applied
// before its merge.
func (a *action) intoDefaultBranch(ctx context.Context, api *repoAPI, req *prRequest, pr *github.PullRequest) (*refusal, error) {
	def := a.eventString("repository", "default_branch")
	if def == "" {
		var err error
		if def, err = api.defaultBranch(ctx); err != nil {
			return nil, err
		}
	}
	if base := pr.GetBase().GetRef(); base != def {
		return &refusal{fmt.Sprintf("#%d merges into %s, not into the default branch %s, and only a merge into %s is applied",
			req.number, render.MarkdownCode(base), render.MarkdownCode(def), render.MarkdownCode(def)),
			fmt.Sprintf("change the base of #%d to %s, wait for its plan, review it, then comment `/infra apply` again", req.number, render.MarkdownCode(def))}, nil
	}
	return nil, nil
}

// checkedOutHead checks that the commit checked out in the working
// directory is req.head. The workflow checked out the pull request's head
// when the job started and GitHub's head is read later: a push and a
// force-push back in between would have the approved commit checked while
// the fleet program of another one runs, with the invoke role.
func (a *action) checkedOutHead(ctx context.Context, req *prRequest) *refusal {
	sha, err := a.e.checkout(ctx)
	if err != nil {
		return &refusal{fmt.Sprintf("the commit checked out in the working directory cannot be read (%s), so it cannot be compared with the head of #%d, %s",
			render.MarkdownCode(err.Error()), req.number, render.MarkdownCode(req.head)),
			"check out the pull request's head with git before the action, as pr-apply.yml does (actions/checkout with " +
				"`ref: refs/pull/${{ github.event.issue.number }}/head`), then comment `/infra apply` again"}
	}
	if sha != req.head {
		return &refusal{fmt.Sprintf("the commit checked out, %s, is not the head of #%d, %s, that GitHub answers now: the head moved while the job started, "+
			"and nothing of a commit other than the approved head may run", render.MarkdownCode(sha), req.number, render.MarkdownCode(req.head)),
			fmt.Sprintf("check that the head of #%d is the commit you reviewed, then comment `/infra apply` again", req.number)}
	}
	return nil
}

func mayWrite(permission string) bool { return permission == "admin" || permission == "write" }

// approved applies GitHub's own rule for an approved pull request, at the
// head: of each reviewer's reviews the latest that approves, requests
// changes or was dismissed counts (a comment-only review changes
// nothing). No counting review may request changes, whoever wrote it, and
// one must approve the head commit itself and come from someone with
// write access: an approval of an earlier commit did not see the head,
// and GitHub does not count one without write access either.
func (a *action) approved(ctx context.Context, api *repoAPI, req *prRequest) (*refusal, error) {
	reviews, err := api.reviews(ctx, req.number)
	if err != nil {
		return nil, err
	}
	latest := map[string]*github.PullRequestReview{}
	var reviewers []string
	for _, r := range reviews { // oldest first
		switch r.GetState() {
		case "APPROVED", "CHANGES_REQUESTED", "DISMISSED":
		default:
			continue
		}
		login := r.GetUser().GetLogin()
		if latest[login] == nil {
			reviewers = append(reviewers, login)
		}
		latest[login] = r
	}
	var blocking, earlier, atHead []string
	for _, login := range reviewers {
		switch r := latest[login]; {
		case r.GetState() == "CHANGES_REQUESTED":
			blocking = append(blocking, mention(login))
		case r.GetState() == "APPROVED" && r.GetCommitID() == req.head:
			atHead = append(atHead, login)
		case r.GetState() == "APPROVED":
			earlier = append(earlier, mention(login))
		}
	}
	if len(blocking) > 0 {
		return &refusal{fmt.Sprintf("changes are requested on #%d by %s", req.number, strings.Join(blocking, ", ")),
			"address them and have the reviewer approve, or dismiss the review, then comment `/infra apply` again"}, nil
	}
	var readOnly []string
	for _, login := range atHead {
		perm, err := api.permission(ctx, login)
		if err != nil {
			return nil, err
		}
		if mayWrite(perm) {
			return nil, nil
		}
		readOnly = append(readOnly, mention(login))
	}
	why := fmt.Sprintf("#%d is not approved at its head %s", req.number, render.MarkdownCode(req.head))
	if len(earlier) > 0 {
		why += "; " + strings.Join(earlier, ", ") + " approved an earlier commit"
	}
	if len(readOnly) > 0 {
		why += "; " + strings.Join(readOnly, ", ") + " approved without write access"
	}
	return &refusal{why, "have a reviewer with write access approve the head commit, then comment `/infra apply` again"}, nil
}

// pickFleet keeps the fleet named by "/infra apply FLEET".
func pickFleet(fleets []*fleetDoc, name string, someFailed bool) ([]*fleetDoc, *refusal) {
	var names []string
	for _, f := range fleets {
		if f.Name == name {
			return []*fleetDoc{f}, nil
		}
		names = append(names, render.MarkdownCode(f.Name))
	}
	why := fmt.Sprintf("no fleet of this workflow is named %s; its fleets are %s", render.MarkdownCode(name), strings.Join(names, ", "))
	if someFailed {
		why += " and those that did not synthesize (the run's log says why)"
	}
	return nil, &refusal{why, "comment `/infra apply` for every fleet, or `/infra apply FLEET` with one of these names"}
}

// reviewedAtHead checks that each fleet has a plan comment made for the
// approved head, and leaves out the fleets whose reviewed plan was applied
// from this pull request already. It records in req.planIDs the plan id
// of each fleet left, the one the apply must find still.
func (a *action) reviewedAtHead(ctx context.Context, api *repoAPI, req *prRequest, fleets []*fleetDoc) ([]*fleetDoc, *refusal, error) {
	var todo, done []*fleetDoc
	req.planIDs = map[string]string{}
	for _, f := range fleets {
		cs, err := api.findComments(ctx, req.number, render.PlanMarker(f.Name), ApplyMarker(f.Name))
		if err != nil {
			return nil, nil, err
		}
		c := cs[render.PlanMarker(f.Name)]
		id, head, ok := "", "", false
		if c != nil {
			id, head, ok = render.ReadMarkdownPlanID(c.GetBody())
		}
		if !ok {
			return nil, &refusal{fmt.Sprintf("fleet %s has no plan comment on #%d, so no plan of it was reviewed", render.MarkdownCode(f.Name), req.number),
				"wait for the plan workflow to comment the plan (or re-run it), review it, then comment `/infra apply` again"}, nil
		}
		if head != req.head {
			return nil, &refusal{fmt.Sprintf("the plan comment of fleet %s is for commit %s, but the head of #%d is now %s: the head is not the reviewed commit",
				render.MarkdownCode(f.Name), render.MarkdownCode(head), req.number, render.MarkdownCode(req.head)),
				"wait for the plan workflow to plan the head, review that plan, then comment `/infra apply` again"}, nil
		}
		if r := cs[ApplyMarker(f.Name)]; r != nil {
			if appliedID, appliedHead, ok := render.ReadPRApplied(r.GetBody()); ok && appliedID == id && appliedHead == head {
				fmt.Fprintf(a.log, "fleet %s: plan %s was applied from #%d already\n", f.Name, id, req.number)
				done = append(done, f)
				continue
			}
		}
		req.planIDs[f.Name] = id
		todo = append(todo, f)
	}
	if len(todo) == 0 && len(done) > 0 {
		return nil, &refusal{fmt.Sprintf("the reviewed plan of #%d was applied from it already, at %s", req.number, render.MarkdownCode(req.head)),
			"nothing to do: merging applies nothing new; push a change to plan again"}, nil
	}
	return todo, nil, nil
}

// refuse answers a refused /infra apply on the pull request (or issue), in
// the job summary and as a warning; the run itself succeeds.
func (a *action) refuse(ctx context.Context, api *repoAPI, req *prRequest, r *refusal) error {
	if r == nil {
		return nil
	}
	body := fmt.Sprintf("%s: `/infra apply` refused: %s. **Nothing was changed.**\n\nTo apply: %s.\n", mention(req.user), r.why, r.fix)
	a.gha.Warningf("/infra apply on #%d refused: %s. To apply: %s", req.number, r.why, r.fix)
	if err := a.summary(body); err != nil {
		return err
	}
	if !a.in.comment {
		return nil
	}
	url, err := api.createComment(ctx, req.number, body)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.log, "the refusal is on #%d: %s\n", req.number, url)
	return nil
}

// mention names a GitHub user in markdown, escaped: the login comes from
// the event.
func mention(login string) string { return "@" + render.TableText(login) }

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// ApplyMarker is the hidden first line of a fleet's apply result on the
// merged pull request, so that a re-run edits it instead of adding one.
func ApplyMarker(fleet string) string { return render.Marker("apply", fleet) }

// apply runs on a push to the default branch: it finds the pull request
// the pushed commit merged, reads the plan id reviewed there, and applies
// that plan and nothing else.
func (a *action) apply(ctx context.Context) error {
	if a.gctx.EventName != "push" {
		return fmt.Errorf("command: apply runs on a push to the default branch, which merges a reviewed plan; this run is a %q event", a.gctx.EventName)
	}
	sha := a.eventString("after")
	if sha == "" {
		sha = a.gctx.SHA
	}
	ref, def := a.eventString("ref"), a.eventString("repository", "default_branch")
	if def != "" && ref != "refs/heads/"+def {
		return fmt.Errorf("command: apply runs on a push to the default branch %s, not to %s: only what lands there was reviewed as a merge", def, ref)
	}
	api, err := a.github()
	if err != nil {
		return err
	}
	pr, err := api.mergedPullRequest(ctx, sha)
	if err != nil {
		return err
	}
	if pr == nil {
		fmt.Fprintf(a.log, "commit %s merged no pull request: there is no reviewed plan\n", sha)
	} else {
		fmt.Fprintf(a.log, "commit %s merged #%d\n", sha, pr.GetNumber())
	}
	fleets, failures := a.synthAll(ctx)
	// Providers first: a consumer's apply reads what its provider's
	// published, and a provider that failed stops its consumers.
	ordered, err := orderFleets(fleets)
	if err != nil {
		return errors.Join(append(failures, err)...)
	}
	return errors.Join(append(failures, a.applyAll(ctx, api, pr, sha, ordered))...)
}

// applyAll applies each fleet, in order, against its reviewed plan on pr,
// and sets the outputs: the one apply path of a merge and of /infra apply.
func (a *action) applyAll(ctx context.Context, api *repoAPI, pr *github.PullRequest, sha string, ordered []*fleetDoc) error {
	var failures []error
	run, failed := map[string]bool{}, map[string]bool{}
	for _, f := range ordered {
		run[f.Name] = true
	}
	var results []*outcome
	var done []*fleetDoc
	for _, f := range ordered {
		if p := blockedBy(f, failed, run); p != "" {
			failed[f.Name] = true
			failures = append(failures, a.notApplied(ctx, api, pr, sha, f, p))
			continue
		}
		o, err := a.applyFleet(ctx, api, pr, sha, f)
		if err != nil {
			failures = append(failures, err)
		}
		if o != nil {
			results = append(results, o)
		}
		if err != nil || o == nil || o.Status != executor.StatusDone {
			failed[f.Name] = true
		} else {
			done = append(done, f)
		}
	}
	if err := a.applyOutputs(results); err != nil {
		return err
	}
	if err := a.setExports(a.exportsOutput(ctx, done)); err != nil {
		return err
	}
	return errors.Join(failures...)
}

// notApplied reports a consumer left alone because a provider of this run
// failed: on the pull request, in the summary and as the run's error.
func (a *action) notApplied(ctx context.Context, api *repoAPI, pr *github.PullRequest, sha string, f *fleetDoc, provider string) error {
	msg := fmt.Sprintf("fleet %s: not applied: it reads fleet %s, whose apply did not succeed in this run; nothing was changed. Re-run the apply once %s has applied",
		f.Name, provider, provider)
	commit, again := "Merge commit", "Re-run the apply workflow"
	if a.request != nil {
		commit, again = "Head commit", "Comment `/infra apply` again"
	}
	body := fmt.Sprintf("%s\n### infra apply for fleet %s: not applied\n\n%s `%s`.\n\n> [!CAUTION]\n> **Nothing was changed.** This fleet reads %s, "+
		"whose apply did not succeed in this run (its result is above), so it was not applied: its plan reads what %s publishes. "+
		"%s once %s has applied.\n", ApplyMarker(f.Name), render.MarkdownCode(f.Name), commit, sha,
		render.MarkdownCode(provider), render.MarkdownCode(provider), again, render.MarkdownCode(provider))
	if err := a.postResult(ctx, api, pr, f.Name, body); err != nil {
		return errors.Join(errors.New(msg), err)
	}
	if err := a.summary(body); err != nil {
		return errors.Join(errors.New(msg), err)
	}
	fmt.Fprintln(a.log, msg)
	return errors.New(msg)
}

func (a *action) applyFleet(ctx context.Context, api *repoAPI, pr *github.PullRequest, sha string, f *fleetDoc) (*outcome, error) {
	f.scope = a.in.scope
	reviewed, done, skip, err := a.reviewedPlan(ctx, api, pr, sha, f)
	if skip || err != nil {
		return done, err
	}
	expect, note := reviewed, ""
	if reviewed == "" {
		where := "the pushed commit merged no pull request"
		if pr != nil {
			where = fmt.Sprintf("#%d has no plan comment for fleet %s", pr.GetNumber(), f.Name)
		}
		if a.in.onPlanChanged != "apply" {
			return nil, fmt.Errorf("fleet %s: no reviewed plan to apply (%s); nothing was changed. Plan on the pull request first, or set on-plan-changed: apply to apply an unreviewed plan", f.Name, where)
		}
		// Its providers have applied by now: the stored records are theirs.
		p, err := a.runner.Plan(ctx, f, nil)
		if err != nil {
			return nil, err
		}
		expect = p.ID
		note = fmt.Sprintf("No plan was reviewed (%s); on-plan-changed is apply, so the fresh plan `%s` was applied.", where, p.ID)
	}
	if err := a.policyBeforeApply(ctx, api, pr, sha, f); err != nil {
		return nil, err
	}
	fmt.Fprintf(a.log, "fleet %s: applying plan %s\n", f.Name, expect)
	o, err := a.runner.Apply(ctx, f, expect)
	if err != nil {
		return nil, err
	}
	if o.Status == executor.StatusRefused && o.Plan != nil {
		fresh := o.Plan
		if a.in.onPlanChanged != "apply" {
			what, fix := "the merged fleet", "Review it, then re-run the apply workflow with `on-plan-changed: apply`, or merge a change that plans what you expect."
			if a.request != nil {
				what, fix = "the pull request's fleet", "Push a commit so that the pull request is planned again, review that plan, and comment `/infra apply` again."
			}
			body := render.Markdown(fresh, render.MarkdownOptions{HeadSHA: sha, Marker: ApplyMarker(f.Name), Elsewhere: a.elsewhere(),
				Title: "infra apply for fleet `" + f.Name + "` refused: the plan changed after review",
				Banner: fmt.Sprintf("> [!CAUTION]\n> The reviewed plan was `%s`; %s against the cloud now plans `%s`, shown below. **Nothing was changed.** %s",
					expect, what, fresh.ID, fix)})
			if err := a.postResult(ctx, api, pr, f.Name, body); err != nil {
				return o, err
			}
			_ = a.summary(body)
			fmt.Fprintf(a.log, "fleet %s: refused, the fresh plan is:\n%s", f.Name, renderText(fresh))
			return o, fmt.Errorf("fleet %s: refused: the plan changed since review (reviewed %s, now %s); nothing was changed", f.Name, expect, fresh.ID)
		}
		note = fmt.Sprintf("The plan changed after review (reviewed `%s`); on-plan-changed is apply, so the fresh plan `%s` was applied. It is shown below.", expect, fresh.ID)
		o2, err := a.runner.Apply(ctx, f, fresh.ID)
		if err != nil {
			return o, err
		}
		o2.Elapsed += o.Elapsed
		o2.Invocations += o.Invocations
		o = o2
	}
	by := ""
	if a.request != nil {
		by = a.request.user
	}
	body := renderResult(f.Name, sha, by, o, note, a.in.executor, a.elsewhere())
	if err := a.postResult(ctx, api, pr, f.Name, body); err != nil {
		return o, err
	}
	if err := a.summary(body); err != nil {
		return o, err
	}
	fmt.Fprintf(a.log, "fleet %s: %s %s in %s\n", f.Name, o.Status, o.Count, render.Seconds(o.Elapsed))
	if o.Status != executor.StatusDone {
		return o, fmt.Errorf("fleet %s: apply %s: %s", f.Name, o.Status, o.Message)
	}
	return o, nil
}

// reviewedPlan reads the plan id reviewed on pr for fleet f, checking that
// the comment is the one /infra apply approved and that its targets are
// the run's. done is set when the merge has nothing to apply because the
// pull request applied the reviewed plan already (o is that outcome).
func (a *action) reviewedPlan(ctx context.Context, api *repoAPI, pr *github.PullRequest, sha string, f *fleetDoc) (reviewed string, o *outcome, done bool, err error) {
	if pr == nil {
		return "", nil, false, nil
	}
	cs, err := api.findComments(ctx, pr.GetNumber(), render.PlanMarker(f.Name), ApplyMarker(f.Name))
	if err != nil {
		return "", nil, false, err
	}
	c, head := cs[render.PlanMarker(f.Name)], ""
	if c != nil {
		reviewed, head, _ = render.ReadMarkdownPlanID(c.GetBody())
	}
	// /infra apply checked the comment before anything ran; a push since
	// then re-planned it for a commit nobody approved, and a re-plan at
	// the same head (a re-run, the cloud changed) is a plan nobody saw.
	if a.request != nil && (reviewed == "" || head != a.request.head || reviewed != a.request.planIDs[f.Name]) {
		return "", nil, false, fmt.Errorf("fleet %s: the plan comment changed during this run (it is now plan %q for %q, not the checked plan %s for the approved %s); nothing was changed. Review the new plan and comment /infra apply again",
			f.Name, reviewed, head, a.request.planIDs[f.Name], a.request.head)
	}
	if err := a.reviewedScope(f, c); err != nil {
		return "", nil, false, err
	}
	if a.request == nil && reviewed != "" {
		if o, ok, err := a.appliedFromPR(ctx, api, pr, sha, f, reviewed, cs[ApplyMarker(f.Name)]); ok || err != nil {
			return reviewed, o, true, err
		}
	}
	return reviewed, nil, false, nil
}

// appliedFromPR handles the merge of a pull request whose reviewed plan
// was applied from the pull request already (/infra apply): its fresh
// plan then has nothing to do, which is the review's outcome, not a change
// after review. ok is false, and the merge goes on as any other against
// the reviewed plan, when the result comment records no such apply of
// reviewed, or when the fresh plan has something to do after all (main
// moved on, or the cloud changed).
func (a *action) appliedFromPR(ctx context.Context, api *repoAPI, pr *github.PullRequest, sha string, f *fleetDoc, reviewed string,
	result *github.IssueComment) (o *outcome, ok bool, err error) {
	if result == nil {
		return nil, false, nil
	}
	id, head, found := render.ReadPRApplied(result.GetBody())
	if !found || id != reviewed {
		return nil, false, nil
	}
	fresh, err := a.runner.Plan(ctx, f, nil)
	if err != nil {
		return nil, false, err
	}
	if fresh.HasChanges() || spec.HasErrors(fresh.Diagnostics) {
		return nil, false, nil
	}
	msg := fmt.Sprintf("already applied from the pull request at %s; nothing new to apply", head)
	// Appended to the result of the apply from the pull request, which
	// stays the record of what was done.
	note := fmt.Sprintf("\n> [!NOTE]\n> Merge commit %s: %s.\n", render.MarkdownCode(sha), msg)
	if body := result.GetBody(); !strings.Contains(body, note) {
		if err := a.postResult(ctx, api, pr, f.Name, body+note); err != nil {
			return nil, true, err
		}
	}
	if err := a.summary(fmt.Sprintf("### infra apply for fleet %s: nothing new to apply\n%s", render.MarkdownCode(f.Name), note)); err != nil {
		return nil, true, err
	}
	fmt.Fprintf(a.log, "fleet %s: %s\n", f.Name, msg)
	return &outcome{Status: executor.StatusDone, Plan: fresh.Plan, Count: "Nothing new to apply: already applied from the pull request at " + head + "."}, true, nil
}

// reviewedScope narrows f as its reviewed plan was narrowed: the comment
// carries the targets and forced replaces, which a merge must plan with
// again to find the same plan. Without a comment, the inputs'. Inputs
// that name another scope than the comment's are refused rather than one
// of them chosen silently.
func (a *action) reviewedScope(f *fleetDoc, c *github.IssueComment) error {
	if c == nil {
		return nil
	}
	sc, err := render.ReadMarkdownScope(c.GetBody())
	if err != nil {
		return fmt.Errorf("fleet %s: %w; nothing was changed", f.Name, err)
	}
	given := len(a.in.scope.Targets)+len(a.in.scope.Replace) > 0
	if given && (!slices.Equal(spec.SortedAddresses(a.in.scope.Targets), sc.Targets) || !slices.Equal(spec.SortedAddresses(a.in.scope.Replace), sc.Replace)) {
		return fmt.Errorf("fleet %s: the inputs targets and replace name %v and %v, but the reviewed plan was made with %v and %v; nothing was changed. Leave them out to apply the reviewed plan",
			f.Name, a.in.scope.Targets, a.in.scope.Replace, sc.Targets, sc.Replace)
	}
	f.scope = operations.Scope{Targets: sc.Targets, Replace: sc.Replace}
	return nil
}

func (a *action) postResult(ctx context.Context, api *repoAPI, pr *github.PullRequest, fleet, body string) error {
	if pr == nil || !a.in.comment {
		return nil
	}
	url, err := api.upsertComment(ctx, pr.GetNumber(), ApplyMarker(fleet), body)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.log, "apply result of fleet %s is on #%d: %s\n", fleet, pr.GetNumber(), url)
	return nil
}

func (a *action) applyOutputs(results []*outcome) error {
	var ids, lines []string
	changes, destroys := false, false
	for _, o := range results {
		if o.Plan == nil {
			continue
		}
		id := o.Plan.ID
		if len(results) > 1 {
			id = o.Plan.Fleet + "=" + id
		}
		ids = append(ids, id)
		line := o.Count
		if o.Status == executor.StatusRefused {
			line = "Refused: the plan changed since review."
		}
		if len(results) > 1 {
			line = o.Plan.Fleet + ": " + line
		}
		lines = append(lines, line)
		changes = changes || o.Plan.HasChanges()
		destroys = destroys || o.Plan.HasDestroys()
	}
	return a.setOutputs(ids, lines, changes, destroys)
}

// renderResult is the apply's comment; by is who asked for it with
// /infra apply, empty for a merge.
func renderResult(fleet, sha, by string, o *outcome, note, function, elsewhere string) string {
	where := "in the runner"
	if function != "" {
		where = fmt.Sprintf("by the executor `%s` (%d invocation(s))", function, o.Invocations)
	}
	verdict := map[executor.Status]string{executor.StatusDone: "applied", executor.StatusFailed: "failed",
		executor.StatusIncomplete: "incomplete", executor.StatusRefused: "refused"}[o.Status]
	return render.ApplyMarkdown(render.Apply{Fleet: fleet, Commit: sha, By: by, Verdict: verdict, Plan: o.Plan, Applied: o.Applied,
		Count: o.Count, Message: o.Message, Elapsed: o.Elapsed, Where: where, Note: note, Marker: ApplyMarker(fleet), Elsewhere: elsewhere})
}

// policyBeforeApply runs the policy on what the merge would apply, a fresh
// plan: a policy that refuses it stops the apply before anything changes,
// with the refusal posted where the result would be.
func (a *action) policyBeforeApply(ctx context.Context, api *repoAPI, pr *github.PullRequest, sha string, f *fleetDoc) error {
	if a.in.policy == "" {
		return nil
	}
	fresh, err := a.runner.Plan(ctx, f, nil)
	if err != nil {
		return err
	}
	row := a.policy(ctx, fresh.Plan)
	if row == nil {
		return nil
	}
	refusePlan(fresh.Plan, row)
	body := render.Markdown(fresh.Plan, render.MarkdownOptions{HeadSHA: sha, Marker: ApplyMarker(f.Name), Elsewhere: a.elsewhere(),
		Title:  "infra apply for fleet `" + f.Name + "` refused: the policy failed",
		Banner: "> [!CAUTION]\n> The policy command refused the plan below. **Nothing was changed.**"})
	if err := a.postResult(ctx, api, pr, f.Name, body); err != nil {
		return err
	}
	_ = a.summary(body)
	return fmt.Errorf("fleet %s: refused: %s; nothing was changed", f.Name, row.Message)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor"
)

// ApplyMarker is the hidden first line of a fleet's apply result on the
// merged pull request, so that a re-run edits it instead of adding one.
func ApplyMarker(fleet string) string { return engine.Marker("apply", fleet) }

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
	var results []*outcome
	var failures []error
	for _, input := range a.in.fleets {
		o, err := a.applyFleet(ctx, api, pr, sha, input)
		if err != nil {
			failures = append(failures, err)
		}
		if o != nil {
			results = append(results, o)
		}
	}
	if err := a.applyOutputs(results); err != nil {
		return err
	}
	return errors.Join(failures...)
}

func (a *action) applyFleet(ctx context.Context, api *repoAPI, pr *github.PullRequest, sha, input string) (*outcome, error) {
	f, err := a.synth(ctx, input)
	if err != nil {
		return nil, err
	}
	reviewed := ""
	if pr != nil {
		c, err := api.findComment(ctx, pr.GetNumber(), engine.PlanMarker(f.Name))
		if err != nil {
			return nil, err
		}
		if c != nil {
			reviewed, _, _ = engine.ReadMarkdownPlanID(c.GetBody())
		}
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
		p, err := a.runner.Plan(ctx, f)
		if err != nil {
			return nil, err
		}
		expect = p.ID
		note = fmt.Sprintf("No plan was reviewed (%s); on-plan-changed is apply, so the fresh plan `%s` was applied.", where, p.ID)
	}
	fmt.Fprintf(a.log, "fleet %s: applying plan %s\n", f.Name, expect)
	o, err := a.runner.Apply(ctx, f, expect)
	if err != nil {
		return nil, err
	}
	if o.Status == executor.StatusRefused && o.Plan != nil {
		fresh := o.Plan
		if a.in.onPlanChanged != "apply" {
			body := engine.RenderMarkdown(fresh, engine.MarkdownOptions{HeadSHA: sha, Marker: ApplyMarker(f.Name), Elsewhere: a.elsewhere(),
				Title: "infra apply for fleet `" + f.Name + "` refused: the plan changed after review",
				Banner: fmt.Sprintf("> [!CAUTION]\n> The reviewed plan was `%s`; the merged fleet against the cloud now plans `%s`, shown below. **Nothing was changed.** "+
					"Review it, then re-run the apply workflow with `on-plan-changed: apply`, or merge a change that plans what you expect.", expect, fresh.ID)})
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
	body := renderResult(f.Name, sha, o, note, a.in.executor, a.elsewhere())
	if err := a.postResult(ctx, api, pr, f.Name, body); err != nil {
		return o, err
	}
	if err := a.summary(body); err != nil {
		return o, err
	}
	fmt.Fprintf(a.log, "fleet %s: %s %s in %s\n", f.Name, o.Status, o.Count, seconds(o.Elapsed))
	if o.Status != executor.StatusDone {
		return o, fmt.Errorf("fleet %s: apply %s: %s", f.Name, o.Status, o.Message)
	}
	return o, nil
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

// resultRows bounds the table of a result comment; the job summary has the
// same table, and the log every line.
const resultRows = 40_000

// renderResult is the apply's comment: what was done, how long it took,
// and the plan when it is not the reviewed one.
func renderResult(fleet, sha string, o *outcome, note, function, elsewhere string) string {
	var b strings.Builder
	b.WriteString(ApplyMarker(fleet) + "\n")
	verdict := map[executor.Status]string{executor.StatusDone: "applied", executor.StatusFailed: "failed",
		executor.StatusIncomplete: "incomplete", executor.StatusRefused: "refused"}[o.Status]
	fmt.Fprintf(&b, "### infra apply for fleet %s: %s\n\n", engine.MarkdownCode(fleet), verdict)
	where := "in the runner"
	if function != "" {
		where = fmt.Sprintf("by the executor `%s` (%d invocation(s))", function, o.Invocations)
	}
	id := "(none)"
	if o.Plan != nil {
		id = "`" + o.Plan.ID + "`"
	}
	fmt.Fprintf(&b, "Merge commit `%s`, plan %s, applied %s in **%s**.\n\n", sha, id, where, seconds(o.Elapsed))
	if note != "" {
		b.WriteString("> [!NOTE]\n> " + note + "\n\n")
	}
	b.WriteString("**" + o.Count + "**\n\n")
	if o.Status != executor.StatusDone && o.Message != "" {
		lines := strings.Split(o.Message, "\n")
		for i, l := range lines {
			lines[i] = engine.MarkdownText(l)
		}
		b.WriteString("> [!CAUTION]\n> " + strings.Join(lines, "\n> ") + "\n\n")
	}
	if len(o.Applied) > 0 {
		b.WriteString("| | resource | action | status | time | error |\n| --- | --- | --- | --- | --- | --- |\n")
		start := b.Len()
		for i, r := range o.Applied {
			row := fmt.Sprintf("| `%s` | %s | %s | %s | %s | %s |\n", symbolOf(r.Action), engine.MarkdownCode(r.Address.String()), r.Action, r.Status,
				seconds(msDuration(r.ElapsedMs)), tableText(r.Error))
			if b.Len()-start+len(row) > resultRows {
				fmt.Fprintf(&b, "\n_%d more row(s) are in %s._\n", len(o.Applied)-i, elsewhere)
				break
			}
			b.WriteString(row)
		}
	}
	if note != "" && o.Plan != nil {
		b.WriteString("\n" + engine.RenderMarkdown(o.Plan, engine.MarkdownOptions{HeadSHA: sha, Limit: engine.CommentLimit - b.Len() - 100,
			Marker: "<!-- infra:applied-plan -->", Title: "The plan that was applied", Elsewhere: elsewhere}))
	}
	return b.String()
}

func symbolOf(k engine.ActionKind) string {
	return map[engine.ActionKind]string{engine.Create: "+", engine.Update: "~", engine.Replace: "-/+",
		engine.Delete: "-", engine.Adopt: "=", engine.Forget: "#"}[k]
}

// tableText keeps an error message or a cloud's tag inside its cell, as
// inert text.
func tableText(s string) string {
	s = engine.MarkdownText(s)
	if len(s) <= 300 {
		return s
	}
	cut := 300
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

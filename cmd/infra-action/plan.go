package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// plan plans every fleet, writes the job summary, annotations and outputs,
// and on a pull request keeps one comment per fleet up to date. Fleets
// that wire to each other are planned providers first, and a consumer
// reads what a provider of this run will publish.
func (a *action) plan(ctx context.Context) error {
	number, head := a.pullRequest()
	fleets, failures := a.synthAll(ctx)
	ordered, err := orderFleets(fleets)
	if err != nil {
		return errors.Join(append(failures, err)...)
	}
	var plans []*operations.Plan
	upstream := map[string]*spec.Published{}
	for _, f := range ordered {
		f.scope = a.in.scope
		if number != 0 && a.in.comment {
			if err := a.firstComment(ctx, f, number, head, upstream); err != nil {
				return err
			}
		}
		p, err := a.runner.Plan(ctx, f, upstream)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		if p.Published != nil {
			upstream[f.Name] = p.Published
		}
		if row := a.policy(ctx, p.Plan); row != nil {
			refusePlan(p.Plan, row)
			failures = append(failures, fmt.Errorf("fleet %s: %s", f.Name, row.Message))
		}
		plans = append(plans, p.Plan)
		fmt.Fprintf(a.log, "fleet %s:\n%s", p.Fleet, renderText(p.Plan))
		a.annotate(f, p.Diagnostics)
		opts := render.MarkdownOptions{HeadSHA: head, Reads: readsOf(f, p.Plan, upstream), Consumers: consumersOf(f, p.Consumers, ordered)}
		summaryOpts := opts
		summaryOpts.Limit, summaryOpts.Elsewhere = summaryLimit/len(a.in.fleets), "the step log"
		if err := a.summary(render.Markdown(p.Plan, summaryOpts)); err != nil {
			return err
		}
		if number != 0 && a.in.comment {
			api, err := a.github()
			if err != nil {
				return err
			}
			opts.Elsewhere = a.elsewhere()
			body := render.Markdown(p.Plan, opts)
			url, err := api.upsertComment(ctx, number, render.PlanMarker(p.Fleet), body)
			switch {
			case forbidden(err):
				// A pull request from a fork gets a read-only token. The
				// plan is still in the summary, and with no comment no
				// plan counts as reviewed, so a merge cannot apply it.
				a.gha.Warningf("cannot comment on #%d (%v): the token may not write to pull requests, as on a pull request from a fork. "+
					"The plan is in the job summary; a merge will find no reviewed plan", number, err)
			case err != nil:
				return err
			default:
				fmt.Fprintf(a.log, "plan of fleet %s is on #%d: %s (%d characters)\n", p.Fleet, number, url, len(body))
			}
		}
		if spec.HasErrors(p.Diagnostics) && a.policyPassed(p.Diagnostics) {
			failures = append(failures, fmt.Errorf("fleet %s has errors; fix them (infra check lists them all)", p.Fleet))
		}
	}
	if err := a.planOutputs(plans); err != nil {
		return err
	}
	if err := a.setExports(a.exportsOutput(ctx, ordered)); err != nil {
		return err
	}
	return errors.Join(failures...)
}

// firstComment puts the plan from the cache in the fleet's comment before
// the plan reads the cloud, which can take minutes: a reviewer sees at once
// what the change does, as of the last apply, and the refreshed plan then
// replaces it. Only the refreshed plan can be reviewed: the first one's id
// is never a refreshed plan's, so a merge that found it would refuse and
// post the fresh plan. No cache (a fleet never applied), a cache that
// cannot be read, a fleet with errors or a runner that cannot plan from
// the cache (the executor) make no first comment; nor does a comment
// already made for this commit, which a re-run keeps.
func (a *action) firstComment(ctx context.Context, f *fleetDoc, number int, head string, upstream map[string]*spec.Published) error {
	cp, ok := a.runner.(cachePlanner)
	if !ok {
		return nil
	}
	p, err := cp.PlanFromCache(ctx, f, upstream)
	if err != nil || p.FromCache == nil {
		var diags *operations.DiagnosticsError
		if err != nil && !errors.Is(err, operations.ErrNoCache) && !errors.As(err, &diags) {
			fmt.Fprintf(a.log, "fleet %s: no first comment from the cache: %v\n", f.Name, err)
		}
		return nil
	}
	api, err := a.github()
	if err != nil {
		return err
	}
	body := render.Markdown(p, render.MarkdownOptions{HeadSHA: head, Elsewhere: a.elsewhere()})
	url, err := api.firstComment(ctx, number, render.PlanMarker(p.Fleet), body, head)
	if forbidden(err) {
		return nil // the refreshed plan's comment says so
	}
	if err == nil {
		fmt.Fprintf(a.log, "plan of fleet %s from the cache is on #%d: %s; planning against the cloud\n", p.Fleet, number, url)
	}
	return err
}

// forbidden reports a refusal for lack of permission (403).
func forbidden(err error) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusForbidden
}

// pullRequest is the number and head commit of the pull request this run
// is for, or 0 when it is for none.
func (a *action) pullRequest() (int, string) {
	if !strings.HasPrefix(a.gctx.EventName, "pull_request") {
		return 0, a.gctx.SHA
	}
	n, err := strconv.Atoi(a.eventString("pull_request", "number"))
	if err != nil {
		n, _ = strconv.Atoi(a.eventString("number"))
	}
	head := a.eventString("pull_request", "head", "sha")
	if head == "" {
		head = a.gctx.SHA
	}
	return n, head
}

// planOutputs sets plan-id, has-changes, has-destroys and summary. With one
// fleet plan-id is its id; with several, one "fleet=id" line each.
func (a *action) planOutputs(plans []*operations.Plan) error {
	var ids, lines []string
	changes, destroys := false, false
	for _, p := range plans {
		if len(plans) == 1 {
			ids = append(ids, p.ID)
		} else {
			ids = append(ids, p.Fleet+"="+p.ID)
		}
		lines = append(lines, prefixFleet(plans, p.Fleet, render.SummaryLine(p)))
		changes = changes || p.HasChanges()
		destroys = destroys || p.HasDestroys()
	}
	return a.setOutputs(ids, lines, changes, destroys)
}

// setOutputs sets the four outputs every command that plans shares.
func (a *action) setOutputs(ids, lines []string, changes, destroys bool) error {
	for _, kv := range [][2]string{
		{"plan-id", strings.Join(ids, "\n")},
		{"has-changes", strconv.FormatBool(changes)},
		{"has-destroys", strconv.FormatBool(destroys)},
		{"summary", strings.Join(lines, "\n")},
	} {
		if err := a.setOutput(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

func prefixFleet(plans []*operations.Plan, fleet, line string) string {
	if len(plans) == 1 {
		return line
	}
	return fleet + ": " + line
}

// policyPassed reports whether no row of ds is the policy's.
func (a *action) policyPassed(ds []spec.Diagnostic) bool {
	for _, d := range ds {
		if d.ID == spec.RowPolicyFailed {
			return false
		}
	}
	return true
}

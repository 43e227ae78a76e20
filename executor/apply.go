package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/infra-iac/infra/operations"
)

// apply serves apply and destroy: the operations plan afresh under the
// lock, accept the plan only if it is the reviewed one (or what is left of
// it, when the same run resumes), then apply until done or until the
// budget says stop.
func (h *Handler) apply(ctx context.Context, r *request, req Request, b budget) Response {
	areq := operations.ApplyRequest{Document: r.doc, Destroy: req.Operation == OpDestroy, Expect: req.ExpectPlanID,
		Runs: r.runs, RunID: req.RunID, Force: req.Options.Force, StopAt: b.stopAt, Scope: req.scope()}
	if req.Options.Unreviewed {
		areq.Confirm = func(*operations.Plan) error { return nil }
	}
	res, err := r.ops.Apply(ctx, areq)
	if res == nil {
		return refusal(ctx, req.Operation, err)
	}
	resp := Response{Plan: res.Plan, Diagnostics: res.Plan.Diagnostics}
	if res.Report != nil {
		resp.Applied = res.Report.Applied
	}
	var diags *operations.DiagnosticsError
	var unreviewed *operations.NotReviewedError
	var changed *operations.PlanChangedError
	var brake *operations.BrakeError
	switch {
	case errors.As(err, &diags) && !diags.Planned:
		return refusal(ctx, req.Operation, err)
	case errors.As(err, &diags):
		// The plan found them: it goes back with its rows, as a plan does.
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf("refusing to %s: the plan has %d error(s)", req.Operation, diags.Count())
	case errors.As(err, &unreviewed):
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf(`refusing to %s without a reviewed plan: send "expectPlanId" (this fresh plan is %s), or options.unreviewed to apply whatever the fresh plan is`, req.Operation, unreviewed.Fresh)
	case errors.As(err, &changed):
		resp.Status = StatusRefused
		resp.Message = fmt.Sprintf("refusing to %s: %v; review the fresh plan and apply that", req.Operation, changed)
	case errors.As(err, &brake):
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf("refusing to %s: %v. If the declaration is right, send options.force; if it is not, check the credentials are for the account you meant", req.Operation, err)
	case err != nil:
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf("%s: %s; %s", req.Operation, counts(res.Report), timeoutHint(ctx, err))
	case res.Report == nil:
		resp.Status = StatusDone
		resp.Message = "nothing to do: the cloud matches the fleet"
		if res.Resumed {
			resp.Message = fmt.Sprintf("nothing left to do: the reviewed plan %s is fully applied", req.ExpectPlanID)
		}
	default:
		resp.Status, resp.Message = h.ended(req, res.Report, b)
	}
	return resp
}

// ended is the status and message of an apply that ran without an error.
func (h *Handler) ended(req Request, report *operations.Report, b budget) (Status, string) {
	switch {
	case report.Incomplete && done(report) == 0:
		// Nothing moved: invoking again would give the same result for
		// ever, so say so instead of asking for another round.
		return StatusFailed, fmt.Sprintf("%s: stopped before its deadline without finishing any action (the plan alone took most of the %s this invocation had); raise the function's timeout",
			req.Operation, b.total.Round(1e6))
	case report.Incomplete:
		return StatusIncomplete, fmt.Sprintf("%s: %s; stopped before the deadline with the ledger saved: send the same request again to resume", req.Operation, counts(report))
	}
	return StatusDone, fmt.Sprintf("%s: %s", req.Operation, counts(report))
}

// done counts the actions this invocation finished.
func done(r *operations.Report) int {
	n := 0
	for _, a := range r.Applied {
		if a.Status == operations.StatusDone {
			n++
		}
	}
	return n
}

// counts says what a report did, in one phrase.
func counts(r *operations.Report) string {
	if r == nil {
		return "nothing applied"
	}
	by := map[operations.Status]int{}
	for _, a := range r.Applied {
		by[a.Status]++
	}
	s := fmt.Sprintf("%d of %d action(s) done", by[operations.StatusDone], len(r.Applied))
	if n := by[operations.StatusFailed]; n > 0 {
		s += fmt.Sprintf(", %d failed", n)
	}
	if n := by[operations.StatusSkipped]; n > 0 {
		s += fmt.Sprintf(", %d skipped", n)
	}
	if n := by[operations.StatusNotStarted]; n > 0 {
		s += fmt.Sprintf(", %d not started", n)
	}
	return s
}

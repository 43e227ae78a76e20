package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// apply serves apply and destroy: under the lock for the whole call, plan
// afresh, accept the plan only if it is the reviewed one (or what is left
// of it, when the same run resumes), then apply until done or until the
// budget says stop.
func (h *Handler) apply(ctx context.Context, s *session, req Request, b budget) Response {
	destroy := req.Operation == OpDestroy
	p, err := s.engine.Plan(ctx, s.model, s.diags, s.ledger, engine.PlanOptions{Destroy: destroy})
	if err != nil {
		return failed(string(req.Operation) + ": plan: " + timeoutHint(ctx, err))
	}
	resp := Response{Plan: p, Diagnostics: p.Diagnostics}
	if spec.HasErrors(p.Diagnostics) {
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf("refusing to %s: the plan has %d error(s)", req.Operation, countErrors(p.Diagnostics))
		return resp
	}
	rec, err := s.loadRun(ctx)
	if err != nil {
		return failed(err.Error())
	}
	resuming := false
	switch {
	case req.ExpectPlanID == "" && !req.Options.Unreviewed:
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf(`refusing to %s without a reviewed plan: send "expectPlanId" (this fresh plan is %s), or options.unreviewed to apply whatever the fresh plan is`, req.Operation, p.ID)
		return resp
	case req.ExpectPlanID == "" || req.ExpectPlanID == p.ID:
	default:
		why := rec.resumes(req, destroy, p)
		if why != "" {
			resp.Status = StatusRefused
			resp.Message = fmt.Sprintf("refusing to %s: the reviewed plan is %s, but the fleet and the cloud now give %s (%s); review the fresh plan and apply that",
				req.Operation, req.ExpectPlanID, p.ID, why)
			return resp
		}
		resuming = true
	}
	if !p.HasChanges() {
		resp.Status = StatusDone
		resp.Message = "nothing to do: the cloud matches the fleet"
		if resuming {
			resp.Message = fmt.Sprintf("nothing left to do: the reviewed plan %s is fully applied", req.ExpectPlanID)
		}
		return resp
	}
	if !resuming {
		// Remember the accepted plan before the first action, so that a
		// resume (after incomplete, or after the function was killed) can
		// tell what is left of it from a change nobody reviewed.
		if err := s.saveRun(ctx, runRecord{Version: runRecordVersion, RunID: req.RunID, PlanID: p.ID,
			Destroy: destroy, Document: documentHash(req.Document), Actions: p.Actions, Accepted: h.cfg.Now().UTC()}); err != nil {
			return failed(err.Error())
		}
	}
	report, err := s.engine.Apply(ctx, p, engine.ApplyOptions{Store: s.store, Force: req.Options.Force, StopAt: b.stopAt, RunID: req.RunID})
	if report != nil {
		resp.Applied = report.Applied
	}
	var brake *engine.BrakeError
	switch {
	case errors.As(err, &brake):
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf("refusing to %s: %v (options.force)", req.Operation, err)
	case err != nil:
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf("%s: %s; %s", req.Operation, counts(report), timeoutHint(ctx, err))
	case report.Incomplete && done(report) == 0:
		// Nothing moved: invoking again would give the same result for
		// ever, so say so instead of asking for another round.
		resp.Status = StatusFailed
		resp.Message = fmt.Sprintf("%s: stopped before its deadline without finishing any action (the plan alone took most of the %s this invocation had); raise the function's timeout",
			req.Operation, b.total.Round(1e6))
	case report.Incomplete:
		resp.Status = StatusIncomplete
		resp.Message = fmt.Sprintf("%s: %s; stopped before the deadline with the ledger saved: send the same request again to resume", req.Operation, counts(report))
	default:
		resp.Status = StatusDone
		resp.Message = fmt.Sprintf("%s: %s", req.Operation, counts(report))
	}
	return resp
}

// done counts the actions this invocation finished.
func done(r *engine.Report) int {
	n := 0
	for _, a := range r.Applied {
		if a.Status == engine.StatusDone {
			n++
		}
	}
	return n
}

// counts says what a report did, in one phrase.
func counts(r *engine.Report) string {
	if r == nil {
		return "nothing applied"
	}
	by := map[engine.Status]int{}
	for _, a := range r.Applied {
		by[a.Status]++
	}
	s := fmt.Sprintf("%d of %d action(s) done", by[engine.StatusDone], len(r.Applied))
	if n := by[engine.StatusFailed]; n > 0 {
		s += fmt.Sprintf(", %d failed", n)
	}
	if n := by[engine.StatusSkipped]; n > 0 {
		s += fmt.Sprintf(", %d skipped", n)
	}
	if n := by[engine.StatusNotStarted]; n > 0 {
		s += fmt.Sprintf(", %d not started", n)
	}
	return s
}

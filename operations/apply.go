package operations

import (
	"context"
	"errors"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// ApplyRequest asks to make the cloud match the fleet: fresh (Confirm
// decides), reviewed (Expect names the plan), or a teardown (Destroy).
type ApplyRequest struct {
	Document *spec.Document
	// Destroy deletes everything the fleet manages: the same pipeline
	// against a target that declares nothing.
	Destroy bool
	// Expect is the reviewed plan's id. The fresh plan, made under the
	// lock, must be it, or (with Runs) what is left of it in the same run;
	// otherwise the apply is a *PlanChangedError and nothing changes.
	Expect string
	// Runs, when set, remembers the accepted plan before the first action,
	// so that the same run, sent again after stopping part-way, resumes
	// what is left of it instead of being refused.
	Runs Runs
	// RunID names the run in the lock, the intents and the run record.
	RunID string
	// Planned sees the fresh plan as soon as it is made, whatever follows:
	// a front end shows it. Its error ends the apply.
	Planned func(*engine.Plan) error
	// Confirm, without Expect, is asked to accept a fresh plan that has
	// changes; its error ends the apply. Nil, without Expect, refuses with
	// a *NotReviewedError before anything is accepted.
	Confirm func(*engine.Plan) error
	// Force overrides the brake.
	Force bool
	// StopAt, when set, is when no new action starts; the report is then
	// Incomplete.
	StopAt time.Time
	// Command names the operation in the lock; "apply" or "destroy" when
	// empty.
	Command string
	// Scope narrows the fresh plan as the reviewed one was narrowed: the
	// same targets and forced replaces, or the ids differ.
	Scope
}

// ApplyResult is what an apply did.
type ApplyResult struct {
	// Plan is the fresh plan: the one applied, or the one refused.
	Plan *engine.Plan
	// Report is nil when nothing was applied (no changes, or refused).
	Report *engine.Report
	// Resumed is set when the fresh plan was accepted as what is left of
	// the reviewed one.
	Resumed bool
}

// Apply plans afresh under the fleet's lock, accepts the plan (reviewed,
// resumed or confirmed), and applies it until done, failed or StopAt.
func (o *Operations) Apply(ctx context.Context, req ApplyRequest) (*ApplyResult, error) {
	command := req.Command
	if command == "" {
		command = verb(req.Destroy)
	}
	s, err := open(ctx, o.env, req.Document, command, true)
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	opts := req.Scope.options(req.Destroy)
	if opts.ReplaceGone, err = resuming(ctx, req); err != nil {
		return nil, err
	}
	p, err := s.plan(ctx, opts, req.Force)
	if p == nil {
		return nil, err
	}
	res := &ApplyResult{Plan: p}
	if req.Planned != nil {
		if perr := req.Planned(p); perr != nil {
			return res, perr
		}
	}
	if err != nil { // the plan has errors
		return res, err
	}
	if res.Resumed, err = review(ctx, req, p); err != nil {
		return res, err
	}
	if pending := p.Pending(); pending != nil {
		return res, pending
	}
	if !p.HasChanges() {
		if err := s.claimUnlessDestroy(ctx, req.Destroy); err != nil {
			return res, err
		}
		return res, s.publish(ctx, p, req.Destroy)
	}
	if req.Expect == "" {
		if err := req.Confirm(p); err != nil {
			return res, err
		}
	}
	if req.Runs != nil && !res.Resumed {
		// Before the first action, so that a resume (after incomplete, or
		// after the process was killed) can tell what is left of this plan
		// from a change nobody reviewed.
		if err := req.Runs.SaveRun(ctx, newRunRecord(req, p, o.env.now())); err != nil {
			return res, err
		}
	}
	if err := s.claimUnlessDestroy(ctx, req.Destroy); err != nil {
		return res, err
	}
	if err := s.withdraw(ctx, p, req.Force, s.runName(req.RunID)); err != nil {
		return res, err
	}
	res.Report, err = s.engine.Apply(ctx, p, engine.ApplyOptions{Store: s.store, Force: req.Force, StopAt: req.StopAt, RunID: req.RunID})
	if err != nil || res.Report.Incomplete {
		if s.withdrew {
			err = errors.Join(err, s.giveBack(ctx))
		}
		return res, err
	}
	return res, s.publish(ctx, p, req.Destroy)
}

// claimUnlessDestroy claims what the fleet reads, before any change; a
// destroy gives its claims up instead, once it has succeeded (publish).
func (s *session) claimUnlessDestroy(ctx context.Context, destroy bool) error {
	if destroy {
		return nil
	}
	return s.claim(ctx)
}

func verb(destroy bool) string {
	if destroy {
		return "destroy"
	}
	return "apply"
}

// runName names this run where another fleet's operator reads it: the run
// id a front end gave, else the lock's.
func (s *session) runName(run string) string {
	if run == "" && s.lock != nil {
		run = s.lock.Info().ID
	}
	return run
}

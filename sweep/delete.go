package sweep

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/infra-iac/infra/internal/walk"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// deleteRounds deletes the candidates: all of them in round 1, in
// parallel, each service within its bound. Debris has no declaration, so no
// dependency graph orders it; instead a delete the cloud refuses for now (a
// Conflict: a dependant still holds it, a bucket is not empty; or Throttled
// past the SDK's own adaptive retries) is retried in the next round, after
// the whole round has run, because what held it may have gone meanwhile.
// Rounds go on while one deletes something; a round that deletes nothing
// ends them, and what is left is reported with the provider's own words
// rather than retried for ever (a predecessor's sweep stuck on a dependency
// is the failure mode this avoids). It is a walk of a graph without edges.
func (s *sweeper) deleteRounds(ctx context.Context, cands []*judged) {
	if len(cands) == 0 {
		return
	}
	steps := make([]walk.Step, len(cands))
	for i, f := range cands {
		steps[i] = walk.Step{Service: serviceOf(f.job)}
	}
	round := make([]int, len(cands)) // this round's steps
	for i := range round {
		round[i] = i
	}
	s.report.Rounds = 1
	s.emit(Event{Kind: EventBegin, Total: len(cands)})
	var w *walk.Walker
	w = walk.New(walk.Config{
		Steps: steps, PerService: s.opts.PerKind,
		Started: func(i, _ int) {
			s.emit(Event{Kind: EventStart, Address: cands[i].entry.Address, Region: cands[i].entry.Region})
		},
		Run: func(ctx context.Context, i int) error {
			err := s.deleteOne(ctx, cands[i])
			if providers.CodeOf(cands[i].job.backend, err) == providers.NotFound {
				return nil // gone already: deleted all the same
			}
			return err
		},
		Settled: func(i int, r walk.Result) { s.settle(outcome{f: cands[i], err: r.Err, elapsed: r.Elapsed}) },
		Defer: func(i int, err error) bool {
			code := providers.CodeOf(cands[i].job.backend, err)
			return code == providers.Conflict || code == providers.Throttled
		},
		Stop:      func() bool { return ctx.Err() != nil },
		Heartbeat: s.opts.Heartbeat,
		Tick:      func([]int) { s.heartbeat(w, cands, round) },
		BeforeRound: func(n int, pending []int) bool {
			if ctx.Err() != nil || (s.opts.RoundDelay > 0 && !sleep(ctx, s.opts.RoundDelay)) {
				return false
			}
			s.emit(Event{Kind: EventRound, Message: fmt.Sprintf("round %d: retrying %d refused delete(s)", n, len(pending))})
			s.report.Rounds, round = n, pending
			return true
		},
	})
	w.Walk(ctx)
	// Stopped by a cancellation: what did not start fails with it.
	for i, f := range cands {
		if w.State(i) == walk.Pending {
			s.settle(outcome{f: f, err: ctx.Err()})
		}
	}
}

// heartbeat names this round's deletes still outstanding, running or
// waiting for their service.
func (s *sweeper) heartbeat(w *walk.Walker, cands []*judged, round []int) {
	var out []spec.Address
	for _, i := range round {
		if st := w.State(i); st == walk.Pending || st == walk.Running {
			out = append(out, cands[i].entry.Address)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	s.emit(Event{Kind: EventWaiting, Outstanding: out, Message: fmt.Sprintf("still deleting %d resource(s)", len(out))})
}

type outcome struct {
	f       *judged
	err     error
	elapsed time.Duration
}

// deleteOne deletes a candidate. The target has no fields, as for an
// engine orphan: nothing a declaration would say (forceDestroy) applies,
// so a bucket with objects in it is refused, not emptied.
func (s *sweeper) deleteOne(ctx context.Context, f *judged) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.entry.Attempts++
	// What the listing said (a queue's URL) saves looking it up again.
	return f.job.res.Delete(ctx, providers.Target{Name: f.res.Name, Region: f.res.Region, Owner: f.res.Owner, Attributes: f.res.Attributes})
}

// settle records one delete's outcome and reports whether it deleted. A
// refusal for now leaves the status empty (retried next round); any other
// error is final (StatusLeft until verification says otherwise).
func (s *sweeper) settle(o outcome) bool {
	f, j := o.f, o.f.job
	code := providers.CodeOf(j.backend, o.err)
	if o.err == nil || code == providers.NotFound {
		f.entry.Status, f.entry.Error = StatusDeleted, ""
		s.emit(Event{Kind: EventDeleted, Address: f.entry.Address, Region: f.entry.Region, Elapsed: o.elapsed})
		return true
	}
	werr := callError(j.backend, f.entry.Address, "delete", o.err)
	f.entry.Error = werr.Error()
	if code == providers.Conflict || code == providers.Throttled {
		f.entry.Status = ""
		s.emit(Event{Kind: EventDeferred, Address: f.entry.Address, Region: f.entry.Region, Err: werr})
		return false
	}
	f.entry.Status = StatusLeft
	s.emit(Event{Kind: EventFailed, Address: f.entry.Address, Region: f.entry.Region, Err: werr})
	return false
}

// sleep waits d, or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

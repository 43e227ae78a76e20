package sweep

import (
	"context"
	"fmt"
	"sort"
	"time"

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
// is the failure mode this avoids).
func (s *sweeper) deleteRounds(ctx context.Context, cands []*judged) {
	pending := cands
	for round := 1; len(pending) > 0; round++ {
		if round > 1 {
			if s.opts.RoundDelay > 0 && !sleep(ctx, s.opts.RoundDelay) {
				return
			}
			s.emit(Event{Kind: EventRound, Message: fmt.Sprintf("round %d: retrying %d refused delete(s)", round, len(pending))})
		}
		s.report.Rounds = round
		deferred, deleted := s.round(ctx, pending)
		if ctx.Err() != nil || len(deferred) == 0 || deleted == 0 {
			return
		}
		pending = deferred
	}
}

type outcome struct {
	f       *judged
	err     error
	elapsed time.Duration
}

// round runs one delete per pending candidate and returns the ones refused
// for now and how many went.
func (s *sweeper) round(ctx context.Context, pending []*judged) (deferred []*judged, deleted int) {
	results := make(chan outcome)
	running := map[*judged]bool{}
	for _, f := range pending {
		running[f] = true
		go func() {
			sem := s.sem(f.job)
			if !acquire(ctx, sem) {
				results <- outcome{f: f, err: ctx.Err()}
				return
			}
			t := time.Now()
			err := s.deleteOne(ctx, f)
			<-sem
			results <- outcome{f: f, err: err, elapsed: time.Since(t)}
		}()
	}
	ticker := time.NewTicker(s.opts.Heartbeat)
	defer ticker.Stop()
	for len(running) > 0 {
		select {
		case o := <-results:
			delete(running, o.f)
			if s.settle(o) {
				deleted++
			} else if o.f.entry.Status == "" {
				deferred = append(deferred, o.f)
			}
		case <-ticker.C:
			var out []spec.Address
			for f := range running {
				out = append(out, f.entry.Address)
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
			s.emit(Event{Kind: EventWaiting, Outstanding: out, Message: fmt.Sprintf("still deleting %d resource(s)", len(out))})
		}
	}
	return deferred, deleted
}

// deleteOne deletes a candidate. The target has no fields, as for an
// engine orphan: nothing a declaration would say (forceDestroy) applies,
// so a bucket with objects in it is refused, not emptied.
func (s *sweeper) deleteOne(ctx context.Context, f *judged) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.entry.Attempts++
	return f.job.res.Delete(ctx, providers.Target{Name: f.res.Name, Region: f.res.Region, Owner: f.res.Owner})
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

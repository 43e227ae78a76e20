package sweep

import (
	"context"
	"sync"
	"time"
)

// verify lists every kind again after the deletion. A delete that returned
// no error is not proof (a predecessor read a single listing after a write
// as the truth, both ways), so what is listed decides: a candidate still
// there is a survivor, reported with the provider's words from its last
// refusal; one whose delete succeeded but that is still listed is given
// Settle to disappear (eventual consistency), read by wall clock; and a
// resource with the prefix that every rule would allow but the first
// listing did not show (made during the sweep) is a survivor too, because
// the account is not clean.
func (s *sweeper) verify(ctx context.Context, jobs []*job, cands []*judged) {
	if len(cands) == 0 || ctx.Err() != nil {
		return
	}
	s.emit(Event{Kind: EventVerify, Message: "listing again to verify"})
	byJob := map[*job]map[string]*judged{}
	for _, f := range cands {
		if byJob[f.job] == nil {
			byJob[f.job] = map[string]*judged{}
		}
		byJob[f.job][f.res.Name] = f
	}
	again := s.relist(ctx, jobs, byJob)
	s.awaitGone(ctx, again.settle(cands))
	for _, f := range cands {
		if f.entry.Status == StatusLeft {
			s.report.Survivors = append(s.report.Survivors, f.entry)
		}
	}
	s.report.Survivors = append(s.report.Survivors, again.appeared...)
}

// relisting is what the second listing showed.
type relisting struct {
	present  map[*judged]bool
	unlisted map[*job]bool // not listed again: not listed is not gone
	appeared []Entry
}

// relist lists every job that did not fail again, bounded, and compares
// what it finds with the candidates of the first listing (byJob).
func (s *sweeper) relist(ctx context.Context, jobs []*job, byJob map[*job]map[string]*judged) *relisting {
	rl := &relisting{present: map[*judged]bool{}, unlisted: map[*job]bool{}}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	sem := make(chan struct{}, listParallelism)
	for _, j := range jobs {
		if j.failed {
			continue // already a problem; nothing to compare against
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !acquire(ctx, sem) {
				mu.Lock()
				rl.unlisted[j] = true // interrupted
				mu.Unlock()
				return
			}
			again, err := s.list(ctx, j)
			<-sem
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				rl.unlisted[j] = true
				return
			}
			rl.compare(again, byJob[j])
		}()
	}
	wg.Wait()
	return rl
}

// compare records which candidates are still listed, and each resource the
// rules would allow that was not listed the first time.
func (rl *relisting) compare(again []*judged, cands map[string]*judged) {
	for _, g := range again {
		if f, ok := cands[g.res.Name]; ok {
			rl.present[f] = true
			continue
		}
		if g.candidate {
			g.entry.Status = StatusLeft
			g.entry.Error = "it appeared after the first listing, so this run did not delete it; run the sweep again"
			rl.appeared = append(rl.appeared, g.entry)
		}
	}
}

// settle gives each candidate its status by the second listing and returns
// the lingering: deleted, yet still listed.
func (rl *relisting) settle(cands []*judged) []*judged {
	var lingering []*judged
	for _, f := range cands {
		switch {
		case rl.unlisted[f.job] || f.job.failed:
			// Cannot verify (a problem is recorded): trust only failures.
			if f.entry.Status != StatusDeleted {
				f.entry.Status = StatusLeft
			}
		case !rl.present[f]:
			// Gone, whatever the last answer was: a refusal in the last
			// round can still have gone through, or been undone by a
			// dependant's delete cascading.
			f.entry.Status, f.entry.Error = StatusDeleted, ""
		case f.entry.Status == StatusDeleted:
			lingering = append(lingering, f)
		default:
			f.entry.Status = StatusLeft
			if f.entry.Error == "" {
				f.entry.Error = "it is still there, and no delete was attempted (the sweep was interrupted)"
			}
		}
	}
	return lingering
}

// awaitGone reads each resource whose delete succeeded while it is still
// listed, until it reads as not found or Settle has passed.
func (s *sweeper) awaitGone(ctx context.Context, fs []*judged) {
	if len(fs) == 0 {
		return
	}
	deadline := time.Now().Add(s.opts.Settle)
	poll := min(time.Second, s.opts.Settle/10)
	for len(fs) > 0 {
		var still []*judged
		for _, f := range fs {
			if _, found, err := s.read(ctx, f.job, f.res.Name, nil); err == nil && !found {
				continue
			}
			still = append(still, f)
		}
		fs = still
		if len(fs) == 0 || time.Now().After(deadline) || !sleep(ctx, poll) {
			break
		}
	}
	for _, f := range fs {
		f.entry.Status = StatusLeft
		f.entry.Error = "the delete succeeded, but it is still there " + FormatAge(s.opts.Settle) + " later"
	}
}

// Package walk runs a dependency graph of steps: each starts as soon as
// the steps it waits for are done, within an overall bound and a bound per
// service; a failed step skips what waits on it; a failure the caller calls
// transient is deferred to retry rounds, which go on while a round gets
// somewhere; a heartbeat names what is running; and a stop ends the
// starting of new steps, leaving the rest pending.
//
// The walk's state belongs to one goroutine, the one that calls Walk: every
// hook runs there, one at a time, so a hook may read and change its
// caller's state without a lock, and may call State and Skip. Only Run runs
// elsewhere, on a goroutine of its own per running step.
package walk

import (
	"context"
	"fmt"
	"time"
)

// State is where a step is.
type State int

const (
	Pending  State = iota // not started (after a stop: never started)
	Running               // started, not finished
	Done                  // finished without error
	Failed                // finished with an error that was not deferred
	Deferred              // refused for now; retried in the next round
	Skipped               // not run: Skip, or a step it waits for failed
)

var stateNames = [...]string{"pending", "running", "done", "failed", "deferred", "skipped"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Step is one node of the graph.
type Step struct {
	// Service is the rate-limit domain PerService bounds.
	Service string
	// After lists the steps this one waits for.
	After []int
}

// Result is how a step settled.
type Result struct {
	State State
	// Err is the step's error (Failed, Deferred) or why it was skipped.
	Err     error
	Elapsed time.Duration // of this attempt
	Round   int           // 1 for the walk of the graph, then 2, 3 …
}

// FailedDependency is why a step is skipped when a step it waits for
// (directly or not) failed.
type FailedDependency struct{ ID int }

func (f FailedDependency) Error() string { return fmt.Sprintf("step %d failed", f.ID) }

// Tally counts how one round's attempts settled.
type Tally struct{ Done, Failed, Deferred int }

// Config describes a walk. Only Steps and Run are required.
type Config struct {
	Steps []Step
	// Parallelism bounds the running steps overall, PerService those of
	// one service; 0 is no bound.
	Parallelism, PerService int
	// RoundParallelism replaces Parallelism in retry rounds when set.
	RoundParallelism int
	// Run carries out a step. It is the only function called off the
	// walk's goroutine.
	Run func(ctx context.Context, id int) error

	// Ready is a further condition for a step whose dependencies are done.
	Ready func(id int) bool
	// Started is called when a step starts.
	Started func(id, round int)
	// Settled is called when a step settles: done, failed, deferred or
	// skipped. On a failure the dependants are skipped first.
	Settled func(id int, r Result)
	// Stop, checked before starting anything, ends the starting of steps:
	// those running finish, the rest stay Pending and no round follows.
	Stop func() bool
	// Tick is called every Heartbeat with the running steps.
	Heartbeat time.Duration
	Tick      func(running []int)

	// Defer reports whether a failed step is retried in the next round
	// rather than failed.
	Defer func(id int, err error) bool
	// Again reports whether another round follows one that deferred
	// something; by default while the round did something (Tally.Done).
	Again func(round int, t Tally) bool
	// BeforeRound is called before retry round round runs pending (in
	// the order they were deferred); false ends the rounds.
	BeforeRound func(round int, pending []int) bool
}

// Outcome is how a walk ended. Steps still Deferred in it were refused in
// the last round.
type Outcome struct {
	Stopped  bool
	Rounds   int
	Deferred []int // in the order they were deferred
}

// Walker is one walk of a Config.
type Walker struct {
	cfg        Config
	state      []State
	waiting    []int   // unfinished steps each step waits for
	dependants [][]int // the steps that wait for each step
	busy       map[string]int
	running    int
	deferred   []int
}

type result struct {
	id      int
	err     error
	elapsed time.Duration
}

// New prepares a walk of cfg.
func New(cfg Config) *Walker {
	n := len(cfg.Steps)
	w := &Walker{cfg: cfg, state: make([]State, n), waiting: make([]int, n),
		dependants: make([][]int, n), busy: map[string]int{}}
	for id, s := range cfg.Steps {
		for _, dep := range s.After {
			w.waiting[id]++
			w.dependants[dep] = append(w.dependants[dep], id)
		}
	}
	return w
}

// State is where step id is. Call it from a hook or after Walk.
func (w *Walker) State(id int) State { return w.state[id] }

// Skip settles a pending step as skipped, for why, and with it every
// pending step that waits on it. Call it from a hook.
func (w *Walker) Skip(id int, why error) {
	if w.state[id] != Pending {
		return
	}
	w.state[id] = Skipped
	if w.cfg.Settled != nil {
		w.cfg.Settled(id, Result{State: Skipped, Err: why, Round: 1})
	}
	for _, t := range w.dependants[id] {
		w.Skip(t, why)
	}
}

// Walk runs the graph, then the retry rounds, and returns when nothing
// runs.
func (w *Walker) Walk(ctx context.Context) Outcome {
	order := make([]int, len(w.state))
	for i := range order {
		order[i] = i
	}
	var out Outcome
	for round := 1; ; round++ {
		out.Rounds = round
		tally, stopped := w.round(ctx, round, order)
		out.Deferred = w.deferred
		if stopped {
			out.Stopped = true
			return out
		}
		if len(w.deferred) == 0 || !w.again(round, tally) {
			return out
		}
		if w.cfg.BeforeRound != nil && !w.cfg.BeforeRound(round+1, append([]int(nil), w.deferred...)) {
			return out
		}
		order, w.deferred = w.deferred, nil
		for _, id := range order {
			w.state[id] = Pending
		}
	}
}

func (w *Walker) again(round int, t Tally) bool {
	if w.cfg.Again != nil {
		return w.cfg.Again(round, t)
	}
	return t.Done > 0
}

// round runs the steps of order that become ready until nothing runs.
func (w *Walker) round(ctx context.Context, round int, order []int) (t Tally, stopped bool) {
	results := make(chan result)
	var tick <-chan time.Time
	if w.cfg.Heartbeat > 0 && w.cfg.Tick != nil {
		ticker := time.NewTicker(w.cfg.Heartbeat)
		defer ticker.Stop()
		tick = ticker.C
	}
	bound := w.cfg.Parallelism
	if round > 1 && w.cfg.RoundParallelism > 0 {
		bound = w.cfg.RoundParallelism
	}
	for {
		if !stopped && w.cfg.Stop != nil && w.cfg.Stop() {
			stopped = true
		}
		if !stopped {
			for _, id := range order {
				if bound > 0 && w.running >= bound {
					break
				}
				if w.ready(id, round) {
					w.start(ctx, id, round, results)
				}
			}
		}
		if w.running == 0 {
			return t, stopped
		}
		select {
		case r := <-results:
			w.finish(r, round, &t)
		case <-tick:
			w.cfg.Tick(w.runningSteps())
		}
	}
}

func (w *Walker) ready(id, round int) bool {
	if w.state[id] != Pending || (round == 1 && w.waiting[id] > 0) {
		return false
	}
	if b := w.cfg.PerService; b > 0 && w.busy[w.cfg.Steps[id].Service] >= b {
		return false
	}
	return w.cfg.Ready == nil || w.cfg.Ready(id)
}

func (w *Walker) start(ctx context.Context, id, round int, results chan<- result) {
	w.state[id] = Running
	w.running++
	w.busy[w.cfg.Steps[id].Service]++
	if w.cfg.Started != nil {
		w.cfg.Started(id, round)
	}
	go func() {
		t := time.Now()
		err := w.cfg.Run(ctx, id)
		results <- result{id: id, err: err, elapsed: time.Since(t)}
	}()
}

// finish settles a step that returned. Dependants are released or
// skipped only in the walk of the graph: a retry round has no edges.
func (w *Walker) finish(r result, round int, t *Tally) {
	w.running--
	w.busy[w.cfg.Steps[r.id].Service]--
	res := Result{Err: r.err, Elapsed: r.elapsed, Round: round}
	switch {
	case r.err == nil:
		res.State = Done
		t.Done++
		if round == 1 {
			for _, d := range w.dependants[r.id] {
				w.waiting[d]--
			}
		}
	case w.cfg.Defer != nil && w.cfg.Defer(r.id, r.err):
		res.State = Deferred
		t.Deferred++
		w.deferred = append(w.deferred, r.id)
	default:
		res.State = Failed
		t.Failed++
		w.state[r.id] = Failed
		if round == 1 {
			for _, d := range w.dependants[r.id] {
				w.Skip(d, FailedDependency{ID: r.id})
			}
		}
	}
	w.state[r.id] = res.State
	if w.cfg.Settled != nil {
		w.cfg.Settled(r.id, res)
	}
}

func (w *Walker) runningSteps() []int {
	var out []int
	for id, s := range w.state {
		if s == Running {
			out = append(out, id)
		}
	}
	return out
}

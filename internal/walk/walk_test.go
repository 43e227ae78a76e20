package walk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gauge counts what runs at once, overall and per service.
type gauge struct {
	mu             sync.Mutex
	now, max       int
	perNow, perMax map[string]int
}

func newGauge() *gauge { return &gauge{perNow: map[string]int{}, perMax: map[string]int{}} }

func (g *gauge) enter(service string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now++
	g.max = max(g.max, g.now)
	g.perNow[service]++
	g.perMax[service] = max(g.perMax[service], g.perNow[service])
}

func (g *gauge) leave(service string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now--
	g.perNow[service]--
}

func TestBoundsRespected(t *testing.T) {
	var steps []Step
	for i := range 40 {
		steps = append(steps, Step{Service: fmt.Sprintf("svc%d", i%3)})
	}
	g := newGauge()
	w := New(Config{Steps: steps, Parallelism: 4, PerService: 2,
		Run: func(ctx context.Context, id int) error {
			g.enter(steps[id].Service)
			time.Sleep(2 * time.Millisecond)
			g.leave(steps[id].Service)
			return nil
		}})
	w.Walk(context.Background())
	if g.max > 4 {
		t.Errorf("%d ran at once, bound 4", g.max)
	}
	for s, m := range g.perMax {
		if m > 2 {
			t.Errorf("%d ran at once on %s, bound 2", m, s)
		}
	}
	if g.max < 2 {
		t.Errorf("at most %d ran at once: nothing ran in parallel", g.max)
	}
	for id := range steps {
		if w.State(id) != Done {
			t.Errorf("step %d is %v", id, w.State(id))
		}
	}
}

func TestDependencyOrder(t *testing.T) {
	// 0 ← 1 ← 3, 0 ← 2 ← 3, 4 alone.
	steps := []Step{{}, {After: []int{0}}, {After: []int{0}}, {After: []int{1, 2}}, {}}
	var mu sync.Mutex
	finished := map[int]bool{}
	var order []int
	w := New(Config{Steps: steps, Parallelism: 8,
		Run: func(ctx context.Context, id int) error {
			mu.Lock()
			defer mu.Unlock()
			for _, dep := range steps[id].After {
				if !finished[dep] {
					t.Errorf("step %d started before %d finished", id, dep)
				}
			}
			return nil
		},
		Settled: func(id int, r Result) {
			mu.Lock()
			defer mu.Unlock()
			finished[id] = true
			order = append(order, id)
		}})
	w.Walk(context.Background())
	if len(order) != 5 || order[len(order)-1] == 0 {
		t.Errorf("settled in order %v", order)
	}
}

func TestFailureSkipsDependants(t *testing.T) {
	// 0 ← 1 ← 2; 3 alone. 0 fails.
	steps := []Step{{}, {After: []int{0}}, {After: []int{1}}, {}}
	var settled []Result
	var ran atomic.Int32
	boom := errors.New("boom")
	w := New(Config{Steps: steps,
		Run: func(ctx context.Context, id int) error {
			ran.Add(1)
			if id == 0 {
				return boom
			}
			return nil
		},
		Settled: func(id int, r Result) { settled = append(settled, r) }})
	w.Walk(context.Background())
	want := []State{Failed, Skipped, Skipped, Done}
	for id, s := range want {
		if w.State(id) != s {
			t.Errorf("step %d is %v, want %v", id, w.State(id), s)
		}
	}
	if ran.Load() != 2 {
		t.Errorf("%d steps ran, want 2", ran.Load())
	}
	var f FailedDependency
	for _, r := range settled {
		if r.State == Skipped && (!errors.As(r.Err, &f) || f.ID != 0) {
			t.Errorf("skipped for %v, want step 0", r.Err)
		}
	}
}

func TestSkipFromAHookAndReady(t *testing.T) {
	// A gate (1 waits for 0 to settle) and a hook that skips 1 when 0 fails.
	steps := []Step{{}, {}}
	var w *Walker
	w = New(Config{Steps: steps,
		Run:   func(ctx context.Context, id int) error { return errors.New("no") },
		Ready: func(id int) bool { return id == 0 || w.State(0) != Pending && w.State(0) != Running },
		Settled: func(id int, r Result) {
			if id == 0 && r.State == Failed {
				w.Skip(1, errors.New("0 failed"))
			}
		}})
	w.Walk(context.Background())
	if w.State(1) != Skipped {
		t.Errorf("step 1 is %v, want skipped", w.State(1))
	}
}

func TestRounds(t *testing.T) {
	// Step i is refused until step i+1 is done: a chain discovered by
	// retrying, one freed per round.
	const n = 4
	steps := make([]Step, n+1)
	var mu sync.Mutex
	done := map[int]bool{}
	refused := errors.New("refused")
	var rounds []int
	// One at a time, in order, so that each round frees exactly one.
	w := New(Config{Steps: steps, Parallelism: 1,
		Run: func(ctx context.Context, id int) error {
			mu.Lock()
			defer mu.Unlock()
			if id < n && !done[id+1] {
				return refused
			}
			done[id] = true
			return nil
		},
		Defer:       func(id int, err error) bool { return errors.Is(err, refused) },
		BeforeRound: func(round int, pending []int) bool { rounds = append(rounds, round); return true }})
	out := w.Walk(context.Background())
	if out.Rounds != n+1 || !slices.Equal(rounds, []int{2, 3, 4, 5}) {
		t.Errorf("rounds %d (%v), want %d", out.Rounds, rounds, n+1)
	}
	for id := range steps {
		if w.State(id) != Done {
			t.Errorf("step %d is %v", id, w.State(id))
		}
	}
}

func TestRoundsEndWhenARoundDoesNothing(t *testing.T) {
	refused := errors.New("refused")
	var tallies []Tally
	w := New(Config{Steps: make([]Step, 3),
		Run: func(ctx context.Context, id int) error {
			if id == 2 {
				return nil
			}
			return refused
		},
		Defer: func(id int, err error) bool { return true },
		Again: func(round int, t Tally) bool { tallies = append(tallies, t); return t.Done > 0 }})
	out := w.Walk(context.Background())
	if out.Rounds != 2 || !slices.Equal(out.Deferred, []int{0, 1}) && !slices.Equal(out.Deferred, []int{1, 0}) {
		t.Errorf("outcome %+v, want 2 rounds and 0 and 1 deferred", out)
	}
	if len(tallies) != 2 || tallies[0] != (Tally{Done: 1, Deferred: 2}) || tallies[1] != (Tally{Deferred: 2}) {
		t.Errorf("tallies %+v", tallies)
	}
	if w.State(0) != Deferred || w.State(2) != Done {
		t.Errorf("states %v %v %v", w.State(0), w.State(1), w.State(2))
	}
}

func TestStopStopsStarting(t *testing.T) {
	var started atomic.Int32
	stop := false
	w := New(Config{Steps: make([]Step, 10), Parallelism: 2,
		Run: func(ctx context.Context, id int) error {
			started.Add(1)
			return errors.New("refused")
		},
		Settled: func(id int, r Result) { stop = true },
		Defer:   func(int, error) bool { return true },
		Stop:    func() bool { return stop }})
	out := w.Walk(context.Background())
	if !out.Stopped || started.Load() != 2 {
		t.Errorf("stopped %v after %d started, want 2", out.Stopped, started.Load())
	}
	pending := 0
	for id := range 10 {
		if w.State(id) == Pending {
			pending++
		}
	}
	if pending != 8 || out.Rounds != 1 {
		t.Errorf("%d pending after %d round(s), want 8 after 1", pending, out.Rounds)
	}
}

func TestHeartbeatNamesRunning(t *testing.T) {
	release := make(chan struct{})
	var ticks [][]int
	w := New(Config{Steps: make([]Step, 3), Heartbeat: time.Millisecond,
		Run: func(ctx context.Context, id int) error {
			if id == 1 {
				<-release
			}
			return nil
		},
		Tick: func(running []int) {
			ticks = append(ticks, running)
			if len(ticks) == 3 {
				close(release)
			}
		}})
	w.Walk(context.Background())
	if len(ticks) < 3 || !slices.Equal(ticks[2], []int{1}) {
		t.Errorf("ticks %v, want [1] running", ticks)
	}
}

package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// operations returns the operations over this command line's flags and
// factory, and the fleet document.
func (g *globals) operations(ctx context.Context) (*operations.Operations, *spec.Document, error) {
	if g.lockTimeout < 0 {
		return nil, nil, usageError{fmt.Errorf("--lock-timeout must not be negative, got %s", g.lockTimeout)}
	}
	if g.parallelism < 1 {
		return nil, nil, usageError{fmt.Errorf("--parallelism must be at least 1, got %d", g.parallelism)}
	}
	doc, err := g.loadDocument(ctx)
	if err != nil {
		return nil, nil, err
	}
	io := g.io()
	env := operations.Env{
		Backends: g.f.Backends,
		Store: func(ctx context.Context, fleet string) (operations.Store, error) {
			return g.f.Store(ctx, g.state, fleet)
		},
		StoreAt:     g.f.Store,
		Getenv:      g.f.Getenv,
		Progress:    g.progress(io).event,
		Parallelism: g.parallelism,
		Holder:      func(command string) operations.LockInfo { return lockInfo(command, g.f.Getenv) },
		Stale:       operations.DeadHolder,
		LockTimeout: g.lockTimeout,
		Warn:        func(msg string) { fmt.Fprintf(io.ErrOut, "warning: %s\n", msg) },
	}
	return operations.New(env), doc, nil
}

// errFleetHasErrors ends a verb whose fleet has errors, once they are
// printed.
var errFleetHasErrors = errors.New("the fleet has errors; fix them (infra check lists them all)")

// errPlanHasErrors ends a verb whose plan found errors the document alone
// does not have (an unset variable, a protected consumer): check would
// not list them, so the words point at the rows just printed.
var errPlanHasErrors = errors.New("the plan has errors; fix what the rows above say, then plan again")

// hasErrors is the error that ends a verb refused by d, once its rows are
// printed.
func hasErrors(d *operations.DiagnosticsError) error {
	if d.Planned {
		return errPlanHasErrors
	}
	return errFleetHasErrors
}

// remedy turns the operations' typed refusals into this command line's
// words: the flag that overrides, the command that follows.
func (g *globals) remedy(err error) error {
	var brake *operations.BrakeError
	var diags *operations.DiagnosticsError
	var target *operations.TargetError
	switch {
	case errors.As(err, &target):
		return usageError{scopeError{target}}
	case errors.Is(err, operations.ErrTargetsWithDestroy):
		return usageError{errors.New("--target and --replace do not combine with a destroy: a teardown is of the whole fleet")}
	case errors.As(err, &brake):
		return fmt.Errorf("%w. If the declaration is right, re-run with --force; if it is not, check the credentials are for the account you meant", err)
	case errors.As(err, &diags):
		g.io().errDiagnostics(diags.Diagnostics)
		return hasErrors(diags)
	}
	return err
}

func lockInfo(command string, getenv func(string) string) operations.LockInfo {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	who := "unknown"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	host, _ := os.Hostname()
	return operations.LockInfo{ID: hex.EncodeToString(b), Holder: fmt.Sprintf("%s@%s pid %d", who, host, os.Getpid()),
		RunID: getenv("GITHUB_RUN_ID"), Command: command, Created: time.Now().UTC(), Host: host, PID: os.Getpid()}
}

// progress prints engine events to stderr, one line each. On a terminal
// it also keeps a live counter on the last line (12/40 done, 3 running,
// eta 40s), redrawn after every event and every line; in a pipe and in CI
// the lines are all there is. Every other line a run writes to stderr
// while it is shown (the call log, a driver's wait) goes through Write, so
// that it is never written onto the counter.
type progress struct {
	mu sync.Mutex
	io *IOStreams
	// The counter, on a terminal only.
	live                         bool
	total, done, failed, skipped int
	// running holds what has started and not settled, by address: a
	// delete refused for now and done in a later round settles once.
	running map[string]bool
	began   time.Time
	shown   bool
	width   func() int
}

func newProgress(s *IOStreams) *progress {
	return &progress{io: s, live: s.errTTY && s.errRaw != nil, width: s.errWidth, running: map[string]bool{}}
}

// Write writes a line of another writer to stderr, with the counter taken
// away first and drawn again after.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	defer p.draw()
	return p.io.ErrOut.Write(b)
}

func (p *progress) event(ev operations.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	defer p.draw()
	w := p.io.ErrOut
	at := ev.Address.String()
	switch ev.Kind {
	case operations.EventBegin:
		p.begin(ev.Total)
	case operations.EventStart:
		p.running[at] = true
	case operations.EventDone:
		p.settle(at, &p.done)
		fmt.Fprintf(w, "%s %s ... ok (%s)\n", ev.Action, ev.Address, ev.Elapsed.Round(time.Millisecond))
	case operations.EventFailed:
		p.settle(at, &p.failed)
		fmt.Fprintf(w, "%s %s ... failed\n", ev.Action, ev.Address)
	case operations.EventSkipped:
		p.settle(at, &p.skipped)
	case operations.EventDeferred:
		p.settle(at, nil)
		fmt.Fprintf(w, "%s %s ... refused for now, will retry: %v\n", ev.Action, ev.Address, ev.Err)
	case operations.EventWaiting:
		names := make([]string, len(ev.Outstanding))
		for i, a := range ev.Outstanding {
			names[i] = a.String()
		}
		fmt.Fprintf(w, "still working on: %s\n", strings.Join(names, ", "))
	case operations.EventWarning:
		// A plan's warnings are its rows, which the plan shows; an
		// apply's are said as they happen.
		if !p.began.IsZero() {
			fmt.Fprintf(w, "warning: %s: %s\n", at, spec.PrintableText(ev.Message))
		}
	}
}

func (p *progress) begin(total int) {
	p.total, p.done, p.failed, p.skipped, p.began = total, 0, 0, 0, time.Now()
	p.running = map[string]bool{}
}

// settle ends what runs at address at, counted in n (nil: it ends for
// now, to be tried again).
func (p *progress) settle(at string, n *int) {
	if n != nil {
		*n++
	}
	delete(p.running, at)
}

// counter is the live line: what is done of the total, what runs, and the
// time left at the pace so far.
func (p *progress) counter() string {
	line := fmt.Sprintf("%d/%d done", p.done, p.total)
	if p.failed > 0 {
		line += fmt.Sprintf(", %d failed", p.failed)
	}
	if p.skipped > 0 {
		line += fmt.Sprintf(", %d skipped", p.skipped)
	}
	line += fmt.Sprintf(", %d running", len(p.running))
	if settled := p.settled(); settled > 0 && settled < p.total {
		per := time.Since(p.began) / time.Duration(settled)
		line += ", eta " + (per * time.Duration(p.total-settled)).Round(time.Second).String()
	}
	return line
}

func (p *progress) settled() int { return p.done + p.failed + p.skipped }

// draw shows the counter while an apply runs; clear takes it away before
// a line is written, so lines never mix with it.
func (p *progress) draw() {
	if !p.live || p.total == 0 || p.settled() >= p.total {
		return
	}
	line := p.counter()
	if w := p.width(); w > 1 && len(line) >= w {
		line = line[:w-1]
	}
	fmt.Fprint(p.io.errRaw, line)
	p.shown = true
}

func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.io.errRaw, "\r\x1b[K")
		p.shown = false
	}
}

// finish takes the counter away once the run is over.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

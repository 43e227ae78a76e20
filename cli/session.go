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
		Progress:    newProgress(io).event,
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
		return errFleetHasErrors
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

// progress prints engine events to stderr, one line each.
type progress struct {
	mu sync.Mutex
	io *IOStreams
}

func newProgress(s *IOStreams) *progress { return &progress{io: s} }

func (p *progress) event(ev operations.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.io.ErrOut
	switch ev.Kind {
	case operations.EventDone:
		fmt.Fprintf(w, "%s %s ... ok (%s)\n", ev.Action, ev.Address, ev.Elapsed.Round(time.Millisecond))
	case operations.EventFailed:
		fmt.Fprintf(w, "%s %s ... failed\n", ev.Action, ev.Address)
	case operations.EventDeferred:
		fmt.Fprintf(w, "%s %s ... refused for now, will retry: %v\n", ev.Action, ev.Address, ev.Err)
	case operations.EventWaiting:
		names := make([]string, len(ev.Outstanding))
		for i, a := range ev.Outstanding {
			names[i] = a.String()
		}
		fmt.Fprintf(w, "still working on: %s\n", strings.Join(names, ", "))
	}
}

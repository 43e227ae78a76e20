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
	"syscall"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// session is what the cloud-reaching verbs share: the checked fleet, its
// state and an engine over the backends the fleet involves.
type session struct {
	g      *globals
	model  *spec.Model
	diags  []spec.Diagnostic
	store  state.Store
	ledger *state.Ledger
	engine *engine.Engine
	lock   state.Lock
}

// open loads and checks the fleet, opens its state (taking the lock when
// the verb writes), and builds backends only for the clouds involved.
func (g *globals) open(ctx context.Context, command string, lock bool) (*session, error) {
	if g.parallelism < 1 {
		return nil, usageError{fmt.Errorf("--parallelism must be at least 1, got %d", g.parallelism)}
	}
	doc, err := g.loadDocument(ctx)
	if err != nil {
		return nil, err
	}
	m, diags := spec.Compile(doc)
	s := &session{g: g, model: m, diags: diags}
	if spec.HasErrors(diags) {
		// No state, no cloud: the plan carries the diagnostics only.
		s.engine = engine.New(engine.Options{})
		s.ledger = state.NewLedger()
		return s, nil
	}
	s.store, err = g.f.Store(ctx, g.state, m.Fleet)
	if err != nil {
		return nil, err
	}
	if lock {
		s.lock, err = takeLock(ctx, s.store, lockInfo(command, g.f.Getenv), g.io())
		if err != nil {
			return nil, err
		}
	}
	s.ledger, err = s.store.LoadLedger(ctx)
	if err != nil {
		s.close()
		return nil, err
	}
	ps := m.Providers()
	backends, why, err := g.f.Backends(ctx, ps)
	if err != nil {
		s.close()
		return nil, err
	}
	for _, r := range s.ledger.Rows {
		if _, ok := backends[r.Provider]; !ok && why[r.Provider] == "" {
			why[r.Provider] = fmt.Sprintf("no %s credentials were loaded, because this declaration names no %s resources and no %s account",
				r.Provider, r.Provider, r.Provider)
		}
	}
	s.engine = engine.New(engine.Options{Backends: backends, Unreachable: why, Getenv: g.f.Getenv, Progress: newProgress(g.io()).event,
		Parallelism: g.parallelism})
	return s, nil
}

func (s *session) close() {
	if s.lock != nil {
		if err := s.lock.Release(context.WithoutCancel(context.Background())); err != nil {
			fmt.Fprintf(s.g.io().ErrOut, "warning: release the lock: %v\n", err)
		}
		s.lock = nil
	}
}

// takeLock takes the fleet's lock. A lock whose holder was a process on
// this host that no longer runs (killed, crashed) is broken, with a
// warning: waiting for a dead process helps no one, and its id is right
// there. A live holder, or one on another host, is never second-guessed.
func takeLock(ctx context.Context, store state.Store, info state.LockInfo, io *IOStreams) (state.Lock, error) {
	l, err := store.Lock(ctx, info)
	var locked *state.LockedError
	if err == nil || !errors.As(err, &locked) || !holderDead(locked.Info) {
		return l, err
	}
	fmt.Fprintf(io.ErrOut, "warning: breaking lock %s: its holder (pid %d on this host, running %q) is no longer running\n",
		locked.Info.ID, locked.Info.PID, locked.Info.Command)
	if err := store.Unlock(ctx, locked.Info.ID); err != nil {
		return nil, err
	}
	return store.Lock(ctx, info)
}

func holderDead(info state.LockInfo) bool {
	host, _ := os.Hostname()
	if info.Host == "" || info.Host != host || info.PID <= 0 || info.PID == os.Getpid() {
		return false
	}
	return syscall.Kill(info.PID, 0) == syscall.ESRCH
}

func lockInfo(command string, getenv func(string) string) state.LockInfo {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	who := "unknown"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	host, _ := os.Hostname()
	return state.LockInfo{ID: hex.EncodeToString(b), Holder: fmt.Sprintf("%s@%s pid %d", who, host, os.Getpid()),
		RunID: getenv("GITHUB_RUN_ID"), Command: command, Created: time.Now().UTC(), Host: host, PID: os.Getpid()}
}

// progress prints engine events to stderr, one line each.
type progress struct {
	mu sync.Mutex
	io *IOStreams
}

func newProgress(s *IOStreams) *progress { return &progress{io: s} }

func (p *progress) event(ev engine.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.io.ErrOut
	switch ev.Kind {
	case engine.EventDone:
		fmt.Fprintf(w, "%s %s ... ok (%s)\n", ev.Action, ev.Address, ev.Elapsed.Round(time.Millisecond))
	case engine.EventFailed:
		fmt.Fprintf(w, "%s %s ... failed\n", ev.Action, ev.Address)
	case engine.EventDeferred:
		fmt.Fprintf(w, "%s %s ... refused for now, will retry: %v\n", ev.Action, ev.Address, ev.Err)
	case engine.EventWaiting:
		names := make([]string, len(ev.Outstanding))
		for i, a := range ev.Outstanding {
			names[i] = a.String()
		}
		fmt.Fprintf(w, "still working on: %s\n", strings.Join(names, ", "))
	}
}

// printWarnings writes the plan's diagnostics to stderr.
func (s *session) printWarnings(ds []spec.Diagnostic) {
	s.g.io().errDiagnostics(ds)
}

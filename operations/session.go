package operations

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// session is one operation's checked fleet, its state and an engine over
// the backends the fleet involves.
type session struct {
	env    Env
	model  *spec.Model
	diags  []spec.Diagnostic
	store  state.Store
	ledger *state.Ledger
	engine *engine.Engine
	lock   state.Lock
	// cache, when set, is what plan plans from instead of the cloud
	// (PlanRequest.NoRefresh).
	cache *state.Cache
	// far is what the plan found at the far end of each wire, by fleet.
	far map[string]spec.Far
	// own is this fleet's published record (ownRecord).
	own     *spec.Published
	ownErr  error
	ownRead bool
	// withdrew is set while capabilities of this fleet are out of service
	// (withdraw), by this run or by one killed before it gave them back.
	withdrew bool
}

// open checks the fleet, opens its state (taking the lock when the
// operation writes), and builds backends only for the clouds involved. A
// fleet with errors gets a session without state or clouds: a plan of it
// carries the diagnostics alone.
func open(ctx context.Context, env Env, doc *spec.Document, command string, lock bool) (*session, error) {
	return openWith(ctx, env, doc, command, lock, opening{})
}

// opening is how a plan opens its session.
type opening struct {
	// upstream are the records of providers planned in the same run
	// (PlanRequest.Upstream).
	upstream map[string]*spec.Published
	// offline builds no backend: a plan from the cache calls no cloud,
	// so it must not need credentials either.
	offline bool
}

// openWith is open, as a plan opens it.
func openWith(ctx context.Context, env Env, doc *spec.Document, command string, lock bool, how opening) (*session, error) {
	if doc == nil {
		return nil, errors.New("no fleet document")
	}
	m, diags := spec.Compile(doc)
	s := &session{env: env, model: m, diags: diags}
	if spec.HasErrors(diags) {
		s.engine = engine.New(engine.Options{})
		s.ledger = state.NewLedger()
		return s, nil
	}
	if env.Store == nil {
		return nil, errors.New("no state location")
	}
	var err error
	if s.store, err = env.Store(ctx, m.Fleet); err != nil {
		return nil, err
	}
	if lock {
		if s.lock, err = takeLock(ctx, env, s.store, command); err != nil {
			return nil, err
		}
	}
	if s.ledger, err = s.store.LoadLedger(ctx); err != nil {
		s.close(ctx)
		return nil, err
	}
	s.resolveWires(ctx, how.upstream)
	if how.offline {
		s.engine = engine.New(engine.Options{Getenv: env.Getenv, Progress: env.Progress})
		return s, nil
	}
	if err := s.connect(ctx); err != nil {
		s.close(ctx)
		return nil, err
	}
	return s, nil
}

// connect builds the backends and the engine.
func (s *session) connect(ctx context.Context) error {
	ps := s.model.Providers()
	if s.env.LedgerClouds {
		for _, r := range s.ledger.Rows {
			ps = appendProvider(ps, r.Provider)
		}
	}
	backends, why := map[spec.Provider]Backend{}, map[spec.Provider]string{}
	if s.env.Backends != nil {
		var err error
		if backends, why, err = s.env.Backends(ctx, ps); err != nil {
			return err
		}
	}
	if why == nil {
		why = map[spec.Provider]string{}
	}
	for _, r := range s.ledger.Rows {
		if _, ok := backends[r.Provider]; !ok && why[r.Provider] == "" {
			why[r.Provider] = fmt.Sprintf("no %s credentials were loaded, because this declaration names no %s resources and no %s account",
				r.Provider, r.Provider, r.Provider)
		}
	}
	s.engine = engine.New(engine.Options{Backends: backends, Unreachable: why, Getenv: s.env.Getenv,
		Progress: s.env.Progress, Parallelism: s.env.Parallelism})
	return nil
}

func appendProvider(ps []spec.Provider, p spec.Provider) []spec.Provider {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}

// refuseErrors is the refusal of a verb that needs a fleet without errors.
func (s *session) refuseErrors() error {
	if spec.HasErrors(s.diags) {
		return &DiagnosticsError{Diagnostics: s.diags}
	}
	return nil
}

// close releases the lock, even when ctx has run out: a lock left behind
// blocks the next run.
func (s *session) close(ctx context.Context) {
	if s.lock == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.lock.Release(rctx); err != nil {
		s.env.warn(fmt.Sprintf("release the lock: %v", err))
	}
	s.lock = nil
}

// takeLock takes the fleet's lock. A lock whose holder cannot still be
// running (env.Stale) is broken once, with its warning; any other holder
// is a *LockedError.
func takeLock(ctx context.Context, env Env, store state.Store, command string) (state.Lock, error) {
	var info state.LockInfo
	if env.Holder != nil {
		info = env.Holder(command)
	}
	start := env.now()
	broke := false
	var said time.Time
	for poll := lockPoll; ; poll = min(2*poll, 5*time.Second) {
		l, err := store.Lock(ctx, info)
		if err == nil {
			return l, nil
		}
		var locked *state.LockedError
		if !errors.As(err, &locked) {
			return nil, err
		}
		if why := staleWhy(env, locked.Info); why != "" && !broke {
			broke = true
			env.warn(why)
			if err := store.Unlock(ctx, locked.Info.ID); err != nil && !errors.Is(err, state.ErrNotLocked) {
				return nil, err
			}
			continue
		}
		waited := env.now().Sub(start)
		if waited >= env.LockTimeout {
			if env.LockTimeout > 0 {
				return nil, fmt.Errorf("waited %s for the lock: %w", env.LockTimeout, err)
			}
			return nil, err
		}
		if said.IsZero() || env.now().Sub(said) >= lockReport {
			said = env.now()
			env.warn(fmt.Sprintf("%s; waiting for it (%s left of --lock-timeout %s)", err, (env.LockTimeout - waited).Round(time.Second), env.LockTimeout))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(poll, env.LockTimeout-waited)):
		}
	}
}

// How often a wait for the lock tries again (doubling to 5 s), and how
// often it says who holds it.
var (
	lockPoll   = 250 * time.Millisecond
	lockReport = 15 * time.Second
)

// staleWhy is why the holder cannot still be running, or "".
func staleWhy(env Env, info state.LockInfo) string {
	if env.Stale == nil {
		return ""
	}
	return env.Stale(info)
}

// DeadHolder is the Stale policy of a process on a machine (the command
// line, the Action in its runner): it breaks a lock whose holder was a
// process on this host that no longer runs (killed, crashed), since
// waiting for a dead process helps no one and its id is right there. A
// live holder, or one on another host, is never second-guessed.
func DeadHolder(info state.LockInfo) string {
	host, _ := os.Hostname()
	if info.Host == "" || info.Host != host || info.PID <= 0 || info.PID == os.Getpid() {
		return ""
	}
	if syscall.Kill(info.PID, 0) != syscall.ESRCH {
		return ""
	}
	return fmt.Sprintf("breaking lock %s: its holder (pid %d on this host, running %q) is no longer running", info.ID, info.PID, info.Command)
}

package engine

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// Options configure an Engine.
type Options struct {
	// Backends are the clouds the engine can reach. A provider that is not
	// here is unreachable: its ledger rows can be neither observed nor
	// changed, and apply refuses rather than pretend (a placeholder is
	// indistinguishable from a cloud that agreed).
	Backends map[spec.Provider]providers.Backend
	// Unreachable says, per provider, why there is no backend; it goes into
	// the refusal.
	Unreachable map[spec.Provider]string
	// Getenv reads a secret's source variable; os.Getenv when nil.
	Getenv func(string) string
	// Parallelism bounds concurrent cloud calls while observing and
	// concurrent actions while applying; 8 when zero.
	Parallelism int
	// PerService bounds the same on any one service (EC2, S3, IAM …),
	// whose rate limits are per account and per service: a fleet of one
	// kind does not spend them all at once. 5 when zero; at most
	// Parallelism.
	PerService int
	// Progress receives events as the engine works; it must be safe for
	// concurrent use. Nil discards them.
	Progress func(Event)
	// Heartbeat is how often a long wait reports what is outstanding; 15s
	// when zero.
	Heartbeat time.Duration
}

// Engine plans and applies fleets.
type Engine struct {
	opts Options
}

// New returns an engine.
func New(opts Options) *Engine {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = 8
	}
	if opts.PerService <= 0 {
		opts.PerService = 5
	}
	opts.PerService = min(opts.PerService, opts.Parallelism)
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	return &Engine{opts: opts}
}

// EventKind says what an event reports.
type EventKind string

const (
	EventBegin    EventKind = "begin"    // an apply starts its actions (Total)
	EventAccount  EventKind = "account"  // an account was verified
	EventObserve  EventKind = "observe"  // a listing finished
	EventStart    EventKind = "start"    // an action started
	EventDone     EventKind = "done"     // an action succeeded
	EventFailed   EventKind = "failed"   // an action failed
	EventSkipped  EventKind = "skipped"  // an action was not run: one it depends on failed
	EventDeferred EventKind = "deferred" // an orphan delete was refused; it will be retried
	EventWaiting  EventKind = "waiting"  // heartbeat: actions still running
	EventWarning  EventKind = "warning"  // something the user should read
)

// Event is one progress report.
type Event struct {
	Kind    EventKind
	Address spec.Address
	Action  ActionKind
	Message string
	Err     error
	Elapsed time.Duration
	// Outstanding lists what a heartbeat is still waiting for.
	Outstanding []spec.Address
	// Total is how many actions an apply runs (EventBegin).
	Total int
}

func (e *Engine) emit(ev Event) {
	if e.opts.Progress != nil {
		e.opts.Progress(ev)
	}
}

// code classifies a cloud error from provider p.
func (e *Engine) code(p spec.Provider, err error) providers.Code {
	return providers.CodeOf(e.opts.Backends[p], err)
}

// resources returns the portable type over a's driver: every call through
// it is wrapped once with the address, the operation and the code.
func (e *Engine) resources(a spec.Address) (*providers.Resources, error) {
	b, ok := e.opts.Backends[a.Provider]
	if !ok {
		return nil, fmt.Errorf("%s: %s", a, e.unreachable(a.Provider))
	}
	r, ok := providers.ResourcesOf(b, a.Kind)
	if !ok {
		return nil, fmt.Errorf("%s: the %s backend has no driver for kind %s yet", a, a.Provider, a.Kind)
	}
	return r, nil
}

func (e *Engine) unreachable(p spec.Provider) string {
	if why := e.opts.Unreachable[p]; why != "" {
		return why
	}
	return fmt.Sprintf("no %s backend was built", p)
}

// checkCtx turns a cancelled context into an error before a cloud call.
func checkCtx(ctx context.Context) error { return ctx.Err() }

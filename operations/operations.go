// Package operations is the one way through infra: plan, apply (fresh,
// reviewed, destroy), discover, refresh and sweep, each a typed request in
// and a typed result or a typed error out. The command line, the executor
// and the GitHub Action are thin front ends over it: each turns a typed
// error into its own remedy (a flag, a payload field, a comment), and none
// parses another's text. Session setup and the reviewed-plan check exist
// here, once.
package operations

import (
	"context"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
	"github.com/infra-iac/infra/sweep"
)

// The types front ends exchange with the operations, named here so that a
// front end imports the operations and the renderers, not the layers under
// them.
type (
	Plan       = engine.Plan
	Action     = engine.Action
	ActionKind = engine.ActionKind
	Change     = engine.Change
	Applied    = engine.Applied
	Status     = engine.Status
	Report     = engine.Report
	Event      = engine.Event
	Discovery  = engine.Discovery
	Account    = engine.Account
	Backend    = providers.Backend
	Store      = state.Store
	LockInfo   = state.LockInfo
	Blobs      = state.Blobs
	// SweepReport is a sweep's outcome: candidates, what was kept and why.
	SweepReport = sweep.Report
	SweepEvent  = sweep.Event
)

// BackendsFunc builds a backend for each provider in ps. A provider it
// cannot build goes into the second map with the reason.
type BackendsFunc func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error)

// Env is what the operations need from their surroundings: how to reach the
// clouds and the state, and how the front end wants to hear about progress.
type Env struct {
	Backends BackendsFunc
	// Store opens the state of one fleet.
	Store func(ctx context.Context, fleet string) (state.Store, error)
	// StoreAt opens a fleet's state at another location, for a wire whose
	// provider keeps its state elsewhere ("state" on the wire). Nil: such
	// a wire is a row.
	StoreAt func(ctx context.Context, location, fleet string) (state.Store, error)
	// LedgerClouds builds backends for the clouds the ledger records as
	// well as those the fleet declares. The executor does, since its
	// credentials are explicit; the command line does not, so that a
	// default profile of a cloud nobody named is never picked up, and the
	// plan says what to declare instead.
	LedgerClouds bool
	// Getenv reads a secret's fromEnv source; empty for every name when nil.
	Getenv func(string) string
	// Progress receives the engine's events; nil discards them.
	Progress func(engine.Event)
	// Parallelism bounds concurrent cloud calls (engine.Options).
	Parallelism int
	// Holder describes the lock a writing operation takes, for command.
	Holder func(command string) state.LockInfo
	// LockTimeout is how long a writing operation waits for a lock
	// another run holds, saying who every 15 s; zero refuses at once.
	LockTimeout time.Duration
	// Stale says why a lock's holder cannot still be running, or "" when
	// it may be; a stale lock is broken once, and the reason goes to Warn.
	// Nil never breaks one.
	Stale func(state.LockInfo) string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Warn receives what is worth saying but is no error: a broken stale
	// lock, a lock that could not be released. Nil discards it.
	Warn func(string)
}

// Operations runs the operations in one environment.
type Operations struct {
	env Env
}

// New returns the operations over env.
func New(env Env) *Operations { return &Operations{env: env} }

func (env Env) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

func (env Env) warn(msg string) {
	if env.Warn != nil {
		env.Warn(msg)
	}
}

// Event kinds, for front ends that print progress.
const (
	EventBegin    = engine.EventBegin
	EventStart    = engine.EventStart
	EventDone     = engine.EventDone
	EventFailed   = engine.EventFailed
	EventSkipped  = engine.EventSkipped
	EventDeferred = engine.EventDeferred
	EventWaiting  = engine.EventWaiting
	EventWarning  = engine.EventWarning
)

// Sweep event kinds, for front ends that print a sweep's progress.
const (
	SweepBegin    = sweep.EventBegin
	SweepStart    = sweep.EventStart
	SweepAccount  = sweep.EventAccount
	SweepListed   = sweep.EventListed
	SweepRound    = sweep.EventRound
	SweepVerify   = sweep.EventVerify
	SweepDeleted  = sweep.EventDeleted
	SweepDeferred = sweep.EventDeferred
	SweepFailed   = sweep.EventFailed
	SweepWaiting  = sweep.EventWaiting
	SweepWarning  = sweep.EventWarning
)

// FormatVersion is the version of the plan JSON.
const FormatVersion = engine.FormatVersion

// DecodePlan reads a plan file infra wrote (plan --out), refusing one of
// another format version.
func DecodePlan(data []byte) (*Plan, error) { return engine.DecodePlan(data) }

// ErrFromCache refuses to apply a plan made from the cache.
var ErrFromCache = engine.ErrFromCache

// Action kinds and applied statuses, for front ends that count them.
const (
	Create  = engine.Create
	Update  = engine.Update
	Replace = engine.Replace
	Delete  = engine.Delete
	Forget  = engine.Forget
	Adopt   = engine.Adopt

	StatusDone       = engine.StatusDone
	StatusFailed     = engine.StatusFailed
	StatusSkipped    = engine.StatusSkipped
	StatusNotStarted = engine.StatusNotStarted
)

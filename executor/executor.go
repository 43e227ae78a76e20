package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// Config is what a Handler needs from its surroundings. FromEnv fills it for
// Lambda; tests fill it with the memory cloud and in-memory blobs.
type Config struct {
	// State opens the object store that holds every fleet's state, and the
	// prefix within it (INFRA_STATE=s3://bucket/prefix).
	State func(ctx context.Context) (blobs state.Blobs, prefix string, err error)
	// Backends builds a backend for each provider in ps; a provider it
	// cannot build goes into the second map with the reason.
	Backends func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error)
	// Getenv reads a secret's fromEnv source; empty for every name when nil.
	Getenv func(string) string
	// Ready, when set, is called first by every request: it returns the
	// error of anything read at cold start (the credentials secret), so a
	// misconfigured function fails every request with the reason.
	Ready func(ctx context.Context) error
	// StopMargin is how long before the deadline no new action starts;
	// when zero, a fifth of the time left at the start, at most 30s.
	StopMargin time.Duration
	// Parallelism bounds concurrent cloud calls (engine.Options).
	Parallelism int
	// Operations, when set, are the only operations this function serves
	// (INFRA_OPERATIONS). A function for pull requests serves plan alone:
	// a role that may invoke a function may send it any payload, so the
	// function itself must refuse to apply.
	Operations []Operation
	// Function names this function in the lock's holder.
	Function string
	// Log receives one line per event (stderr, so CloudWatch). Nil
	// discards. Nothing written here carries a secret: engine events hold
	// addresses and errors, and secret values travel as spec.Sensitive.
	Log io.Writer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// staleLockAge is past the longest a Lambda invocation may run (15
// minutes): a lock an executor took longer ago than this belongs to an
// invocation that was killed, since a live one would have returned.
const staleLockAge = 16 * time.Minute

// Handler serves the protocol. It is safe for concurrent use.
type Handler struct {
	cfg Config
	// logMu keeps concurrent log lines whole.
	logMu sync.Mutex
}

// New returns a handler.
func New(cfg Config) *Handler {
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Function == "" {
		cfg.Function = "infra-executor"
	}
	return &Handler{cfg: cfg}
}

// Handle serves one request. The error is always nil: every failure the
// handler understands becomes a failed Response that says what to do, and
// a Lambda error would reach the caller as an opaque message.
func (h *Handler) Handle(ctx context.Context, req Request) (Response, error) {
	started := h.cfg.Now()
	resp := h.handle(ctx, req, started)
	resp.ProtocolVersion = ProtocolVersion
	resp.Operation = string(req.Operation)
	resp.RunID = req.RunID
	resp.ElapsedMs = h.cfg.Now().Sub(started).Milliseconds()
	h.logf("%s run=%q: %s in %dms: %s", req.Operation, req.RunID, resp.Status, resp.ElapsedMs, resp.Message)
	return resp, nil
}

func (h *Handler) handle(ctx context.Context, req Request, started time.Time) Response {
	switch req.Operation {
	case OpPlan, OpApply, OpDestroy, OpDiscover, OpSweep:
	case "":
		return failed(`the request has no "operation"; want one of plan, apply, destroy, discover, sweep`)
	default:
		return failed(fmt.Sprintf("unknown operation %q; want one of plan, apply, destroy, discover, sweep", req.Operation))
	}
	if !h.allowed(req.Operation) {
		return failed(fmt.Sprintf("this function serves only %s (INFRA_OPERATIONS); invoke the function deployed for %s", joinOps(h.cfg.Operations), req.Operation))
	}
	if h.cfg.Ready != nil {
		if err := h.cfg.Ready(ctx); err != nil {
			return failed(err.Error())
		}
	}
	if req.Operation == OpSweep {
		return h.sweepOp(ctx, req)
	}
	b := newBudget(ctx, started, h.cfg.StopMargin)
	work, cancel := b.workContext(ctx)
	defer cancel()
	s, resp := h.open(work, req)
	if s == nil {
		return resp
	}
	defer s.close(ctx)
	switch req.Operation {
	case OpPlan:
		return h.plan(work, s)
	case OpDiscover:
		return h.discover(work, s, req)
	default:
		return h.apply(work, s, req, b)
	}
}

func (h *Handler) allowed(op Operation) bool {
	if len(h.cfg.Operations) == 0 {
		return true
	}
	for _, o := range h.cfg.Operations {
		if o == op {
			return true
		}
	}
	return false
}

func joinOps(ops []Operation) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

// session is one request's fleet, state and engine.
type session struct {
	h      *Handler
	model  *spec.Model
	diags  []spec.Diagnostic
	blobs  state.Blobs
	prefix string
	store  *state.BlobStore
	ledger *state.Ledger
	engine *engine.Engine
	lock   state.Lock
}

// writes reports whether the operation changes state, and so takes the
// lock for its whole length.
func writes(req Request) bool {
	return req.Operation == OpApply || req.Operation == OpDestroy || (req.Operation == OpDiscover && req.Options.Write)
}

// open decodes and checks the document, opens its state (locked when the
// operation writes) and builds the engine. A nil session comes with the
// response to return.
func (h *Handler) open(ctx context.Context, req Request) (*session, Response) {
	if len(req.Document) == 0 || string(req.Document) == "null" {
		return nil, failed(`the request has no "document"; send the fleet document as infra synth prints it`)
	}
	doc, err := spec.DecodeDocument(req.Document)
	if err != nil {
		return nil, failed("decode the document: " + err.Error())
	}
	m, diags := spec.Compile(doc)
	if spec.HasErrors(diags) {
		return nil, Response{Status: StatusFailed, Diagnostics: diags,
			Message: fmt.Sprintf("the fleet document has %d error(s); fix them (infra check lists them all)", countErrors(diags))}
	}
	if h.cfg.State == nil {
		return nil, failed("no state location: set INFRA_STATE=s3://bucket/prefix on the function")
	}
	blobs, prefix, err := h.cfg.State(ctx)
	if err != nil {
		return nil, failed("open the state: " + err.Error())
	}
	store, err := state.OpenBlobs(blobs, prefix, m.Fleet)
	if err != nil {
		return nil, failed("open the state: " + err.Error())
	}
	s := &session{h: h, model: m, diags: diags, blobs: blobs, prefix: prefix, store: store}
	if writes(req) {
		if s.lock, err = h.takeLock(ctx, store, req); err != nil {
			return nil, failed(err.Error())
		}
	}
	if s.ledger, err = store.LoadLedger(ctx); err != nil {
		s.close(ctx)
		return nil, failed("load the ledger: " + err.Error())
	}
	ps := m.Providers()
	for _, r := range s.ledger.Rows {
		ps = appendProvider(ps, r.Provider)
	}
	backends := map[spec.Provider]providers.Backend{}
	why := map[spec.Provider]string{}
	if h.cfg.Backends != nil {
		if backends, why, err = h.cfg.Backends(ctx, ps); err != nil {
			s.close(ctx)
			return nil, failed("build the cloud backends: " + err.Error())
		}
	}
	s.engine = engine.New(engine.Options{Backends: backends, Unreachable: why, Getenv: h.cfg.Getenv,
		Parallelism: h.cfg.Parallelism, Progress: h.event})
	return s, Response{}
}

func appendProvider(ps []spec.Provider, p spec.Provider) []spec.Provider {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}

// takeLock locks the fleet's state. A lock left by an executor invocation
// that was killed (older than any invocation can live) is broken once;
// any other holder is reported.
func (h *Handler) takeLock(ctx context.Context, store *state.BlobStore, req Request) (state.Lock, error) {
	info := h.lockInfo(ctx, req)
	for attempt := 0; ; attempt++ {
		l, err := store.Lock(ctx, info)
		if err == nil {
			return l, nil
		}
		var locked *state.LockedError
		if attempt > 0 || !errors.As(err, &locked) || !h.stale(locked.Info) {
			return nil, err
		}
		h.logf("breaking the lock %s of %s: an executor invocation of %s cannot still be running",
			locked.Info.ID, locked.Info.Holder, locked.Info.Created.Format(time.RFC3339))
		if err := store.Unlock(ctx, locked.Info.ID); err != nil && !errors.Is(err, state.ErrNotLocked) {
			return nil, err
		}
	}
}

func (h *Handler) stale(info state.LockInfo) bool {
	return strings.HasPrefix(info.Command, "executor ") && !info.Created.IsZero() &&
		h.cfg.Now().Sub(info.Created) > staleLockAge
}

func (h *Handler) lockInfo(ctx context.Context, req Request) state.LockInfo {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	holder := h.cfg.Function
	if id := requestID(ctx); id != "" {
		holder += " request " + id
	}
	return state.LockInfo{ID: hex.EncodeToString(b), Holder: holder, RunID: req.RunID,
		Command: "executor " + string(req.Operation), Created: h.cfg.Now().UTC()}
}

func (s *session) close(ctx context.Context) {
	if s.lock == nil {
		return
	}
	// Release even when the work context has run out: a lock left behind
	// blocks the next invocation for a quarter of an hour.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.lock.Release(rctx); err != nil {
		s.h.logf("warning: release the lock: %v", err)
	}
	s.lock = nil
}

func (h *Handler) plan(ctx context.Context, s *session) Response {
	p, err := s.engine.Plan(ctx, s.model, s.diags, s.ledger, engine.PlanOptions{})
	if err != nil {
		return failed("plan: " + timeoutHint(ctx, err))
	}
	return Response{Status: StatusDone, Plan: p, Diagnostics: p.Diagnostics, Message: engine.SummaryLine(p)}
}

func (h *Handler) discover(ctx context.Context, s *session, req Request) Response {
	dx, err := s.engine.Discover(ctx, s.model, s.ledger)
	if err != nil {
		return failed("discover: " + timeoutHint(ctx, err))
	}
	resp := Response{Status: StatusDone, Discovery: dx, Diagnostics: s.diags}
	resp.Message = fmt.Sprintf("discovered %d managed (was %d): %d added, %d removed, %d moved; %d owned by other fleets",
		len(dx.Ledger.Rows), len(s.ledger.Rows), len(dx.Added), len(dx.Removed), len(dx.Moved), len(dx.Foreign))
	if !req.Options.Write {
		resp.Message += "; not saved (send options.write to save it)"
		return resp
	}
	if err := s.store.SaveLedger(ctx, dx.Ledger); err != nil {
		return failed("discover: save the ledger: " + err.Error())
	}
	resp.Message += "; saved"
	return resp
}

// timeoutHint explains an error caused by running out of time.
func timeoutHint(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err.Error() + " (the function ran out of time before the plan was made: raise its timeout)"
	}
	return err.Error()
}

func (h *Handler) event(ev engine.Event) {
	switch ev.Kind {
	case engine.EventDone:
		h.logf("%s %s ... ok (%s)", ev.Action, ev.Address, ev.Elapsed.Round(time.Millisecond))
	case engine.EventFailed:
		h.logf("%s %s ... failed: %v", ev.Action, ev.Address, ev.Err)
	case engine.EventDeferred:
		h.logf("%s %s ... refused for now, will retry: %v", ev.Action, ev.Address, ev.Err)
	case engine.EventWaiting:
		h.logf("%s", ev.Message)
	case engine.EventWarning:
		h.logf("warning: %s: %s", ev.Address, ev.Message)
	}
}

func (h *Handler) logf(format string, args ...any) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	fmt.Fprintf(h.cfg.Log, format+"\n", args...)
}

func failed(msg string) Response { return Response{Status: StatusFailed, Message: msg} }

func countErrors(ds []spec.Diagnostic) int {
	n := 0
	for _, d := range ds {
		if d.Severity == spec.Error {
			n++
		}
	}
	return n
}

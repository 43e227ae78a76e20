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

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// Config is what a Handler needs from its surroundings. FromEnv fills it for
// Lambda; tests fill it with the memory cloud and in-memory blobs.
type Config struct {
	// State opens the object store that holds every fleet's state, and the
	// prefix within it (INFRA_STATE=s3://bucket/prefix).
	State func(ctx context.Context) (blobs operations.Blobs, prefix string, err error)
	// Backends builds a backend for each provider in ps; a provider it
	// cannot build goes into the second map with the reason.
	Backends operations.BackendsFunc
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
	// SweepPrefix, when set, is the only prefix this function sweeps, or
	// one that starts with it (INFRA_SWEEP_PREFIX): a sweeper's role
	// deletes nothing else.
	SweepPrefix string
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
	case OpPlan, OpApply, OpDestroy, OpDiscover, OpSweep, OpOutput, OpDrift, OpImport:
	case "":
		return failed(`the request has no "operation"; want one of ` + joinOps(Operations))
	default:
		return failed(fmt.Sprintf("unknown operation %q; want one of %s", req.Operation, joinOps(Operations)))
	}
	if !h.allowed(req.Operation) {
		return failed(fmt.Sprintf("this function serves only %s (INFRA_OPERATIONS); invoke the function deployed for %s", joinOps(h.cfg.Operations), req.Operation))
	}
	if h.cfg.Ready != nil {
		if err := h.cfg.Ready(ctx); err != nil {
			return failed(err.Error())
		}
	}
	switch req.Operation {
	case OpSweep:
		return h.sweepOp(ctx, req)
	case OpOutput:
		return h.output(ctx, req)
	}
	b := newBudget(ctx, started, h.cfg.StopMargin)
	work, cancel := b.workContext(ctx)
	defer cancel()
	r, resp := h.prepare(work, req)
	if r == nil {
		return resp
	}
	switch req.Operation {
	case OpPlan:
		return h.plan(work, r, req)
	case OpDiscover:
		return h.discover(work, r, req)
	case OpDrift:
		return h.drift(work, r)
	case OpImport:
		return h.importOp(work, r, req)
	default:
		return h.apply(work, r, req, b)
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

// request is one request's document and the operations over this
// function's state and clouds.
type request struct {
	ops  *operations.Operations
	doc  *spec.Document
	runs operations.Runs
}

// prepare decodes the document and sets up the operations. A nil request
// comes with the response to return.
func (h *Handler) prepare(ctx context.Context, req Request) (*request, Response) {
	if len(req.Document) == 0 || string(req.Document) == "null" {
		return nil, failed(`the request has no "document"; send the fleet document as infra synth prints it`)
	}
	doc, err := spec.DecodeDocument(req.Document)
	if err != nil {
		return nil, failed("decode the document: " + err.Error())
	}
	if _, err := lockTimeout(ctx, req.Options.LockTimeout); err != nil {
		return nil, failed(err.Error())
	}
	return h.request(ctx, req, doc), Response{}
}

// request sets up the operations over this function's state and clouds
// for one request; doc is nil for an output by fleet name.
func (h *Handler) request(ctx context.Context, req Request, doc *spec.Document) *request {
	st := &stateAt{h: h}
	wait, _ := lockTimeout(ctx, req.Options.LockTimeout) // prepare refused a bad one
	env := operations.Env{
		Backends:     h.cfg.Backends,
		Store:        st.store,
		StoreAt:      farState,
		LedgerClouds: true,
		Getenv:       h.cfg.Getenv,
		Progress:     h.event,
		Parallelism:  h.cfg.Parallelism,
		Holder:       func(command string) operations.LockInfo { return h.lockInfo(req, requestID(ctx), command) },
		Stale:        h.stale,
		LockTimeout:  wait,
		Warn:         func(msg string) { h.logf("warning: %s", msg) },
		Now:          h.cfg.Now,
	}
	r := &request{ops: operations.New(env), doc: doc}
	if doc != nil {
		r.runs = st.runs(doc.Fleet)
	}
	return r
}

// stateAt opens the state location once, when an operation first needs it:
// a document with errors needs none.
type stateAt struct {
	h      *Handler
	blobs  operations.Blobs
	prefix string
}

func (s *stateAt) store(ctx context.Context, fleet string) (operations.Store, error) {
	if s.h.cfg.State == nil {
		return nil, errors.New("no state location: set INFRA_STATE=s3://bucket/prefix on the function")
	}
	blobs, prefix, err := s.h.cfg.State(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the state: %w", err)
	}
	store, err := operations.OpenBlobState(blobs, prefix, fleet)
	if err != nil {
		return nil, fmt.Errorf("open the state: %w", err)
	}
	s.blobs, s.prefix = blobs, prefix
	return store, nil
}

// lockTimeout reads options.lockTimeout, cut to half of what is left of
// the invocation: the rest is the operation's.
func lockTimeout(ctx context.Context, option string) (time.Duration, error) {
	if option == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(option)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("options.lockTimeout %q: want a duration such as \"90s\"", option)
	}
	if end, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(end)/2)
	}
	return d, nil
}

// farState opens the state a wire names ("state" on the wire): another
// team's provider, in S3, read with this function's role.
func farState(ctx context.Context, location, fleet string) (operations.Store, error) {
	if !strings.HasPrefix(location, "s3://") {
		return nil, fmt.Errorf("the executor reads another fleet's state only in S3, not at %s", location)
	}
	return operations.OpenState(ctx, location, fleet)
}

// runs keeps the run record beside the ledger; it is asked only after the
// state is open.
func (s *stateAt) runs(fleet string) operations.Runs { return lazyRuns{s, fleet} }

type lazyRuns struct {
	s     *stateAt
	fleet string
}

func (l lazyRuns) LoadRun(ctx context.Context) (*operations.RunRecord, error) {
	return operations.BlobRuns(l.s.blobs, l.s.prefix, l.fleet).LoadRun(ctx)
}

func (l lazyRuns) SaveRun(ctx context.Context, r *operations.RunRecord) error {
	return operations.BlobRuns(l.s.blobs, l.s.prefix, l.fleet).SaveRun(ctx, r)
}

// stale says why a lock an executor took longer ago than any invocation
// may live belongs to one that was killed, since a live one would have
// returned; "" for any other holder.
func (h *Handler) stale(info operations.LockInfo) string {
	if !strings.HasPrefix(info.Command, "executor ") || info.Created.IsZero() || h.cfg.Now().Sub(info.Created) <= staleLockAge {
		return ""
	}
	return fmt.Sprintf("breaking the lock %s of %s: an executor invocation of %s cannot still be running",
		info.ID, info.Holder, info.Created.Format(time.RFC3339))
}

// lockInfo names the invocation that holds the lock; its command starts
// with "executor ", which is how a stale one is recognised.
func (h *Handler) lockInfo(req Request, requestID, command string) operations.LockInfo {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	holder := h.cfg.Function
	if requestID != "" {
		holder += " request " + requestID
	}
	return operations.LockInfo{ID: hex.EncodeToString(b), Holder: holder, RunID: req.RunID,
		Command: "executor " + command, Created: h.cfg.Now().UTC()}
}

// refusal is the response to an error the operations returned: a typed
// refusal in the protocol's words, anything else as it is.
func refusal(ctx context.Context, op Operation, err error) Response {
	var diags *operations.DiagnosticsError
	var locked *operations.LockedError
	var target *operations.TargetError
	switch {
	case errors.As(err, &diags) && !diags.Planned:
		return Response{Status: StatusFailed, Diagnostics: diags.Diagnostics,
			Message: fmt.Sprintf("the fleet document has %d error(s); fix them (infra check lists them all)", diags.Count())}
	case errors.As(err, &diags):
		return Response{Status: StatusFailed, Diagnostics: diags.Diagnostics,
			Message: fmt.Sprintf("refusing to %s: the plan has %d error(s)", op, diags.Count())}
	case errors.As(err, &locked):
		return failed(err.Error())
	case errors.As(err, &target):
		return failed(targetMessage(op, target))
	}
	return failed(string(op) + ": " + timeoutHint(ctx, err))
}

// scope is the request's targets and forced replaces.
func (req Request) scope() operations.Scope {
	return operations.Scope{Targets: req.Targets, Replace: req.Replace}
}

// targetMessage says a refused target or forced replace in the words of
// the request's fields.
func targetMessage(op Operation, e *operations.TargetError) string {
	field := map[string]string{"target": "targets", "replace": "replace"}[e.Option]
	msg := fmt.Sprintf("refusing to %s: %q names %s, which is %s", op, field, e.Address, e.Why)
	if e.Hint != "" {
		msg += fmt.Sprintf("; did you mean %s?", e.Hint)
	}
	return msg
}

func (h *Handler) plan(ctx context.Context, r *request, req Request) Response {
	p, err := r.ops.Plan(ctx, operations.PlanRequest{Document: r.doc, Upstream: req.Upstream, Scope: req.scope()})
	var diags *operations.DiagnosticsError
	if err != nil && (p == nil || !errors.As(err, &diags) || !diags.Planned) {
		return refusal(ctx, OpPlan, err)
	}
	// A plan whose rows hold errors the plan found is still the answer: it
	// carries them, and apply will refuse it.
	resp := Response{Status: StatusDone, Plan: p, Diagnostics: p.Diagnostics, Message: render.SummaryLine(p)}
	if len(r.doc.Provides) > 0 {
		// What it will publish is the plan's publishes, which a consumer
		// planned after it in the same run sends as upstream. Who reads this fleet, for the plan's comment; the plan itself
		// already refuses to break what they read.
		consumers, err := r.ops.Consumers(ctx, r.doc)
		if err != nil {
			return failed("plan: " + err.Error())
		}
		resp.Consumers = consumers
	}
	return resp
}

// output answers a fleet's published record: of the document's fleet, or
// of the fleet named, for a caller that has no document (or no state
// credentials: this function's role reads the state).
func (h *Handler) output(ctx context.Context, req Request) Response {
	var doc *spec.Document
	hasDoc := len(req.Document) > 0 && string(req.Document) != "null"
	switch {
	case hasDoc:
		var err error
		if doc, err = spec.DecodeDocument(req.Document); err != nil {
			return failed("decode the document: " + err.Error())
		}
		if req.Fleet != "" && req.Fleet != doc.Fleet {
			return failed(fmt.Sprintf(`the request names fleet %q and sends the document of %q; send one of "document" and "fleet"`, req.Fleet, doc.Fleet))
		}
	case req.Fleet == "":
		return failed(`the request has neither "document" nor "fleet"; name the fleet whose outputs to read`)
	}
	r := h.request(ctx, req, doc)
	out, err := r.ops.Output(ctx, operations.OutputRequest{Document: doc, Fleet: req.Fleet, Select: req.Options.Select})
	if errors.Is(err, operations.ErrNothingPublished) {
		// An answer, not a failure: the fleet has not applied since it
		// began to provide.
		return Response{Status: StatusDone, Message: err.Error()}
	}
	if err != nil {
		return failed("output: " + err.Error())
	}
	exports := 0
	for _, c := range out.Capabilities {
		exports += len(c.Exports)
	}
	return Response{Status: StatusDone, Output: out,
		Message: fmt.Sprintf("%s publishes %d capability(ies), %d export(s) (%s)", out.Fleet, len(out.Capabilities), exports, out.Where)}
}

func (h *Handler) discover(ctx context.Context, r *request, req Request) Response {
	res, err := r.ops.Discover(ctx, operations.DiscoverRequest{Document: r.doc, Write: req.Options.Write})
	if res == nil {
		return refusal(ctx, OpDiscover, err)
	}
	dx := res.Discovery
	resp := Response{Status: StatusDone, Discovery: dx, Diagnostics: res.Diagnostics, Saved: res.Saved}
	resp.Message = fmt.Sprintf("discovered %d managed (was %d): %d added, %d removed, %d moved; %d owned by other fleets",
		len(dx.Ledger.Rows), res.Was, len(dx.Added), len(dx.Removed), len(dx.Moved), len(dx.Foreign))
	switch {
	case err != nil:
		return failed("discover: save the ledger: " + err.Error())
	case !req.Options.Write:
		resp.Message += "; not saved (send options.write to save it)"
	default:
		resp.Message += "; saved"
	}
	return resp
}

// drift reports what changed out of band; a fleet with drift is done,
// and its message says so.
func (h *Handler) drift(ctx context.Context, r *request) Response {
	d, err := r.ops.Drift(ctx, operations.DriftRequest{Document: r.doc})
	if err != nil {
		return refusal(ctx, OpDrift, err)
	}
	return Response{Status: StatusDone, Drift: d, Message: render.DriftSummary(d)}
}

// importOp lists what no fleet owns, as declarations; it writes nothing,
// so the caller decides what to adopt.
func (h *Handler) importOp(ctx context.Context, r *request, req Request) Response {
	kinds := make([]spec.Kind, len(req.Options.Kinds))
	for i, k := range req.Options.Kinds {
		if _, ok := spec.Lookup(spec.Kind(k)); !ok {
			return failed(fmt.Sprintf("options.kinds: infra knows no kind %q; send kinds such as queues or object-store", spec.Printable(k)))
		}
		kinds[i] = spec.Kind(k)
	}
	res, err := r.ops.Import(ctx, operations.ImportRequest{Document: r.doc,
		Options: operations.ImportOptions{Kinds: kinds, Regions: req.Options.Regions, NamePrefix: req.Options.Prefix}})
	if err != nil {
		return refusal(ctx, OpImport, err)
	}
	adopt := res.Adopts()
	return Response{Status: StatusDone, Import: res,
		Message: fmt.Sprintf("import: %d to adopt that no fleet owns, %d new; passed over %d owned by fleets and %d this fleet knows",
			adopt, len(res.Declarations)-adopt, res.Owned, res.Known)}
}

// timeoutHint explains an error caused by running out of time.
func timeoutHint(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err.Error() + " (the function ran out of time before the plan was made: raise its timeout)"
	}
	return err.Error()
}

func (h *Handler) event(ev operations.Event) {
	switch ev.Kind {
	case operations.EventDone:
		h.logf("%s %s ... ok (%s)", ev.Action, ev.Address, ev.Elapsed.Round(time.Millisecond))
	case operations.EventFailed:
		h.logf("%s %s ... failed: %v", ev.Action, ev.Address, ev.Err)
	case operations.EventDeferred:
		h.logf("%s %s ... refused for now, will retry: %v", ev.Action, ev.Address, ev.Err)
	case operations.EventWaiting:
		h.logf("%s", ev.Message)
	case operations.EventWarning:
		h.logf("warning: %s: %s", ev.Address, ev.Message)
	}
}

func (h *Handler) logf(format string, args ...any) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	fmt.Fprintf(h.cfg.Log, format+"\n", args...)
}

func failed(msg string) Response { return Response{Status: StatusFailed, Message: msg} }

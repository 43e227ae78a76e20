package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// fleetDoc is one fleet, synthesized in the runner: whatever runs the
// plan or the apply, the document is the one this checkout declares.
type fleetDoc struct {
	// Input is the fleet as the workflow named it ("" for the default).
	Input string
	Name  string
	Doc   []byte
	// Source is the document file diagnostics point at, when the fleet is
	// a .json document; empty for a Go program.
	Source string
	// document is Doc, decoded.
	document *spec.Document
	// scope narrows its plan and apply: the inputs' on a plan, the
	// reviewed comment's on a merge.
	scope operations.Scope
}

// outcome is how an apply ended, whoever ran it.
type outcome struct {
	Status executor.Status
	// Plan is the plan applied; when refused, the fresh plan.
	Plan    *operations.Plan
	Applied []operations.Applied
	Message string
	// Count is the line that counts what was done.
	Count       string
	Elapsed     time.Duration
	Invocations int
}

// planned is a fleet's plan and what CI shows beside it.
type planned struct {
	*operations.Plan
	// Published is what the fleet will publish once this plan is applied,
	// for a fleet that provides a capability and whose plan is applicable;
	// nil otherwise. A consumer planned after it reads it (Upstream).
	Published *spec.Published
	// Consumers are, by capability, the fleets that claim what this fleet
	// provides.
	Consumers map[string][]string
}

// runner is where plans and applies happen: in this runner with its own
// credentials (the command line), or in the executor Lambda.
type runner interface {
	// Plan plans the fleet. upstream holds, by fleet, what providers
	// planned earlier in this run will publish: a consumer reads it in
	// place of their stored records (operations.PlanRequest.Upstream).
	Plan(ctx context.Context, f *fleetDoc, upstream map[string]*spec.Published) (*planned, error)
	// Output reads the fleet's published record; an error wrapping
	// operations.ErrNothingPublished when it has published nothing.
	Output(ctx context.Context, f *fleetDoc) (*operations.Output, error)
	// Apply applies the fleet if its fresh plan is expect; an empty expect
	// applies the fresh plan as it is (the caller decides when that is
	// allowed).
	Apply(ctx context.Context, f *fleetDoc, expect string) (*outcome, error)
	Discover(ctx context.Context, f *fleetDoc) (*operations.Discovery, error)
	// Sweep sweeps the regions of f when given, else each cloud's
	// configured region.
	Sweep(ctx context.Context, f *fleetDoc, o sweepOptions) (string, error)
}

// sweepOptions are the action's sweep inputs.
type sweepOptions struct {
	prefix, olderThan string
	delete            bool
}

// clouds are how the action reaches the clouds and the state when it
// plans and applies in this runner.
type clouds struct {
	Backends operations.BackendsFunc
	// Store opens a fleet's state at the action's state location.
	Store  func(ctx context.Context, location, fleet string) (operations.Store, error)
	Synth  operations.SynthFunc
	Getenv func(string) string
}

// synth synthesizes one fleet, as `infra synth` does.
func synth(ctx context.Context, c clouds, input string) (*fleetDoc, error) {
	doc, err := operations.LoadDocument(ctx, input, c.Synth)
	if errors.Is(err, operations.ErrNoFleet) {
		err = fmt.Errorf("%w; set the input fleets", err)
	}
	if err != nil {
		return nil, fmt.Errorf("synthesize fleet %s: %w", orDefault(input), err)
	}
	data, err := spec.EncodeDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("synthesize fleet %s: %w", orDefault(input), err)
	}
	f := &fleetDoc{Input: input, Name: doc.Fleet, Doc: data, document: doc}
	if strings.HasSuffix(input, ".json") {
		f.Source = input
	} else if input == "" {
		if fi, err := os.Stat("fleet.json"); err == nil && !fi.IsDir() {
			if _, err := os.Stat("infra"); err != nil {
				f.Source = "fleet.json"
			}
		}
	}
	return f, nil
}

func orDefault(input string) string {
	if input == "" {
		return "(the default: ./infra, else fleet.json)"
	}
	return input
}

// local plans and applies in this runner, with its own credentials,
// through the same operations as the command line.
type local struct {
	ops *operations.Operations
	// sweeps has no state location: a sweep manages no ledger.
	sweeps *operations.Operations
}

func newLocal(c clouds, location string, lockTimeout time.Duration, log io.Writer) local {
	p := &progress{w: log}
	env := operations.Env{
		Backends: c.Backends,
		Store: func(ctx context.Context, fleet string) (operations.Store, error) {
			return c.Store(ctx, location, fleet)
		},
		// A wire's own state: another team's provider.
		StoreAt:  c.Store,
		Getenv:   c.Getenv,
		Progress: p.event,
		Holder:   func(command string) operations.LockInfo { return lockInfo(command, c.Getenv) },
		Stale:    operations.DeadHolder,
		// Waiting says who holds the lock every 15 s, through Warn.
		LockTimeout: lockTimeout,
		Warn:        func(msg string) { fmt.Fprintf(log, "warning: %s\n", msg) },
	}
	return local{ops: operations.New(env), sweeps: operations.New(operations.Env{Backends: c.Backends})}
}

func (l local) Plan(ctx context.Context, f *fleetDoc, upstream map[string]*spec.Published) (*planned, error) {
	p, err := l.ops.Plan(ctx, operations.PlanRequest{Document: f.document, Upstream: upstream, Scope: f.scope})
	var diags *operations.DiagnosticsError
	if err != nil && !errors.As(err, &diags) {
		return nil, fmt.Errorf("plan fleet %s: %w", f.Name, err)
	}
	// A fleet with errors still has its plan (the diagnostics): the
	// comment shows them.
	out := &planned{Plan: p, Published: p.Publishes}
	if len(f.document.Provides) > 0 {
		if out.Consumers, err = l.ops.Consumers(ctx, f.document); err != nil {
			return nil, fmt.Errorf("plan fleet %s: %w", f.Name, err)
		}
	}
	return out, nil
}

// cachePlanner is a runner that can plan from the cache, for the first
// comment (action.firstComment): the local one. The executor's plan
// operation has no such option yet.
type cachePlanner interface {
	PlanFromCache(ctx context.Context, f *fleetDoc, upstream map[string]*spec.Published) (*operations.Plan, error)
}

// PlanFromCache plans the fleet from its cache, calling no cloud.
func (l local) PlanFromCache(ctx context.Context, f *fleetDoc, upstream map[string]*spec.Published) (*operations.Plan, error) {
	return l.ops.Plan(ctx, operations.PlanRequest{Document: f.document, Upstream: upstream, Scope: f.scope, NoRefresh: true})
}

func (l local) Output(ctx context.Context, f *fleetDoc) (*operations.Output, error) {
	return l.ops.Output(ctx, operations.OutputRequest{Document: f.document})
}

func (l local) Apply(ctx context.Context, f *fleetDoc, expect string) (*outcome, error) {
	started := time.Now()
	req := operations.ApplyRequest{Document: f.document, Expect: expect, Scope: f.scope}
	if expect == "" {
		// The caller decides when an unreviewed apply is allowed.
		req.Confirm = func(*operations.Plan) error { return nil }
	}
	res, err := l.ops.Apply(ctx, req)
	if res == nil {
		return nil, fmt.Errorf("apply fleet %s: %w", f.Name, err)
	}
	o := &outcome{Plan: res.Plan, Invocations: 1, Elapsed: time.Since(started), Status: executor.StatusDone}
	if res.Report != nil {
		o.Applied = res.Report.Applied
		o.Count = render.AppliedLine(res.Report.Applied)
	}
	var diags *operations.DiagnosticsError
	var changed *operations.PlanChangedError
	switch {
	case errors.As(err, &diags):
		o.Status, o.Message = executor.StatusFailed, "the fleet has errors; fix them (infra check lists them all)"
		if diags.Planned {
			o.Message = "the plan has errors; fix what its rows say, then plan again"
		}
	case errors.As(err, &changed):
		o.Status, o.Message = executor.StatusRefused, fmt.Sprintf("the fresh plan is %s, not the reviewed %s", changed.Fresh, changed.Reviewed)
	case err != nil:
		o.Status, o.Message = executor.StatusFailed, err.Error()
	case res.Report == nil:
		o.Count = "Nothing to apply: the cloud already matches the fleet."
	case res.Report.Incomplete:
		o.Status, o.Message = executor.StatusFailed, "apply stopped before finishing (interrupted); everything done so far is recorded: run apply again to finish"
	}
	return o, nil
}

func (l local) Discover(ctx context.Context, f *fleetDoc) (*operations.Discovery, error) {
	res, err := l.ops.Discover(ctx, operations.DiscoverRequest{Document: f.document})
	if err != nil {
		return nil, fmt.Errorf("discover fleet %s: %w", f.Name, err)
	}
	return res.Discovery, nil
}

func (l local) Sweep(ctx context.Context, f *fleetDoc, o sweepOptions) (string, error) {
	req := operations.SweepRequest{Prefix: o.prefix, OlderThan: o.olderThan, Delete: o.delete, ConfiguredRegions: true}
	if f != nil {
		req.Document = f.document
	}
	if req.OlderThan == "" {
		req.OlderThan = "0"
	}
	rep, err := l.sweeps.Sweep(ctx, req)
	var age *operations.AgeError
	if errors.As(err, &age) {
		return "", fmt.Errorf("input sweep-older-than: %w", err)
	}
	if rep == nil {
		return "", err
	}
	var text bytes.Buffer
	if rerr := render.SweepText(cli.PrintableWriter(&text), rep); rerr != nil {
		return "", rerr
	}
	return text.String(), err
}

// progress logs the engine's events, one line each, as the command line
// prints them.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) event(ev operations.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case operations.EventDone:
		fmt.Fprintf(p.w, "%s %s ... ok (%s)\n", ev.Action, ev.Address, ev.Elapsed.Round(time.Millisecond))
	case operations.EventFailed:
		fmt.Fprintf(p.w, "%s %s ... failed: %v\n", ev.Action, ev.Address, ev.Err)
	case operations.EventDeferred:
		fmt.Fprintf(p.w, "%s %s ... refused for now, will retry: %v\n", ev.Action, ev.Address, ev.Err)
	case operations.EventWaiting:
		fmt.Fprintf(p.w, "%s\n", ev.Message)
	}
}

// lockInfo names this job in the lock it takes.
func lockInfo(command string, getenv func(string) string) operations.LockInfo {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	host, _ := os.Hostname()
	return operations.LockInfo{ID: hex.EncodeToString(b), Holder: fmt.Sprintf("infra-action@%s pid %d", host, os.Getpid()),
		RunID: getenv("GITHUB_RUN_ID"), Command: command, Created: time.Now().UTC(), Host: host, PID: os.Getpid()}
}

// invoker sends one payload to a Lambda function.
type invoker interface {
	Invoke(ctx context.Context, function string, payload []byte) ([]byte, error)
}

// maxInvocations bounds the incomplete loop: at Lambda's 15 minutes each,
// more is longer than any GitHub job may run.
const maxInvocations = 30

// remote plans and applies in the executor Lambda: the runner only
// synthesizes, and its role may only invoke the function.
type remote struct {
	inv      invoker
	function string
	runID    string
	// lockTimeout is sent as options.lockTimeout: the executor waits
	// within what is left of each invocation.
	lockTimeout time.Duration
	log         io.Writer
}

func (r remote) client() executor.Client {
	return executor.Client{Invoker: r.inv, Function: r.function, Newer: func(v int) {
		fmt.Fprintf(r.log, "warning: the executor speaks protocol %d, this action %d; update the action\n", v, executor.ProtocolVersion)
	}}
}

func (r remote) invoke(ctx context.Context, req executor.Request) (*executor.Response, error) {
	resp, err := r.client().Do(ctx, req)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(r.log, "executor %s: %s %s in %dms: %s\n", r.function, req.Operation, resp.Status, resp.ElapsedMs, resp.Message)
	return resp, nil
}

func (r remote) Plan(ctx context.Context, f *fleetDoc, upstream map[string]*spec.Published) (*planned, error) {
	resp, err := r.invoke(ctx, executor.Request{Operation: executor.OpPlan, Document: f.Doc, RunID: r.runID, Upstream: upstream,
		Targets: f.scope.Targets, Replace: f.scope.Replace})
	if err != nil {
		return nil, err
	}
	if resp.Plan != nil {
		return &planned{Plan: resp.Plan, Published: resp.Plan.Publishes, Consumers: resp.Consumers}, nil
	}
	if len(resp.Diagnostics) > 0 {
		// A document with errors: the comment shows them.
		return &planned{Plan: &operations.Plan{FormatVersion: operations.FormatVersion, Fleet: f.Name, Diagnostics: resp.Diagnostics}}, nil
	}
	return nil, fmt.Errorf("executor %s: plan %s: %s", r.function, resp.Status, resp.Message)
}

func (r remote) Output(ctx context.Context, f *fleetDoc) (*operations.Output, error) {
	return r.client().Output(ctx, f.Doc, "", "")
}

func (r remote) Apply(ctx context.Context, f *fleetDoc, expect string) (*outcome, error) {
	started := time.Now()
	req := executor.Request{Operation: executor.OpApply, Document: f.Doc, ExpectPlanID: expect, RunID: r.runID,
		Targets: f.scope.Targets, Replace: f.scope.Replace, Options: executor.Options{Unreviewed: expect == "", LockTimeout: r.lockTimeoutOption()}}
	o := &outcome{}
	for {
		resp, err := r.invoke(ctx, req)
		if err != nil {
			return nil, err
		}
		o.Invocations++
		// The first invocation's plan is the whole plan; a resumed one
		// plans only what is left.
		if o.Plan == nil || resp.Status == executor.StatusRefused {
			o.Plan = resp.Plan
		}
		o.Applied = append(o.Applied, resp.Applied...)
		o.Status, o.Message = resp.Status, resp.Message
		if resp.Status == executor.StatusIncomplete && o.Invocations < maxInvocations {
			continue
		}
		if resp.Status == executor.StatusIncomplete {
			o.Status = executor.StatusFailed
			o.Message = fmt.Sprintf("still incomplete after %d invocations; re-run the workflow to resume (convergence makes that safe)", o.Invocations)
		}
		if o.Plan == nil && len(resp.Diagnostics) > 0 {
			o.Plan = &operations.Plan{FormatVersion: operations.FormatVersion, Fleet: f.Name, Diagnostics: resp.Diagnostics}
		}
		break
	}
	o.Elapsed = time.Since(started)
	o.Count = countLine(o.Applied)
	return o, nil
}

func (r remote) Discover(ctx context.Context, f *fleetDoc) (*operations.Discovery, error) {
	resp, err := r.invoke(ctx, executor.Request{Operation: executor.OpDiscover, Document: f.Doc, RunID: r.runID})
	if err != nil {
		return nil, err
	}
	if resp.Status != executor.StatusDone || resp.Discovery == nil {
		return nil, fmt.Errorf("executor %s: discover %s: %s", r.function, resp.Status, resp.Message)
	}
	return resp.Discovery, nil
}

func (r remote) Sweep(ctx context.Context, f *fleetDoc, o sweepOptions) (string, error) {
	req := executor.Request{Operation: executor.OpSweep, RunID: r.runID,
		Options: executor.Options{Prefix: o.prefix, OlderThan: o.olderThan, Yes: o.delete}}
	if f != nil {
		req.Document = f.Doc
	}
	resp, err := r.invoke(ctx, req)
	if err != nil {
		return "", err
	}
	if resp.Status != executor.StatusDone {
		return "", fmt.Errorf("executor %s: sweep %s: %s", r.function, resp.Status, resp.Message)
	}
	return resp.Message, nil
}

// countLine counts what an apply did, in the words of `infra apply`.
func countLine(applied []operations.Applied) string { return render.AppliedLine(applied) }

// lockTimeoutOption is the lock-timeout input as the executor reads it.
func (r remote) lockTimeoutOption() string {
	if r.lockTimeout <= 0 {
		return ""
	}
	return r.lockTimeout.String()
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/spec"
)

// fleetDoc is one fleet, synthesized in the runner: whatever runs the
// plan or the apply, the document is the one this checkout declares.
type fleetDoc struct {
	// Input is the fleet as the workflow named it ("" for the default).
	Input string
	Name  string
	Doc   []byte
	// File holds Doc, so the command line plans exactly this document
	// instead of running the fleet program a second time.
	File string
	// Source is the document file diagnostics point at, when the fleet is
	// a .json document; empty for a Go program.
	Source string
}

// outcome is how an apply ended, whoever ran it.
type outcome struct {
	Status executor.Status
	// Plan is the plan applied; when refused, the fresh plan.
	Plan    *engine.Plan
	Applied []engine.Applied
	Message string
	// Count is the line that counts what was done.
	Count       string
	Elapsed     time.Duration
	Invocations int
}

// runner is where plans and applies happen: in this runner with its own
// credentials (the command line), or in the executor Lambda.
type runner interface {
	Plan(ctx context.Context, f *fleetDoc) (*engine.Plan, error)
	// Apply applies the fleet if its fresh plan is expect; an empty expect
	// applies the fresh plan as it is (the caller decides when that is
	// allowed).
	Apply(ctx context.Context, f *fleetDoc, expect string) (*outcome, error)
	Discover(ctx context.Context, f *fleetDoc) (*engine.Discovery, error)
	// Sweep sweeps the regions of f when given, else each cloud's
	// configured region.
	Sweep(ctx context.Context, f *fleetDoc, o sweepOptions) (string, error)
}

// sweepOptions are the action's sweep inputs.
type sweepOptions struct {
	prefix, olderThan string
	delete            bool
}

// errSweepNotBuilt: the executor has no sweep yet; sweep.yml sweeps from
// the runner meanwhile.
var errSweepNotBuilt = errors.New("the executor cannot sweep yet; run command: sweep without executor, with a role that may list and delete (docs/ci.md); nothing was listed or deleted")

// commandLine runs the infra command line in this process.
type commandLine struct {
	factory func(out, errOut io.Writer) *cli.Factory
	state   string
	log     io.Writer
}

// run runs one command line and returns its stdout, stderr and exit code.
// Stderr (progress, warnings) is also copied to the log.
func (c *commandLine) run(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	f := c.factory(&out, io.MultiWriter(&errOut, c.log))
	code := cli.RunWith(f, args, nil)
	return out.String(), errOut.String(), code
}

// lastError is the command line's own words for a failure: its last
// "error:" or "usage:" line.
func lastError(stderr string, code int) error {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "error: ") || strings.HasPrefix(l, "usage: ") {
			return errors.New(strings.TrimPrefix(l, "error: "))
		}
	}
	if s := strings.TrimSpace(stderr); s != "" {
		return errors.New(s)
	}
	return fmt.Errorf("infra exited %d", code)
}

// synth synthesizes one fleet through the command line, as `infra synth`
// does, and keeps the document in dir.
func (c *commandLine) synth(input, dir string) (*fleetDoc, error) {
	args := []string{"synth", "--no-color"}
	if input != "" {
		args = append(args, "--fleet", input)
	}
	out, stderr, code := c.run(args...)
	if code != cli.ExitOK {
		return nil, fmt.Errorf("synthesize fleet %s: %w", orDefault(input), lastError(stderr, code))
	}
	doc, err := spec.DecodeDocument([]byte(out))
	if err != nil {
		return nil, fmt.Errorf("synthesize fleet %s: %w", orDefault(input), err)
	}
	f := &fleetDoc{Input: input, Name: doc.Fleet, Doc: []byte(out)}
	f.File = filepath.Join(dir, "fleet-"+safeName(doc.Fleet)+".json")
	if err := os.WriteFile(f.File, f.Doc, 0o600); err != nil {
		return nil, err
	}
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

// safeName keeps a fleet name usable in a file name; names are already
// [a-z0-9_-] when the document is valid.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// local plans and applies in this runner, with its own credentials.
type local struct {
	*commandLine
}

func (l local) Plan(ctx context.Context, f *fleetDoc) (*engine.Plan, error) {
	out, stderr, code := l.run("plan", "--json", "--no-color", "--fleet", f.File, "--state", l.state)
	// A fleet with errors still prints its plan (the diagnostics) and
	// exits 1: the comment shows them.
	if p, err := engine.DecodePlan([]byte(out)); err == nil {
		return p, nil
	}
	return nil, fmt.Errorf("plan fleet %s: %w", f.Name, lastError(stderr, code))
}

func (l local) Apply(ctx context.Context, f *fleetDoc, expect string) (*outcome, error) {
	started := time.Now()
	p, err := l.Plan(ctx, f)
	if err != nil {
		return nil, err
	}
	o := &outcome{Plan: p, Invocations: 1}
	if spec.HasErrors(p.Diagnostics) {
		o.Status, o.Message = executor.StatusFailed, "the fleet has errors; fix them (infra check lists them all)"
		return o, nil
	}
	if expect != "" && p.ID != expect {
		o.Status = executor.StatusRefused
		o.Message = fmt.Sprintf("the fresh plan is %s, not the reviewed %s", p.ID, expect)
		return o, nil
	}
	// apply --plan re-plans under the lock and refuses if anything moved
	// since the plan above, so the check holds to the end.
	planFile := strings.TrimSuffix(f.File, ".json") + ".plan.json"
	var buf bytes.Buffer
	if err := engine.RenderJSON(&buf, p); err != nil {
		return nil, err
	}
	if err := os.WriteFile(planFile, buf.Bytes(), 0o600); err != nil {
		return nil, err
	}
	out, stderr, code := l.run("apply", "--no-color", "--fleet", f.File, "--state", l.state, "--plan", planFile)
	o.Elapsed = time.Since(started)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Applied: ") {
			o.Count = line
		}
	}
	if code != cli.ExitOK {
		err := lastError(stderr, code)
		o.Status, o.Message = executor.StatusFailed, err.Error()
		if strings.Contains(o.Message, "refusing to apply: the saved plan") {
			o.Status = executor.StatusRefused
		}
		return o, nil
	}
	o.Status = executor.StatusDone
	if o.Count == "" {
		o.Count = "Nothing to apply: the cloud already matches the fleet."
	}
	return o, nil
}

func (l local) Discover(ctx context.Context, f *fleetDoc) (*engine.Discovery, error) {
	out, stderr, code := l.run("discover", "--json", "--no-color", "--fleet", f.File, "--state", l.state)
	if code != cli.ExitOK {
		return nil, fmt.Errorf("discover fleet %s: %w", f.Name, lastError(stderr, code))
	}
	var dx engine.Discovery
	if err := json.Unmarshal([]byte(out), &dx); err != nil {
		return nil, fmt.Errorf("discover fleet %s: %w", f.Name, err)
	}
	return &dx, nil
}

func (l local) Sweep(ctx context.Context, f *fleetDoc, o sweepOptions) (string, error) {
	args := []string{"sweep", "--no-color", "--prefix", o.prefix}
	if f != nil {
		args = append(args, "--fleet", f.File)
	}
	if o.olderThan != "" {
		args = append(args, "--older-than", o.olderThan)
	}
	if o.delete {
		args = append(args, "--yes")
	}
	out, stderr, code := l.run(args...)
	if code != cli.ExitOK {
		return out, lastError(stderr, code)
	}
	return out, nil
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
	log      io.Writer
}

func (r remote) invoke(ctx context.Context, req executor.Request) (*executor.Response, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	body, err := r.inv.Invoke(ctx, r.function, payload)
	if err != nil {
		return nil, fmt.Errorf("executor %s: %w", r.function, err)
	}
	var resp executor.Response
	if err := json.Unmarshal(body, &resp); err != nil || resp.Status == "" {
		return nil, fmt.Errorf("executor %s: not an executor response: %.300s", r.function, body)
	}
	if resp.ProtocolVersion > executor.ProtocolVersion {
		fmt.Fprintf(r.log, "warning: the executor speaks protocol %d, this action %d; update the action\n", resp.ProtocolVersion, executor.ProtocolVersion)
	}
	fmt.Fprintf(r.log, "executor %s: %s %s in %dms: %s\n", r.function, req.Operation, resp.Status, resp.ElapsedMs, resp.Message)
	return &resp, nil
}

func (r remote) Plan(ctx context.Context, f *fleetDoc) (*engine.Plan, error) {
	resp, err := r.invoke(ctx, executor.Request{Operation: executor.OpPlan, Document: f.Doc, RunID: r.runID})
	if err != nil {
		return nil, err
	}
	if resp.Plan != nil {
		return resp.Plan, nil
	}
	if len(resp.Diagnostics) > 0 {
		// A document with errors: the comment shows them.
		return &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: f.Name, Diagnostics: resp.Diagnostics}, nil
	}
	return nil, fmt.Errorf("executor %s: plan %s: %s", r.function, resp.Status, resp.Message)
}

func (r remote) Apply(ctx context.Context, f *fleetDoc, expect string) (*outcome, error) {
	started := time.Now()
	req := executor.Request{Operation: executor.OpApply, Document: f.Doc, ExpectPlanID: expect, RunID: r.runID,
		Options: executor.Options{Unreviewed: expect == ""}}
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
			o.Plan = &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: f.Name, Diagnostics: resp.Diagnostics}
		}
		break
	}
	o.Elapsed = time.Since(started)
	o.Count = countLine(o.Applied)
	return o, nil
}

func (r remote) Discover(ctx context.Context, f *fleetDoc) (*engine.Discovery, error) {
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
		if strings.Contains(resp.Message, "not built yet") {
			return "", errSweepNotBuilt
		}
		return "", fmt.Errorf("executor %s: sweep %s: %s", r.function, resp.Status, resp.Message)
	}
	return resp.Message, nil
}

// countLine counts what an apply did, in the words of `infra apply`.
func countLine(applied []engine.Applied) string { return engine.AppliedLine(applied) }

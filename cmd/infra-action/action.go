package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// env is everything the action takes from its surroundings, so that a
// test can run it whole in-process.
type env struct {
	getenv func(string) string
	// stdout receives the log and the workflow commands (annotations,
	// masks).
	stdout io.Writer
	http   *http.Client
	// clouds reach the clouds and the state (local mode).
	clouds clouds
	// invoker reaches the executor (executor mode), made only when needed.
	invoker func(ctx context.Context) (invoker, error)
	// setenv sets a variable of this process, for the clouds' own clients
	// to read (GOOGLE_APPLICATION_CREDENTIALS); os.Setenv when nil.
	setenv func(key, value string) error
	// checkout is the commit checked out in the working directory, which
	// /infra apply compares with the approved head; nil is git's answer
	// (gitHead).
	checkout func(ctx context.Context) (string, error)
}

// inputs are action.yml's inputs (docs/ci.md).
type inputs struct {
	command       string
	fleets        []string
	state         string
	executor      string
	token         string
	comment       bool
	sweepPrefix   string
	sweepAge      string
	sweepDelete   bool
	onPlanChanged string
	// scope is the targets and replace inputs (operations.Scope).
	scope operations.Scope
	// lockTimeout is how long an apply waits for a lock another run holds.
	lockTimeout time.Duration
	// policy is a command run on each plan's JSON before it is commented
	// and before it is applied; a failure blocks the plan.
	policy string
}

func readInputs(gha *githubactions.Action) (inputs, error) {
	in := inputs{
		command:       input(gha, "command"),
		fleets:        strings.Fields(input(gha, "fleet")),
		state:         input(gha, "state"),
		executor:      input(gha, "executor"),
		token:         input(gha, "github-token"),
		sweepPrefix:   input(gha, "sweep-prefix"),
		sweepAge:      input(gha, "sweep-older-than"),
		onPlanChanged: input(gha, "on-plan-changed"),
		policy:        input(gha, "policy"),
	}
	if len(in.fleets) == 0 {
		in.fleets = []string{""}
	}
	if in.state == "" {
		in.state = ".infra"
	}
	var err error
	if in.comment, err = boolInput(gha, "comment", true); err != nil {
		return in, err
	}
	if in.sweepDelete, err = boolInput(gha, "sweep-delete", false); err != nil {
		return in, err
	}
	if in.scope, err = scopeInputs(gha); err != nil {
		return in, err
	}
	if v := input(gha, "lock-timeout"); v != "" {
		if in.lockTimeout, err = time.ParseDuration(v); err != nil || in.lockTimeout < 0 {
			return in, fmt.Errorf("input lock-timeout is %q; want a duration such as 5m, or 0 to refuse at once", v)
		}
	}
	if len(in.scope.Targets)+len(in.scope.Replace) > 0 && len(in.fleets) > 1 {
		return in, fmt.Errorf("inputs targets and replace name resources of one fleet; the input fleet names %d", len(in.fleets))
	}
	switch in.onPlanChanged {
	case "":
		in.onPlanChanged = "fail"
	case "fail", "apply":
	default:
		return in, fmt.Errorf("input on-plan-changed is %q; want fail or apply", in.onPlanChanged)
	}
	switch in.command {
	case "plan", "apply", "pr-apply", "sweep", "discover":
	case "":
		return in, errors.New("input command is required: plan, apply, pr-apply, sweep or discover")
	default:
		return in, fmt.Errorf("input command is %q; want plan, apply, pr-apply, sweep or discover", in.command)
	}
	if in.command == "pr-apply" && in.onPlanChanged == "apply" {
		// An apply from the pull request is of the reviewed plan only:
		// nothing merged stands behind another one.
		return in, errors.New("input on-plan-changed is apply, but command: pr-apply applies only the reviewed plan; leave it out (fail)")
	}
	return in, nil
}

// input reads INPUT_NAME-WITH-DASHES, as the runner names inputs for
// JavaScript and container actions, else INPUT_NAME_WITH_UNDERSCORES, as
// action.yml passes them: a composite action passes its inputs itself, and
// a name with a dash is not one a shell can read.
func input(gha *githubactions.Action, name string) string {
	if v := gha.GetInput(name); v != "" || !strings.Contains(name, "-") {
		return v
	}
	return gha.GetInput(strings.ReplaceAll(name, "-", "_"))
}

// scopeInputs reads targets and replace: addresses, one a line or
// separated by commas.
func scopeInputs(gha *githubactions.Action) (operations.Scope, error) {
	var sc operations.Scope
	for _, in := range []struct {
		name string
		into *[]spec.Address
	}{{"targets", &sc.Targets}, {"replace", &sc.Replace}} {
		for _, f := range strings.FieldsFunc(input(gha, in.name), func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
			if strings.TrimSpace(f) == "" {
				continue // a trailing comma or a blank line
			}
			a, err := spec.ParseAddress(strings.TrimSpace(f))
			if err != nil {
				return sc, fmt.Errorf("input %s: %w", in.name, err)
			}
			*in.into = append(*in.into, a)
		}
	}
	return sc, nil
}

func boolInput(gha *githubactions.Action, name string, def bool) (bool, error) {
	v := input(gha, name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("input %s is %q; want true or false", name, v)
	}
	return b, nil
}

// action is one run of the action.
type action struct {
	e      env
	gha    *githubactions.Action
	gctx   *githubactions.GitHubContext
	in     inputs
	runner runner
	api    *repoAPI
	log    io.Writer
	// seen maps each fleet name synthesized to its input.
	seen map[string]string
	// request, when set, is the /infra apply this run applies for, from
	// the pull request before its merge (command: pr-apply).
	request *prRequest
}

// run runs the action and returns the process's exit code. Every failure
// becomes an error annotation and exit code 1.
func run(ctx context.Context, e env) int {
	// The log and the workflow commands (annotations) quote documents and
	// clouds: escaped, so that nothing in them acts on a log viewer.
	stdout := cli.PrintableWriter(e.stdout)
	gha := githubactions.New(githubactions.WithWriter(stdout), githubactions.WithGetenv(e.getenv))
	if e.checkout == nil {
		e.checkout = func(ctx context.Context) (string, error) { return gitHead(ctx, "") }
	}
	if e.setenv == nil {
		e.setenv = os.Setenv
	}
	a := &action{e: e, gha: gha, log: stdout, seen: map[string]string{}}
	if err := a.main(ctx); err != nil {
		// Through the library, so the message is escaped as a workflow
		// command needs; it becomes an error annotation.
		gha.Errorf("%s", err.Error())
		return 1
	}
	return 0
}

func (a *action) main(ctx context.Context) error {
	var err error
	if a.in, err = readInputs(a.gha); err != nil {
		return err
	}
	if a.in.token != "" {
		// GitHub masks the secrets it passes, but a token handed over
		// another way would not be.
		a.gha.AddMask(a.in.token)
	}
	if a.gctx, err = a.gha.Context(); err != nil {
		return fmt.Errorf("read the GitHub context: %w", err)
	}
	if err := a.gcpWorkloadIdentity(); err != nil {
		return err
	}
	if a.in.executor == "" {
		a.runner = newLocal(a.e.clouds, a.in.state, a.in.lockTimeout, a.log)
	} else {
		inv, err := a.e.invoker(ctx)
		if err != nil {
			return fmt.Errorf("reach the executor %s: %w", a.in.executor, err)
		}
		runID := fmt.Sprintf("github:%s/runs/%d/attempts/%d", a.gctx.Repository, a.gctx.RunID, a.gctx.RunAttempt)
		a.runner = remote{inv: inv, function: a.in.executor, runID: runID, lockTimeout: a.in.lockTimeout, log: a.log}
	}
	switch a.in.command {
	case "plan":
		return a.plan(ctx)
	case "apply":
		return a.apply(ctx)
	case "pr-apply":
		return a.prApply(ctx)
	case "discover":
		return a.discover(ctx)
	default:
		return a.sweep(ctx)
	}
}

// github returns the API client, made on first use so that a run that
// comments nowhere needs no token.
func (a *action) github() (*repoAPI, error) {
	if a.api != nil {
		return a.api, nil
	}
	if a.in.token == "" {
		return nil, errors.New("input github-token is empty; the default is the workflow's token (permissions: pull-requests: write)")
	}
	owner, repo := a.gctx.Repo()
	if owner == "" || repo == "" {
		return nil, errors.New("GITHUB_REPOSITORY is not set; the action runs inside a GitHub workflow")
	}
	api, err := newRepoAPI(a.e.http, a.gctx.APIURL, a.in.token, owner, repo)
	if err != nil {
		return nil, err
	}
	a.api = api
	return api, nil
}

// synth synthesizes one fleet input. Two inputs may not name the same
// fleet: they would share a comment and a state.
func (a *action) synth(ctx context.Context, input string) (*fleetDoc, error) {
	f, err := synth(ctx, a.e.clouds, input)
	if err != nil {
		return nil, err
	}
	if prev, ok := a.seen[f.Name]; ok {
		return nil, fmt.Errorf("fleets %s and %s are both named %s; a fleet's name is its identity (its comment, its state, its ownership tag)",
			orDefault(prev), orDefault(input), f.Name)
	}
	a.seen[f.Name] = input
	return f, nil
}

// runURL is where this run's job summary is.
func (a *action) runURL() string {
	if a.gctx.RunID == 0 || a.gctx.Repository == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%d", strings.TrimSuffix(a.gctx.ServerURL, "/"), a.gctx.Repository, a.gctx.RunID)
}

// elsewhere names the job summary for the notes of what a comment cut.
func (a *action) elsewhere() string {
	if u := a.runURL(); u != "" {
		return "the [job summary](" + u + ")"
	}
	return "the job summary"
}

// setOutput and summary write GitHub's files. go-githubactions panics when
// a file cannot be written; outside a workflow (no file named) the value
// goes to the log instead.
func (a *action) setOutput(k, v string) error {
	v = spec.PrintableText(v) // the summary quotes fleet names
	if a.e.getenv("GITHUB_OUTPUT") == "" {
		fmt.Fprintf(a.log, "output %s=%s\n", k, v)
		return nil
	}
	return guard(func() { a.gha.SetOutput(k, v) })
}

// summaryLimit is what the action writes to the job summary, under the
// 1 MiB GitHub accepts per step.
const summaryLimit = 900_000

func (a *action) summary(markdown string) error {
	if a.e.getenv("GITHUB_STEP_SUMMARY") == "" {
		return nil
	}
	return guard(func() { a.gha.AddStepSummary(markdown) })
}

func guard(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write a GitHub file: %v", r)
		}
	}()
	f()
	return nil
}

// annotate turns diagnostics into annotations, on the document's line
// when the fleet is a .json document.
func (a *action) annotate(f *fleetDoc, ds []spec.Diagnostic) {
	var lines []string
	if f.Source != "" {
		if b, err := os.ReadFile(f.Source); err == nil {
			lines = strings.Split(string(b), "\n")
		}
	}
	for _, d := range ds {
		fields := map[string]string{"title": "infra: " + d.Subject}
		if f.Source != "" {
			fields["file"] = a.repoPath(f.Source)
			if n := lineOf(lines, d.Subject); n > 0 {
				fields["line"] = strconv.Itoa(n)
			}
		}
		msg := d.Message
		if d.Resolution != "" {
			msg += " (" + d.Resolution + ")"
		}
		msg += " [" + string(d.ID) + "]"
		g := a.gha.WithFieldsMap(fields)
		if d.Severity == spec.Error {
			g.Errorf("%s: %s", d.Where(), msg)
		} else {
			g.Warningf("%s: %s", d.Where(), msg)
		}
	}
}

// repoPath is path as GitHub wants it in an annotation: relative to the
// repository's root (GITHUB_WORKSPACE), whatever working-directory was.
func (a *action) repoPath(path string) string {
	ws := a.e.getenv("GITHUB_WORKSPACE")
	abs, err := filepath.Abs(path)
	if ws == "" || err != nil {
		return path
	}
	rel, err := filepath.Rel(ws, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return filepath.ToSlash(rel)
}

// lineOf finds the line of a document that an address or a document path
// ("placement.aws") is about: the first line naming it in quotes.
func lineOf(lines []string, where string) int {
	needle := where
	if !strings.Contains(where, "/") {
		needle, _, _ = strings.Cut(where, ".")
	}
	needle = strconv.Quote(needle)
	for i, l := range lines {
		if strings.Contains(l, needle) {
			return i + 1
		}
	}
	return 0
}

// eventValue reads the value at a path of the event payload; nil when
// there is none.
func (a *action) eventValue(path ...string) any {
	var v any = a.gctx.Event
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// eventString reads a string at a path of the event payload.
func (a *action) eventString(path ...string) string {
	switch x := a.eventValue(path...).(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// gitHead is the commit checked out in dir (the working directory when
// empty): git rev-parse --verify HEAD.
func gitHead(ctx context.Context, dir string) (string, error) {
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "HEAD")
	cmd.Dir, cmd.Stderr = dir, &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git rev-parse --verify HEAD: %s", firstLine(msg))
		}
		return "", fmt.Errorf("git rev-parse --verify HEAD: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func renderText(p *operations.Plan) string {
	var b strings.Builder
	_ = render.Text(&b, p, render.TextOptions{})
	return b.String()
}

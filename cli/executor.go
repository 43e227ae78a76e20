package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// newExecutor groups the verbs about the executor Lambda (docs/executor.md).
func newExecutor(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "executor",
		Short: "Deploy the executor Lambda, or send it a fleet to plan or apply",
		Long: `The executor is infra running as a Lambda function with the state in S3, so
CI needs only the right to invoke it. See docs/executor.md.`,
	}
	c.AddCommand(newExecutorInvoke(g), newExecutorDeploy(g))
	for _, sub := range c.Commands() {
		sub.Args = wrapArgs(sub.Args)
	}
	return c
}

// defaultFunction is the executor's name unless --function or
// INFRA_EXECUTOR_FUNCTION says otherwise.
const defaultFunction = "infra-executor"

func (g *globals) executorFunction(flag string) string {
	if flag != "" {
		return flag
	}
	if v := g.f.Getenv("INFRA_EXECUTOR_FUNCTION"); v != "" {
		return v
	}
	return defaultFunction
}

type invokeOptions struct {
	function       string
	operation      string
	expectPlanID   string
	planFile       string
	runID          string
	unreviewed     bool
	force          bool
	write          bool
	json           bool
	maxInvocations int
	prefix         string
	olderThan      string
	regions        []string
	yes            bool
	selectExport   string
	scope          scopeFlags
	kinds          []string
	namePrefix     string
	out            string
	format         string
}

func newExecutorInvoke(g *globals) *cobra.Command {
	opts := &invokeOptions{}
	c := &cobra.Command{
		Use:   "invoke",
		Short: "Send the fleet to the executor and print its answer, invoking again while it is incomplete",
		Example: `  infra executor invoke --operation plan
  infra plan --out plan.json && infra executor invoke --operation apply --plan plan.json`,
		RunE: func(c *cobra.Command, args []string) error { return runInvoke(c.Context(), g, opts) },
	}
	f := c.Flags()
	f.StringVar(&opts.function, "function", "", "the executor function's name or ARN (default $INFRA_EXECUTOR_FUNCTION, else infra-executor)")
	f.StringVar(&opts.operation, "operation", "plan", "plan, apply, destroy, discover, sweep, output, drift or import")
	f.StringVar(&opts.expectPlanID, "expect-plan-id", "", "apply or destroy only if the fresh plan has this id (sha256:…)")
	f.StringVar(&opts.planFile, "plan", "", "read the expected plan id from a saved plan (plan --out FILE)")
	f.StringVar(&opts.runID, "run-id", "", "the run's id, the same for every invocation (default $GITHUB_RUN_ID, else random)")
	f.BoolVar(&opts.unreviewed, "unreviewed", false, "apply or destroy whatever the fresh plan is, without an expected id")
	f.BoolVar(&opts.force, "force", false, "override the brake that refuses to destroy most of the fleet")
	f.BoolVar(&opts.write, "write", false, "discover: save the rebuilt ledger")
	f.BoolVar(&opts.json, "json", false, "print each response as one line of JSON")
	f.IntVar(&opts.maxInvocations, "max-invocations", 100, "give up when still incomplete after this many invocations")
	f.StringVar(&opts.prefix, "prefix", "", "sweep, import: what a name starts with")
	f.StringVar(&opts.namePrefix, "name-prefix", "", "import: what a name starts with, as infra import --name-prefix (the same as --prefix)")
	f.StringVar(&opts.olderThan, "older-than", "", "sweep: only resources older than this")
	f.StringSliceVar(&opts.regions, "region", nil, "sweep, import: a region to list (repeatable)")
	f.BoolVar(&opts.yes, "yes", false, "sweep: delete, not only list")
	f.StringVar(&opts.selectExport, "select", "", "output: one capability (eu) or one export (eu.endpoint)")
	opts.scope.add(f)
	f.StringArrayVar(&opts.kinds, "kind", nil, "import: only this kind (repeatable), such as queues or object-store")
	f.StringVar(&opts.out, "out", "", "import: write the declarations, as infra import --out does")
	f.StringVar(&opts.format, "format", "", "import: go or document, as infra import --format")
	return c
}

func runInvoke(ctx context.Context, g *globals, opts *invokeOptions) error {
	req, doc, err := g.invokeRequest(ctx, opts)
	if err != nil {
		return err
	}
	format := ""
	if req.Operation == executor.OpImport {
		// Before the invocation: a bad --format is known now.
		if format, err = g.importFormat(opts.format); err != nil {
			return err
		}
	}
	fn := g.executorFunction(opts.function)
	inv, err := operations.NewLambdaInvoker(ctx, g.f.CallLog())
	if err != nil {
		return err
	}
	io := g.io()
	client := executor.Client{Invoker: inv, Function: fn, Newer: func(v int) {
		fmt.Fprintf(io.ErrOut, "warning: %s speaks executor protocol %d, this infra %d: update infra\n", fn, v, executor.ProtocolVersion)
	}}
	var rows []operations.Applied
	var last *executor.Response
	for i := 1; ; i++ {
		t0 := time.Now()
		resp, err := client.Do(ctx, req)
		if err != nil {
			return err
		}
		if err := g.printInvocation(req.Operation, i, resp, opts.json); err != nil {
			return err
		}
		fmt.Fprintf(io.ErrOut, "%s: invocation %d: %s (%s): %s\n", fn, i, resp.Status, time.Since(t0).Round(time.Millisecond), resp.Message)
		for _, a := range resp.Applied {
			if a.Status != operations.StatusNotStarted || resp.Status != executor.StatusIncomplete {
				rows = append(rows, a)
			}
		}
		last = resp
		if resp.Status != executor.StatusIncomplete {
			break
		}
		if i >= opts.maxInvocations {
			return exitError{code: ExitError, err: fmt.Errorf("%s is still incomplete after %d invocations; invoke it again with --run-id %s to resume", fn, i, req.RunID)}
		}
	}
	if !opts.json {
		if err := printInvokeResult(g, req.Operation, *last, rows); err != nil {
			return err
		}
	}
	if last.Import != nil {
		if err := importResult(g, format, opts, doc, last.Import); err != nil {
			return err
		}
	}
	switch last.Status {
	case executor.StatusDone:
		return nil
	case executor.StatusRefused:
		return exitError{code: ExitError, err: fmt.Errorf("%s refused: %s", fn, last.Message)}
	default:
		return exitError{code: ExitError, err: fmt.Errorf("%s: %s", fn, last.Message)}
	}
}

// invokeRequest is the request the flags describe, with the fleet document
// (but for sweep; returned decoded too) and a run id.
func (g *globals) invokeRequest(ctx context.Context, opts *invokeOptions) (executor.Request, *spec.Document, error) {
	op := executor.Operation(opts.operation)
	if !slices.Contains(executor.Operations, op) {
		return executor.Request{}, nil, usageError{fmt.Errorf("--operation %q: want %s", spec.PrintableText(opts.operation), opsList())}
	}
	prefix, err := invokePrefix(op, opts)
	if err != nil {
		return executor.Request{}, nil, err
	}
	req := executor.Request{Operation: op, ExpectPlanID: opts.expectPlanID, RunID: opts.runID,
		Options: executor.Options{Force: opts.force, Unreviewed: opts.unreviewed, Write: opts.write,
			Prefix: prefix, OlderThan: opts.olderThan, Regions: opts.regions, Yes: opts.yes, Select: opts.selectExport,
			Kinds: opts.kinds}}
	if g.lockTimeout > 0 {
		// The executor waits, within what is left of its invocation.
		req.Options.LockTimeout = g.lockTimeout.String()
	}
	if err := invokeScope(&req, opts); err != nil {
		return req, nil, err
	}
	if req.RunID == "" {
		req.RunID = g.f.Getenv("GITHUB_RUN_ID")
	}
	if req.RunID == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		req.RunID = "cli-" + hex.EncodeToString(b)
	}
	if op == executor.OpSweep {
		return req, nil, nil
	}
	doc, err := g.loadDocument(ctx)
	if err != nil {
		return req, nil, err
	}
	if req.Document, err = json.Marshal(doc); err != nil {
		return req, nil, fmt.Errorf("encode the fleet document: %w", err)
	}
	return req, doc, nil
}

// opsList is the operations, for an error: "plan, apply, … or import".
func opsList() string {
	names := make([]string, len(executor.Operations))
	for i, o := range executor.Operations {
		names[i] = string(o)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// invokePrefix is the name prefix, from --prefix or --name-prefix (infra
// import's word for it); the import flags fit import alone.
func invokePrefix(op executor.Operation, opts *invokeOptions) (string, error) {
	if op != executor.OpImport && (len(opts.kinds) > 0 || opts.namePrefix != "" || opts.out != "" || opts.format != "") {
		return "", usageError{fmt.Errorf("--kind, --name-prefix, --out and --format are for --operation import, not %s", op)}
	}
	if opts.prefix != "" && opts.namePrefix != "" && opts.prefix != opts.namePrefix {
		return "", usageError{fmt.Errorf("--prefix %s and --name-prefix %s both give the name prefix; pass one", spec.PrintableText(opts.prefix), spec.PrintableText(opts.namePrefix))}
	}
	if _, err := parseKinds(opts.kinds); err != nil {
		return "", usageError{err}
	}
	if opts.prefix != "" {
		return opts.prefix, nil
	}
	return opts.namePrefix, nil
}

// invokeScope sets the reviewed plan's id and the targets and forced
// replaces: from --plan's file when given, whose scope the fresh plan must
// have for its id to match, else from --target and --replace.
func invokeScope(req *executor.Request, opts *invokeOptions) error {
	sc, err := opts.scope.scope()
	if err != nil {
		return err
	}
	if opts.scope.given() && req.Operation != executor.OpPlan && req.Operation != executor.OpApply {
		return usageError{fmt.Errorf("--target and --replace narrow a plan or an apply, not %s", req.Operation)}
	}
	if opts.planFile != "" {
		if opts.expectPlanID != "" {
			return usageError{fmt.Errorf("--plan and --expect-plan-id both name the plan; pass one")}
		}
		data, err := os.ReadFile(opts.planFile)
		if err != nil {
			return fmt.Errorf("--plan: %w", err)
		}
		p, err := operations.DecodePlan(data)
		if err != nil {
			return fmt.Errorf("--plan %s: %w", opts.planFile, err)
		}
		req.ExpectPlanID = p.ID
		if sc, err = reviewedScope(opts.planFile, sc, p); err != nil {
			return err
		}
	}
	req.Targets, req.Replace = sc.Targets, sc.Replace
	return nil
}

// printInvocation prints one answer: as a JSON line, or, for the first
// answer of an apply, the plan being applied, once, before the progress.
func (g *globals) printInvocation(op executor.Operation, i int, resp *executor.Response, asJSON bool) error {
	io := g.io()
	if asJSON {
		line, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		fmt.Fprintln(io.Out, string(line))
		return nil
	}
	if i == 1 && resp.Plan != nil && (op == executor.OpApply || op == executor.OpDestroy) && resp.Status != executor.StatusRefused {
		return render.Text(io.Out, resp.Plan, render.TextOptions{Color: io.ColorEnabled()})
	}
	return nil
}

// importResult prints what the executor's import found as infra import
// does (but with --json, whose line is printed), and writes the
// declarations with --out as it does: Go holds only what refers to what it
// declares too.
func importResult(g *globals, format string, opts *invokeOptions, doc *spec.Document, res *operations.ImportResult) error {
	if format == "go" {
		goExpressible(res)
	}
	if !opts.json {
		renderImport(g, res)
	}
	return writeImport(g, format, opts.out, doc, res.Declarations, opts.json)
}

// printInvokeResult renders the final answer as the local verbs would.
func printInvokeResult(g *globals, op executor.Operation, resp executor.Response, rows []operations.Applied) error {
	io := g.io()
	io.errDiagnostics(resp.Diagnostics)
	switch {
	case resp.Plan != nil && (op == executor.OpPlan || resp.Status == executor.StatusRefused):
		if resp.Status == executor.StatusRefused {
			fmt.Fprintln(io.Out, "The fresh plan:")
		}
		return render.Text(io.Out, resp.Plan, render.TextOptions{Color: io.ColorEnabled()})
	case op == executor.OpApply || op == executor.OpDestroy:
		for _, a := range rows {
			if a.Status == operations.StatusFailed {
				fmt.Fprintf(io.ErrOut, "%s %s ... failed: %s\n", a.Action, a.Address, a.Error)
			}
		}
		if len(rows) > 0 {
			fmt.Fprintln(io.Out, render.AppliedLine(rows))
		}
	case resp.Discovery != nil:
		renderDiscovery(g, resp.Discovery, len(resp.Discovery.Ledger.Rows)-len(resp.Discovery.Added)+len(resp.Discovery.Removed), resp.Saved)
	case resp.Output != nil:
		return render.OutputText(io.Out, resp.Output.Fleet, resp.Output.Where, resp.Output.Capabilities)
	case resp.Drift != nil:
		return render.DriftText(io.Out, resp.Drift)
	case op == executor.OpOutput:
		fmt.Fprintln(io.Out, spec.Printable(resp.Message))
	}
	return nil
}

type deployOptions struct {
	function          string
	pkg               string
	credentialsSecret string
	arch              string
	timeout           int32
	memory            int32
	kinds             []string
	fleets            []string
	sweepPrefix       string
	testAccount       string
	operations        []string
	githubRepo        string
	githubSubject     string
	logLevel          string
	json              bool
}

func newExecutorDeploy(g *globals) *cobra.Command {
	opts := &deployOptions{}
	c := &cobra.Command{
		Use:   "deploy",
		Short: "Create or update the executor: its state bucket, its role and the function",
		Long: `deploy creates or updates, in the account and region of the AWS credentials:
the state bucket (versioned, private), the execution role (the state prefix, its
logs, the credentials secret, and the actions of the kinds it manages, each
allowed only on what carries the ownership tag of a fleet of --fleets: it cannot
make an untagged resource, nor change or delete one no fleet owns), the function from the built package, and with --github-repo the role
GitHub Actions assumes, which may only invoke the function. Running it again
changes only what differs.`,
		Example: `  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -o bootstrap ./cmd/infra-executor
  infra executor deploy --state s3://acme-infra-state/fleets --package bootstrap --github-repo acme/shop`,
		RunE: func(c *cobra.Command, args []string) error { return runDeploy(c.Context(), g, opts) },
	}
	f := c.Flags()
	f.StringVar(&opts.function, "function", "", "the function's name (default $INFRA_EXECUTOR_FUNCTION, else infra-executor)")
	f.StringVar(&opts.pkg, "package", "bootstrap", "the deployment package: a .zip holding bootstrap, or the bootstrap binary itself")
	f.StringVar(&opts.credentialsSecret, "credentials-secret", "", "the Secrets Manager secret with the Scaleway credentials and fromEnv values")
	f.StringVar(&opts.arch, "arch", "arm64", "the architecture bootstrap was built for: arm64 or x86_64")
	f.Int32Var(&opts.timeout, "timeout", 900, "the function's timeout in seconds")
	f.Int32Var(&opts.memory, "memory", 1024, "the function's memory in MB")
	f.StringSliceVar(&opts.kinds, "kinds", nil, "the kinds the executor may manage (default every AWS kind)")
	f.StringVar(&opts.sweepPrefix, "sweep-prefix", "", "deploy a sweeper instead: it serves only sweep, and its role deletes only what is named with this prefix, even untagged (test accounts only)")
	f.StringVar(&opts.testAccount, "test-account", "", "with --sweep-prefix: the account id of the credentials, saying it holds nothing but tests")
	f.StringSliceVar(&opts.fleets, "fleets", nil, "the fleets the executor may act for: it may change only resources tagged for one of them (default any resource infra owns)")
	f.StringSliceVar(&opts.operations, "operations", nil, "serve only these operations (plan,discover for a function pull requests may invoke)")
	f.StringVar(&opts.githubRepo, "github-repo", "", "also deploy the invoker role for this repository's workflows (owner/name)")
	f.StringVar(&opts.githubSubject, "github-subject", "ref:refs/heads/main", "the OIDC token subject after repo:owner/name: (ref:refs/heads/main, environment:production, pull_request)")
	f.StringVar(&opts.logLevel, "function-log-level", "", "the function's INFRA_LOG: debug writes a line per API call to its log, trace also each request and response with secrets masked (default off)")
	f.BoolVar(&opts.json, "json", false, "print what was deployed as JSON")
	return c
}

func runDeploy(ctx context.Context, g *globals, opts *deployOptions) error {
	if !strings.HasPrefix(g.state, "s3://") {
		return usageError{fmt.Errorf("deploy keeps the executor's state in S3: pass --state s3://bucket/prefix")}
	}
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(g.state, "s3://"), "/")
	if bucket == "" {
		return usageError{fmt.Errorf("--state %s: want s3://bucket/prefix", g.state)}
	}
	if opts.arch != "arm64" && opts.arch != "x86_64" {
		return usageError{fmt.Errorf("--arch %q: want arm64 or x86_64", opts.arch)}
	}
	// Not named --log-level: that global flag is this command's own call
	// log, and would be shadowed.
	level, ok := operations.LogLevel(opts.logLevel)
	if !ok {
		return usageError{fmt.Errorf("--function-log-level %q: want off, debug or trace", spec.Printable(opts.logLevel))}
	}
	pkg, err := deploymentPackage(opts.pkg)
	if err != nil {
		return err
	}
	s := operations.ExecutorSpec{Function: g.executorFunction(opts.function), Bucket: bucket, Prefix: prefix, Zip: pkg,
		Architecture: opts.arch, TimeoutSec: opts.timeout, MemoryMB: opts.memory, CredentialsSecret: opts.credentialsSecret,
		GitHubRepo: opts.githubRepo, GitHubSubject: opts.githubSubject}
	for _, k := range opts.kinds {
		s.Kinds = append(s.Kinds, spec.Kind(strings.TrimSpace(k)))
	}
	for _, name := range opts.fleets {
		name = strings.TrimSpace(name)
		if !spec.ValidFleetName(name) {
			return usageError{fmt.Errorf("--fleets: %q is not a fleet name (1-63 characters of a-z, 0-9, '-' and '_', starting with a letter)", spec.Printable(name))}
		}
		s.Fleets = append(s.Fleets, name)
	}
	s.Env = map[string]string{}
	if len(opts.operations) > 0 {
		s.Env[executor.EnvOperations] = strings.Join(opts.operations, ",")
	}
	if opts.sweepPrefix != "" {
		if err := sweepDeploy(&s, opts); err != nil {
			return err
		}
	}
	if level != "" {
		s.Env[executor.EnvLog] = level
	}
	out, err := operations.DeployExecutor(ctx, s, g.f.CallLog())
	if err != nil {
		return err
	}
	io := g.io()
	if opts.json {
		return render.JSON(io.Out, out)
	}
	for _, c := range out.Changes {
		fmt.Fprintf(io.Out, "  %s\n", c)
	}
	if len(out.Changes) == 0 {
		fmt.Fprintln(io.Out, "  nothing to change")
	}
	fmt.Fprintf(io.Out, "Executor %s in %s: state %s\n  function %s\n  role     %s\n", s.Function, out.Region, out.State, out.FunctionARN, out.RoleARN)
	if out.InvokerRoleARN != "" {
		fmt.Fprintf(io.Out, "  invoker  %s (role-to-assume for aws-actions/configure-aws-credentials)\n", out.InvokerRoleARN)
	}
	return nil
}

// sweepDeploy makes s a sweeper's: the sweep alone, for the prefix alone.
func sweepDeploy(s *operations.ExecutorSpec, opts *deployOptions) error {
	if err := operations.CheckSweepPrefix(opts.sweepPrefix); err != nil {
		return usageError{fmt.Errorf("--sweep-prefix: %w", err)}
	}
	if len(opts.operations) > 0 && strings.Join(opts.operations, ",") != string(executor.OpSweep) {
		return usageError{fmt.Errorf("--sweep-prefix deploys a function that serves only sweep; leave out --operations")}
	}
	if len(opts.fleets) > 0 {
		return usageError{fmt.Errorf("--sweep-prefix deploys a sweeper, whose role is by name, not by fleet; leave out --fleets")}
	}
	s.SweepPrefix, s.TestAccount = opts.sweepPrefix, opts.testAccount
	s.Env[executor.EnvOperations] = string(executor.OpSweep)
	s.Env[executor.EnvSweepPrefix] = opts.sweepPrefix
	return nil
}

// deploymentPackage reads a zip, or zips a bootstrap binary (executable,
// named bootstrap, as provided.al2023 wants it).
func deploymentPackage(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--package: %w (build it: CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -o bootstrap ./cmd/infra-executor)", err)
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return data, nil
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	hdr := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate}
	hdr.SetMode(0o755)
	// A fixed time, so the same binary always zips to the same bytes and a
	// second deploy of it changes nothing.
	hdr.Modified = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	fw, err := w.CreateHeader(hdr)
	if err != nil {
		return nil, fmt.Errorf("--package: zip %s: %w", path, err)
	}
	if _, err := fw.Write(data); err != nil {
		return nil, fmt.Errorf("--package: zip %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("--package: zip %s: %w", path, err)
	}
	return buf.Bytes(), nil
}

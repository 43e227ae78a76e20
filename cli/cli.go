// Package cli is the infra command line: one file per verb, each an options
// struct, its flags and a run function that calls the engine and renders.
// It lives outside cmd/infra so that a fleet program (fleet.Main) can offer
// every verb too; Go cannot import a main package.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// Exit codes, documented in docs/cli.md.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitChanges = 2 // plan --detailed-exitcode: changes present
	ExitUsage   = 64
)

// Main runs the infra command with os.Args and returns the exit code.
func Main() int { return Run(os.Args[1:], nil) }

// Run runs one command line with the real factory. When doc is not nil it
// is the fleet document (a fleet program passes the one it built) and
// --fleet is not consulted.
func Run(args []string, doc *spec.Document) int {
	return RunWith(DefaultFactory(), args, doc)
}

// RunWith runs one command line with the given factory.
func RunWith(f *Factory, args []string, doc *spec.Document) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globals{f: f, doc: doc, state: defaultState, parallelism: defaultParallelism}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var code exitError
	if errors.As(err, &code) {
		if code.err != nil {
			g.printError(code.err)
		}
		return code.code
	}
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(f.IO.ErrOut, "usage: %v\nRun 'infra --help' for usage.\n", usage.err)
		return ExitUsage
	}
	g.printError(err)
	return ExitError
}

// globals are the flags verbs share (withFlags says which verb takes
// which) and what a run keeps across them.
type globals struct {
	f       *Factory
	doc     *spec.Document
	fleet   string
	state   string
	noColor bool
	// parallelism bounds concurrent cloud calls and actions.
	parallelism int
	// lockTimeout is how long a writing verb waits for the fleet's lock.
	lockTimeout time.Duration
	// logLevel is --log-level; INFRA_LOG when empty.
	logLevel string
	// shown is the progress printer of the run, once a verb made one.
	shown *progress
}

// progress returns the run's progress printer, made once.
func (g *globals) progress(s *IOStreams) *progress {
	if g.shown == nil {
		g.shown = newProgress(s)
	}
	return g.shown
}

func (g *globals) io() *IOStreams {
	s := g.f.IO
	if g.noColor || g.f.Getenv("NO_COLOR") != "" {
		s.NoColor = true
	}
	return s
}

// printError writes the error to stderr, escaped, coloured only when
// stderr itself is a terminal.
func (g *globals) printError(err error) { g.io().errLine(ansiRed, "error: "+err.Error()) }

// exitError ends a command with a code; err, when set, is printed.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit %d", e.code)
}

// usageError is a command line that does not parse.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "infra",
		Short: "Typed, CI-native infrastructure as code for AWS and Scaleway",
		Long: `infra plans and applies fleets of cloud resources declared in Go or in an
infra/v1 JSON document. See docs/cli.md.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Only --no-color is every verb's: any verb may print an error, in
	// colour. The others are given to the verbs they mean something to
	// (withFlags), so that each verb's help lists what applies to it.
	root.PersistentFlags().BoolVar(&g.noColor, "no-color", false, "never colour the output")
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		g.f.Lines = g.progress(g.io())
		if c.Flags().Lookup("log-level") == nil {
			// A verb that calls no cloud has no call log: INFRA_LOG is
			// not its business.
			return nil
		}
		v := g.logLevel
		if v == "" {
			v = g.f.Getenv("INFRA_LOG")
		}
		level, ok := operations.LogLevel(v)
		if !ok {
			return usageError{fmt.Errorf("log level %q: want off, debug or trace (--log-level, INFRA_LOG)", spec.Printable(v))}
		}
		g.f.LogLevel = level
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		g.withFlags(newCheck(g), fleetFlag),
		g.withFlags(newSynth(g), fleetFlag),
		g.withFlags(newPlan(g), observing),
		g.withFlags(newApply(g, false), writing),
		g.withFlags(newApply(g, true), writing),
		g.withFlags(newRefresh(g), writing),
		g.withFlags(newDiscover(g), writing),
		g.withFlags(newUnlock(g), reading),
		g.withFlags(newOutput(g), reading),
		g.withFlags(newDrift(g), observing),
		g.withFlags(newImport(g), observing),
		g.withFlags(newGraph(g), reading),
		g.withFlags(newSweep(g), fleetFlag|logLevelFlag),
		newInit(g),
		newVersion(g),
	)
	ex := newExecutor(g)
	for _, sub := range ex.Commands() {
		switch sub.Name() {
		case "invoke":
			// The executor keeps its own state; the wait is sent to it.
			g.withFlags(sub, fleetFlag|lockTimeoutFlag|logLevelFlag)
		case "deploy":
			g.withFlags(sub, stateFlag|logLevelFlag)
		}
	}
	root.AddCommand(ex)
	// --version prints what the version verb prints, from the same build
	// info.
	root.Version = currentVersion().String()
	root.SetVersionTemplate("{{.Version}}\n")
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	g.completions(root)
	return root
}

// sharedFlags names flags several verbs take, each bound to globals.
type sharedFlags int

const (
	fleetFlag sharedFlags = 1 << iota
	stateFlag
	parallelismFlag
	lockTimeoutFlag
	logLevelFlag
)

// The sets of shared flags, by what a verb does: reads the document and
// the state; also observes the clouds; also takes the fleet's lock.
const (
	reading   = fleetFlag | stateFlag
	observing = reading | parallelismFlag | logLevelFlag
	writing   = observing | lockTimeoutFlag
)

// Their defaults, which hold for a verb that does not take the flag too.
const (
	defaultState       = ".infra"
	defaultParallelism = 8
)

// withFlags adds the shared flags in set to c, and returns c.
func (g *globals) withFlags(c *cobra.Command, set sharedFlags) *cobra.Command {
	f := c.Flags()
	if set&fleetFlag != 0 {
		f.StringVar(&g.fleet, "fleet", "", "fleet program directory or .json document (default ./infra if it exists, else fleet.json)")
	}
	if set&stateFlag != 0 {
		f.StringVar(&g.state, "state", defaultState, "state location: a directory, or s3://bucket/prefix (locked, for teams and the executor)")
	}
	if set&parallelismFlag != 0 {
		f.IntVar(&g.parallelism, "parallelism", defaultParallelism, "how many cloud calls and actions run at once (per service at most 5)")
	}
	if set&lockTimeoutFlag != 0 {
		f.DurationVar(&g.lockTimeout, "lock-timeout", 0, "how long to wait for the fleet's lock while another run holds it (such as 5m), saying who holds it every 15s; 0 refuses at once")
	}
	if set&logLevelFlag != 0 {
		f.StringVar(&g.logLevel, "log-level", "", "debug writes a line per API call to stderr, trace also each request and response with secrets masked (default INFRA_LOG, else off)")
	}
	return c
}

// wrapArgs makes an argument-count mistake a usage error.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		check = cobra.NoArgs
	}
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

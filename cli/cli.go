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
	g := &globals{f: f, doc: doc}
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

// globals are the flags every verb shares.
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
	pf := root.PersistentFlags()
	pf.StringVar(&g.fleet, "fleet", "", "fleet program directory or .json document (default ./infra if it exists, else fleet.json)")
	pf.StringVar(&g.state, "state", ".infra", "state location: a directory, or s3://bucket/prefix (locked, for teams and the executor)")
	pf.BoolVar(&g.noColor, "no-color", false, "never colour the output")
	pf.IntVar(&g.parallelism, "parallelism", 8, "how many cloud calls and actions run at once (per service at most 5)")
	pf.DurationVar(&g.lockTimeout, "lock-timeout", 0, "how long apply, destroy, refresh and discover --write wait for a lock another run holds (such as 5m), saying who holds it every 15s; 0 refuses at once")
	pf.StringVar(&g.logLevel, "log-level", "", "debug writes a line per API call to stderr, trace also each request and response with secrets masked (default INFRA_LOG, else off)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		v := g.logLevel
		if v == "" {
			v = g.f.Getenv("INFRA_LOG")
		}
		level, ok := operations.LogLevel(v)
		if !ok {
			return usageError{fmt.Errorf("log level %q: want off, debug or trace (--log-level, INFRA_LOG)", spec.Printable(v))}
		}
		g.f.LogLevel = level
		g.f.Lines = g.progress(g.io())
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newCheck(g), newSynth(g), newPlan(g), newApply(g, false), newApply(g, true), newRefresh(g), newDiscover(g), newUnlock(g), newOutput(g), newDrift(g), newImport(g))
	root.AddCommand(newInit(g))
	root.AddCommand(newExecutor(g))
	root.AddCommand(newSweep(g))
	root.AddCommand(newVersion(g))
	root.AddCommand(newGraph(g))
	// --version prints what the version verb prints, from the same build
	// info.
	root.Version = currentVersion().String()
	root.SetVersionTemplate("{{.Version}}\n")
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return root
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

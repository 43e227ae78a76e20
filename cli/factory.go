package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/infra-iac/infra/operations"
)

// Factory builds what commands need, lazily: credentials and clients are
// made only by the verbs that reach a cloud, so --help, check and synth
// need none.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Backends builds a backend for each provider in ps. A provider it
	// cannot build goes into the second map with the reason.
	Backends operations.BackendsFunc
	// Store opens the state of one fleet at a location (--state): a
	// directory, or s3://bucket/prefix.
	Store func(ctx context.Context, location, fleet string) (operations.Store, error)
	// Synth runs a fleet program and returns the document it prints.
	Synth operations.SynthFunc
	// LogLevel is "", "debug" or "trace" (INFRA_LOG, --log-level): the
	// real backends then write a line per API call to stderr, and at
	// trace every request and response, secrets masked.
	LogLevel string
	// Lines, when set, is where the backends write their lines (the call
	// log, a driver's wait) instead of stderr: the run's progress printer,
	// which keeps them off its live counter.
	Lines io.Writer
}

// DefaultFactory is the factory of the real command.
func DefaultFactory() *Factory {
	f := &Factory{IO: System(), Getenv: os.Getenv, Store: operations.OpenState, Synth: operations.SynthProgram}
	f.Backends = operations.NewBackendsWith(f.CallLog)
	return f
}

// CallLog is what every client the command builds is told to log, by
// LogLevel: the backends, the executor's deploy and its invoker.
func (f *Factory) CallLog() operations.BackendOptions {
	w := f.Lines
	if w == nil {
		w = f.IO.ErrOut
	}
	return operations.CallLogOptions(w, f.LogLevel, func(line string) { fmt.Fprintln(w, line) })
}

package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// callLog writes the call log to stderr (docs/cli.md#logs), one line per
// API call, whole lines at a time: the calls run concurrently.
type callLog struct {
	mu sync.Mutex
	w  io.Writer
}

// call writes one call: key=value pairs a script can grep, every value
// printable, and an error's text with secrets masked.
func (l *callLog) call(c operations.Call) {
	line := fmt.Sprintf("call: provider=%s service=%s operation=%q region=%s", c.Provider, spec.Printable(c.Service), spec.Printable(c.Operation), spec.Printable(c.Region))
	if c.Address != "" {
		line += " address=" + spec.Printable(c.Address)
	}
	line += fmt.Sprintf(" status=%d duration=%dms retries=%d", c.Status, c.Duration.Milliseconds(), c.Retries)
	if c.Err != nil {
		line += fmt.Sprintf(" error=%q", spec.Printable(operations.MaskSecrets(c.Err.Error())))
	}
	l.write(line)
}

// trace writes a request or a response, already masked, a line of it at a
// time, each printable.
func (l *callLog) trace(s string) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimRight(s, "\r\n"), "\r\n", "\n"), "\n")
	for i := range lines {
		lines[i] = "trace: " + spec.Printable(lines[i])
	}
	l.write(lines...)
}

// write writes lines together, so that concurrent calls do not interleave.
func (l *callLog) write(lines ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range lines {
		fmt.Fprintln(l.w, line)
	}
}

// logLevel is the call log's level: the flag's, else INFRA_LOG's.
func logLevel(flag, env string) (string, error) {
	v := flag
	if v == "" {
		v = env
	}
	switch v {
	case "", "off":
		return "", nil
	case "debug", "trace":
		return v, nil
	}
	return "", fmt.Errorf("log level %q: want off, debug or trace (--log-level, INFRA_LOG)", spec.Printable(v))
}

// BackendOptions are the backends' options for a call log at level
// ("", "debug", "trace") written to w, and progress lines: what the
// command line uses, and the GitHub Action with INFRA_LOG.
func BackendOptions(w io.Writer, level string, progress func(string)) operations.BackendOptions {
	o := operations.BackendOptions{Progress: progress}
	log := &callLog{w: w}
	switch level {
	case "trace":
		o.Trace = log.trace
		o.Log = log.call
	case "debug":
		o.Log = log.call
	}
	return o
}

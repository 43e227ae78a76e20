package operations

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/infra-iac/infra/spec"
)

// callLog writes the call log (docs/cli.md#logs) to the command line's
// stderr or the executor's log, one line per API call, whole lines at a
// time: the calls run concurrently.
type callLog struct {
	mu sync.Mutex
	w  io.Writer
}

// call writes one call: key=value pairs a script can grep, every value
// printable, and an error's text with secrets masked.
func (l *callLog) call(c Call) {
	line := fmt.Sprintf("call: provider=%s service=%s operation=%q region=%s", c.Provider, spec.Printable(c.Service), spec.Printable(c.Operation), spec.Printable(c.Region))
	if c.Address != "" {
		line += " address=" + spec.Printable(c.Address)
	}
	line += fmt.Sprintf(" status=%d duration=%dms retries=%d", c.Status, c.Duration.Milliseconds(), c.Retries)
	if c.Err != nil {
		line += fmt.Sprintf(" error=%q", spec.Printable(MaskSecrets(c.Err.Error())))
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

// LogLevel reads a call log level (INFRA_LOG, --log-level): "" for off
// (or nothing), "debug" or "trace"; false for anything else.
func LogLevel(v string) (string, bool) {
	switch v {
	case "", "off":
		return "", true
	case "debug", "trace":
		return v, true
	}
	return "", false
}

// CallLogOptions are the backends' options for a call log at level
// ("", "debug", "trace") written to w, and progress lines: what the
// command line uses, the GitHub Action with INFRA_LOG, and the executor
// with its own INFRA_LOG.
func CallLogOptions(w io.Writer, level string, progress func(string)) BackendOptions {
	o := BackendOptions{Progress: progress}
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

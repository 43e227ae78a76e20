package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec/spectest"
)

func progressEvents(p *progress) {
	a, b, c := spectest.Address("aws/queues/a"), spectest.Address("aws/queues/b"), spectest.Address("aws/queues/c")
	for _, ev := range []operations.Event{
		{Kind: operations.EventBegin, Total: 3},
		{Kind: operations.EventStart, Address: a, Action: "create"},
		{Kind: operations.EventStart, Address: b, Action: "create"},
		{Kind: operations.EventDone, Address: a, Action: "create", Elapsed: 10 * time.Millisecond},
		{Kind: operations.EventFailed, Address: b, Action: "create"},
		{Kind: operations.EventStart, Address: c, Action: "create"},
		{Kind: operations.EventDone, Address: c, Action: "create", Elapsed: 10 * time.Millisecond},
	} {
		p.event(ev)
	}
	p.finish()
}

// On a terminal the last line is a live counter, taken away before each
// line and at the end; in a pipe there are only the lines.
func TestProgressCounterOnATerminalOnly(t *testing.T) {
	var tty bytes.Buffer
	s := Test(nil, &bytes.Buffer{}, &tty)
	s.errTTY = true
	p := newProgress(s)
	p.width = func() int { return 80 }
	progressEvents(p)
	out := tty.String()
	for _, want := range []string{"0/3 done, 1 running", "0/3 done, 2 running", "1/3 done, 1 running, eta ", "1/3 done, 1 failed, 0 running, eta ", "\r\x1b[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal got no %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "create aws/queues/c ... ok (10ms)\n") {
		t.Errorf("the counter is left behind at the end:\n%q", out)
	}

	var pipe bytes.Buffer
	p = newProgress(Test(nil, &bytes.Buffer{}, &pipe))
	progressEvents(p)
	if got := pipe.String(); strings.Contains(got, "\r") || strings.Contains(got, "done,") ||
		got != "create aws/queues/a ... ok (10ms)\ncreate aws/queues/b ... failed\ncreate aws/queues/c ... ok (10ms)\n" {
		t.Errorf("a pipe got:\n%q", got)
	}
}

// The counter never wraps: it is cut to the terminal's width.
func TestProgressCounterFitsTheWidth(t *testing.T) {
	var tty bytes.Buffer
	s := Test(nil, &bytes.Buffer{}, &tty)
	s.errTTY = true
	p := newProgress(s)
	p.width = func() int { return 10 }
	p.event(operations.Event{Kind: operations.EventBegin, Total: 400})
	if got := tty.String(); got != "0/400 don" {
		t.Errorf("a 10-column terminal got %q", got)
	}
}

// The sweep's deletes have the same counter.
func TestSweepProgressCounter(t *testing.T) {
	var tty bytes.Buffer
	s := Test(nil, &bytes.Buffer{}, &tty)
	s.errTTY = true
	p := newProgress(s)
	p.width = func() int { return 80 }
	show := sweepProgress(p)
	a := spectest.Address("aws/queues/ci-tests-a")
	show(operations.SweepEvent{Kind: operations.SweepBegin, Total: 2})
	show(operations.SweepEvent{Kind: operations.SweepStart, Address: a})
	show(operations.SweepEvent{Kind: operations.SweepDeleted, Address: a})
	if got := tty.String(); !strings.Contains(got, "0/2 done, 1 running") || !strings.Contains(got, "delete aws/queues/ci-tests-a ... ok") || !strings.HasSuffix(got, "1/2 done, 0 running, eta 0s") {
		t.Errorf("the terminal got %q", got)
	}
	p.finish()
	if !strings.HasSuffix(tty.String(), "\r\x1b[K") {
		t.Errorf("finish left the counter: %q", tty.String())
	}
}

// A line another writer hands over (the call log) is written with the
// counter taken away first; a skipped action settles; a delete refused for
// now and done later is counted once, and running never goes below what
// runs.
func TestProgressLinesSkipsAndRetries(t *testing.T) {
	var tty bytes.Buffer
	s := Test(nil, &bytes.Buffer{}, &tty)
	s.errTTY = true
	p := newProgress(s)
	p.width = func() int { return 80 }
	a, b, c := spectest.Address("aws/queues/a"), spectest.Address("aws/queues/b"), spectest.Address("aws/queues/c")
	p.event(operations.Event{Kind: operations.EventBegin, Total: 3})
	p.event(operations.Event{Kind: operations.EventStart, Address: a, Action: "delete"})
	p.event(operations.Event{Kind: operations.EventStart, Address: b, Action: "delete"})
	fmt.Fprintln(p, "call: provider=aws service=SQS")
	if got := tty.String(); !strings.Contains(got, "0/3 done, 2 running\r\x1b[Kcall: provider=aws service=SQS\n0/3 done, 2 running") {
		t.Errorf("a call-log line over the counter: %q", got)
	}
	p.event(operations.Event{Kind: operations.EventDeferred, Address: a, Action: "delete"})
	p.event(operations.Event{Kind: operations.EventDone, Address: a, Action: "delete"})
	p.event(operations.Event{Kind: operations.EventSkipped, Address: c, Action: "delete"})
	if got := tty.String(); !strings.HasSuffix(got, "1/3 done, 1 skipped, 1 running, eta 0s") {
		t.Errorf("after a retried delete and a skip: %q", got)
	}
	p.event(operations.Event{Kind: operations.EventFailed, Address: b, Action: "delete"})
	if got := tty.String(); !strings.HasSuffix(got, "delete aws/queues/b ... failed\n") {
		t.Errorf("all settled, the counter is still shown: %q", got)
	}
}

package faultproxy_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/infra-iac/infra/internal/faultproxy"
)

// target stands in for the emulator: it counts the calls it served.
type target struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{}
	tg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/moto-api") {
			tg.hits.Add(1)
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(tg.srv.Close)
	return tg
}

func start(t *testing.T, tg *target) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(tg.srv.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// client sends POSTs, which Go's transport never replays on its own, over
// fresh connections, so every call is one request at the proxy.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

func post(url, path string) (string, error) {
	resp, err := client.Post(url+path, "text/plain", strings.NewReader("x"))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// A hook before forwarding runs at the k-th call, the emulator never sees
// that call, and its client gets no answer; /moto-api calls are not
// counted, and the calls around it pass.
func TestHookBeforeForward(t *testing.T) {
	tg := newTarget(t)
	p := start(t, tg)
	var ran, hitsWhenRun atomic.Int64
	hitsWhenRun.Store(-1)
	p.Hook(2, faultproxy.BeforeForward, func() { ran.Add(1); hitsWhenRun.Store(tg.hits.Load()) })

	if _, err := post(p.URL, "/a"); err != nil {
		t.Fatalf("call 1: %v", err)
	}
	if _, err := post(p.URL, "/moto-api/reset"); err != nil {
		t.Fatalf("control call: %v", err)
	}
	if body, err := post(p.URL, "/b"); err == nil {
		t.Fatalf("call 2 was answered (%q); want the connection closed", body)
	}
	if _, err := post(p.URL, "/c"); err != nil {
		t.Fatalf("call 3: %v", err)
	}
	if ran.Load() != 1 || hitsWhenRun.Load() != 1 {
		t.Fatalf("hook ran %d times, seeing %d calls at the emulator; want once, seeing 1", ran.Load(), hitsWhenRun.Load())
	}
	if got := tg.hits.Load(); got != 2 {
		t.Fatalf("the emulator served %d calls; want 2 (the hooked call never reaches it)", got)
	}
	if got := p.Calls(); got != 3 {
		t.Fatalf("Calls() = %d; want 3", got)
	}
}

// A hook after the answer runs once the emulator has acted on the k-th
// call, and that call's client still gets no answer.
func TestHookAfterAnswer(t *testing.T) {
	tg := newTarget(t)
	p := start(t, tg)
	var hitsWhenRun atomic.Int64
	hitsWhenRun.Store(-1)
	p.Hook(1, faultproxy.AfterAnswer, func() { hitsWhenRun.Store(tg.hits.Load()) })
	if body, err := post(p.URL, "/a"); err == nil {
		t.Fatalf("call 1 was answered (%q); want the connection closed", body)
	}
	if hitsWhenRun.Load() != 1 {
		t.Fatalf("the hook saw %d calls at the emulator; want 1 (it runs after the emulator acted)", hitsWhenRun.Load())
	}
	if _, err := post(p.URL, "/b"); err != nil {
		t.Fatalf("call 2: %v", err)
	}
}

// Dropping the response forwards the call, so the emulator acts, and
// closes the connection unanswered; the next call is served.
func TestDropResponse(t *testing.T) {
	tg := newTarget(t)
	p := start(t, tg)
	p.DropResponse(2)
	for i, want := range []bool{true, false, true} {
		_, err := post(p.URL, "/x")
		if (err == nil) != want {
			t.Fatalf("call %d: err = %v; want answered = %v", i+1, err, want)
		}
	}
	if got := tg.hits.Load(); got != 3 {
		t.Fatalf("the emulator served %d calls; want 3 (the dropped one too)", got)
	}
}

// An outage really stops listening: the call that starts it gets no
// answer, the calls during it are refused by the kernel (ECONNREFUSED),
// and after it the proxy listens again on the same address.
func TestOutageRefusesConnectionsThenListensAgain(t *testing.T) {
	tg := newTarget(t)
	p := start(t, tg)
	url := p.URL
	const outage = 700 * time.Millisecond
	p.OutageAt(2, outage)
	if _, err := post(p.URL, "/a"); err != nil {
		t.Fatalf("call 1: %v", err)
	}
	began := time.Now()
	if _, err := post(p.URL, "/b"); err == nil {
		t.Fatal("the call that starts the outage was answered")
	}
	_, err := post(p.URL, "/c")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a call during the outage: %v; want ECONNREFUSED", err)
	}
	var back time.Duration
	for {
		if _, err := post(p.URL, "/d"); err == nil {
			back = time.Since(began)
			break
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("during the outage: %v; want ECONNREFUSED", err)
		}
		if time.Since(began) > 5*outage {
			t.Fatal("the proxy did not come back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if back < outage-50*time.Millisecond {
		t.Fatalf("back after %v; want about %v", back, outage)
	}
	if p.URL != url {
		t.Fatalf("URL moved from %s to %s", url, p.URL)
	}
	if got := tg.hits.Load(); got != 2 {
		t.Fatalf("the emulator served %d calls; want 2 (the first and the one after)", got)
	}
	t.Logf("refused for %v", back)
}

// Calls already being answered when an outage starts are answered; the
// kept-alive connections of an SDK-like client are closed, so its next
// call dials and is refused.
func TestOutageClosesIdleConnections(t *testing.T) {
	tg := newTarget(t)
	p := start(t, tg)
	keep := &http.Client{Timeout: 5 * time.Second}
	call := func() error {
		resp, err := keep.Post(p.URL+"/x", "text/plain", strings.NewReader("x"))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	p.Down(time.Second)
	// The proxy closes the idle connection the client keeps at once; the
	// client's transport notices it within a moment.
	time.Sleep(100 * time.Millisecond)
	if err := call(); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a kept-alive client during the outage: %v; want ECONNREFUSED", err)
	}
	if got := tg.hits.Load(); got != 1 {
		t.Fatalf("the emulator served %d calls; want 1", got)
	}
}

// Close during an outage stops the proxy for good: it does not come back.
func TestCloseDuringOutage(t *testing.T) {
	tg := newTarget(t)
	p, err := faultproxy.Start(tg.srv.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.Down(200 * time.Millisecond)
	p.Close()
	time.Sleep(400 * time.Millisecond)
	if _, err := post(p.URL, "/x"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("after Close: %v; want ECONNREFUSED", err)
	}
}

// Hooks fire once each, under concurrent calls.
func TestHooksUnderConcurrency(t *testing.T) {
	tg := newTarget(t)
	p := start(t, tg)
	var ran atomic.Int64
	for k := 5; k <= 50; k += 5 {
		p.Hook(k, faultproxy.BeforeForward, func() { ran.Add(1) })
	}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 60 {
		wg.Go(func() {
			if _, err := post(p.URL, "/x"); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if ran.Load() != 10 || failed.Load() != 10 || tg.hits.Load() != 50 {
		t.Fatalf("hooks ran %d, calls failed %d, emulator served %d; want 10, 10, 50", ran.Load(), failed.Load(), tg.hits.Load())
	}
}

// Package faultproxy is an HTTP proxy that stands in front of an AWS API
// emulator and misbehaves the way a real endpoint can, so that tests show
// what infra does about it. Calls are numbered from 1 in the order they
// arrive, counting neither the emulator's own control API (/moto-api) nor
// calls cut because the proxy is down. Every event below fires once.
//
//   - Throttling (Options.Rate): a share of the calls is answered by the
//     proxy itself, with the throttling error each AWS protocol really
//     sends, or a bare 503. A throttled call must never fail a run, and
//     never read as "absent". A faulted call never reaches the emulator,
//     so a retried create is not made twice: the fault is the service
//     refusing the call, not losing its answer.
//   - An outage (OutageAt, or Down for one that starts now): the proxy
//     closes its listener, so every new connection is refused by the
//     kernel (ECONNREFUSED), closes its idle kept-alive connections, and
//     cuts any call that still arrives on one; calls already being
//     answered are answered. After the given time it listens again on the
//     same address. The call that starts an outage is cut unforwarded.
//   - A hook (Hook) runs a function at the k-th call, either before
//     forwarding it (BeforeForward: the cloud never sees the call) or after
//     the emulator answered it but before the answer goes back
//     (AfterAnswer: the cloud acted). Either way the call then gets no
//     answer: its connection is closed. The crash tests use it to SIGKILL
//     the process that sent the call at a precise point of its run.
//   - Dropping a response (DropResponse): the k-th call is forwarded, the
//     emulator acts, and the connection is closed unanswered, so the SDK
//     sees a connection error and retries a call the cloud already carried
//     out. It is a Hook at AfterAnswer that runs nothing.
//
// A cut connection is closed without a byte of answer; a client reads EOF.
// Go's transport replays on its own only an idempotent request (GET, HEAD)
// cut on a reused connection, so a cut POST always reaches the caller's
// retry logic.
package faultproxy

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Proxy forwards to a target and injects faults.
type Proxy struct {
	// URL is where the proxy listens; it stays the same across outages.
	URL string

	addr    string
	rate    float64
	handler http.Handler

	mu       sync.Mutex
	srv      *http.Server
	listener net.Listener
	down     bool
	upAt     time.Time
	upTimer  *time.Timer
	closed   bool
	rng      *rand.Rand
	calls    int
	faults   int
	byReply  map[string]int
	events   map[int]event
}

// Options shape the faults.
type Options struct {
	// Rate is the share of calls answered with a fault, 0 to 1.
	Rate float64
	// Seed makes the sequence of faults repeatable.
	Seed int64
	// Delay is added to every call, faulted or not: the round trip to a
	// real region, which a loopback emulator does not have.
	Delay time.Duration
}

// Stage says when, around forwarding a call, a hook runs.
type Stage int

const (
	// BeforeForward runs the hook before the call reaches the emulator:
	// the cloud never sees it.
	BeforeForward Stage = iota + 1
	// AfterAnswer runs the hook once the emulator has answered, before the
	// answer is sent back: the cloud acted, the caller never hears of it.
	AfterAnswer
)

// event is what happens at one call.
type event struct {
	stage  Stage
	run    func()
	outage time.Duration // > 0: the call starts an outage this long
}

// Start listens on a free loopback port and forwards to target (such as
// http://127.0.0.1:5000).
func Start(target string, opts Options) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: target %q: %w", target, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + l.Addr().String(), addr: l.Addr().String(), rate: opts.Rate, listener: l,
		rng: rand.New(rand.NewSource(opts.Seed)), byReply: map[string]int{}, events: map[int]event{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	// The Host header stays the proxy's: the SDK signed it, and the
	// emulator builds queue URLs from it, so follow-up calls come back
	// through the proxy too.
	p.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.Delay > 0 {
			time.Sleep(opts.Delay)
		}
		n, ev, rep, faulted, down := p.decide(r)
		switch {
		case down:
			// A call on a connection that outlived the listener: the
			// endpoint is down for it too.
			cut(w)
		case n == 0:
			rp.ServeHTTP(w, r)
		case ev.outage > 0:
			p.Down(ev.outage)
			cut(w)
		case ev.stage == BeforeForward:
			if ev.run != nil {
				ev.run()
			}
			cut(w)
		case ev.stage == AfterAnswer:
			// The whole answer is read from the emulator first, so the
			// cloud has acted when the hook runs; then it is thrown away.
			rp.ServeHTTP(httptest.NewRecorder(), r)
			if ev.run != nil {
				ev.run()
			}
			cut(w)
		case faulted:
			rep.write(w)
		default:
			rp.ServeHTTP(w, r)
		}
	})
	p.srv = &http.Server{Handler: p.handler}
	go p.srv.Serve(l)
	return p, nil
}

// Close stops the proxy for good, outage or not.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.upTimer != nil {
		p.upTimer.Stop()
	}
	return p.srv.Close()
}

// Hook makes the call-th call (counted from 1 since Start, /moto-api
// excluded) run fn at stage and then go unanswered, its connection closed.
// fn may be nil. A later event at the same call replaces this one.
func (p *Proxy) Hook(call int, stage Stage, fn func()) {
	p.at(call, event{stage: stage, run: fn})
}

// DropResponse makes the call-th call reach the emulator, which acts on
// it, and then go unanswered, its connection closed.
func (p *Proxy) DropResponse(call int) { p.Hook(call, AfterAnswer, nil) }

// OutageAt makes the call-th call start an outage of d (see Down); that
// call itself is cut without reaching the emulator.
func (p *Proxy) OutageAt(call int, d time.Duration) {
	p.at(call, event{stage: BeforeForward, outage: d})
}

func (p *Proxy) at(call int, ev event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events[call] = ev
}

// Down takes the endpoint down now for d, and returns at once: the
// listener is closed, so connections are refused (ECONNREFUSED); idle
// kept-alive connections are closed and a call that still arrives on one
// is cut; calls already being answered finish. After d the proxy listens
// again on the same address. Down during an outage extends it to d from
// now if that is later.
func (p *Proxy) Down(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	upAt := time.Now().Add(d)
	if p.down {
		if upAt.After(p.upAt) {
			p.upAt = upAt
			p.upTimer.Reset(d)
		}
		return
	}
	p.down, p.upAt = true, upAt
	// The listener is closed here, not by Shutdown in the background, so
	// that a dial made after Down returns is refused.
	p.listener.Close()
	go p.srv.Shutdown(context.Background())
	p.upTimer = time.AfterFunc(d, p.up)
}

// up listens again on the proxy's address after an outage. The address was
// the proxy's a moment ago; binding it again can fail briefly, so it
// retries for a few seconds.
func (p *Proxy) up() {
	var l net.Listener
	var err error
	for range 100 {
		if l, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		panic(fmt.Sprintf("faultproxy: listen again on %s after an outage: %v", p.addr, err))
	}
	if p.closed || time.Now().Before(p.upAt) {
		// Closed meanwhile, or the outage was extended (the timer fires again).
		l.Close()
		return
	}
	p.listener, p.down = l, false
	p.srv = &http.Server{Handler: p.handler}
	go p.srv.Serve(l)
}

// cut closes the call's connection without a byte of answer.
func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	// The server closes the connection of a handler that aborts.
	panic(http.ErrAbortHandler)
}

// Calls returns how many calls the proxy has numbered so far, so that a
// test can aim an event at a later one (Calls()+k).
func (p *Proxy) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Stats reports the calls seen, the calls faulted, and the faults by the
// error code sent.
func (p *Proxy) Stats() (calls, faults int, byReply map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.byReply))
	for k, v := range p.byReply {
		out[k] = v
	}
	return p.calls, p.faults, out
}

// decide numbers the call and says what happens to it: n is its number (0
// for the emulator's control API, which is never faulted), ev an event at
// it, rep the fault to answer with when faulted, and down whether the
// proxy is down, in which case nothing else counts.
func (p *Proxy) decide(r *http.Request) (n int, ev event, rep reply, faulted, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return 0, event{}, reply{}, false, true
	}
	if strings.HasPrefix(r.URL.Path, "/moto-api") {
		return 0, event{}, reply{}, false, false
	}
	p.calls++
	n = p.calls
	ev, hasEvent := p.events[n]
	delete(p.events, n)
	// The dice are rolled for every call, so that events do not shift
	// the sequence of faults that Seed repeats.
	roll := p.rng.Float64()
	if hasEvent || roll >= p.rate {
		return n, ev, reply{}, false, false
	}
	p.faults++
	// Every third fault is a bare 503, the answer of an overloaded front
	// end with no error code at all; the others are the service's own
	// throttling error.
	rep = throttle(r)
	if p.faults%3 == 0 {
		rep = reply{status: http.StatusServiceUnavailable, code: "503", body: "Service Unavailable"}
	}
	p.byReply[rep.code]++
	return n, ev, rep, true, false
}

// reply is one injected answer.
type reply struct {
	status int
	code   string
	header map[string]string
	body   string
	ctype  string
}

func (r reply) write(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header().Set(k, v)
	}
	if r.ctype != "" {
		w.Header().Set("Content-Type", r.ctype)
	}
	w.Header().Set("X-Amzn-RequestId", "faultproxy")
	w.WriteHeader(r.status)
	fmt.Fprint(w, r.body)
}

// throttle builds the throttling error the request's protocol carries, so
// that the SDK parses a real error code, as it would from AWS:
//   - JSON protocols (Secrets Manager, ECR, SQS, the Tagging API) name the
//     service operation in X-Amz-Target;
//   - EC2's query dialect has its own error envelope;
//   - S3 answers 503 SlowDown in REST-XML;
//   - Lambda's REST-JSON carries the code in a header;
//   - the other query services (IAM, STS, RDS) share one envelope.
//
// The service is read from the SigV4 credential scope.
func throttle(r *http.Request) reply {
	switch {
	case r.Header.Get("X-Amz-Target") != "":
		return reply{status: http.StatusBadRequest, code: "ThrottlingException", ctype: "application/x-amz-json-1.1",
			header: map[string]string{"x-amzn-query-error": "Throttling;Sender"},
			body:   `{"__type":"ThrottlingException","message":"Rate exceeded"}`}
	}
	switch service(r) {
	case "ec2":
		return reply{status: http.StatusServiceUnavailable, code: "RequestLimitExceeded", ctype: "text/xml",
			body: `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>faultproxy</RequestID></Response>`}
	case "s3":
		return reply{status: http.StatusServiceUnavailable, code: "SlowDown", ctype: "application/xml",
			body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>faultproxy</RequestId></Error>`}
	case "lambda":
		return reply{status: http.StatusTooManyRequests, code: "TooManyRequestsException", ctype: "application/json",
			header: map[string]string{"X-Amzn-ErrorType": "TooManyRequestsException"},
			body:   `{"Type":"User","message":"Rate exceeded"}`}
	}
	return reply{status: http.StatusBadRequest, code: "Throttling", ctype: "text/xml",
		body: `<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>faultproxy</RequestId></ErrorResponse>`}
}

// service reads the service name from the SigV4 Authorization header:
// Credential=AKID/20260101/eu-west-3/ec2/aws4_request.
func service(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(cred, "/")
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}

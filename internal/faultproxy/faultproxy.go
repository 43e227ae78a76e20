// Package faultproxy is an HTTP proxy that stands in front of an AWS API
// emulator and answers a share of the calls itself, with the throttling
// error each AWS protocol really sends, or a bare 503. It exists to show
// that a throttled run slows down and still converges: a throttled call
// must never fail a run, and never read as "absent".
//
// A faulted call never reaches the emulator, so a retried create is not
// made twice: the fault is the service refusing the call, not losing its
// answer.
package faultproxy

import (
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Proxy forwards to a target and injects faults.
type Proxy struct {
	URL string

	rate     float64
	srv      *http.Server
	listener net.Listener

	mu      sync.Mutex
	rng     *rand.Rand
	calls   int
	faults  int
	byReply map[string]int
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
	p := &Proxy{URL: "http://" + l.Addr().String(), rate: opts.Rate, listener: l,
		rng: rand.New(rand.NewSource(opts.Seed)), byReply: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	// The Host header stays the proxy's: the SDK signed it, and the
	// emulator builds queue URLs from it, so follow-up calls come back
	// through the proxy too.
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.Delay > 0 {
			time.Sleep(opts.Delay)
		}
		if reply, ok := p.decide(r); ok {
			reply.write(w)
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(l)
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

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

// decide counts the call and picks its fault, if any. The emulator's own
// control API (reset, config) is never faulted.
func (p *Proxy) decide(r *http.Request) (reply, bool) {
	if strings.HasPrefix(r.URL.Path, "/moto-api") {
		return reply{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.rng.Float64() >= p.rate {
		return reply{}, false
	}
	p.faults++
	// Every third fault is a bare 503, the answer of an overloaded front
	// end with no error code at all; the others are the service's own
	// throttling error.
	rep := throttle(r)
	if p.faults%3 == 0 {
		rep = reply{status: http.StatusServiceUnavailable, code: "503", body: "Service Unavailable"}
	}
	p.byReply[rep.code]++
	return rep, true
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

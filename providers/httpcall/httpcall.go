// Package httpcall is the HTTP transport of the REST clients that send each
// call once (scaleway-sdk-go's, and Google's google.golang.org/api and GAPIC
// REST clients): it retries what is safe to repeat within the call's retry
// budget, logs each call once with its retries (INFRA_LOG=debug), and
// traces each attempt with its body, secrets masked (INFRA_LOG=trace).
// The AWS SDK has all three of its own (providers/aws, providers/sdkcall).
package httpcall

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"syscall"
	"time"

	"github.com/infra-iac/infra/providers"
)

// FirstRetryDelay is the backoff before the second attempt; it doubles up
// to providers.MaxRetryDelay.
const FirstRetryDelay = 100 * time.Millisecond

// Transport retries, with backoff and within its budget, what is safe to
// repeat:
//   - a GET, HEAD or DELETE after a connection error (refused, reset, cut
//     before any answer), a 429 or a 5xx. A DELETE repeated after the first
//     one took effect answers 404, which the drivers and the engine read
//     as gone;
//   - a POST, PUT or PATCH only when it never arrived whole (the dial
//     failed, or writing the request did) or it was answered 429 (refused
//     unprocessed, by the rate limit): after a reset or a 5xx the API may
//     have acted, and a second create may make a second resource.
type Transport struct {
	Next http.RoundTripper
	// Budget is how long one call keeps retrying; zero sends each attempt
	// once, for a client that retries by itself (the transport then only
	// logs).
	Budget time.Duration
	// Log receives each call once, with its retries; Trace each attempt's
	// request and response, secrets masked. Either may be nil.
	Log   providers.CallLog
	Trace func(string)
	// Describe names a call for the log: its provider, service, operation
	// and region. The transport adds the rest.
	Describe func(*http.Request) providers.Call
	// AnswerError is the error the client would have made of an answer,
	// for the last one of a call that ran out of budget: so that it still
	// classifies (429: throttled) and carries the API's message.
	AnswerError func(*http.Response) error
}

// SetInsecureTransport keeps an SDK's insecure mode (Scaleway's insecure:
// true in the profile) working through the wrapper.
func (t *Transport) SetInsecureTransport() {
	next, ok := t.Next.(*http.Transport)
	if !ok {
		return
	}
	if next.TLSClientConfig == nil {
		next.TLSClientConfig = new(tls.Config)
	}
	next.TLSClientConfig.InsecureSkipVerify = true
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, attempts, err := t.send(req)
	if t.Log != nil {
		c := t.Describe(req)
		c.Address = providers.AddressIn(req.Context())
		c.Duration, c.Retries, c.Err = time.Since(start), max(attempts-1, 0), err
		if resp != nil {
			c.Status = resp.StatusCode
		}
		t.Log(c)
	}
	return resp, err
}

// send sends req, again while it is safe to, and says how many attempts
// it made.
func (t *Transport) send(req *http.Request) (*http.Response, int, error) {
	start := time.Now()
	// A body that cannot be read again cannot be sent again.
	rewindable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	r := req
	for attempt := 1; ; attempt++ {
		resp, err := t.attempt(r)
		again, wait := retryable(req.Method, resp, err)
		if t.Budget == 0 || !again || !rewindable {
			return resp, attempt, err
		}
		last := err
		if resp != nil {
			last = t.AnswerError(resp)
		}
		elapsed := time.Since(start)
		if wait == 0 {
			wait = Backoff(attempt)
		}
		// As on AWS, the last wait may pass the budget by one backoff; a
		// Retry-After that would pass it by more is not waited for.
		if elapsed >= t.Budget || elapsed+wait > t.Budget+providers.MaxRetryDelay {
			return nil, attempt, &providers.RetryBudgetError{Attempts: attempt, Elapsed: elapsed, Budget: t.Budget, Err: last}
		}
		timer := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			timer.Stop()
			return nil, attempt, fmt.Errorf("%w after %d attempts, the last: %w", req.Context().Err(), attempt, last)
		case <-timer.C:
		}
		r = req.Clone(req.Context())
		if req.GetBody != nil {
			if r.Body, err = req.GetBody(); err != nil {
				return nil, attempt, fmt.Errorf("read the body of %s %s again to retry it: %w", req.Method, req.URL.Path, err)
			}
		}
	}
}

// attempt sends one attempt, tracing its request and response (bodies
// included, secrets masked) when asked to.
func (t *Transport) attempt(r *http.Request) (*http.Response, error) {
	if t.Trace == nil {
		return t.Next.RoundTrip(r)
	}
	if dump, err := httputil.DumpRequestOut(r, false); err == nil {
		t.Trace(providers.MaskSecrets(string(dump)) + providers.MaskBody(requestBody(r)))
	}
	resp, err := t.Next.RoundTrip(r)
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if dump, derr := httputil.DumpResponse(resp, false); derr == nil && rerr == nil {
			t.Trace(providers.MaskSecrets(string(dump)) + providers.MaskBody(body))
		}
	}
	return resp, err
}

// requestBody is a copy of r's body, read through GetBody so that r's own
// is left to send; nil when it has none or cannot be read again.
func requestBody(r *http.Request) []byte {
	if r.GetBody == nil {
		return nil
	}
	rc, err := r.GetBody()
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b
}

// retryable says whether an attempt may be sent again, and how long the
// API asked to wait (Retry-After), if it did.
func retryable(method string, resp *http.Response, err error) (bool, time.Duration) {
	idempotent := method == http.MethodGet || method == http.MethodHead || method == http.MethodDelete
	if err != nil {
		var op *net.OpError
		var dns *net.DNSError
		if errors.As(err, &op) && op.Op == "dial" && !(errors.As(err, &dns) && dns.IsNotFound) {
			return true, 0 // the request never left
		}
		if errors.As(err, &op) && (op.Op == "write" || op.Op == "readfrom") {
			// Writing the request failed (a kept-alive connection the
			// server had closed): it never arrived whole, and an API acts
			// on no request it has not read to its end.
			return true, 0
		}
		lost := errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
			errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		return idempotent && lost, 0
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return true, retryAfter(resp)
	case resp.StatusCode >= 500:
		return idempotent, retryAfter(resp)
	}
	return false, 0
}

func retryAfter(resp *http.Response) time.Duration {
	v := resp.Header.Get("Retry-After")
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

// Backoff is the wait after the given attempt: exponential from
// FirstRetryDelay, capped at providers.MaxRetryDelay, with jitter so that
// the calls an outage caught do not return together.
func Backoff(attempt int) time.Duration {
	d := providers.MaxRetryDelay
	if attempt < 10 {
		d = min(providers.MaxRetryDelay, FirstRetryDelay<<(attempt-1))
	}
	return d/2 + rand.N(d/2)
}

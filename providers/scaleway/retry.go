package scaleway

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
)

const (
	maxRetryDelay   = providers.MaxRetryDelay
	firstRetryDelay = 100 * time.Millisecond
	// attemptTimeout bounds the wait for one attempt's answer: the SDK's
	// own client has a 30 s http.Client.Timeout, which would also cut the
	// retries short, so the bound moves to each attempt.
	attemptTimeout = 30 * time.Second
)

// restClient is the HTTP client of the SDK's REST calls, which the SDK
// sends once each (a 5 s outage of the API failed an apply midway), with
// the call's retry budget: the same setting as the AWS backend's.
func restClient(opts Options) (time.Duration, scw.ClientOption, error) {
	budget, err := providers.RetryBudget(opts.RetryBudget)
	if err != nil {
		return 0, nil, fmt.Errorf("scaleway: %w", err)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = attemptTimeout
	return budget, scw.WithHTTPClient(&http.Client{Transport: &retrying{next: t, budget: budget, log: opts.Log, trace: opts.Trace}}), nil
}

// retrying is a transport that retries, with backoff and within its
// budget, what is safe to repeat:
//   - a GET, HEAD or DELETE after a connection error (refused, reset, cut
//     before any answer), a 429 or a 5xx. A DELETE repeated after the first
//     one took effect answers 404, which the drivers and the engine read
//     as gone;
//   - a POST, PUT or PATCH only when its connection was never made (the
//     dial failed) or it was answered 429 (refused unprocessed, by the rate
//     limit): after a reset or a 5xx the API may have acted, and a second
//     Scaleway create makes a second resource.
type retrying struct {
	next   *http.Transport
	budget time.Duration
	// log receives each call once, with its retries (INFRA_LOG); trace
	// each attempt's request and response, secrets masked.
	log   providers.CallLog
	trace func(string)
}

// SetInsecureTransport keeps the SDK's insecure mode (insecure: true in
// the profile) working through the wrapper.
func (t *retrying) SetInsecureTransport() {
	if t.next.TLSClientConfig == nil {
		t.next.TLSClientConfig = new(tls.Config)
	}
	t.next.TLSClientConfig.InsecureSkipVerify = true
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, attempts, err := t.send(req)
	if t.log != nil {
		t.log(callOf(req, resp, attempts, err, time.Since(start)))
	}
	return resp, err
}

// send sends req, again while it is safe to, and says how many attempts
// it made.
func (t *retrying) send(req *http.Request) (*http.Response, int, error) {
	start := time.Now()
	// A body that cannot be read again cannot be sent again.
	rewindable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	r := req
	for attempt := 1; ; attempt++ {
		resp, err := t.attempt(r)
		again, wait := retryable(req.Method, resp, err)
		if !again || !rewindable {
			return resp, attempt, err
		}
		last := err
		if resp != nil {
			last = answerError(resp)
		}
		elapsed := time.Since(start)
		if wait == 0 {
			wait = backoff(attempt)
		}
		// As on AWS, the last wait may pass the budget by one backoff; a
		// Retry-After that would pass it by more is not waited for.
		if elapsed >= t.budget || elapsed+wait > t.budget+maxRetryDelay {
			return nil, attempt, &providers.RetryBudgetError{Attempts: attempt, Elapsed: elapsed, Budget: t.budget, Err: last}
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
				return nil, attempt, fmt.Errorf("scaleway: read the body of %s %s again to retry it: %w", req.Method, req.URL.Path, err)
			}
		}
	}
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

// backoff is exponential from firstRetryDelay, capped at maxRetryDelay,
// with jitter so that the calls an outage caught do not return together.
func backoff(attempt int) time.Duration {
	d := maxRetryDelay
	if attempt < 10 {
		d = min(maxRetryDelay, firstRetryDelay<<(attempt-1))
	}
	return d/2 + rand.N(d/2)
}

// answerError reads a retried answer into the error the SDK would have
// made of it, so that the last one still classifies (429: throttled) and
// carries the API's message.
func answerError(resp *http.Response) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &scw.ResponseError{StatusCode: resp.StatusCode, Status: resp.Status}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		e.RawBody = body
		_ = json.Unmarshal(body, e)
	}
	return e
}

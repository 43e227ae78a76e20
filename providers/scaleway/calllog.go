package scaleway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// callOf is a REST call for the call log: the product is the path's first
// segment (mnq, rdb, secret-manager …), the operation its method and path,
// the region or zone the path names.
func callOf(req *http.Request, resp *http.Response, attempts int, err error, took time.Duration) providers.Call {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	c := providers.Call{Provider: spec.Scaleway, Service: parts[0], Operation: req.Method + " " + req.URL.Path,
		Address: providers.AddressIn(req.Context()), Duration: took, Retries: max(attempts-1, 0), Err: err}
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "regions" || parts[i] == "zones" {
			c.Region = parts[i+1]
		}
	}
	if resp != nil {
		c.Status = resp.StatusCode
	}
	return c
}

// attempt sends one attempt, tracing its request and response (bodies
// included, secrets masked) when asked to.
func (t *retrying) attempt(r *http.Request) (*http.Response, error) {
	if t.trace == nil {
		return t.next.RoundTrip(r)
	}
	if dump, err := httputil.DumpRequestOut(r, false); err == nil {
		t.trace(providers.MaskSecrets(string(dump)) + providers.MaskBody(requestBody(r)))
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if dump, derr := httputil.DumpResponse(resp, false); derr == nil && rerr == nil {
			t.trace(providers.MaskSecrets(string(dump)) + providers.MaskBody(body))
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

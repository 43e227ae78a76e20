package scaleway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/httpcall"
)

const (
	// attemptTimeout bounds the wait for one attempt's answer: the SDK's
	// own client has a 30 s http.Client.Timeout, which would also cut the
	// retries short, so the bound moves to each attempt.
	attemptTimeout = 30 * time.Second
)

// restClient is the HTTP client of the SDK's REST calls, which the SDK
// sends once each (a 5 s outage of the API failed an apply midway), with
// the call's retry budget: the same setting as the AWS backend's, and the
// rule of providers/httpcall for what is safe to send again.
func restClient(opts Options) (time.Duration, scw.ClientOption, error) {
	budget, err := providers.RetryBudget(opts.RetryBudget)
	if err != nil {
		return 0, nil, fmt.Errorf("scaleway: %w", err)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = attemptTimeout
	return budget, scw.WithHTTPClient(&http.Client{Transport: &httpcall.Transport{Next: t, Budget: budget,
		Log: opts.Log, Trace: opts.Trace, Describe: describe, AnswerError: answerError}}), nil
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

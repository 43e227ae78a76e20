package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infra-iac/infra/internal/moto"
)

// downEndpoint points the SDK at a loopback port nothing listens on, so
// every attempt is refused (ECONNREFUSED): an endpoint that stays down.
func downEndpoint(t *testing.T) {
	t.Helper()
	port, err := moto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := &moto.Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// A call to an endpoint that is down is retried with backoff until its
// budget is spent, then fails saying it gave up after how many attempts
// over how long, with the last attempt's error (the refused connection)
// still in the chain.
func TestRetryBudgetEndsACallToAnEndpointThatIsDown(t *testing.T) {
	downEndpoint(t)
	const budget = 3 * time.Second
	b, err := New(context.Background(), Options{RetryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = b.Account(context.Background())
	took := time.Since(began)
	var be *RetryBudgetError
	if !errors.As(err, &be) {
		t.Fatalf("account against a down endpoint: %v; want a *RetryBudgetError", err)
	}
	t.Logf("%v after %v", err, took)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("the refused connection is not in the chain: %v", err)
	}
	if be.Budget != budget || be.Elapsed < budget || be.Attempts < 5 {
		t.Errorf("gave up after %d attempts over %v with a budget of %v; want at least 5 attempts over at least the budget", be.Attempts, be.Elapsed, be.Budget)
	}
	// Past the budget, at most one more delay (the maximum, 5 s) and one
	// refused attempt.
	if took > budget+maxRetryDelay+time.Second {
		t.Errorf("took %v; want at most the budget plus one backoff", took)
	}
	for _, want := range []string{"GetCallerIdentity", "gave up after", "attempts over", "retry budget 3s", RetryBudgetEnv, "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// The budget comes from Options, else from INFRA_RETRY_BUDGET, else the
// default; a value that is not a positive duration is refused by name.
func TestRetryBudgetSetting(t *testing.T) {
	downEndpoint(t)
	ctx := context.Background()
	for _, c := range []struct {
		env  string
		opt  time.Duration
		want time.Duration
		err  string
	}{
		{want: DefaultRetryBudget},
		{env: "90s", want: 90 * time.Second},
		{env: "90s", opt: 5 * time.Second, want: 5 * time.Second},
		{env: "soon", err: `INFRA_RETRY_BUDGET="soon"`},
		{env: "-1s", err: `INFRA_RETRY_BUDGET="-1s"`},
		{opt: -time.Second, err: "retry budget -1s"},
	} {
		t.Setenv(RetryBudgetEnv, c.env)
		b, err := New(ctx, Options{RetryBudget: c.opt})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("env %q, option %v: %v; want an error naming %s", c.env, c.opt, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("env %q, option %v: %v", c.env, c.opt, err)
		}
		if b.budget != c.want {
			t.Errorf("env %q, option %v: budget %v; want %v", c.env, c.opt, b.budget, c.want)
		}
	}
}

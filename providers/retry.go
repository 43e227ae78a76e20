package providers

import (
	"fmt"
	"os"
	"time"
)

// Every backend bounds a call's retries by time, not by a number of
// attempts, with one setting (docs/architecture.md, "A call retries for a
// time"); the backends differ only in where they retry.
const (
	// DefaultRetryBudget is how long one call may keep retrying: long
	// enough to ride out an endpoint that is down for most of a minute
	// (a deploy, a failover), short enough that a real outage fails the
	// apply within about a minute rather than hanging it.
	DefaultRetryBudget = 60 * time.Second
	// RetryBudgetEnv overrides the default budget with a Go duration
	// ("90s", "5m").
	RetryBudgetEnv = "INFRA_RETRY_BUDGET"
	// MaxRetryDelay caps the backoff between two attempts: a call learns
	// within a few seconds that the endpoint is back.
	MaxRetryDelay = 5 * time.Second
)

// RetryBudgetError is a call that failed with retryable errors (refused or
// reset connections, 5xx, throttling) for longer than its retry budget.
// Err is the last attempt's error.
type RetryBudgetError struct {
	Attempts int
	Elapsed  time.Duration
	Budget   time.Duration
	Err      error
}

func (e *RetryBudgetError) Error() string {
	return fmt.Sprintf("gave up after %d attempts over %s (retry budget %s; %s sets it): %v",
		e.Attempts, e.Elapsed.Round(100*time.Millisecond), e.Budget, RetryBudgetEnv, e.Err)
}

func (e *RetryBudgetError) Unwrap() error { return e.Err }

// RetryBudget resolves the budget: the backend's option when set, else
// the environment, else the default.
func RetryBudget(opt time.Duration) (time.Duration, error) {
	if opt < 0 {
		return 0, fmt.Errorf("retry budget %s: want a positive duration", opt)
	}
	if opt > 0 {
		return opt, nil
	}
	v := os.Getenv(RetryBudgetEnv)
	if v == "" {
		return DefaultRetryBudget, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive Go duration such as 90s or 5m", RetryBudgetEnv, v)
	}
	return d, nil
}

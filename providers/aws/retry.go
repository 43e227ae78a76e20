package aws

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/infra-iac/infra/providers"
)

// The budget and its setting are every backend's (providers/retry.go).
const (
	DefaultRetryBudget = providers.DefaultRetryBudget
	RetryBudgetEnv     = providers.RetryBudgetEnv
	maxRetryDelay      = providers.MaxRetryDelay
)

// RetryBudgetError is a call that spent its retry budget.
type RetryBudgetError = providers.RetryBudgetError

// retryBudget resolves the budget: the option, else the environment, else
// the default.
func retryBudget(opt time.Duration) (time.Duration, error) {
	d, err := providers.RetryBudget(opt)
	if err != nil {
		return 0, fmt.Errorf("aws: %w", err)
	}
	return d, nil
}

// withRetryBudget returns the configuration options that bound each call's
// retries by time: the retryer, and the middleware that tells it when the
// call started. They work only together, so they are installed together.
//
// The retryer is the SDK's adaptive mode (a throttled client slows its own
// request rate) with three changes:
//   - the attempt count no longer ends the retries, elapsed time does: ten
//     attempts with the SDK's 50 ms base delay for non-throttling errors
//     are spent in about five seconds of a refused endpoint;
//   - the backoff is capped at maxRetryDelay, so a call notices within a
//     few seconds that the endpoint is back;
//   - the retry quota is off (ratelimit.None): it exists to fail fast when
//     a service is down, which is what the budget now decides, and under
//     sustained throttling it turned "slow down" into an apply that failed
//     halfway.
func withRetryBudget(budget time.Duration) []func(*config.LoadOptions) error {
	return []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return &budgeted{budget: budget, RetryerV2: retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
				o.StandardOptions = append(o.StandardOptions, func(so *retry.StandardOptions) {
					so.MaxBackoff = maxRetryDelay
					so.RateLimiter = ratelimit.None
				})
			})}
		}),
		config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("RetryBudgetStart", startCall), middleware.Before)
		}}),
	}
}

// call is one operation's retry bookkeeping: when it started, how many of
// its attempts failed, and the budget error if the retryer gave up. The
// retryer is shared by every call of a client, so this travels in the
// call's context.
type call struct {
	start    time.Time
	attempts atomic.Int64
	gaveUp   atomic.Pointer[RetryBudgetError]
}

type callKey struct{}

// startCall records the start of an operation, before the retry loop.
// When the retryer gave up, the loop returns the last attempt's error
// joined with the budget error; the budget error alone says it all, and
// carries the last attempt's error.
func startCall(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	c := &call{start: time.Now()}
	out, md, err := next.HandleInitialize(context.WithValue(ctx, callKey{}, c), in)
	if be := c.gaveUp.Load(); err != nil && be != nil {
		err = be
	}
	return out, md, err
}

// budgeted wraps the SDK's retryer: it refuses a retry once the call has
// spent its budget. Delays, what is
// retryable and the adaptive rate limit are the SDK's.
type budgeted struct {
	aws.RetryerV2
	budget time.Duration
}

// MaxAttempts is a backstop, not the bound: the budget ends a call's
// retries long before this many attempts (each delay averages half of
// maxRetryDelay once the backoff has grown, so this is several times what
// the budget allows), and it still ends them should a call somehow run
// without startCall.
func (r *budgeted) MaxAttempts() int {
	return 20 + int(10*r.budget/maxRetryDelay)
}

// GetRetryToken is asked once after every attempt that failed with a
// retryable error, before retrying it: past the budget, the answer is no.
// It counts the attempts too, since every one that failed comes here (the
// SDK's own AWS_MAX_ATTEMPTS wrapper, should a user set it, hides
// GetAttemptToken but not this).
func (r *budgeted) GetRetryToken(ctx context.Context, opErr error) (func(error) error, error) {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		attempts := c.attempts.Add(1)
		if elapsed := time.Since(c.start); elapsed >= r.budget {
			be := &RetryBudgetError{Attempts: int(attempts), Elapsed: elapsed, Budget: r.budget, Err: opErr}
			c.gaveUp.Store(be)
			return nil, be
		}
	}
	return r.RetryerV2.GetRetryToken(ctx, opErr)
}

// noBlindResend is the option of a create the service does not dedupe
// (EC2's CreateVpc, CreateSubnet, CreateInternetGateway take no client
// token): its SDK retries only an attempt the service surely did not carry
// out, since a resend of one it did makes a second resource. See
// mayHaveActed for which those are; the budget still bounds the retries.
func noBlindResend(o *ec2.Options) { o.Retryer = unsentOnly(o.Retryer) }

// kmsNoBlindResend is noBlindResend for KMS's CreateKey.
func kmsNoBlindResend(o *kms.Options) { o.Retryer = unsentOnly(o.Retryer) }

// lambdaNoBlindResend is noBlindResend for Lambda's CreateFunction, after
// the options that set its retryer (roleRetry): a resend of a create
// Lambda carried out answers ResourceConflictException, a failed create.
func lambdaNoBlindResend(o *lambda.Options) { o.Retryer = unsentOnly(o.Retryer) }

// iamNoBlindResend is noBlindResend for IAM's CreatePolicyVersion.
func iamNoBlindResend(o *iam.Options) { o.Retryer = unsentOnly(o.Retryer) }

func unsentOnly(r aws.Retryer) aws.Retryer {
	v2, ok := r.(aws.RetryerV2)
	if !ok {
		v2 = retryerV2{r}
	}
	return &resendUnsent{RetryerV2: v2}
}

// resendUnsent refuses to retry an attempt that may have been carried
// out; what else is retryable, the delays and the budget are the wrapped
// retryer's.
type resendUnsent struct{ aws.RetryerV2 }

func (r *resendUnsent) IsErrorRetryable(err error) bool {
	return !mayHaveActed(err) && r.RetryerV2.IsErrorRetryable(err)
}

// retryerV2 gives a retryer of the first interface the second's
// GetAttemptToken, as the SDK does for its own wrappers.
type retryerV2 struct{ aws.Retryer }

func (r retryerV2) GetAttemptToken(context.Context) (func(error) error, error) {
	return r.GetInitialToken(), nil
}

// throttles is the SDK's own test of a throttling answer.
var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

// mayHaveActed says whether a call that failed with err may have been
// carried out by the service all the same. It surely was not when the
// connection was never made (a dial error: refused, no route, no such
// host) or when the service answered that it refused: a throttling answer
// or any other 4xx. It may have been when the request went out and no
// answer came back (a connection reset or closed, EOF, a timeout waiting
// for the answer), when the answer was a 5xx other than throttling (the
// service may have failed after acting), or when a 2xx answer could not be
// read.
func mayHaveActed(err error) bool {
	var op *net.OpError
	switch {
	case err == nil, errors.As(err, &op) && op.Op == "dial", throttles.IsErrorThrottle(err).Bool():
		return false
	}
	var answer *smithyhttp.ResponseError
	if errors.As(err, &answer) {
		s := answer.HTTPStatusCode()
		return s < 400 || s >= 500
	}
	var send *smithyhttp.RequestSendError
	return errors.As(err, &send)
}

// madeDespite is what a create that failed with err made all the same:
// when err leaves open that the service carried it out, find looks for
// the resource by its name and says whose ownership tag it carries; one
// of owner's is this create's, since the tags go on with the create.
// Otherwise the create failed as err says: nothing was made, or nothing
// can be found yet (an eventually consistent listing), which the ledger's
// create intent lets the next run adopt.
func madeDespite[T any](err error, owner string, find func() (T, string, error)) (T, error) {
	var zero T
	if !mayHaveActed(err) {
		return zero, err
	}
	x, mark, ferr := find()
	switch {
	case ferr == nil && owner != "" && mark == owner:
		return x, nil
	case ferr != nil && errorCode(ferr) != providers.NotFound:
		return zero, fmt.Errorf("%w (looking for what it may have made: %v)", err, ferr)
	}
	return zero, err
}

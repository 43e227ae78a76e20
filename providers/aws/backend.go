// Package aws implements infra's drivers for AWS with aws-sdk-go-v2: one
// file per kind, holding its driver and its registry entry (registry.go).
// The SDK supplies credentials (its default chain), the endpoint
// (AWS_ENDPOINT_URL), retries (adaptive mode, bounded per call by a time
// budget: retry.go), paginators and waiters; nothing here hand-writes them.
package aws

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// Backend is the AWS provider: the SDK configuration and one driver per
// kind, each with per-region clients made on first use.
type Backend struct {
	cfg     aws.Config
	budget  time.Duration // each call's retry budget
	mu      sync.Mutex
	drivers providers.Drivers
	// Clients of the tag scan (discover.go), made on first use.
	tags *regional[*resourcegroupstaggingapi.Client]
	ec2  *regional[*ec2.Client]
	// account is the credentials' account once Account has established it.
	account string
	// fleet is the fleet the backend serves (SetFleet), for the kinds whose
	// ownership mark is the name prefix (kms-alias: KMS aliases take no
	// tags).
	fleet string
}

var _ providers.Backend = (*Backend)(nil)

// Options tune the backend.
type Options struct {
	// ConfigOptions are passed to config.LoadDefaultConfig after infra's own
	// (the budgeted retries); a test may add middleware here to count calls.
	ConfigOptions []func(*config.LoadOptions) error
	// RetryBudget is how long one call keeps retrying refused or reset
	// connections, 5xx answers and throttling before it fails with a
	// *RetryBudgetError. Zero means INFRA_RETRY_BUDGET, else
	// DefaultRetryBudget (60 s).
	RetryBudget time.Duration
	// Log, when set, receives every call the backend makes (INFRA_LOG).
	Log providers.CallLog
	// Trace, when set, receives every request and response with its
	// body, secrets masked (INFRA_LOG=trace).
	Trace func(string)
}

// New loads the SDK's default configuration: profiles, environment, SSO,
// AWS_ENDPOINT_URL. It makes no call; Account is the first.
func New(ctx context.Context, opts Options) (*Backend, error) {
	budget, err := retryBudget(opts.RetryBudget)
	if err != nil {
		return nil, err
	}
	// The SDK's default logger writes its own lines to stderr whatever
	// the log mode (a DEBUG line for each S3 read without a checksum, a
	// WARN before IMDS): infra says what it means itself, and shows the
	// SDK's log only when tracing.
	loaders := append(withRetryBudget(budget), config.WithLogger(logging.Nop{}))
	if opts.Log != nil {
		loaders = append(loaders, withCallLog(opts.Log))
	}
	if opts.Trace != nil {
		loaders = append(loaders, withTrace(opts.Trace)...)
	}
	loaders = append(loaders, opts.ConfigOptions...)
	cfg, err := config.LoadDefaultConfig(ctx, loaders...)
	if err != nil {
		return nil, fmt.Errorf("aws: load configuration: %w", err)
	}
	return &Backend{cfg: cfg, budget: budget}, nil
}

// Config returns the SDK configuration the backend uses.
func (b *Backend) Config() aws.Config { return b.cfg }

func (b *Backend) Provider() spec.Provider { return spec.AWS }

var _ providers.Services = (*Backend)(nil)

// Service names the AWS service whose rate limits a kind's calls spend,
// so that the engine bounds concurrent work per service.
func (b *Backend) Service(k spec.Kind) string {
	if e, ok := registry[k]; ok {
		return e.service
	}
	return ""
}

// Driver returns the driver for kind k, made once.
func (b *Backend) Driver(k spec.Kind) (providers.Driver, bool) {
	return b.drivers.Get(k, func() (providers.Driver, bool) {
		e, ok := registry[k]
		if !ok {
			return nil, false
		}
		d := e.new(b.cfg, b.Account)
		if fs, ok := d.(providers.FleetScoped); ok {
			b.mu.Lock()
			fs.SetFleet(b.fleet)
			b.mu.Unlock()
		}
		return d, true
	})
}

var _ providers.FleetScoped = (*Backend)(nil)

// SetFleet names the fleet the backend serves, for the drivers whose
// ownership mark is the name prefix <fleet>-; without it they claim
// nothing, which is safe but leaves their resources foreign. The engine
// calls it before anything is read.
func (b *Backend) SetFleet(fleet string) {
	b.mu.Lock()
	b.fleet = fleet
	b.mu.Unlock()
	for _, d := range b.drivers.Made() {
		if fs, ok := d.(providers.FleetScoped); ok {
			fs.SetFleet(fleet)
		}
	}
}

// Account returns the account id the credentials belong to (STS
// GetCallerIdentity, once: every run asks first, and a driver that needs
// the id, S3 Control's, then has it without a call). Failing to establish
// it is an error, never a pass.
func (b *Backend) Account(ctx context.Context) (string, error) {
	b.mu.Lock()
	known := b.account
	b.mu.Unlock()
	if known != "" {
		return known, nil
	}
	// The credentials first, so that none at all is one plain sentence
	// rather than the SDK's chain of every source it tried (the
	// environment, the profiles, IMDS). The SDK caches what it found, so
	// the call below signs with it at no cost.
	if b.cfg.Credentials == nil {
		return "", &NoCredentialsError{}
	}
	if _, err := b.cfg.Credentials.Retrieve(ctx); err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", &NoCredentialsError{Cause: err}
	}
	out, err := sts.NewFromConfig(b.cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", err // the engine and the sweep say what failed, once
	}
	b.mu.Lock()
	b.account = aws.ToString(out.Account)
	b.mu.Unlock()
	return aws.ToString(out.Account), nil
}

// NoCredentialsError is a run with no usable AWS credentials: none in the
// environment, the profiles or the instance metadata.
type NoCredentialsError struct{ Cause error }

func (e *NoCredentialsError) Error() string {
	return "no AWS credentials found: set AWS_PROFILE to a profile (aws configure, aws sso login), or AWS_ACCESS_KEY_ID and " +
		"AWS_SECRET_ACCESS_KEY; to try infra without an account, set AWS_ENDPOINT_URL to an emulator and any test keys " +
		"(aws sts get-caller-identity shows what the SDK tried)"
}

func (e *NoCredentialsError) Unwrap() error { return e.Cause }

// regional holds one SDK client per region, made on first use.
type regional[T any] struct {
	cfg  aws.Config
	make func(aws.Config) T
	mu   sync.Mutex
	m    map[string]T
}

func newRegional[T any](cfg aws.Config, mk func(aws.Config) T) *regional[T] {
	return &regional[T]{cfg: cfg, make: mk, m: map[string]T{}}
}

func (r *regional[T]) get(region string) T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.m[region]; ok {
		return c
	}
	cfg := r.cfg.Copy()
	cfg.Region = region
	if region == "" {
		refuseWithoutRegion(&cfg)
	}
	c := r.make(cfg)
	r.m[region] = c
	return c
}

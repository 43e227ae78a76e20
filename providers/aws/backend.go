// Package aws implements infra's drivers for AWS with aws-sdk-go-v2: one
// file per kind. The SDK supplies credentials (its default chain), the
// endpoint (AWS_ENDPOINT_URL), retries (adaptive mode, bounded per call by
// a time budget: retry.go), paginators and waiters; nothing here
// hand-writes them.
package aws

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// Backend is the AWS provider: the SDK configuration and one driver per
// kind, each with per-region clients made on first use.
type Backend struct {
	cfg     aws.Config
	budget  time.Duration // each call's retry budget
	mu      sync.Mutex
	drivers map[spec.Kind]providers.Driver
	// Clients of the tag scan (discover.go), made on first use.
	tags *regional[*resourcegroupstaggingapi.Client]
	ec2  *regional[*ec2.Client]
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
}

// New loads the SDK's default configuration: profiles, environment, SSO,
// AWS_ENDPOINT_URL. It makes no call; Account is the first.
func New(ctx context.Context, opts Options) (*Backend, error) {
	budget, err := retryBudget(opts.RetryBudget)
	if err != nil {
		return nil, err
	}
	loaders := append(withRetryBudget(budget), opts.ConfigOptions...)
	cfg, err := config.LoadDefaultConfig(ctx, loaders...)
	if err != nil {
		return nil, fmt.Errorf("aws: load configuration: %w", err)
	}
	return &Backend{cfg: cfg, budget: budget, drivers: map[spec.Kind]providers.Driver{}}, nil
}

// Config returns the SDK configuration the backend uses.
func (b *Backend) Config() aws.Config { return b.cfg }

func (b *Backend) Provider() spec.Provider { return spec.AWS }

var _ providers.Services = (*Backend)(nil)

// Service names the AWS service whose rate limits a kind's calls spend,
// so that the engine bounds concurrent work per service.
func (b *Backend) Service(k spec.Kind) string { return serviceOf[k] }

var serviceOf = map[spec.Kind]string{
	spec.ObjectStore: "s3", spec.S3Bucket: "s3", spec.Queues: "sqs", spec.Secrets: "secretsmanager",
	spec.IAM: "iam", spec.ImageRegistry: "ecr", spec.Postgres: "rds", spec.Compute: "lambda",
	spec.SecurityGroup: "ec2", spec.AWSInstance: "ec2",
}

// Driver returns the driver for kind k, made once.
func (b *Backend) Driver(k spec.Kind) (providers.Driver, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d, ok := b.drivers[k]; ok {
		return d, true
	}
	mk, ok := factories[k]
	if !ok {
		return nil, false
	}
	d := mk(b.cfg)
	b.drivers[k] = d
	return d, true
}

// Kinds lists the kinds this backend has drivers for, sorted.
func Kinds() []spec.Kind {
	out := make([]spec.Kind, 0, len(factories))
	for k := range factories {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Account returns the account id the credentials belong to (STS
// GetCallerIdentity). Failing to establish it is an error, never a pass.
func (b *Backend) Account(ctx context.Context) (string, error) {
	out, err := sts.NewFromConfig(b.cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", err // the engine and the sweep say what failed, once
	}
	return aws.ToString(out.Account), nil
}

// factory makes one kind's driver from the SDK configuration.
type factory func(cfg aws.Config) providers.Driver

var factories = map[spec.Kind]factory{}

// register adds a kind's driver. Each kind's file calls it from init, so a
// kind is one file.
func register(k spec.Kind, f factory) { factories[k] = f }

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
	c := r.make(cfg)
	r.m[region] = c
	return c
}

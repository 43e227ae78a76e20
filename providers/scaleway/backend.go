// Package scaleway implements infra's drivers for Scaleway with
// scaleway-sdk-go: one file per kind, holding its driver and its registry
// entry (kinds.go). Object storage and queues speak the S3 and SQS APIs,
// through aws-sdk-go-v2's clients pointed at Scaleway.
//
// Every call is scoped to one project, the fleet's: listings always carry
// project_id (a predecessor listed organization-wide and destroyed other
// projects' resources), S3 calls sign with "<access key>@<project>" so that
// Object Storage answers for that project, and the SQS credential is minted
// in it. IAM applications are organization-level by nature; their listing
// carries the organization and the ownership tag does the rest.
package scaleway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	account "github.com/scaleway/scaleway-sdk-go/api/account/v3"
	iam "github.com/scaleway/scaleway-sdk-go/api/iam/v1alpha1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// Options tune the backend. The zero value is the production setting.
type Options struct {
	// ClientOptions are applied after the configuration (config file,
	// then SCW_* environment): tests point the SDK at the fake with
	// scw.WithAPIURL and give it credentials here.
	ClientOptions []scw.ClientOption
	// S3Endpoint replaces https://s3.<region>.scw.cloud (tests: moto).
	// When set, requests use path-style addressing.
	S3Endpoint string
	// Fleet is the fleet the backend serves. Kinds whose ownership mark is
	// the name prefix (queues, postgres) report a resource as the fleet's
	// when its name starts with "<fleet>-"; without a fleet they claim
	// nothing, which fails safe.
	Fleet string
	// PageSize is the page size of every listing; 100 when zero.
	PageSize uint32
	// WaitInterval is how often the SDK's waiters poll; 5s when zero.
	WaitInterval time.Duration
	// WaitTimeout bounds one wait; 15 minutes when zero.
	WaitTimeout time.Duration
	// Settle is how long the SQS control and data planes may answer
	// 403/404 after an activation or a new credential; 2 minutes when zero.
	Settle time.Duration
	// Progress receives a line when a driver starts and ends a wait.
	Progress func(string)
	// Log, when set, receives every REST call the backend makes
	// (INFRA_LOG); Trace every attempt's request and response, secrets
	// masked (INFRA_LOG=trace).
	Log   providers.CallLog
	Trace func(string)
	// HTTPClient is used for S3, SQS and the function code upload.
	HTTPClient *http.Client
	// RetryBudget is how long one REST call keeps retrying what is safe
	// to repeat (retry.go) before it fails with a
	// *providers.RetryBudgetError. Zero means INFRA_RETRY_BUDGET, else
	// providers.DefaultRetryBudget (60 s).
	RetryBudget time.Duration
}

// Backend is the Scaleway provider.
type Backend struct {
	client  *scw.Client
	opts    Options
	budget  time.Duration // each REST call's retry budget
	project string
	region  scw.Region

	mu      sync.Mutex
	fleet   string
	org     string
	primed  bool
	drivers providers.Drivers
	sqs     map[string]*sqsCredential // region -> memo (project-scoped backend)
}

var (
	_ providers.Backend     = (*Backend)(nil)
	_ providers.FleetScoped = (*Backend)(nil)
)

// New builds the backend from the standard Scaleway configuration: the
// active profile of ~/.config/scw/config.yaml (or SCW_CONFIG_PATH), then
// the SCW_* environment (SCW_ACCESS_KEY, SCW_SECRET_KEY,
// SCW_DEFAULT_PROJECT_ID, SCW_DEFAULT_REGION, SCW_API_URL), then
// opts.ClientOptions. It makes no call; Account is the first.
func New(opts Options) (*Backend, error) {
	var copts []scw.ClientOption
	cfg, err := scw.LoadConfig()
	var notFound *scw.ConfigFileNotFoundError
	switch {
	case err == nil:
		p, perr := cfg.GetActiveProfile()
		if perr != nil {
			return nil, fmt.Errorf("scaleway: configuration: %w", perr)
		}
		copts = append(copts, scw.WithProfile(p))
	case errors.As(err, &notFound):
		// No file: the environment alone.
	default:
		return nil, fmt.Errorf("scaleway: read the configuration file: %w", err)
	}
	copts = append(copts, scw.WithEnv())
	budget, rest, err := restClient(opts)
	if err != nil {
		return nil, err
	}
	copts = append(copts, rest)
	copts = append(copts, opts.ClientOptions...)
	client, err := scw.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("scaleway: configuration: %w", err)
	}
	b := newBackend(client, opts)
	b.budget = budget
	return b, nil
}

func newBackend(client *scw.Client, opts Options) *Backend {
	if opts.PageSize == 0 {
		opts.PageSize = 100
	}
	if opts.WaitInterval == 0 {
		opts.WaitInterval = 5 * time.Second
	}
	if opts.WaitTimeout == 0 {
		opts.WaitTimeout = 15 * time.Minute
	}
	if opts.Settle == 0 {
		opts.Settle = 2 * time.Minute
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 5 * time.Minute}
	}
	b := &Backend{client: client, opts: opts, fleet: opts.Fleet,
		sqs: map[string]*sqsCredential{}}
	b.project, _ = client.GetDefaultProjectID()
	b.region, _ = client.GetDefaultRegion()
	return b
}

func (b *Backend) Provider() spec.Provider { return spec.Scaleway }

// SetFleet names the fleet the backend serves, for the kinds whose
// ownership mark is the name prefix. The CLI calls it once the fleet
// document is read.
func (b *Backend) SetFleet(fleet string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fleet = fleet
}

func (b *Backend) fleetName() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fleet
}

// Client returns the SDK client (for tests and tools).
func (b *Backend) Client() *scw.Client { return b.client }

// Driver returns the driver for kind k, made once.
func (b *Backend) Driver(k spec.Kind) (providers.Driver, bool) {
	return b.drivers.Get(k, func() (providers.Driver, bool) {
		e, ok := entries[k]
		if !ok {
			return nil, false
		}
		return e.new(b), true
	})
}

// Account returns the project every call is scoped to: the configured
// default project, or else the default project of the API key. It checks
// that the credentials can read that project (which also gives the
// organization IAM needs). An identity it cannot establish is an error.
func (b *Backend) Account(ctx context.Context) (string, error) {
	project, err := b.ensureProject(ctx)
	if err != nil {
		return "", err
	}
	return project, nil
}

func (b *Backend) ensureProject(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.org != "" {
		return b.project, nil
	}
	b.prime()
	if b.project == "" {
		key, ok := b.client.GetAccessKey()
		if !ok || key == "" {
			return "", errors.New("scaleway: no project configured (SCW_DEFAULT_PROJECT_ID or default_project_id in ~/.config/scw/config.yaml) and no access key to find the key's default project")
		}
		k, err := iam.NewAPI(b.client).GetAPIKey(&iam.GetAPIKeyRequest{AccessKey: key}, scw.WithContext(ctx))
		if err != nil {
			return "", fmt.Errorf("scaleway: find the default project of access key %s: %w", key, err)
		}
		b.project = k.DefaultProjectID
	}
	p, err := account.NewProjectAPI(b.client).GetProject(&account.ProjectAPIGetProjectRequest{ProjectID: b.project}, scw.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("scaleway: read project %s with these credentials: %w", b.project, err)
	}
	b.org = p.OrganizationID
	return b.project, nil
}

// prime fetches the API gateway's metadata once, before any concurrent
// call: the SDK caches it on the client without a lock, so the first
// fetch must not race. A failure is ignored, as the SDK does.
func (b *Backend) prime() {
	if !b.primed {
		if _, err := b.client.GetAPIMetadata(); err == nil {
			b.primed = true
		}
	}
}

// scope returns the project and organization, establishing them on first
// use, so that no call goes out unscoped.
func (b *Backend) scope(ctx context.Context) (project, org string, err error) {
	project, err = b.ensureProject(ctx)
	if err != nil {
		return "", "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return project, b.org, nil
}

// Region is the configured default region (SCW_DEFAULT_REGION), if any.
func (b *Backend) Region() string { return string(b.region) }

func (b *Backend) progress(format string, args ...any) {
	if b.opts.Progress != nil {
		b.opts.Progress(fmt.Sprintf(format, args...))
	}
}

// wait is the waiter settings every driver passes to the SDK.
func (b *Backend) wait() (*time.Duration, *time.Duration) {
	t, i := b.opts.WaitTimeout, b.opts.WaitInterval
	return &t, &i
}

// awaitDeletion runs a product's waiter after a delete. The waiter ends
// with the API's 404 for what is gone, untyped on Functions and Registry,
// or with Serverless SQL's 403 where denialMeansGone: after our own delete
// either is success.
func (b *Backend) awaitDeletion(k spec.Kind, name string, denialMeansGone bool, wait func(timeout, interval *time.Duration) error) error {
	timeout, interval := b.wait()
	b.progress("scaleway/%s/%s: waiting for the deletion", k, name)
	if err := wait(timeout, interval); err != nil && !gone(err, denialMeansGone) {
		return err
	}
	return nil
}

// Keys are explicit Scaleway credentials, for a process that holds them
// in memory rather than in the environment (the executor reads them from a
// secret). The secret key stays a spec.Sensitive until the client has it.
type Keys struct {
	AccessKey string
	SecretKey spec.Sensitive
	Project   string
	Region    string
}

// NewWithKeys builds the backend from explicit credentials, ignoring the
// configuration file and the environment.
func NewWithKeys(k Keys, opts Options) (*Backend, error) {
	budget, rest, err := restClient(opts)
	if err != nil {
		return nil, err
	}
	copts := []scw.ClientOption{scw.WithAuth(k.AccessKey, k.SecretKey.Reveal()), rest}
	if k.Project != "" {
		copts = append(copts, scw.WithDefaultProjectID(k.Project))
	}
	if k.Region != "" {
		region, err := scw.ParseRegion(k.Region)
		if err != nil {
			return nil, fmt.Errorf("scaleway: region %q: %w", k.Region, err)
		}
		copts = append(copts, scw.WithDefaultRegion(region))
	}
	copts = append(copts, opts.ClientOptions...)
	client, err := scw.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("scaleway: credentials: %w", err)
	}
	b := newBackend(client, opts)
	b.budget = budget
	return b, nil
}

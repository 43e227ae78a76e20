// Package gcp implements infra's drivers for Google Cloud with the official
// Go clients: cloud.google.com/go/storage for Cloud Storage,
// cloud.google.com/go/pubsub/v2 for Pub/Sub, and google.golang.org/api
// where a single REST call is all a driver needs (Resource Manager). One
// file per kind, holding its driver and its registry entry (kinds.go).
//
// Every call names the fleet's project (projects/<id>/…, or the project
// parameter of a listing), so nothing is listed or changed outside it; the
// project is established, and checked readable with these credentials,
// before the first listing (Account).
package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/pubsub/v2"
	secretmanager "cloud.google.com/go/secretmanager/apiv1"
	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	cloudasset "google.golang.org/api/cloudasset/v1"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/option"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// APIURLEnv replaces Google's per-service hosts for the REST APIs that have
// no emulator variable of their own (Resource Manager and, later, Secret
// Manager, Artifact Registry, Cloud SQL, Cloud Run, IAM): every such API is
// then called at this base URL. It is for a private endpoint or a test
// server. Cloud Storage and Pub/Sub honour their clients' own
// STORAGE_EMULATOR_HOST and PUBSUB_EMULATOR_HOST.
const APIURLEnv = "INFRA_GCP_API_URL"

// AssetInventoryEnv, set to "on", makes discover's deep scan search Cloud
// Asset Inventory (Options.AssetInventory).
const AssetInventoryEnv = "INFRA_GCP_ASSET_INVENTORY"

// Options tune the backend. The zero value is the production setting.
type Options struct {
	// Project is the project every call is scoped to. Empty: the
	// GOOGLE_CLOUD_PROJECT environment variable, then CLOUDSDK_CORE_PROJECT,
	// then the project of the Application Default Credentials.
	Project string
	// ClientOptions are given to every client (tests: credentials).
	ClientOptions []option.ClientOption
	// RESTOptions, StorageOptions and PubSubOptions follow ClientOptions
	// for the REST APIs' clients, the Cloud Storage client and the Pub/Sub
	// client alone (tests: the fakes' endpoints and credentials).
	RESTOptions, StorageOptions, PubSubOptions []option.ClientOption
	// APIURL is the base URL of the REST APIs; APIURLEnv, else Google's.
	APIURL string
	// Fleet is the fleet the backend serves, for diagnostics.
	Fleet string
	// AssetInventory makes a deep scan (discover's) one Cloud Asset
	// Inventory search rather than a listing per kind; AssetInventoryEnv
	// set to "on" sets it.
	AssetInventory bool
	// PageSize is the page size of every listing; 100 when zero.
	PageSize int
	// RetryBudget is how long one call keeps retrying what is safe to
	// repeat before it fails. Zero means INFRA_RETRY_BUDGET, else
	// providers.DefaultRetryBudget.
	RetryBudget time.Duration
	// Log receives every API call (INFRA_LOG=debug); Trace every REST
	// request and response with its body, secrets masked (INFRA_LOG=trace).
	Log   providers.CallLog
	Trace func(string)
}

// Backend is the GCP provider.
type Backend struct {
	opts   Options
	budget time.Duration

	mu      sync.Mutex
	project string // established by scope
	number  int64  // the project's number, which Cloud Storage reports
	checked bool   // the project was read with these credentials
	storage lazy[*storage.Client]
	pubsub  lazy[*pubsub.Client]
	secrets lazy[*secretmanager.Client]
	assets  lazy[*cloudasset.Service]
	// authenticated is the HTTP client every REST client's transport
	// wraps: one token source for all of them (transport.go).
	authenticated lazy[*http.Client]
	// noAssets: the asset search was refused (no permission, or the API
	// is not enabled); a deep scan lists each kind instead.
	noAssets bool
	drivers  providers.Drivers
	projects *crm.Service
}

var _ providers.Backend = (*Backend)(nil)

// New builds the backend. It makes no call; Account is the first.
func New(opts Options) (*Backend, error) {
	budget, err := providers.RetryBudget(opts.RetryBudget)
	if err != nil {
		return nil, fmt.Errorf("gcp: %w", err)
	}
	if opts.PageSize == 0 {
		opts.PageSize = 100
	}
	if opts.APIURL == "" {
		opts.APIURL = os.Getenv(APIURLEnv)
	}
	switch v := os.Getenv(AssetInventoryEnv); v {
	case "on":
		opts.AssetInventory = true
	case "", "off":
	default:
		return nil, fmt.Errorf("gcp: %s is %q; want on or off", AssetInventoryEnv, spec.Printable(v))
	}
	return &Backend{opts: opts, budget: budget}, nil
}

func (b *Backend) Provider() spec.Provider { return spec.GCP }

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

// Account returns the project every call is scoped to, after reading it
// with these credentials: a project that does not exist, or that the
// credentials cannot see, is an error, never a pass.
func (b *Backend) Account(ctx context.Context) (string, error) {
	return b.scope(ctx)
}

// scope establishes the project on first use, so that no call goes out
// unscoped.
func (b *Backend) scope(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.checked {
		return b.project, nil
	}
	project, err := b.configuredProject(ctx)
	if err != nil {
		return "", err
	}
	if b.projects == nil {
		if b.projects, err = restService(ctx, b, "cloudresourcemanager", crm.NewService); err != nil {
			return "", fmt.Errorf("gcp: Resource Manager client: %w", err)
		}
	}
	p, err := b.projects.Projects.Get("projects/" + project).Context(ctx).Do()
	if err != nil {
		return "", fmt.Errorf("gcp: read project %s with these credentials: %w", project, err)
	}
	if p.ProjectId != project {
		return "", fmt.Errorf("gcp: project %s answered as %q: configure the project id, not its number or display name", project, p.ProjectId)
	}
	number, err := strconv.ParseInt(strings.TrimPrefix(p.Name, "projects/"), 10, 64)
	if err != nil {
		return "", fmt.Errorf("gcp: project %s has the name %q, not projects/<number>: %w", project, p.Name, err)
	}
	b.project, b.number, b.checked = project, number, true
	return project, nil
}

// projectNumber is the number of the project scope established.
func (b *Backend) projectNumber() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return uint64(b.number)
}

// configuredProject is the project the options, the environment or the
// credentials name.
func (b *Backend) configuredProject(ctx context.Context) (string, error) {
	for _, p := range []string{b.opts.Project, os.Getenv("GOOGLE_CLOUD_PROJECT"), os.Getenv("CLOUDSDK_CORE_PROJECT")} {
		if p != "" {
			return p, nil
		}
	}
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{cloudPlatformScope}})
	if err != nil {
		return "", fmt.Errorf("gcp: no project configured (GOOGLE_CLOUD_PROJECT) and no Application Default Credentials to take one from: %w", err)
	}
	p, err := creds.ProjectID(ctx)
	if err != nil || p == "" {
		return "", errors.New("gcp: no project configured: set GOOGLE_CLOUD_PROJECT, or use credentials that name one")
	}
	return p, nil
}

// secretManager is the Secret Manager client (REST), made once.
func (b *Backend) secretManager(ctx context.Context) (*secretmanager.Client, error) {
	return b.secrets.get("Secret Manager", func() (*secretmanager.Client, error) {
		return gapicClient(ctx, b, "secretmanager", secretmanager.NewRESTClient)
	})
}

// storageClient is the Cloud Storage client, made once, retrying what is
// idempotent within the retry budget.
func (b *Backend) storageClient(ctx context.Context) (*storage.Client, error) {
	return b.storage.get("Cloud Storage", func() (*storage.Client, error) {
		opts, err := b.storageOptions(ctx)
		if err != nil {
			return nil, err
		}
		c, err := storage.NewClient(context.WithoutCancel(ctx), opts...)
		if err != nil {
			return nil, err
		}
		c.SetRetry(storage.WithMaxRetryDuration(b.budget),
			storage.WithBackoff(gax.Backoff{Initial: 200 * time.Millisecond, Max: providers.MaxRetryDelay, Multiplier: 2}))
		return c, nil
	})
}

// pubsubClient is the Pub/Sub client of the project, made once.
func (b *Backend) pubsubClient(ctx context.Context) (*pubsub.Client, error) {
	project, err := b.scope(ctx)
	if err != nil {
		return nil, err
	}
	return b.pubsub.get("Pub/Sub", func() (*pubsub.Client, error) {
		c, err := pubsub.NewClient(context.WithoutCancel(ctx), project, b.pubsubOptions()...)
		if err != nil {
			return nil, err
		}
		b.budgetPubSub(c)
		return c, nil
	})
}

// Close releases the clients' connections.
func (b *Backend) Close() error {
	errs := []error{b.storage.close(), b.pubsub.close(), b.secrets.close(), b.assets.close()}
	for _, d := range b.drivers.Made() {
		if c, ok := d.(interface{ close() error }); ok {
			errs = append(errs, c.close())
		}
	}
	return errors.Join(errs...)
}

// MissingCredentials says why no credentials would reach GCP, or "" when
// the Application Default Credentials (or the options) give some.
func (b *Backend) MissingCredentials() string {
	if len(b.opts.ClientOptions)+len(b.opts.RESTOptions) > 0 {
		return ""
	}
	if _, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{cloudPlatformScope}}); err != nil {
		return fmt.Sprintf("no GCP credentials were found (GOOGLE_APPLICATION_CREDENTIALS, gcloud auth application-default login, or the metadata server): %v", err)
	}
	return ""
}

// cloudPlatformScope is the scope every client asks for.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// Region is the configured default region (CLOUDSDK_COMPUTE_REGION), if
// any.
func (b *Backend) Region() string { return os.Getenv("CLOUDSDK_COMPUTE_REGION") }

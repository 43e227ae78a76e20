package gcp

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/httpcall"
	"github.com/infra-iac/infra/spec"
)

// Every GCP call goes through infra's own transport, so that the call log
// (INFRA_LOG) names it and, where the client does not retry, the retry
// budget covers it:
//   - the REST clients (Resource Manager, Secret Manager, Artifact
//     Registry, Cloud SQL, Cloud Run, IAM, Cloud Asset Inventory) share one
//     authenticated HTTP client, wrapped per service by httpcall's
//     retrying transport: neither google.golang.org/api nor the GAPIC REST
//     clients retry a call (Secret Manager's version access and disable
//     aside, whose own retries then wrap these);
//   - Cloud Storage retries by itself within the budget (storageClient),
//     so its transport only logs;
//   - Pub/Sub is gRPC: an interceptor logs each attempt of its admin
//     calls, which the client retries, within the budget (budgetPubSub).

// restService makes a google.golang.org/api client of service with
// newClient (sqladmin.NewService, …): on the REST HTTP client for the
// service, at the API URL when one is set (these clients join paths to an
// endpoint ending in "/"). Not the caller's deadline: the client outlives
// the call that made it.
func restService[T any](ctx context.Context, b *Backend, service string, newClient func(context.Context, ...option.ClientOption) (T, error)) (T, error) {
	return newREST(ctx, b, service, "/", newClient)
}

// gapicClient is restService for a cloud.google.com/go REST client
// (secretmanager.NewRESTClient, …), whose endpoint has no trailing "/".
func gapicClient[T any](ctx context.Context, b *Backend, service string, newClient func(context.Context, ...option.ClientOption) (T, error)) (T, error) {
	return newREST(ctx, b, service, "", newClient)
}

func newREST[T any](ctx context.Context, b *Backend, service, slash string, newClient func(context.Context, ...option.ClientOption) (T, error)) (T, error) {
	c, err := b.restClient(ctx, service)
	if err != nil {
		var zero T
		return zero, err
	}
	opts := []option.ClientOption{option.WithHTTPClient(c)}
	if b.opts.APIURL != "" {
		opts = append(opts, option.WithEndpoint(b.opts.APIURL+slash))
	}
	return newClient(context.WithoutCancel(ctx), opts...)
}

// restClient is the HTTP client of one REST service: the shared
// authenticated client, behind a transport that logs the service's calls
// and retries them within the budget.
func (b *Backend) restClient(ctx context.Context, service string) (*http.Client, error) {
	base, err := b.authenticated.get("HTTP", func() (*http.Client, error) {
		// cloud-platform first, so that a scope in the caller's options
		// replaces it. Not the caller's deadline: the client outlives
		// this call.
		opts := append([]option.ClientOption{option.WithScopes(cloudPlatformScope)}, b.opts.ClientOptions...)
		c, _, err := htransport.NewClient(context.WithoutCancel(ctx), append(opts, b.opts.RESTOptions...)...)
		return c, err
	})
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &httpcall.Transport{Next: base.Transport, Budget: b.budget,
		Log: b.opts.Log, Trace: b.opts.Trace, Describe: describe(service), AnswerError: answerError}}, nil
}

// storageOptions are the Cloud Storage client's options: its own HTTP
// client behind a transport that logs, since the client retries by itself.
func (b *Backend) storageOptions(ctx context.Context) ([]option.ClientOption, error) {
	opts := append(slices.Clone(b.opts.ClientOptions), b.opts.StorageOptions...)
	if b.opts.Log == nil && b.opts.Trace == nil {
		return opts, nil
	}
	auth := append([]option.ClientOption{option.WithScopes(cloudPlatformScope)}, opts...)
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" {
		// As the storage client does for its emulator: no credentials.
		auth = append(auth, option.WithoutAuthentication())
	}
	c, _, err := htransport.NewClient(context.WithoutCancel(ctx), auth...)
	if err != nil {
		return nil, err
	}
	return append(opts, option.WithHTTPClient(&http.Client{Transport: &httpcall.Transport{Next: c.Transport,
		Log: b.opts.Log, Trace: b.opts.Trace, Describe: describe("storage"), AnswerError: answerError}})), nil
}

// pubsubOptions are the Pub/Sub client's options, with an interceptor
// that logs each call when a log is asked for.
func (b *Backend) pubsubOptions() []option.ClientOption {
	opts := append(slices.Clone(b.opts.ClientOptions), b.opts.PubSubOptions...)
	if b.opts.Log == nil {
		return opts
	}
	return append(opts, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(b.logRPC)))
}

// budgetPubSub replaces the retries of the admin calls the queues driver
// makes: the client's own retry what Google's defaults name for 60 s with
// waits growing to 60 s, and never a 429. Here every one retries within
// the call's retry budget, with waits capped at providers.MaxRetryDelay,
// on Unavailable (the API was not reached, or answered it unprocessed) and
// ResourceExhausted (a 429, refused unprocessed); a read also on Aborted
// and Unknown, as Google's defaults for reads do. A create repeated after
// it took effect answers AlreadyExists, which the driver settles by the
// mark.
func (b *Backend) budgetPubSub(c *pubsub.Client) {
	retry := func(cs ...codes.Code) []gax.CallOption {
		return []gax.CallOption{gax.WithRetry(func() gax.Retryer {
			return &budgeted{Retryer: gax.OnCodes(cs, gax.Backoff{Initial: httpcall.FirstRetryDelay, Max: providers.MaxRetryDelay, Multiplier: 2}),
				start: time.Now(), budget: b.budget}
		})}
	}
	write := retry(codes.Unavailable, codes.ResourceExhausted)
	read := retry(codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.Unknown)
	t := c.TopicAdminClient.CallOptions
	t.CreateTopic, t.UpdateTopic, t.DeleteTopic, t.GetTopic, t.ListTopics = write, write, write, read, read
	sub := c.SubscriptionAdminClient.CallOptions
	sub.CreateSubscription, sub.UpdateSubscription, sub.DeleteSubscription = write, write, write
	sub.GetSubscription, sub.ListSubscriptions = read, read
}

// budgeted stops a call's retries when the next wait would take it past
// its budget, so that the call fails with its last answer (a 429 still
// classifies as throttled), not with a deadline a timeout set.
type budgeted struct {
	gax.Retryer
	start  time.Time
	budget time.Duration
}

func (r *budgeted) Retry(err error) (time.Duration, bool) {
	d, ok := r.Retryer.Retry(err)
	if !ok || time.Since(r.start)+d > r.budget {
		return 0, false
	}
	return d, true
}

// logRPC writes one gRPC attempt to the call log: the method
// "/google.pubsub.v1.Publisher/CreateTopic" is the service pubsub and the
// operation Publisher/CreateTopic. A gRPC call has no HTTP status: a call
// that succeeded has 200, one that failed 0 and its error.
func (b *Backend) logRPC(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoke(ctx, method, req, reply, cc, opts...)
	c := providers.Call{Provider: spec.GCP, Service: "pubsub", Operation: method, Address: providers.AddressIn(ctx),
		Duration: time.Since(start), Err: err}
	if i := strings.LastIndex(method, "."); i >= 0 {
		c.Operation = method[i+1:]
	}
	if err == nil {
		c.Status = http.StatusOK
	}
	b.opts.Log(c)
	return err
}

// describe names a REST call of service for the call log: the operation
// is its method and path, the region the path's locations/<region>, if it
// names one.
func describe(service string) func(*http.Request) providers.Call {
	return func(req *http.Request) providers.Call {
		c := providers.Call{Provider: spec.GCP, Service: service, Operation: req.Method + " " + req.URL.Path}
		parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
		for i := 0; i+1 < len(parts); i++ {
			if parts[i] == "locations" {
				c.Region = parts[i+1]
			}
		}
		return c
	}
}

// answerError is the error Google's clients make of an answer, for the
// last one of a call that ran out of its retry budget: a googleapi.Error,
// which errorCode classifies by its status.
func answerError(resp *http.Response) error {
	defer resp.Body.Close()
	return googleapi.CheckResponse(resp)
}

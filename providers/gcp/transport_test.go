package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/gcptest"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// envBehind is newEnv with the REST APIs reached at the URL front returns
// for the fake's, and the given retry budget, its project established.
func envBehind(t *testing.T, budget time.Duration, front func(*gcptest.Fakes) string, opts Options) *env {
	t.Helper()
	f := gcptest.Start(t, testProject)
	opts.Project, opts.APIURL, opts.RetryBudget = testProject, front(f), budget
	opts.RESTOptions, opts.StorageOptions, opts.PubSubOptions = f.RESTOptions, f.StorageOptions, f.PubSubOptions
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if _, err := b.Account(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &env{backend: b, rest: f.REST, gcs: f.GCS, pubsub: f.PubSub, fakes: f}
}

func secretTarget(name, value string) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: fleet,
		Fields: map[string]any{"value": spec.NewSensitive(value)}}
}

func count(e *env, method, suffix string) int {
	n := 0
	for _, r := range e.rest.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

// googleError writes an error as Google's REST APIs do.
func googleError(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":"injected %s","status":%q}}`, code, status, status)
}

// Neither google.golang.org/api nor the GAPIC REST clients retry a call,
// so the backend's transport does, where a repeat is safe: a listing
// (GET) answered 503 and then 429 is sent again; a create (POST) answered
// 429, refused unprocessed, is sent again and made once; a create
// answered 502 after the API acted is not sent again, since a second one
// could make a second resource, and its error is the 502's.
func TestRESTCallsRetryOnlyWhereARepeatIsSafe(t *testing.T) {
	var mu sync.Mutex
	var lists, creates, secretPosts int
	e := envBehind(t, 20*time.Second, func(f *gcptest.Fakes) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			accounts := strings.HasSuffix(r.URL.Path, "/v1/projects/"+testProject+"/serviceAccounts")
			secrets := strings.HasSuffix(r.URL.Path, "/v1/projects/"+testProject+"/secrets")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case accounts && r.Method == http.MethodGet && lists < 2:
				lists++
				if lists == 1 {
					googleError(w, http.StatusServiceUnavailable, "UNAVAILABLE")
					return
				}
				googleError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED")
			case accounts && r.Method == http.MethodPost && creates == 0:
				creates++
				googleError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED")
			case secrets && r.Method == http.MethodPost:
				secretPosts++
				// The API acted, then its front end failed.
				f.REST.ServeHTTP(httptest.NewRecorder(), r)
				googleError(w, http.StatusBadGateway, "UNAVAILABLE")
			default:
				f.REST.ServeHTTP(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}, Options{})

	iamDriver, _ := e.backend.Driver(spec.IAM)
	if _, err := iamDriver.List(t.Context(), testRegion); err != nil {
		t.Fatalf("a listing answered 503, 429, then 200: %v", err)
	}
	if lists != 2 {
		t.Errorf("%d listings answered with an error; want 2", lists)
	}
	if _, err := iamDriver.Create(t.Context(), providers.Target{Name: "deployer", Owner: fleet,
		Fields: map[string]any{"policies": []any{}}}); err != nil {
		t.Fatalf("a create answered 429, then made: %v", err)
	}
	if n := count(e, http.MethodPost, "/serviceAccounts"); n != 1 {
		t.Errorf("the fake made %d service accounts; want 1", n)
	}

	secrets, _ := e.backend.Driver(spec.Secrets)
	_, err := secrets.Create(t.Context(), secretTarget("db-password", "v"))
	var g *googleapi.Error
	if !errors.As(err, &g) || g.Code != http.StatusBadGateway {
		t.Fatalf("create answered 502: %v; want the 502", err)
	}
	if secretPosts != 1 {
		t.Fatalf("the create was sent %d times; want once", secretPosts)
	}
	if strings.Contains(err.Error(), "gave up") {
		t.Errorf("a POST that was not retried says it gave up: %v", err)
	}
}

// With every connection to the REST APIs refused for 3 s, as when a
// front end restarts, a listing and a create that the outage catches ride
// it out: the create's connection was never made, so sending it again is
// safe, and it is made once.
func TestRESTCallsRideOutAnOutage(t *testing.T) {
	var proxy *faultproxy.Proxy
	e := envBehind(t, 20*time.Second, func(f *gcptest.Fakes) string {
		var err error
		if proxy, err = faultproxy.Start(f.APIURL, faultproxy.Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { proxy.Close() })
		return proxy.URL
	}, Options{})
	registry, _ := e.backend.Driver(spec.ImageRegistry)
	secrets, _ := e.backend.Driver(spec.Secrets)
	proxy.Down(3 * time.Second)
	began := time.Now()
	if _, err := registry.List(t.Context(), testRegion); err != nil {
		t.Fatalf("a listing through a 3 s outage: %v", err)
	}
	if took := time.Since(began); took < 2*time.Second {
		t.Errorf("the listing took %v: it did not meet the outage", took)
	}
	proxy.Down(3 * time.Second)
	// Let the client see its kept-alive connection closed by the proxy,
	// so that the create dials, and is refused, rather than being cut on
	// a connection the proxy closes under it (a cut POST is not resent).
	time.Sleep(200 * time.Millisecond)
	if _, err := secrets.Create(t.Context(), secretTarget("db-password", "v")); err != nil {
		t.Fatalf("a create through a 3 s outage: %v", err)
	}
	if n := count(e, http.MethodPost, "/secrets"); n != 1 {
		t.Errorf("%d secrets created; want 1", n)
	}
}

// Past its budget a call fails saying it gave up after how many attempts
// over how long, and its last answer still classifies: throttled.
func TestRetryBudgetEndsAThrottledCall(t *testing.T) {
	e := envBehind(t, time.Second, func(f *gcptest.Fakes) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/instances") {
				googleError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED")
				return
			}
			f.REST.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}, Options{})
	d, _ := e.backend.Driver(spec.Postgres)
	began := time.Now()
	_, err := d.List(t.Context(), testRegion)
	took := time.Since(began)
	var budget *providers.RetryBudgetError
	if !errors.As(err, &budget) || budget.Attempts < 2 || !strings.Contains(err.Error(), "INFRA_RETRY_BUDGET") {
		t.Fatalf("List = %v; want a call that gave up within its budget", err)
	}
	if code := e.backend.ErrorCode(err); code != providers.Throttled {
		t.Errorf("code %s; want throttled", code)
	}
	if took > time.Second+providers.MaxRetryDelay+time.Second {
		t.Errorf("a 1s budget took %v", took)
	}
}

// INFRA_LOG names every GCP call: the REST services', Cloud Storage's and
// Pub/Sub's, with the resource it was made for and the region its path
// names; the trace shows each REST exchange with the secret's value
// masked.
func TestCallLogNamesEveryGCPCall(t *testing.T) {
	var mu sync.Mutex
	var calls []providers.Call
	var trace strings.Builder
	e := envBehind(t, 20*time.Second, func(f *gcptest.Fakes) string { return f.APIURL }, Options{
		Log:   func(c providers.Call) { mu.Lock(); calls = append(calls, c); mu.Unlock() },
		Trace: func(s string) { mu.Lock(); trace.WriteString(s + "\n"); mu.Unlock() },
	})
	const canary = "canary-77e1"
	secrets, _ := e.backend.Driver(spec.Secrets)
	addr := spec.Address{Provider: spec.GCP, Kind: spec.Secrets, Name: "db-password"}
	if _, err := secrets.Create(providers.WithAddress(t.Context(), addr), secretTarget("db-password", canary)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []spec.Kind{spec.ObjectStore, spec.Queues, spec.ImageRegistry} {
		d, _ := e.backend.Driver(k)
		if _, err := d.List(t.Context(), testRegion); err != nil {
			t.Fatalf("list %s: %v", k, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]providers.Call{}
	for _, c := range calls {
		if c.Provider != spec.GCP {
			t.Errorf("a GCP call logged as %s: %+v", c.Provider, c)
		}
		seen[c.Service] = c
		if c.Service == "secretmanager" && c.Operation == "POST /v1/projects/"+testProject+"/secrets" {
			if c.Address != addr.String() || c.Status != http.StatusOK {
				t.Errorf("the secret's create: %+v", c)
			}
		}
	}
	for _, s := range []string{"cloudresourcemanager", "secretmanager", "storage", "pubsub", "artifactregistry"} {
		if _, ok := seen[s]; !ok {
			t.Errorf("no %s call in the log: %v", s, calls)
		}
	}
	if c := seen["artifactregistry"]; c.Region != testRegion || !strings.HasPrefix(c.Operation, "GET /v1/projects/") {
		t.Errorf("the registry's listing: %+v", c)
	}
	if c := seen["pubsub"]; c.Operation != "Publisher/ListTopics" || c.Status != http.StatusOK {
		t.Errorf("the topics' listing: %+v", c)
	}
	out := trace.String()
	if strings.Contains(out, canary) || !strings.Contains(out, `"data":"`+spec.Redacted+`"`) {
		t.Errorf("the trace shows the secret's value, or no payload:\n%s", out)
	}
	if strings.Contains(strings.ToLower(out), "authorization:") {
		t.Errorf("the trace shows a credential:\n%s", out)
	}
}

// refuseRPCs fails the calls to methods ending in suffix with code, the
// first n of them (n < 0: every one), below the client's retries, as
// Pub/Sub would answer them.
func refuseRPCs(suffix string, code codes.Code, n int) (option.ClientOption, *atomic.Int64) {
	var seen atomic.Int64
	return option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
		cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, suffix) {
			if k := seen.Add(1); n < 0 || k <= int64(n) {
				return status.Error(code, "injected")
			}
		}
		return invoke(ctx, method, req, reply, cc, opts...)
	})), &seen
}

// Pub/Sub's admin calls retry within the retry budget, a 429 too, which
// the client's own settings never retry: a create refused twice as
// throttled is made, once; a listing throttled for good fails as
// throttled once the budget is spent, not after the client's 60 s.
func TestPubSubCallsRetryWithinTheBudget(t *testing.T) {
	f := gcptest.Start(t, testProject)
	creates, createsSeen := refuseRPCs("/CreateTopic", codes.ResourceExhausted, 2)
	lists, _ := refuseRPCs("/ListTopics", codes.ResourceExhausted, -1)
	b, err := New(Options{Project: testProject, APIURL: f.APIURL, RetryBudget: time.Second, RESTOptions: f.RESTOptions,
		StorageOptions: f.StorageOptions, PubSubOptions: append(slices.Clone(f.PubSubOptions), creates, lists)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	d, _ := b.Driver(spec.Queues)
	if _, err := d.Create(t.Context(), providers.Target{Name: "jobs", Region: testRegion, Owner: fleet,
		Fields: map[string]any{"visibilityTimeoutSec": 30.0}}); err != nil {
		t.Fatalf("a create throttled twice: %v", err)
	}
	if n := createsSeen.Load(); n != 3 {
		t.Errorf("CreateTopic was sent %d times; want 3", n)
	}
	began := time.Now()
	_, err = d.List(t.Context(), testRegion)
	if code := errorCode(err); code != providers.Throttled {
		t.Fatalf("a listing throttled for good: %v (%s); want throttled", err, code)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("a 1s budget took %v", took)
	}
}

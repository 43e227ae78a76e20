package scaleway

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/scwfake"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// restEnv is the fake's REST APIs (no S3, no SQS) reached at the URL that
// front returns, and a backend pointed there with the given retry budget,
// its project already established.
func restEnv(t *testing.T, budget time.Duration, front func(fake *scwfake.Server) string) (*scwfake.Server, *Backend) {
	t.Helper()
	fake := scwfake.Start(scwfake.Options{})
	t.Cleanup(fake.Close)
	fake.AddProject(testProject, testOrg, "infra-tests")
	fake.AddAPIKey(testAccess, testProject, "")
	setTestEnv(t, front(fake), testProject)
	b, err := New(Options{Fleet: "shop", PageSize: 2, WaitInterval: 5 * time.Millisecond, WaitTimeout: 30 * time.Second,
		RetryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Account(t.Context()); err != nil {
		t.Fatal(err)
	}
	return fake, b
}

// behindProxy puts a faultproxy in front of the fake.
func behindProxy(t *testing.T, p **faultproxy.Proxy) func(*scwfake.Server) string {
	return func(fake *scwfake.Server) string {
		var err error
		if *p, err = faultproxy.Start(fake.URL, faultproxy.Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*p).Close() })
		return (*p).URL
	}
}

func secretTarget(name string) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: "shop",
		Fields: map[string]any{"value": spec.NewSensitive("v")}}
}

func posts(fake *scwfake.Server, suffix string) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

// An outage of the API shorter than the budget is ridden out by the call
// it catches: a listing (GET), and a create (POST) whose connection is
// refused, which is safe to send again because it never reached the API.
// The create is made once.
func TestRidesOutAnOutage(t *testing.T) {
	var p *faultproxy.Proxy
	fake, b := restEnv(t, 20*time.Second, behindProxy(t, &p))
	d, _ := b.Driver(spec.Secrets)
	ctx := t.Context()
	const outage = 1500 * time.Millisecond

	p.Down(outage)
	began := time.Now()
	if _, err := d.List(ctx, testRegion); err != nil {
		t.Fatalf("list during a %v outage: %v", outage, err)
	}
	if took := time.Since(began); took < outage-100*time.Millisecond {
		t.Fatalf("the list took %v: it did not meet the outage", took)
	}

	p.Down(outage)
	// Let the client see its kept-alive connection closed by the proxy,
	// so that the create dials, and is refused, rather than being cut on
	// a connection the proxy closes under it (a cut POST is not resent).
	time.Sleep(200 * time.Millisecond)
	began = time.Now()
	if _, err := d.Create(ctx, secretTarget("db-password")); err != nil {
		t.Fatalf("create during a %v outage: %v", outage, err)
	}
	if took := time.Since(began); took < outage-300*time.Millisecond {
		t.Fatalf("the create took %v: it did not meet the outage", took)
	}
	if n := fake.Count(scwfake.Secrets); n != 1 {
		t.Fatalf("%d secrets after the create; want 1", n)
	}
	if n := posts(fake, "/secrets"); n != 1 {
		t.Fatalf("the fake received %d POST /secrets; want 1", n)
	}
}

// Answers 503 and 429 are retried for a GET (honouring Retry-After); a
// POST answered 503 is not sent again, because the API may have acted on
// it and a Scaleway create is not idempotent.
func TestRetriesAnswersOnlyWhereARepeatIsSafe(t *testing.T) {
	var mu sync.Mutex
	var lists, creates int
	fake, b := restEnv(t, 20*time.Second, func(fake *scwfake.Server) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			secrets := strings.HasSuffix(r.URL.Path, "/secret-manager/v1beta1/regions/fr-par/secrets")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case secrets && r.Method == http.MethodGet && lists < 3:
				lists++
				if lists == 2 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				w.WriteHeader(http.StatusServiceUnavailable)
			case secrets && r.Method == http.MethodPost:
				creates++
				// The API acted, then its front end failed.
				fake.ServeHTTP(httptest.NewRecorder(), r)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadGateway)
				w.Write([]byte(`{"message":"upstream failed","type":"internal_error"}`))
			default:
				fake.ServeHTTP(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	})
	d, _ := b.Driver(spec.Secrets)
	began := time.Now()
	if _, err := d.List(t.Context(), testRegion); err != nil {
		t.Fatalf("list answered 503, 429, 503, then 200: %v", err)
	}
	if took := time.Since(began); took < time.Second {
		t.Errorf("the list took %v; Retry-After asked for at least 1s", took)
	}
	if lists != 3 {
		t.Errorf("%d listings answered with an error; want 3", lists)
	}

	_, err := d.Create(t.Context(), secretTarget("db-password"))
	var resp *scw.ResponseError
	if !errors.As(err, &resp) || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("create answered 502: %v; want the 502", err)
	}
	if creates != 1 || posts(fake, "/secrets") != 1 {
		t.Fatalf("the create was sent %d times; want once", creates)
	}
	if strings.Contains(err.Error(), "gave up") {
		t.Errorf("a POST that was not retried says it gave up: %v", err)
	}
}

// A DELETE whose answer was lost is sent again; the API answers 404, the
// resource being gone, and that reads as done: the engine takes NotFound
// from Delete as deleted.
func TestDeleteWhoseAnswerWasLost(t *testing.T) {
	var mu sync.Mutex
	var deletes int
	fake, b := restEnv(t, 20*time.Second, func(fake *scwfake.Server) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			app := r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/iam/v1alpha1/applications/")
			if app {
				deletes++
			}
			first := app && deletes == 1
			mu.Unlock()
			if !first {
				fake.ServeHTTP(w, r)
				return
			}
			// The API deletes; the answer never comes back.
			fake.ServeHTTP(httptest.NewRecorder(), r)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	})
	d, _ := b.Driver(spec.IAM)
	target := providers.Target{Name: "deployer", Owner: "shop", Fields: map[string]any{"policies": []any{"ObjectStorageReadOnly"}}}
	if _, err := d.Create(t.Context(), target); err != nil {
		t.Fatal(err)
	}
	err := d.Delete(t.Context(), target)
	t.Logf("delete: %v", err)
	if err != nil && errorCode(err) != providers.NotFound {
		t.Fatalf("delete whose first answer was lost: %v (%s); want success or not found", err, errorCode(err))
	}
	if deletes != 2 {
		t.Errorf("the application's DELETE was sent %d times; want twice", deletes)
	}
	if n := fake.Count(scwfake.Applications); n != 0 {
		t.Errorf("%d applications left", n)
	}
}

// Past its budget a call fails saying it gave up after how many attempts
// over how long, with the last attempt's error in the chain: a refused
// connection, or an answer whose code still classifies (429: throttled).
func TestRetryBudgetEndsACallToAnAPIThatIsDown(t *testing.T) {
	const budget = 2 * time.Second
	t.Run("refused", func(t *testing.T) {
		var p *faultproxy.Proxy
		_, b := restEnv(t, budget, behindProxy(t, &p))
		d, _ := b.Driver(spec.Secrets)
		p.Down(time.Minute)
		time.Sleep(200 * time.Millisecond)
		for _, call := range []struct {
			name string
			run  func() error
		}{
			{"list", func() error { _, err := d.List(t.Context(), testRegion); return err }},
			{"create", func() error { _, err := d.Create(t.Context(), secretTarget("x")); return err }},
		} {
			began := time.Now()
			err := call.run()
			took := time.Since(began)
			var be *providers.RetryBudgetError
			if !errors.As(err, &be) {
				t.Fatalf("%s against a down API: %v; want a *RetryBudgetError", call.name, err)
			}
			t.Logf("%s: %v after %v", call.name, err, took)
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s: the refused connection is not in the chain: %v", call.name, err)
			}
			if be.Budget != budget || be.Elapsed < budget || be.Attempts < 4 {
				t.Errorf("%s: gave up after %d attempts over %v with a budget of %v", call.name, be.Attempts, be.Elapsed, be.Budget)
			}
			if took > budget+providers.MaxRetryDelay+time.Second {
				t.Errorf("%s took %v; want at most the budget plus one backoff", call.name, took)
			}
			for _, want := range []string{"gave up after", "attempts over", "retry budget 2s", providers.RetryBudgetEnv, "connection refused"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: the error does not say %q: %v", call.name, want, err)
				}
			}
		}
	})
	t.Run("throttled", func(t *testing.T) {
		_, b := restEnv(t, budget, func(fake *scwfake.Server) string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/secrets") {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusTooManyRequests)
					w.Write([]byte(`{"message":"rate limit exceeded","type":"too_many_requests"}`))
					return
				}
				fake.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		})
		d, _ := b.Driver(spec.Secrets)
		_, err := d.List(t.Context(), testRegion)
		var be *providers.RetryBudgetError
		if !errors.As(err, &be) || errorCode(err) != providers.Throttled {
			t.Fatalf("list throttled past the budget: %v (%s); want a *RetryBudgetError classified throttled", err, errorCode(err))
		}
		if !strings.Contains(err.Error(), "rate limit exceeded") {
			t.Errorf("the error does not carry the API's message: %v", err)
		}
	})
}

// The budget comes from Options, else from INFRA_RETRY_BUDGET, else the
// default, as on AWS; a value that is not a positive duration is refused
// by name.
func TestRetryBudgetSetting(t *testing.T) {
	setTestEnv(t, "http://127.0.0.1:1", testProject)
	for _, c := range []struct {
		env  string
		opt  time.Duration
		want time.Duration
		err  string
	}{
		{want: providers.DefaultRetryBudget},
		{env: "90s", want: 90 * time.Second},
		{env: "90s", opt: 5 * time.Second, want: 5 * time.Second},
		{env: "soon", err: `INFRA_RETRY_BUDGET="soon"`},
		{opt: -time.Second, err: "retry budget -1s"},
	} {
		t.Setenv(providers.RetryBudgetEnv, c.env)
		b, err := New(Options{RetryBudget: c.opt})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "scaleway: ") {
				t.Errorf("env %q, option %v: %v; want a scaleway error naming %s", c.env, c.opt, err, c.err)
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

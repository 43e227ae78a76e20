package faultproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/lifecycle"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

func TestMain(m *testing.M) { moto.Main(m) }

const region = "eu-west-3"

// fleet is seven kinds with references: instances in their group, a
// secret composed from a queue's URL and a bucket's ARN.
const fleet = `{"apiVersion": "infra/v1", "fleet": "throttled", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": [
 {"address": "aws/security-group/thr-web", "spec": {"description": "web tier", "ingress": [{"port": 443, "cidr": "10.0.0.0/8"}], "tags": {"team": "web"}}},
 {"address": "aws/aws-instance/thr-web-1", "spec": {"imageId": "ami-0abcdef1234567890", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/thr-web"}}},
 {"address": "aws/aws-instance/thr-web-2", "spec": {"imageId": "ami-0abcdef1234567890", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/thr-web"}}},
 {"address": "aws/queues/thr-jobs", "spec": {"visibilityTimeoutSec": 45, "tags": {"team": "web"}}},
 {"address": "aws/queues/thr-mail", "spec": {}},
 {"address": "aws/object-store/thr-assets", "spec": {"versioning": true, "forceDestroy": true, "tags": {"team": "web"}}},
 {"address": "aws/secrets/thr-password", "spec": {"value": {"fromEnv": "THR_PASSWORD"}}},
 {"address": "aws/secrets/thr-config", "spec": {"value": {"composed": {"format": "{0} {1}", "args": [{"observed": "aws/queues/thr-jobs", "attribute": "url"}, {"observed": "aws/object-store/thr-assets", "attribute": "arn"}]}}}},
 {"address": "aws/iam/thr-deployer", "spec": {"policies": ["arn:aws:iam::aws:policy/ReadOnlyAccess"], "tags": {"team": "web"}}},
 {"address": "aws/image-registry/thr-app", "spec": {"immutableTags": true}}
]}`

// With a fifth of the calls refused — the service's throttling error or a
// bare 503, never reaching the emulator — apply converges to the same
// cloud as without faults, the next plan (also throttled) finds nothing
// to do, and a throttled read never reads as absent.
func TestApplyConvergesUnderThrottling(t *testing.T) {
	srv := moto.Shared(t)
	srv.Setenv()
	os.Setenv("THR_PASSWORD", "thr-password-1")
	m := lifecycle.Compile(t, fleet)

	clean := cleanSnapshot(t, srv, m)

	proxy, err := faultproxy.Start(srv.URL, faultproxy.Options{Rate: 0.2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	throttled := applyAndSnapshot(t, srv, proxy.URL, m, run{})

	calls, faults, by := proxy.Stats()
	t.Logf("through the proxy: %d calls, %d refused (%v)", calls, faults, by)
	if faults < calls/10 || by["503"] == 0 || len(by) < 3 {
		t.Fatalf("the proxy refused %d of %d calls (%v): too few to show anything", faults, calls, by)
	}
	if !reflect.DeepEqual(clean, throttled) {
		t.Fatalf("the final state differs with throttling:\nwithout: %s\nwith:    %s", dump(clean), dump(throttled))
	}
}

// With the endpoint down for 20 s in the middle of an apply — every
// connection refused, as when a front end restarts — the same apply rides
// it out: each call retries within its budget, the apply converges to the
// same cloud as without the outage, and the next plan finds nothing to do.
func TestApplyRidesOutAnOutage(t *testing.T) {
	srv := moto.Shared(t)
	srv.Setenv()
	os.Setenv("THR_PASSWORD", "thr-password-1")
	m := lifecycle.Compile(t, fleet)
	clean := cleanSnapshot(t, srv, m)

	proxy, err := faultproxy.Start(srv.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	const outage = 20 * time.Second
	var (
		counter            attempts
		downAt, applyCalls int
		began              time.Time
		took               time.Duration
	)
	got := applyAndSnapshot(t, srv, proxy.URL, m, run{
		opts: awsprovider.Options{ConfigOptions: []func(*config.LoadOptions) error{counter.option()}},
		beforeApply: func() {
			// Ten calls into the apply: after its first creates, well
			// before its last.
			downAt = proxy.Calls() + 10
			proxy.OutageAt(downAt, outage)
			counter.reset()
			began = time.Now()
		},
		afterApply: func() {
			took = time.Since(began)
			applyCalls = proxy.Calls() - (downAt - 10)
		},
	})
	total, refused, most := counter.stats()
	t.Logf("apply: %v, %d calls at the proxy; SDK attempts %d, of which %d failed to connect; at most %d attempts for one call",
		took.Round(100*time.Millisecond), applyCalls, total, refused, most)
	if took < outage {
		t.Fatalf("the apply took %v, less than the %v outage: the outage did not fall inside it", took, outage)
	}
	if proxy.Calls() <= downAt+5 {
		t.Fatalf("only %d calls after the outage began at call %d: it did not fall in the middle of the apply", proxy.Calls()-downAt, downAt)
	}
	if refused < 5 || most < 5 {
		t.Fatalf("%d refused attempts, at most %d for one call: the outage was not felt", refused, most)
	}
	if !reflect.DeepEqual(clean, got) {
		t.Fatalf("the final state differs after an outage:\nwithout: %s\nwith:    %s", dump(clean), dump(got))
	}
}

// A retry budget shorter than the outage fails the apply, and the error
// names the resource, the operation, how many attempts over how long, and
// the refused connection.
func TestApplyPastTheRetryBudgetFailsClearly(t *testing.T) {
	srv := moto.Shared(t)
	srv.Setenv()
	os.Setenv("THR_PASSWORD", "thr-password-1")
	m := lifecycle.Compile(t, fleet)
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(srv.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	t.Setenv("AWS_ENDPOINT_URL", proxy.URL)
	ctx := context.Background()
	b, err := awsprovider.New(ctx, awsprovider.Options{RetryBudget: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
	p, err := e.Plan(ctx, m, nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	proxy.OutageAt(proxy.Calls()+1, time.Minute)
	store, err := state.OpenFile(t.TempDir(), m.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = e.Apply(ctx, p, engine.ApplyOptions{Store: store})
	took := time.Since(began)
	t.Logf("after %v: %v", took.Round(100*time.Millisecond), err)
	var be *awsprovider.RetryBudgetError
	if !errors.As(err, &be) {
		t.Fatalf("apply during an outage longer than the budget: %v; want a RetryBudgetError", err)
	}
	if took > 20*time.Second {
		t.Fatalf("apply took %v to give up with a 2 s budget", took)
	}
	first := strings.Split(err.Error(), "\n")[0]
	addr := regexp.MustCompile(`^aws/[a-z-]+/thr-[a-z0-9-]+: create: operation error [A-Za-z0-9 ]+: [A-Za-z]+, gave up after \d+ attempts over [0-9.]+m?s \(retry budget 2s; INFRA_RETRY_BUDGET sets it\): .*connection refused`)
	if !addr.MatchString(first) {
		t.Fatalf("the error does not name the address, the operation, the attempts and the cause:\n%s", first)
	}
}

// run shapes one applyAndSnapshot: the backend's options, and what to do
// just before and just after the apply.
type run struct {
	opts                    awsprovider.Options
	beforeApply, afterApply func()
}

var clean struct {
	sync.Mutex
	snap map[string]any
}

// cleanSnapshot is the cloud m makes without faults, made once per test
// binary.
func cleanSnapshot(t *testing.T, srv *moto.Server, m *spec.Model) map[string]any {
	t.Helper()
	clean.Lock()
	defer clean.Unlock()
	if clean.snap == nil {
		clean.snap = applyAndSnapshot(t, srv, srv.URL, m, run{})
	}
	return clean.snap
}

// applyAndSnapshot empties the emulator, applies m with every call going
// to endpoint, plans again, and returns what the cloud holds, read
// directly from the emulator.
func applyAndSnapshot(t *testing.T, srv *moto.Server, endpoint string, m *spec.Model, r run) map[string]any {
	t.Helper()
	ctx := context.Background()
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	b, err := awsprovider.New(ctx, r.opts)
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenFile(t.TempDir(), m.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
	p, err := e.Plan(ctx, m, nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if p.Summary.Create != len(m.Resources) {
		t.Fatalf("plan: %+v, want %d creates", p.Summary, len(m.Resources))
	}
	if r.beforeApply != nil {
		r.beforeApply()
	}
	_, err = e.Apply(ctx, p, engine.ApplyOptions{Store: store})
	if r.afterApply != nil {
		r.afterApply()
	}
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	ledger, err := store.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Plan(ctx, m, nil, ledger, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("second plan: %v", err)
	}
	if again.HasChanges() {
		t.Fatalf("not converged: %+v", again.Summary)
	}

	// Read the result without the proxy.
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	direct, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{"ledger": len(ledger.Rows)}
	read := map[spec.Address]providers.Resource{}
	groups := map[string]string{} // group id -> the group's address
	for _, d := range m.Resources {
		drv, _ := direct.Driver(d.Address.Kind)
		r, err := drv.Read(ctx, region, d.Address.Name)
		if err != nil {
			t.Fatalf("read %s: %v", d.Address, err)
		}
		read[d.Address] = r
		if id := r.Attributes["groupId"]; id != "" {
			groups[id] = d.Address.String()
		}
	}
	for a, r := range read {
		// Canonical and without what differs between two makings of the
		// same resource (ids, URLs, ARNs, times).
		fields := spec.Canon(r.Fields).(map[string]any)
		delete(fields, "subnetId") // the emulator makes new default subnets at each reset
		if a.Kind == spec.SecurityGroup {
			delete(fields, "vpc") // and a new default VPC, which the group reports
		}
		// An instance reports its group by id, which differs between two
		// makings; the group it names is what must be the same.
		if id, ok := fields["securityGroup"].(string); ok && groups[id] != "" {
			fields["securityGroup"] = groups[id]
		}
		out[a.String()] = map[string]any{"fields": fields, "owner": r.Owner}
	}
	for _, k := range awsprovider.Kinds() {
		drv, _ := direct.Driver(k)
		rs, err := drv.List(ctx, region)
		if err != nil {
			t.Fatalf("list %s: %v", k, err)
		}
		var names []string
		for _, r := range rs {
			names = append(names, r.Name)
		}
		sort.Strings(names)
		out["list/"+string(k)] = strings.Join(names, ",")
	}
	return out
}

// attempts counts the SDK's attempts: every one, those that failed to
// reach the endpoint, and the most one call made.
type attempts struct {
	mu                   sync.Mutex
	total, refused, most int
}

type callAttempts struct{ n int }

type callAttemptsKey struct{}

// option installs the counter: a middleware around the whole call, and one
// inside the retry loop, which sees each attempt.
func (a *attempts) option() func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		if err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("countCall", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c := &callAttempts{}
			out, md, err := next.HandleInitialize(context.WithValue(ctx, callAttemptsKey{}, c), in)
			a.mu.Lock()
			a.most = max(a.most, c.n)
			a.mu.Unlock()
			return out, md, err
		}), middleware.Before); err != nil {
			return err
		}
		return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("countAttempt", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			var send *smithyhttp.RequestSendError
			a.mu.Lock()
			a.total++
			if errors.As(err, &send) {
				a.refused++
			}
			if c, ok := ctx.Value(callAttemptsKey{}).(*callAttempts); ok {
				c.n++
			}
			a.mu.Unlock()
			return out, md, err
		}), "Retry", middleware.After)
	}})
}

func (a *attempts) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total, a.refused, a.most = 0, 0, 0
}

func (a *attempts) stats() (total, refused, most int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total, a.refused, a.most
}

func dump(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

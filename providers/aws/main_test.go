package aws

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// TestMain shares one moto_server among the package's tests (it takes
// seconds to start) and stops it at the end.
func TestMain(m *testing.M) { moto.Main(m) }

// testRegion is where the tests make resources; otherRegion must not see
// them.
const (
	testRegion  = "eu-west-3"
	otherRegion = "us-west-2"
)

// newTestBackend points the SDK at the shared emulator, wipes it, and
// returns a backend with fresh clients. opts may add SDK middleware.
func newTestBackend(t *testing.T, opts ...func(*config.LoadOptions) error) (*Backend, *moto.Server) {
	t.Helper()
	srv := moto.Fresh(t)
	b, err := New(context.Background(), Options{ConfigOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return b, srv
}

// conformance runs the shared suite on the emulator for the given cases.
// newTestBackend wiped it, and each subtest deletes what it made, so the
// region is the suite's alone (Exclusive). It is not reset before each
// subtest: a reset costs more than a subtest's calls, seconds on a loaded
// machine.
func conformance(t *testing.T, b providers.Backend, srv *moto.Server, cases ...drivertest.Case) {
	t.Helper()
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend:     b,
		Region:      testRegion,
		OtherRegion: otherRegion,
		Exclusive:   true,
		Cases:       cases,
		Created:     checkARNFormat,
	})
}

// checkARNFormat holds the ARN the cloud reported for a new resource to its
// kind's registered format, which the sweep's patterns and the policy
// tests' samples come from: a wrong format fails here, against the cloud,
// rather than in a policy that then never matches.
func checkARNFormat(t *testing.T, k spec.Kind, res providers.Resource) {
	t.Helper()
	e := registry[k]
	if e == nil || e.arnFormat == "" {
		return
	}
	arn := res.Attributes["arn"]
	if !arnFormatPattern(e.arnFormat, res.Name).MatchString(arn) {
		t.Errorf("%s %s: the cloud reported the ARN %q, which is not of the registered format %s", k, res.Name, arn, e.arnFormat)
	}
}

// callCounter counts the API calls made through a backend, by operation.
type callCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// option returns the configuration option that installs the counter.
func (c *callCounter) option() func(*config.LoadOptions) error {
	c.n = map[string]int{}
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.n[middleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	}})
}

func (c *callCounter) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

func (c *callCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.n {
		n += k
	}
	return n
}

// kindTarget is a target of kind k as the engine builds a create's: the
// fields (later maps win), with the kind's defaults for what they leave
// out, owned by the fleet "fleet".
func kindTarget(k spec.Kind, name string, fields ...map[string]any) providers.Target {
	f := map[string]any{}
	if info, ok := spec.Lookup(k); ok {
		for _, field := range info.Fields {
			if field.Default != nil {
				f[field.Name] = spec.CloneValue(field.Default)
			}
		}
	}
	for _, m := range fields {
		for key, v := range m {
			f[key] = v
		}
	}
	return providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: f}
}

// before returns the configuration option that runs fn before every call
// of operation op, with the call's input, and fails the call with fn's
// error when it returns one. A test changes the cloud between a driver's
// calls with it, as a concurrent delete would, without racing one.
func before(op string, fn func(in any) error) func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("before "+op, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if middleware.GetOperationName(ctx) == op {
				if err := fn(in.Parameters); err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	}})
}

// deletedDespite deletes tg with d while a before option changes the
// cloud behind the delete's back: changed must say the change happened
// (else the test tested nothing), and tg must then read as not found.
func deletedDespite(t *testing.T, b *Backend, d providers.Driver, tg providers.Target, changed func() bool) {
	t.Helper()
	if err := d.Delete(context.Background(), tg); err != nil {
		t.Fatalf("delete %s: %v (code %s), want it deleted", tg.Name, err, b.ErrorCode(err))
	}
	if !changed() {
		t.Fatal("nothing changed behind the delete's back: the test tested nothing")
	}
	if _, err := d.Read(context.Background(), tg.Region, tg.Name); b.ErrorCode(err) != providers.NotFound {
		t.Errorf("read after delete: %v, want not found", err)
	}
}

package scaleway

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// The call log (INFRA_LOG) names the calls to the products that speak an
// AWS protocol too, Object Storage's S3 and Queues' SQS, not only the REST
// ones: a line each, as the provider scaleway.
func TestCallLogCoversS3AndSQS(t *testing.T) {
	e := newEnv(t, fleet)
	var mu sync.Mutex
	var calls []providers.Call
	b, err := New(Options{S3Endpoint: e.proxy.URL, Fleet: fleet, PageSize: 2, WaitInterval: 5 * time.Millisecond,
		WaitTimeout: 30 * time.Second, Settle: 5 * time.Second, ClientOptions: []scw.ClientOption{},
		Log: func(c providers.Call) { mu.Lock(); calls = append(calls, c); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q, _ := b.Driver(spec.Queues)
	// Queues list nothing until SQS is activated, which a create does.
	if _, err := q.Create(ctx, target(spec.Queues, fleet+"-jobs", map[string]any{"visibilityTimeoutSec": 30.0})); err != nil {
		t.Fatal(err)
	}
	for _, k := range []spec.Kind{spec.ObjectStore, spec.Queues} {
		d, ok := b.Driver(k)
		if !ok {
			t.Fatalf("no %s driver", k)
		}
		if _, err := d.List(ctx, testRegion); err != nil {
			t.Fatalf("list %s: %v", k, err)
		}
	}
	seen := map[string]bool{}
	for _, c := range calls {
		if c.Provider == spec.Scaleway {
			seen[c.Service+"."+c.Operation] = true
		}
	}
	for _, want := range []string{"S3.ListBuckets", "SQS.ListQueues"} {
		if !seen[want] {
			t.Errorf("no %s in the call log: %v", want, seen)
		}
	}
}

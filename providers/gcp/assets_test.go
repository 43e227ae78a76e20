package gcp

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/lifecycle"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// owned is a scan's result as sorted "kind/name=owner" lines.
func owned(t *testing.T, b *Backend, deep bool) []string {
	t.Helper()
	os, err := b.Owned(context.Background(), testRegion, deep)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range os {
		out = append(out, fmt.Sprintf("%s/%s=%s", o.Kind, o.Name, o.Owner))
	}
	sort.Strings(out)
	return out
}

// TestTheAssetSearchFindsWhatTheListingsFind: with AssetInventory, a deep
// scan finds the same marked resources as the listings, in one search
// plus the service accounts' listing; a topic or a secret pinned to
// another region comes back too (its location is global in the index),
// and reads as absent here, which the engine's read settles.
func TestTheAssetSearchFindsWhatTheListingsFind(t *testing.T) {
	e := fastEnv(t)
	ctx := context.Background()
	store, _ := state.OpenFile(t.TempDir(), "shop")
	p, err := gcpEngine(e).Plan(ctx, lifecycle.Compile(t, full.document(testProject)), nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gcpEngine(e).Apply(ctx, p, engine.ApplyOptions{Store: store}); err != nil {
		t.Fatal(err)
	}
	d, _ := e.backend.Driver(spec.Secrets)
	if _, err := d.Create(ctx, providers.Target{Name: "elsewhere", Region: otherRegion, Owner: "shop",
		Fields: map[string]any{"value": spec.NewSensitive("v")}}); err != nil {
		t.Fatal(err)
	}
	listed := owned(t, e.backend, true)
	e.backend.opts.AssetInventory = true
	searched := owned(t, e.backend, true)
	want := append(append([]string{}, listed...), "secrets/elsewhere=shop")
	sort.Strings(want)
	if fmt.Sprint(searched) != fmt.Sprint(want) {
		t.Fatalf("search:\n got %v\nwant %v", searched, want)
	}
	if _, err := d.Read(ctx, testRegion, "elsewhere"); e.backend.ErrorCode(err) != providers.NotFound {
		t.Fatalf("the secret pinned elsewhere reads %v here", err)
	}
	dx, err := gcpEngine(e).Discover(ctx, lifecycle.Compile(t, full.document(testProject)), state.NewLedger())
	if err != nil || len(dx.Ledger.Rows) != 11 {
		t.Fatalf("discover through the search: %v, %d rows", err, len(dx.Ledger.Rows))
	}
}

// TestARefusedAssetSearchFallsBackToListings: credentials that may not
// search get the listings, and the search is not asked again.
func TestARefusedAssetSearchFallsBackToListings(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d, _ := e.backend.Driver(spec.ObjectStore)
	if _, err := d.Create(ctx, providers.Target{Name: "shop-assets", Region: testRegion, Owner: "shop", Fields: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	e.rest.DenyAssetSearch()
	e.backend.opts.AssetInventory = true
	for range 2 {
		if got := owned(t, e.backend, true); fmt.Sprint(got) != "[object-store/shop-assets=shop]" {
			t.Fatalf("owned %v", got)
		}
	}
	searches := 0
	for _, r := range e.rest.Requests() {
		if r.Method == "GET" && len(r.Path) > 20 && r.Path[len(r.Path)-19:] == ":searchAllResources" {
			searches++
		}
	}
	if searches != 1 {
		t.Errorf("%d searches; a refused one is not asked again", searches)
	}
}

// BenchmarkScan measures one deep scan of 35 marked resources, five of
// each kind: by the listings, by the asset search, and by the listings
// with every REST call 20 ms away, as a region is (fake-gcs-server and
// pstest stay on loopback), where the listings' concurrency shows.
func BenchmarkScan(b *testing.B) {
	for _, c := range []struct {
		name   string
		search bool
		delay  time.Duration
	}{{"listings", false, 0}, {"asset-search", true, 0}, {"listings-20ms", false, 20 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) {
			e := fastEnv(b)
			ctx := context.Background()
			for i := range 5 {
				seedFleet(b, e, fmt.Sprintf("s%d", i))
			}
			scanner := e.backend
			if c.delay > 0 {
				proxy, err := faultproxy.Start(e.fakes.APIURL, faultproxy.Options{Delay: c.delay})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { proxy.Close() })
				if scanner, err = New(Options{Project: testProject, APIURL: proxy.URL, RESTOptions: e.fakes.RESTOptions,
					StorageOptions: e.fakes.StorageOptions, PubSubOptions: e.fakes.PubSubOptions}); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = scanner.Close() })
			}
			scanner.opts.AssetInventory = c.search
			calls := func() int64 {
				return int64(len(e.rest.Requests())+len(e.gcs.Requests())) + e.fakes.PubSubCalls.Load()
			}
			before := calls()
			for b.Loop() {
				if _, err := scanner.Owned(ctx, testRegion, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(calls()-before)/float64(b.N), "calls/op")
		})
	}
}

// seedFleet makes one marked resource of every kind, named after suffix.
func seedFleet(tb testing.TB, e *env, suffix string) {
	tb.Helper()
	for k, f := range map[spec.Kind]map[string]any{
		spec.ObjectStore:   {},
		spec.Queues:        {},
		spec.Secrets:       {"value": spec.NewSensitive("v")},
		spec.ImageRegistry: {},
		spec.IAM:           {"policies": []any{"roles/storage.objectViewer"}},
		spec.Postgres:      pgCreate(),
		spec.Compute:       {"image": testImage + ":1"},
	} {
		d, _ := e.backend.Driver(k)
		if _, err := d.Create(context.Background(), providers.Target{Name: "seed-" + string(k[:3]) + "-" + suffix, Region: testRegion, Owner: "shop", Fields: f}); err != nil {
			tb.Fatalf("%s: %v", k, err)
		}
	}
}

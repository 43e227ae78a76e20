package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
	"github.com/infra-iac/infra/state"
)

// Benchmarks of the engine's hot paths on the memory cloud, so that the
// figures are the engine's own work, not a cloud's latency:
//
//	go test ./engine -run '^$' -bench . -benchmem
//
// Sizes 1,000 and 10,000 side by side show how each grows with N
// (docs/performance.md, "engine"). spec's BenchmarkCheck10k covers the
// document's decode and validation.

// nullStore keeps the last ledger and cache without encoding them: the
// file store's cost is not the engine's.
type nullStore struct {
	ledger *state.Ledger
	cache  *state.Cache
}

func (s *nullStore) Lock(context.Context, state.LockInfo) (state.Lock, error) { return nil, nil }
func (s *nullStore) Unlock(context.Context, string) error                     { return nil }
func (s *nullStore) LoadLedger(context.Context) (*state.Ledger, error) {
	if s.ledger == nil {
		return state.NewLedger(), nil
	}
	return s.ledger, nil
}
func (s *nullStore) SaveLedger(_ context.Context, l *state.Ledger) error { s.ledger = l; return nil }
func (s *nullStore) LoadCache(context.Context) (*state.Cache, error)     { return state.NewCache(), nil }
func (s *nullStore) SaveCache(_ context.Context, c *state.Cache) error   { s.cache = c; return nil }
func (s *nullStore) Where() string                                       { return "null" }

// benchFleet is spectest.LargeDocument(n) compiled, with an engine over
// a memory cloud of both providers.
type benchFleet struct {
	m     *spec.Model
	e     *Engine
	store *nullStore
}

func newBenchFleet(b *testing.B, n int) *benchFleet {
	b.Helper()
	m, diags := spec.Compile(spectest.LargeDocument(n))
	if spec.HasErrors(diags) {
		b.Fatalf("%v", diags)
	}
	cloud := memory.NewCloud(map[spec.Provider]string{spec.AWS: "123456789012", spec.Scaleway: "11111111-2222-3333-4444-555555555555"})
	env := map[string]string{"DB_PASSWORD": "pw", "API_KEY": "key"}
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: cloud.Backend(spec.AWS), spec.Scaleway: cloud.Backend(spec.Scaleway)},
		Getenv: func(k string) string { return env[k] }})
	return &benchFleet{m: m, e: e, store: &nullStore{}}
}

// applied applies the fleet once, so that a plan finds it all.
func (f *benchFleet) applied(b *testing.B) *benchFleet {
	b.Helper()
	ctx := context.Background()
	p, err := f.e.Plan(ctx, f.m, nil, nil, PlanOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.e.Apply(ctx, p, ApplyOptions{Store: f.store}); err != nil {
		b.Fatal(err)
	}
	return f
}

var sizes = []int{1000, 10000}

// A plan against an empty cloud: observe, create changes, order, id.
func BenchmarkPlanEmpty(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := newBenchFleet(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.e.Plan(context.Background(), f.m, nil, nil, PlanOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The common PR case: everything exists and matches.
func BenchmarkPlanNoChanges(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := newBenchFleet(b, n).applied(b)
			b.ReportAllocs()
			for b.Loop() {
				p, err := f.e.Plan(context.Background(), f.m, nil, f.store.ledger, PlanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if p.HasChanges() {
					b.Fatalf("%+v", p.Summary)
				}
			}
		})
	}
}

// The plan from the cache (plan --refresh=false) of a fleet that exists
// and matches: no backend, the world recalled from the cache as read
// from cache.json.
func BenchmarkPlanFromCache(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := newBenchFleet(b, n).applied(b)
			cache, offline := fromDisk(b, f.store.cache), New(Options{})
			b.ReportAllocs()
			for b.Loop() {
				p, err := offline.PlanFromCache(context.Background(), f.m, nil, f.store.ledger, cache, PlanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if p.HasChanges() || p.FromCache.Entries < n {
					b.Fatalf("%+v, %d entries", p.Summary, p.FromCache.Entries)
				}
			}
		})
	}
}

// diff of every declared resource against what the cloud reports.
func BenchmarkDiff(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := newBenchFleet(b, n).applied(b)
			w, err := f.e.observe(context.Background(), interest(f.m, f.store.ledger), nil)
			if err != nil {
				b.Fatal(err)
			}
			r := &resolver{e: f.e, m: f.m, w: w, fleet: f.m.Fleet, pending: map[spec.Address]bool{}}
			b.ReportAllocs()
			for b.Loop() {
				changes := 0
				for i := range f.m.Resources {
					d := &f.m.Resources[i]
					obs, _ := w.get(d.Address)
					changes += len(r.diff(d, obs))
				}
				if changes != 0 {
					b.Fatalf("%d changes", changes)
				}
			}
		})
	}
}

// order: Kahn's algorithm over the reference edges, builds then deletes.
func BenchmarkOrder(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := newBenchFleet(b, n)
			p, err := f.e.Plan(context.Background(), f.m, nil, nil, PlanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			deps := map[spec.Address][]spec.Address{}
			for _, d := range f.m.Resources {
				deps[d.Address] = d.Deps()
			}
			actions := append([]Action(nil), p.Actions...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := order(actions, deps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A fresh apply on the memory cloud: the scheduler and the ledger
// bookkeeping, every action one memory call.
func BenchmarkApply(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				f := newBenchFleet(b, n)
				p, err := f.e.Plan(context.Background(), f.m, nil, nil, PlanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := f.e.Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

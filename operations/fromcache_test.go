package operations

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
	"github.com/infra-iac/infra/state"
)

// cacheRig is a fleet on the memory cloud with file state, and the
// operations of a run with no credentials at all: building a backend
// fails the test.
type cacheRig struct {
	t       *testing.T
	cloud   *memory.Cloud
	dir     string
	online  *Operations
	offline *Operations
}

func newCacheRig(t *testing.T) *cacheRig {
	r := &cacheRig{t: t, cloud: memory.NewCloud(map[spec.Provider]string{spec.AWS: "123456789012"}), dir: t.TempDir()}
	store := func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(r.dir, fleet) }
	r.online = New(Env{Store: store, Backends: memoryBackends(r.cloud)})
	r.offline = New(Env{Store: store, Backends: func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		t.Errorf("a plan from the cache built backends for %v", ps)
		return nil, nil, errors.New("no credentials")
	}})
	return r
}

// memoryBackends reaches the memory cloud for every provider asked.
func memoryBackends(cloud *memory.Cloud) BackendsFunc {
	return func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		out := map[spec.Provider]providers.Backend{}
		for _, p := range ps {
			out[p] = cloud.Backend(p)
		}
		return out, nil, nil
	}
}

func (r *cacheRig) doc(resources string) *spec.Document {
	r.t.Helper()
	d, err := spec.DecodeDocument([]byte(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"},
		"placement": {"aws": "eu-west-3"}, "resources": [` + resources + `]}`))
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

const (
	cacheQueue  = `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30}}`
	cacheBucket = `{"address": "aws/object-store/assets", "spec": {"versioning": true}}`
)

func (r *cacheRig) fromCache(doc *spec.Document) (*engine.Plan, error) {
	return r.offline.Plan(context.Background(), PlanRequest{Document: doc, NoRefresh: true})
}

// plan --refresh=false with no credentials and no endpoint: no backend
// is built, no call reaches the cloud, and the plan is the refreshed
// plan's, marked, with another id. Apply of it is refused by id.
func TestPlanFromCacheNeedsNoCredentialsAndMakesNoCall(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "")
	}
	r := newCacheRig(t)
	ctx := context.Background()
	if _, err := r.online.Apply(ctx, ApplyRequest{Document: r.doc(cacheQueue), Confirm: func(*engine.Plan) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	edited := r.doc(cacheQueue + "," + cacheBucket)
	calls := len(r.cloud.Calls())
	cached, err := r.fromCache(edited)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.cloud.Calls()) - calls; n != 0 {
		t.Fatalf("plan --refresh=false made %d calls", n)
	}
	fresh, err := r.online.Plan(ctx, PlanRequest{Document: edited})
	if err != nil {
		t.Fatal(err)
	}
	if cached.FromCache == nil || cached.FromCache.Entries != 1 || fresh.FromCache != nil {
		t.Fatalf("marks: from the cache %+v, refreshed %+v", cached.FromCache, fresh.FromCache)
	}
	if len(cached.Actions) != 1 || cached.Actions[0].Action != engine.Create || cached.Summary != fresh.Summary || cached.ID == fresh.ID {
		t.Fatalf("from the cache %+v (%s), refreshed %+v (%s)", cached.Actions, cached.ID, fresh.Actions, fresh.ID)
	}
	_, err = r.online.Apply(ctx, ApplyRequest{Document: edited, Expect: cached.ID})
	var changed *PlanChangedError
	if !errors.As(err, &changed) {
		t.Fatalf("apply of the plan from the cache's id: %v", err)
	}
	if _, ok := r.cloud.Get(spec.AWS, spec.ObjectStore, "eu-west-3", "assets"); ok {
		t.Fatal("the refused apply created the bucket")
	}
}

// A corrupt cache is refused with the state's remedy; a missing or empty
// one is refused as nothing to plan from, never planned as an empty
// cloud.
func TestPlanFromCacheRefusesACorruptOrMissingCache(t *testing.T) {
	r := newCacheRig(t)
	ctx := context.Background()
	_, err := r.fromCache(r.doc(cacheQueue))
	if !errors.Is(err, ErrNoCache) || !strings.Contains(err.Error(), "Run infra refresh or apply first") {
		t.Fatalf("no cache: %v", err)
	}
	if _, err := r.online.Apply(ctx, ApplyRequest{Document: r.doc(cacheQueue), Confirm: func(*engine.Plan) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.dir, "shop", "cache.json")
	if err := os.WriteFile(path, []byte(`{"version": 1, "resources": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.fromCache(r.doc(cacheQueue)); !errors.Is(err, ErrNoCache) {
		t.Fatalf("an empty cache: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"version": 1, "resources": `), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = r.fromCache(r.doc(cacheQueue))
	var bad *state.FormatError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "is not a file infra wrote") ||
		!strings.Contains(err.Error(), "the next `infra refresh` writes it again") {
		t.Fatalf("a corrupt cache: %v", err)
	}
	// refresh writes it again, and the plan from it is whole.
	if _, err := r.online.Refresh(ctx, RefreshRequest{Document: r.doc(cacheQueue)}); err != nil {
		t.Fatal(err)
	}
	if p, err := r.fromCache(r.doc(cacheQueue)); err != nil || p.HasChanges() {
		t.Fatalf("after refresh: %v, %+v", err, p)
	}
}

// plan --refresh=false of 1,000 resources that exist and match, as the
// command runs it: the document compiled, the ledger and cache.json read
// from the file store, the plan made with no backend. The goal is under
// 100 ms.
func BenchmarkPlanFromCache(b *testing.B) {
	cloud := memory.NewCloud(map[spec.Provider]string{spec.AWS: "123456789012", spec.Scaleway: "11111111-2222-3333-4444-555555555555"})
	dir := b.TempDir()
	vars := map[string]string{"DB_PASSWORD": "pw", "API_KEY": "key"}
	env := Env{Store: func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) },
		Getenv: func(k string) string { return vars[k] }, Backends: memoryBackends(cloud)}
	doc := spectest.LargeDocument(1000)
	ctx := context.Background()
	if _, err := New(env).Apply(ctx, ApplyRequest{Document: doc, Confirm: func(*engine.Plan) error { return nil }}); err != nil {
		b.Fatal(err)
	}
	env.Backends = nil
	ops := New(env)
	b.ReportAllocs()
	for b.Loop() {
		p, err := ops.Plan(ctx, PlanRequest{Document: doc, NoRefresh: true})
		if err != nil {
			b.Fatal(err)
		}
		if p.HasChanges() || p.FromCache.Entries < 1000 {
			b.Fatalf("%+v, %d entries", p.Summary, p.FromCache.Entries)
		}
	}
}

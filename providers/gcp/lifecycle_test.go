package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/api/iterator"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/lifecycle"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// life is one declaration of the GCP test fleet "shop", of every kind GCP
// offers.
type life struct {
	ack     int
	team    string
	roles   []string
	vcpus   int
	memory  int
	trimmed bool
}

func (s life) document(project string) string {
	rs := []string{
		fmt.Sprintf(`{"address": "gcp/queues/jobs", "spec": {"visibilityTimeoutSec": %d, "tags": {"team": %q}}}`, s.ack, s.team),
		fmt.Sprintf(`{"address": "gcp/object-store/shop-assets", "spec": {"versioning": true, "tags": {"team": %q}}}`, s.team),
		`{"address": "gcp/object-store/shop-logs", "spec": {"forceDestroy": true}}`,
		`{"address": "gcp/secrets/base", "spec": {"value": {"fromEnv": "LIFE_BASE"}}}`,
		fmt.Sprintf(`{"address": "gcp/secrets/derived", "spec": {"description": %q, "value": {"composed": {"format": "{0}-derived", "args": [{"secretValue": "gcp/secrets/base"}]}}}}`, s.team),
		fmt.Sprintf(`{"address": "gcp/image-registry/apps", "spec": {"tags": {"team": %q}}}`, s.team),
		fmt.Sprintf(`{"address": "gcp/iam/shop-deployer", "spec": {"policies": %s}}`, jsonOf(s.roles)),
		fmt.Sprintf(`{"address": "gcp/postgres/shop-db", "spec": {"masterUsername": "app", "masterPasswordSecret": {"ref": "gcp/secrets/base"}, "minCapacity": %d, "maxCapacity": %d}}`, s.vcpus, s.vcpus),
		fmt.Sprintf(`{"address": "gcp/compute/shop-api", "spec": {"image": "europe-west9-docker.pkg.dev/%s/apps/api:1", "memoryMb": %d, "env": {"JOBS": {"observed": "gcp/queues/jobs", "attribute": "url"}}}}`, project, s.memory),
	}
	if s.trimmed {
		rs = append(rs, `{"address": "gcp/queues/audit", "spec": {}}`)
	} else {
		rs = append(rs, `{"address": "gcp/queues/events", "spec": {"visibilityTimeoutSec": 60}}`,
			`{"address": "gcp/object-store/shop-cache", "spec": {}}`)
	}
	return gcpDoc(project, rs...)
}

func gcpDoc(project string, resources ...string) string {
	return `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"gcp": "` + project + `"}, "placement": {"gcp": "` + testRegion + `"}, "resources": [` +
		strings.Join(resources, ",\n") + `]}`
}

const lifeBase = "CANARY-gcp-5e1f"

func gcpEngine(e *env) *engine.Engine {
	return engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.GCP: e.backend}, Parallelism: 4,
		Getenv: func(k string) string { return map[string]string{"LIFE_BASE": lifeBase}[k] }})
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// full and up are the lifecycle's two declarations.
var (
	full = life{ack: 30, team: "web", roles: []string{"roles/storage.objectViewer"}, vcpus: 2, memory: 256}
	up   = life{ack: 120, team: "platform", roles: []string{"roles/storage.objectViewer", "roles/pubsub.subscriber"}, vcpus: 4, memory: 512}
)

// TestGCPFiveStages: full, ramp-up, ramp-down, trimmed, empty, each
// converging, ending with an audit of the emulators themselves.
func TestGCPFiveStages(t *testing.T) {
	e := fastEnv(t)
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	trimmed := full
	trimmed.trimmed = true
	lifecycle.RunStages(t, gcpEngine(e), store, []lifecycle.Stage{
		{Name: "full", Document: full.document(testProject), Want: engine.Summary{Create: 11}, Managed: 11},
		{Name: "ramp-up", Document: up.document(testProject), Want: engine.Summary{Update: 7}, Managed: 11},
		{Name: "ramp-down", Document: full.document(testProject), Want: engine.Summary{Update: 7}, Managed: 11},
		{Name: "trimmed", Document: trimmed.document(testProject), Want: engine.Summary{Create: 1, Delete: 2}, Managed: 10},
		{Name: "empty", Document: gcpDoc(testProject), Want: engine.Summary{Delete: 10}, Managed: 0},
	})
	if !t.Failed() {
		audit(t, e)
	}
}

// audit asks the emulators directly, not the drivers, what is left.
func audit(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	sc, err := e.backend.storageClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it := sc.Buckets(ctx, testProject)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("bucket left behind: %s", a.Name)
	}
	sm, err := e.backend.secretManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := drain(sm.ListSecrets(ctx, &secretmanagerpb.ListSecretsRequest{Parent: "projects/" + testProject}).Next,
		func(s *secretmanagerpb.Secret) { t.Errorf("secret left behind: %s", s.Name) }); err != nil {
		t.Fatal(err)
	}
	// The products gcpfake serves, through their listings there.
	for _, k := range []spec.Kind{spec.ImageRegistry, spec.IAM, spec.Postgres, spec.Compute} {
		d, _ := e.backend.Driver(k)
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			t.Errorf("left behind: gcp/%s/%s", k, r.Name)
		}
	}
	pc, err := e.backend.pubsubClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := drain(pc.TopicAdminClient.ListTopics(ctx, &pubsubpb.ListTopicsRequest{Project: "projects/" + testProject}).Next,
		func(tp *pubsubpb.Topic) { t.Errorf("topic left behind: %s", tp.Name) }); err != nil {
		t.Fatal(err)
	}
	if err := drain(pc.SubscriptionAdminClient.ListSubscriptions(ctx, &pubsubpb.ListSubscriptionsRequest{Project: "projects/" + testProject}).Next,
		func(s *pubsubpb.Subscription) { t.Errorf("subscription left behind: %s", s.Name) }); err != nil {
		t.Fatal(err)
	}
}

// TestWrongProjectIsRefusedBeforeAnyListing: credentials for one project,
// a fleet for another. The engine refuses, and neither emulator was
// called.
func TestWrongProjectIsRefusedBeforeAnyListing(t *testing.T) {
	e := fastEnv(t)
	_, err := gcpEngine(e).Plan(context.Background(), lifecycle.Compile(t, full.document("shop-other")), nil, nil, engine.PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "belong to account "+testProject+", but the fleet is for shop-other") {
		t.Fatalf("got %v", err)
	}
	for _, r := range e.gcs.Requests() {
		t.Errorf("before refusing, Cloud Storage saw %s %s", r.Method, r.Path)
	}
	for _, r := range e.rest.Requests() {
		if !strings.HasPrefix(r.Path, "/v3/projects/") && r.Path != "/token" {
			t.Errorf("before refusing, the REST fake saw %s %s", r.Method, r.Path)
		}
	}
}

// TestTheBrakeHoldsOnGCP: a declaration that would delete most of what the
// fleet manages, without being a teardown, is refused, and nothing goes.
func TestTheBrakeHoldsOnGCP(t *testing.T) {
	e := fastEnv(t)
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	eng := gcpEngine(e)
	ctx := context.Background()
	apply := func(doc string) error {
		ledger, err := store.LoadLedger(ctx)
		if err != nil {
			return err
		}
		p, err := eng.Plan(ctx, lifecycle.Compile(t, doc), nil, ledger, engine.PlanOptions{})
		if err != nil {
			return err
		}
		_, err = eng.Apply(ctx, p, engine.ApplyOptions{Store: store})
		return err
	}
	if err := apply(full.document(testProject)); err != nil {
		t.Fatal(err)
	}
	err = apply(gcpDoc(testProject, `{"address": "gcp/queues/jobs", "spec": {"visibilityTimeoutSec": 30, "tags": {"team": "web"}}}`))
	var brake *engine.BrakeError
	if !errors.As(err, &brake) || brake.Destructive != 10 || brake.Managed != 11 {
		t.Fatalf("want the brake, got %v", err)
	}
	for _, k := range []spec.Kind{spec.ObjectStore, spec.Queues} {
		d, _ := e.backend.Driver(k)
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[spec.Kind]int{spec.ObjectStore: 3, spec.Queues: 2}[k]; len(rs) != want {
			t.Errorf("%s: %d left, want %d: the brake let something through", k, len(rs), want)
		}
	}
}

// TestAnUnreachableGCPIsRefusedNotDestroyed: with the GCP APIs refusing
// connections, a plan of the fleet's ledger fails; nothing is planned as
// gone, and the ledger keeps every row.
func TestAnUnreachableGCPIsRefusedNotDestroyed(t *testing.T) {
	e := fastEnv(t)
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := gcpEngine(e).Plan(ctx, lifecycle.Compile(t, full.document(testProject)), nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gcpEngine(e).Apply(ctx, p, engine.ApplyOptions{Store: store}); err != nil {
		t.Fatal(err)
	}
	dead, err := New(Options{Project: testProject, APIURL: "http://127.0.0.1:1", RetryBudget: 1})
	if err != nil {
		t.Fatal(err)
	}
	ledger, _ := store.LoadLedger(ctx)
	eng := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.GCP: dead}})
	for _, doc := range []string{full.document(testProject), gcpDoc(testProject)} {
		p, err := eng.Plan(ctx, lifecycle.Compile(t, doc), nil, ledger, engine.PlanOptions{})
		if err == nil {
			t.Fatalf("planned against an unreachable GCP: %+v", p.Summary)
		}
		if !strings.Contains(err.Error(), "gcp") {
			t.Errorf("the error does not name the cloud: %v", err)
		}
	}
	if after, _ := store.LoadLedger(ctx); len(after.Rows) != 11 {
		t.Fatalf("the ledger lost rows: %d", len(after.Rows))
	}
}

// TestTheCanaryReachesSecretManagerAndNothingElse: a secret's value, and a
// value composed from it, reach Secret Manager, and appear in no plan,
// event, ledger or cache.
func TestTheCanaryReachesSecretManagerAndNothingElse(t *testing.T) {
	e := fastEnv(t)
	dir := t.TempDir()
	store, err := state.OpenFile(dir, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	var mu sync.Mutex // the engine reports progress from concurrent calls
	eng := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.GCP: e.backend},
		Getenv:   func(k string) string { return map[string]string{"LIFE_BASE": lifeBase}[k] },
		Progress: func(ev engine.Event) { mu.Lock(); fmt.Fprintf(&seen, "%+v\n", ev); mu.Unlock() }})
	ctx := context.Background()
	p, err := eng.Plan(ctx, lifecycle.Compile(t, full.document(testProject)), nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	report, err := eng.Apply(ctx, p, engine.ApplyOptions{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(p)
	rep, _ := json.Marshal(report)
	seen.Write(js)
	seen.Write(rep)
	seen.WriteString(lifecycle.Render(p))
	files := 0
	_ = filepath.WalkDir(dir, func(path string, de os.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			b, _ := os.ReadFile(path)
			seen.Write(b)
			files++
		}
		return nil
	})
	if files == 0 {
		t.Fatal("the apply wrote no state to look in")
	}
	if strings.Contains(seen.String(), lifeBase) {
		t.Fatal("the canary leaked into the plan, the report, the events or the state")
	}
	d, _ := e.backend.Driver(spec.Secrets)
	for name, want := range map[string]string{"base": lifeBase, "derived": lifeBase + "-derived"} {
		got, err := d.(providers.SecretReader).ReadSecretValue(ctx, testRegion, name)
		if err != nil || got.Reveal() != want {
			t.Errorf("%s holds %q (%v), want %q", name, got.Reveal(), err, want)
		}
	}
}

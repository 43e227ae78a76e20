package scaleway

import (
	"context"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// portableBucket is one object-store spec value, deployed unchanged on
// both clouds.
const portableBucket = `{"versioning": true, "tags": {"team": "web"}}`

const multiCloud = `{"apiVersion": "infra/v1", "fleet": "shop",
 "accounts": {"aws": "` + moto.Account + `", "scaleway": "` + testProject + `"},
 "placement": {"aws": "eu-west-3", "scaleway": "fr-par"},
 "resources": [
  {"address": "aws/object-store/shop-src", "spec": {"versioning": true}},
  {"address": "scaleway/scaleway-function-namespace/fns", "spec": {}},
  {"address": "scaleway/scaleway-function/reader", "spec": {"namespace": {"ref": "scaleway/scaleway-function-namespace/fns"},
   "runtime": "node22", "code": "module.exports.handle = () => process.env.SOURCE_BUCKET",
   "sourceBucket": {"ref": "aws/object-store/shop-src"}}},
  {"address": "aws/object-store/shop-assets", "spec": ` + portableBucket + `},
  {"address": "scaleway/object-store/shop-assets", "spec": ` + portableBucket + `}
 ]}`

// twoClouds is AWS on the shared emulator, wiped, and Scaleway on the fake
// with a second moto for its S3, so the two clouds' buckets of the same
// name cannot meet.
func twoClouds(t *testing.T, fleet string) (*awsprovider.Backend, *env) {
	t.Helper()
	ctx := context.Background()
	moto.Fresh(t)
	awsBackend, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scwMoto, err := moto.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scwMoto.Stop() })
	return awsBackend, newEnvOn(t, fleet, scwMoto)
}

// TestMultiCloudFleet applies one fleet over AWS (moto) and Scaleway (the
// fake, and a second moto for its S3): a Scaleway function reads an AWS
// bucket through a reference, so the bucket comes first; the same
// object-store spec lands on both clouds. The second plan is empty, and
// the teardown goes in reverse order.
func TestMultiCloudFleet(t *testing.T) {
	ctx := context.Background()
	awsBackend, e := twoClouds(t, "shop")

	var ev events
	eng := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: awsBackend, spec.Scaleway: e.backend},
		Progress: ev.add, Parallelism: 4})
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	m := compile(t, multiCloud)
	p, err := eng.Plan(ctx, m, nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary != (engine.Summary{Create: 5}) {
		t.Fatalf("plan %+v:\n%s", p.Summary, render(p))
	}
	if _, err := eng.Apply(ctx, p, engine.ApplyOptions{Store: store}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !before(ev.all, engine.EventDone, "aws/object-store/shop-src", engine.EventStart, "scaleway/scaleway-function/reader") {
		t.Errorf("the function was created before the bucket it reads:\n%v", ev.done())
	}

	// The function reads the AWS bucket's name; each cloud has its bucket,
	// with the same spec.
	fn, _ := e.backend.Driver(spec.ScalewayFunction)
	r, err := fn.Read(ctx, testRegion, "reader")
	if err != nil {
		t.Fatal(err)
	}
	if r.Fields["sourceBucket"] != "shop-src" {
		t.Errorf("the function's sourceBucket is %v, want shop-src", r.Fields["sourceBucket"])
	}
	for _, c := range []struct {
		b      providers.Backend
		region string
	}{{awsBackend, "eu-west-3"}, {e.backend, testRegion}} {
		d, _ := c.b.Driver(spec.ObjectStore)
		r, err := d.Read(ctx, c.region, "shop-assets")
		if err != nil {
			t.Fatalf("%s: %v", c.b.Provider(), err)
		}
		tags, _ := r.Fields["tags"].(map[string]any)
		if r.Fields["versioning"] != true || tags["team"] != "web" || r.Owner != "shop" {
			t.Errorf("%s/object-store/shop-assets reads %v, owner %q", c.b.Provider(), r.Fields, r.Owner)
		}
	}
	if _, err := awsDriverRead(ctx, awsBackend, "shop-src"); err != nil {
		t.Fatalf("the AWS bucket: %v", err)
	}

	ledger, _ := store.LoadLedger(ctx)
	again, err := eng.Plan(ctx, m, nil, ledger, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.HasChanges() {
		t.Fatalf("second plan not empty:\n%s", render(again))
	}

	ev = events{}
	destroy, err := eng.Plan(ctx, m, nil, ledger, engine.PlanOptions{Destroy: true})
	if err != nil {
		t.Fatal(err)
	}
	if destroy.Summary != (engine.Summary{Delete: 5}) {
		t.Fatalf("destroy plan %+v:\n%s", destroy.Summary, render(destroy))
	}
	if _, err := eng.Apply(ctx, destroy, engine.ApplyOptions{Store: store}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if !before(ev.all, engine.EventDone, "scaleway/scaleway-function/reader", engine.EventStart, "aws/object-store/shop-src") ||
		!before(ev.all, engine.EventDone, "scaleway/scaleway-function/reader", engine.EventStart, "scaleway/scaleway-function-namespace/fns") {
		t.Errorf("teardown not in reverse order:\n%v", ev.done())
	}
	ledger, _ = store.LoadLedger(ctx)
	if len(ledger.Rows) != 0 {
		t.Errorf("ledger keeps %d rows", len(ledger.Rows))
	}
	if _, err := awsDriverRead(ctx, awsBackend, "shop-src"); err == nil || awsBackend.ErrorCode(err) != providers.NotFound {
		t.Errorf("the AWS bucket is still there: %v", err)
	}
	auditS3AndSQS(t, e)
	e.assertScoped(t)
}

func awsDriverRead(ctx context.Context, b providers.Backend, name string) (providers.Resource, error) {
	d, _ := b.Driver(spec.ObjectStore)
	return d.Read(ctx, "eu-west-3", name)
}

// before reports whether the first event (kind a on address x) comes
// before the first event of kind b on address y.
func before(all []engine.Event, a engine.EventKind, x string, b engine.EventKind, y string) bool {
	ix, iy := -1, -1
	for i, ev := range all {
		if ix < 0 && ev.Kind == a && ev.Address.String() == x {
			ix = i
		}
		if iy < 0 && ev.Kind == b && ev.Address.String() == y {
			iy = i
		}
	}
	return ix >= 0 && iy >= 0 && ix < iy
}

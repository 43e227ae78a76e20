package main

import (
	"context"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/examples/multicloud/assets"
	"github.com/infra-iac/infra/internal/gcptest"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/providers"
	gcpprovider "github.com/infra-iac/infra/providers/gcp"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

func TestMain(m *testing.M) { moto.Main(m) }

const project = "thumbs-prod-1"

// TestTheGCPServiceReadsTheAWSBucket applies the two halves, the AWS
// bucket on moto and the GCP fleet on the GCP fakes: the Cloud Run
// service's environment holds the S3 bucket's URL, read through the wire;
// both plans then converge, and destroying both leaves nothing.
func TestTheGCPServiceReadsTheAWSBucket(t *testing.T) {
	moto.Fresh(t)
	f := gcptest.Start(t, project)
	g, err := gcpprovider.New(gcpprovider.Options{Project: project, APIURL: f.APIURL,
		RESTOptions: f.RESTOptions, StorageOptions: f.StorageOptions, PubSubOptions: f.PubSubOptions})
	if err != nil {
		t.Fatal(err)
	}
	aws := operations.DefaultBackends(nil)
	dir := t.TempDir()
	ops := operations.New(operations.Env{
		Backends: func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
			out, why, err := aws(ctx, without(ps, spec.GCP))
			if err == nil && contains(ps, spec.GCP) {
				out[spec.GCP] = g
			}
			return out, why, err
		},
		Store: func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) },
	})
	ctx := context.Background()
	mediaDoc, thumbsDoc := synth(t, "../media"), synth(t, ".")
	apply := func(doc *spec.Document, destroy bool) *operations.ApplyResult {
		t.Helper()
		res, err := ops.Apply(ctx, operations.ApplyRequest{Document: doc, Destroy: destroy, Confirm: func(*engine.Plan) error { return nil }})
		if err != nil {
			var rows []string
			if res != nil && res.Plan != nil {
				for _, d := range res.Plan.Diagnostics {
					rows = append(rows, d.String())
				}
			}
			t.Fatalf("apply %s: %v %v", doc.Fleet, err, rows)
		}
		return res
	}
	apply(mediaDoc, false)
	out, err := ops.Output(ctx, operations.OutputRequest{Fleet: "media"})
	if err != nil {
		t.Fatal(err)
	}
	url, _ := out.Capabilities["media"].Exports["url"].Value.(string)
	if url == "" {
		t.Fatalf("media published no url: %+v", out.Capabilities)
	}
	apply(thumbsDoc, false)

	d, _ := g.Driver(spec.Compute)
	svc, err := d.Read(ctx, "europe-west9", "thumbs-render")
	if err != nil {
		t.Fatal(err)
	}
	if env, _ := svc.Fields["env"].(map[string]any); env["ORIGINALS_URL"] != url {
		t.Fatalf("the service's ORIGINALS_URL is %v, want the S3 bucket's %s", env["ORIGINALS_URL"], url)
	}
	for _, doc := range []*spec.Document{mediaDoc, thumbsDoc} {
		p, err := ops.Plan(ctx, operations.PlanRequest{Document: doc})
		if err != nil || p.HasChanges() {
			t.Fatalf("%s does not converge: %v %+v", doc.Fleet, err, p)
		}
	}
	apply(thumbsDoc, true)
	apply(mediaDoc, true)
	for _, k := range []spec.Kind{spec.ObjectStore, spec.Queues, spec.Compute} {
		d, _ := g.Driver(k)
		if rs, err := d.List(ctx, "europe-west9"); err != nil || len(rs) != 0 {
			t.Errorf("gcp/%s left: %v %v", k, rs, err)
		}
	}
}

// TestBothHalvesShareTheSpec: the GCP bucket and the AWS bucket are one
// portable value.
func TestBothHalvesShareTheSpec(t *testing.T) {
	m, t2 := synth(t, "../media"), synth(t, ".")
	a, _ := m.Lookup("aws/object-store/media-originals")
	g, _ := t2.Lookup("gcp/object-store/thumbs-rendered")
	if a == nil || g == nil || len(a.Spec) == 0 || a.Spec["versioning"] != g.Spec["versioning"] {
		t.Fatalf("specs differ: %v vs %v", a, g)
	}
	if want, _ := assets.Spec.Versioning.Get(); want != g.Spec["versioning"] {
		t.Errorf("versioning %v, want the spec's %v", g.Spec["versioning"], want)
	}
}

// synth synthesizes the fleet program in dir as infra does: by running it.
func synth(t *testing.T, dir string) *spec.Document {
	t.Helper()
	doc, err := operations.LoadDocument(context.Background(), dir, operations.SynthProgram)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func without(ps []spec.Provider, p spec.Provider) []spec.Provider {
	var out []spec.Provider
	for _, x := range ps {
		if x != p {
			out = append(out, x)
		}
	}
	return out
}

func contains(ps []spec.Provider, p spec.Provider) bool { return len(without(ps, p)) != len(ps) }

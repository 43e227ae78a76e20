package scaleway

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

const bucketInterface = `"interfaces": {"bucket": {"exports": {
  "url": {"type": "string", "lifecycle": "apply", "locality": ["global", "region"]},
  "name": {"type": "string", "lifecycle": "plan", "locality": "global"}}}}`

// assets is an AWS fleet that provides its bucket.
const assetsFleet = `{"apiVersion": "infra/v1", "fleet": "assets", "accounts": {"aws": "` + moto.Account + `"}, "placement": {"aws": "eu-west-3"},
 ` + bucketInterface + `,
 "resources": [{"address": "aws/object-store/wired-assets", "spec": {}}],
 "provides": {"files": {"interface": "bucket", "exports": {
   "url": {"observed": "aws/object-store/wired-assets", "attribute": "url", "locality": "global"}, "name": "wired-assets"}}},
 "exposes": ["files"]}`

// thumbs is a Scaleway fleet whose function reads that bucket's url.
const thumbsFleet = `{"apiVersion": "infra/v1", "fleet": "thumbs", "accounts": {"scaleway": "` + testProject + `"}, "placement": {"scaleway": "fr-par"},
 ` + bucketInterface + `,
 "uses": {"src": {"interface": "bucket"}},
 "wires": {"src": {"fleet": "assets", "provides": "files"}},
 "resources": [
  {"address": "scaleway/scaleway-function-namespace/thumbs-fns", "spec": {}},
  {"address": "scaleway/scaleway-function/thumbs-reader", "spec": {"namespace": {"ref": "scaleway/scaleway-function-namespace/thumbs-fns"},
   "runtime": "node22", "code": "module.exports.handle = () => process.env.SOURCE_URL",
   "env": {"SOURCE_URL": {"use": "src", "export": "url"}, "SOURCE_NAME": {"use": "src", "export": "name"}}}}]}`

// The wiring of docs/wiring.md across clouds: a Scaleway fleet reads an
// AWS fleet's object-store export, published by the AWS fleet's apply.
func TestScalewayFleetReadsAnAWSFleetsExport(t *testing.T) {
	ctx := context.Background()
	awsBackend, e := twoClouds(t, "thumbs")
	eng := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: awsBackend, spec.Scaleway: e.backend}})
	dir := t.TempDir()

	provider := compile(t, assetsFleet)
	p, err := eng.Plan(ctx, provider, nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pstore, _ := state.OpenFile(dir, "assets")
	if _, err := eng.Apply(ctx, p, engine.ApplyOptions{Store: pstore}); err != nil {
		t.Fatal(err)
	}
	rec := p.Published()
	url, _ := rec.Capabilities["files"].Exports["url"].Value.(string)
	if !strings.Contains(url, "wired-assets") {
		t.Fatalf("the published url: %+v", rec.Capabilities["files"].Exports["url"])
	}

	consumer := compile(t, thumbsFleet)
	if diags := spec.ResolveWires(consumer, map[string]spec.Far{"assets": {Record: rec}}); len(diags) != 0 {
		t.Fatalf("rows: %v", diags)
	}
	c, err := eng.Plan(ctx, consumer, nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cstore, _ := state.OpenFile(dir, "thumbs")
	if _, err := eng.Apply(ctx, c, engine.ApplyOptions{Store: cstore}); err != nil {
		t.Fatal(err)
	}
	fn, _ := e.backend.Driver(spec.ScalewayFunction)
	r, err := fn.Read(ctx, testRegion, "thumbs-reader")
	if err != nil {
		t.Fatal(err)
	}
	env, _ := r.Fields["env"].(map[string]any)
	if env["SOURCE_URL"] != url || env["SOURCE_NAME"] != "wired-assets" {
		t.Fatalf("the Scaleway function's env is %v, want the AWS bucket's url %s", env, url)
	}
}

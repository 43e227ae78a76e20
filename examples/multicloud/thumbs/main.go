// Command thumbs is the GCP half of the multi-cloud example: a Cloud Run
// service that renders thumbnails of the originals another fleet keeps in
// an S3 bucket (examples/multicloud/media). It reads that bucket's URL
// through the slot "originals", wired to media's capability "media", so a
// misspelt export does not compile and a missing provider fails the plan.
// Its own bucket takes the same portable spec as the AWS one.
//
//	go run ./examples/multicloud/thumbs synth
package main

import (
	"github.com/infra-iac/infra/examples/multicloud/assets"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/gcp"
)

func main() { fleet.Main(thumbs()) }

func thumbs() *fleet.Fleet {
	f := fleet.New("thumbs")
	cloud := gcp.Use(f, "thumbs-prod-1", gcp.Paris)

	originals := fleet.Use(f, "originals", assets.Bucket)
	fleet.Wire(f, originals, "media", "media")
	x := originals.Exports()

	rendered := cloud.ObjectStore("thumbs-rendered", assets.Spec)
	jobs := cloud.Queues("thumbs-jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(60)})
	cloud.Compute("thumbs-render", fleet.Lit("europe-west9-docker.pkg.dev/thumbs-prod-1/app/render:1"), fleet.ComputeSpec{
		MemoryMB: fleet.Set(512),
		Env: fleet.Env{
			"ORIGINALS_URL": x.URL,
			"RENDERED_URL":  gcp.URLOf(rendered),
			"JOBS":          gcp.URLOf(jobs),
		},
	})
	return f
}

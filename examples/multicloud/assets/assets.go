// Package assets is the interface between a fleet that keeps media in a
// bucket and the fleets, on any cloud, that read it: the provider fills
// Exports with its bucket's values, a consumer reads them through a slot.
package assets

import "github.com/infra-iac/infra/fleet"

// Exports are what an asset-bucket capability publishes.
type Exports struct {
	// URL is the bucket's HTTPS endpoint, known once it exists; usable
	// from any cloud.
	URL fleet.Output[string]
	// Name is the bucket's name, known at plan.
	Name fleet.Output[string]
}

// Bucket is the asset-bucket interface.
var Bucket = fleet.DefineInterface("asset-bucket", Exports{
	URL:  fleet.NewExport[string]("url", fleet.AfterApply, fleet.Global|fleet.AccountLocal|fleet.RegionLocal),
	Name: fleet.NewExport[string]("name", fleet.AtPlan, fleet.Global|fleet.AccountLocal|fleet.RegionLocal),
})

// Spec is the portable bucket spec both halves use: one value, the same
// guarantees on S3 and on Cloud Storage.
var Spec = fleet.ObjectStoreSpec{Versioning: fleet.Set(true), Tags: map[string]string{"team": "media"}}

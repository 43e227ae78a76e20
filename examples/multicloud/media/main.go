// Command media is the AWS half of the GCP multi-cloud example: a fleet
// that keeps media in an S3 bucket and provides it, as the capability
// "media", to fleets on other clouds (examples/multicloud/thumbs reads it
// from GCP).
//
//	go run ./examples/multicloud/media synth
package main

import (
	"github.com/infra-iac/infra/examples/multicloud/assets"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(media()) }

func media() *fleet.Fleet {
	f := fleet.New("media")
	cloud := aws.Use(f, "", aws.Paris)
	bucket := cloud.ObjectStore("media-originals", assets.Spec)
	fleet.Expose(f, fleet.Provide(f, "media", assets.Bucket, assets.Exports{
		// The URL is a regional bucket's, and reachable from any cloud.
		URL:  fleet.Anywhere(aws.URLOf(bucket)),
		Name: fleet.Lit("media-originals"),
	}, fleet.OneConsumer))
	return f
}

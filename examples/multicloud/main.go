// Command multicloud is a fleet on two clouds at once: one portable
// object-store spec deployed on both AWS and Scaleway, and a Scaleway
// function that reads the AWS bucket through a reference across clouds.
//
//	go run ./examples/multicloud synth
//	go run ./examples/multicloud check
package main

import (
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/scaleway"
)

func main() { fleet.Main(multicloud()) }

func multicloud() *fleet.Fleet {
	f := fleet.New("multicloud")
	onAWS := aws.Use(f, "123456789012", aws.Paris)
	onScaleway := scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Paris)

	// One value, two clouds: a spec is indexed by kind alone, so the same
	// ObjectStoreSpec means the same thing on S3 and on Object Storage.
	assets := fleet.ObjectStoreSpec{
		Versioning: fleet.Set(true),
		Tags:       map[string]string{"team": "media"},
	}
	awsAssets := onAWS.ObjectStore("multicloud-assets-aws", assets)
	onScaleway.ObjectStore("multicloud-assets-scw", assets)

	// A Scaleway function reading the AWS bucket. sourceBucket accepts a
	// bucket on any cloud (fleet.Bucket); the bucket's URL is known only
	// after it is created, so it is an Output, and using it orders the
	// function after the bucket in one apply.
	functions := onScaleway.FunctionNamespace("multicloud-functions", scaleway.FunctionNamespaceSpec{})
	onScaleway.Function("multicloud-thumbnails", functions, "python311", scaleway.FunctionSpec{
		Handler:      fleet.Set("thumbnails.handle"),
		SourceBucket: fleet.Bucket(awsAssets),
		Env: fleet.Literals(map[string]string{"SIZES": "128,512"}).Merge(fleet.Env{
			"ASSETS_URL": aws.URLOf(awsAssets),
		}),
	})
	return f
}

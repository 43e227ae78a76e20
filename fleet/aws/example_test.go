package aws_test

import (
	"fmt"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/internal/show"
)

func ExampleUse() {
	f := fleet.New("shop")
	aws.Use(f, "123456789012", aws.Paris)
	doc, _ := f.Synth()
	fmt.Println(doc.Accounts, doc.Placement)
	// Output: map[aws:123456789012] map[aws:eu-west-3]
}

func ExampleCloud_In() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	cloud.In(aws.NVirginia).ObjectStore("shop-us-assets", fleet.ObjectStoreSpec{})
	cloud.In(aws.RegionRaw("us-gov-west-1")).ObjectStore("shop-gov-assets", fleet.ObjectStoreSpec{})
	show.Fleet(f)
	// Output:
	// aws/object-store/shop-us-assets (in us-east-1) {}
	// aws/object-store/shop-gov-assets (in raw:us-gov-west-1) {}
}

func ExampleCloud_ObjectStore() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	cloud.ObjectStore("shop-assets", fleet.ObjectStoreSpec{
		Versioning: fleet.Set(true),
		Tags:       map[string]string{"team": "web"},
	})
	show.Fleet(f)
	// Output: aws/object-store/shop-assets {"tags":{"team":"web"},"versioning":true}
}

func ExampleCloud_S3Bucket() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	cloud.S3Bucket("shop-audit", aws.S3BucketSpec{ObjectLock: fleet.Set(true)})
	show.Fleet(f)
	// Output: aws/s3-bucket/shop-audit {"objectLock":true}
}

func ExampleCloud_Instance() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	web := cloud.SecurityGroup("shop-web", "web tier", aws.SecurityGroupSpec{
		Ingress: []aws.Ingress{{Port: 443, CIDR: "0.0.0.0/0"}},
	})
	// The instance takes a Ref[aws.SecurityGroup]: no other kind compiles
	// there, and the family has only the sizes it really has.
	cloud.Instance("shop-box", "latest", aws.T3.Micro(), web, aws.InstanceSpec{KeyName: fleet.Set("ops")})
	show.Fleet(f)
	// Output:
	// aws/security-group/shop-web {"description":"web tier","ingress":[{"cidr":"0.0.0.0/0","port":443}]}
	// aws/aws-instance/shop-box {"imageId":"latest","instanceType":"t3.micro","keyName":"ops","securityGroup":{"ref":"aws/security-group/shop-web"}}
}

func ExampleInstanceTypeRaw() {
	fmt.Println(aws.M7i.Metal24XL(), aws.InstanceTypeRaw("p5e.48xlarge"))
	// Output: m7i.metal-24xl p5e.48xlarge
}

func ExampleCloud_Postgres() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	password := cloud.Secrets("shop-db-password", fleet.FromEnv("SHOP_DB_PASSWORD"), fleet.SecretsSpec{})
	cloud.Postgres("shop-db", "dbadmin", password, fleet.PostgresSpec{MinCapacity: fleet.Set(0.5), MaxCapacity: fleet.Set(4.0)})
	show.Fleet(f)
	// Output:
	// aws/secrets/shop-db-password {"value":{"fromEnv":"SHOP_DB_PASSWORD"}}
	// aws/postgres/shop-db {"masterPasswordSecret":{"ref":"aws/secrets/shop-db-password"},"masterUsername":"dbadmin","maxCapacity":4,"minCapacity":0.5}
}

func ExampleCloud_Compute() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	repo := cloud.ImageRegistry("shop-app", fleet.ImageRegistrySpec{ImmutableTags: fleet.Set(true)})
	// On AWS a compute runs as an IAM role, so the role is a parameter here
	// (on Scaleway it is a namespace instead).
	cloud.Compute("shop-api", fleet.Format("{}:v1", aws.URIOf(repo)), fleet.Lit("arn:aws:iam::123456789012:role/shop-api"),
		fleet.ComputeSpec{MemoryMB: fleet.Set(512)})
	show.Fleet(f)
	// Output:
	// aws/image-registry/shop-app {"immutableTags":true}
	// aws/compute/shop-api {"executionRole":"arn:aws:iam::123456789012:role/shop-api","image":{"composed":{"args":[{"attribute":"uri","observed":"aws/image-registry/shop-app"}],"format":"{0}:v1"}},"memoryMb":512}
}

func ExampleEndpointOf() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	password := cloud.Secrets("pw", fleet.FromEnv("PW"), fleet.SecretsSpec{})
	db := cloud.Postgres("db", "dbadmin", password, fleet.PostgresSpec{})
	// An Output prints as what it is, never as a value it does not have.
	fmt.Println(aws.EndpointOf(db))
	// Output: (known after apply)
}

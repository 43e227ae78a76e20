package fleet_test

import (
	"fmt"
	"os"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/internal/show"
	"github.com/infra-iac/infra/fleet/scaleway"
)

// A fleet program: declare, then hand the fleet to Main, which gives it
// every infra verb (go run ./infra synth, check, plan, apply …).
func ExampleMain() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	cloud.Queues("shop-jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(60)})

	// In a program this is fleet.Main(f); Run is the same without exiting.
	fleet.Run(f, []string{"synth"}, os.Stdout, os.Stderr)
	// Output:
	// {
	//   "apiVersion": "infra/v1",
	//   "fleet": "shop",
	//   "accounts": {
	//     "aws": "123456789012"
	//   },
	//   "placement": {
	//     "aws": "eu-west-3"
	//   },
	//   "resources": [
	//     {
	//       "address": "aws/queues/shop-jobs",
	//       "spec": {
	//         "visibilityTimeoutSec": 60
	//       }
	//     }
	//   ]
	// }
}

func ExampleNew() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	cloud.ObjectStore("shop-assets", fleet.ObjectStoreSpec{Versioning: fleet.Set(true)})
	// An unset field stays unknown: it is absent, never compared.
	cloud.ObjectStore("shop-scratch", fleet.ObjectStoreSpec{})
	show.Fleet(f)
	// Output:
	// aws/object-store/shop-assets {"versioning":true}
	// aws/object-store/shop-scratch {}
}

func ExampleFormat() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	registry := cloud.ImageRegistry("shop-app", fleet.ImageRegistrySpec{})
	jobs := cloud.Queues("shop-jobs", fleet.QueuesSpec{})
	// The image and the queue URL are known only after apply; Format
	// composes them into values that are too, and each becomes a
	// dependency, so the registry and queue are created first.
	cloud.Compute("shop-api", fleet.Format("{}:v1", aws.URIOf(registry)), fleet.Lit("arn:aws:iam::123456789012:role/shop-api"),
		fleet.ComputeSpec{Env: fleet.Env{"JOBS_URL": aws.URLOf(jobs)}})
	show.Fleet(f)
	// Output:
	// aws/image-registry/shop-app {}
	// aws/queues/shop-jobs {}
	// aws/compute/shop-api {"env":{"JOBS_URL":{"attribute":"url","observed":"aws/queues/shop-jobs"}},"executionRole":"arn:aws:iam::123456789012:role/shop-api","image":{"composed":{"args":[{"attribute":"uri","observed":"aws/image-registry/shop-app"}],"format":"{0}:v1"}}}
}

func ExampleComposed() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	password := cloud.Secrets("db-password", fleet.FromEnv("DB_PASSWORD"), fleet.SecretsSpec{})
	db := cloud.Postgres("db", "dbadmin", password, fleet.PostgresSpec{})
	// The connection string is a secret built at apply time; its value is
	// never written anywhere infra keeps.
	cloud.Secrets("db-url", fleet.Composed("postgres://dbadmin:{}@{}/main", aws.SecretValueOf(password), aws.EndpointOf(db)), fleet.SecretsSpec{})
	// With no dependency, a composed value would be a plaintext in the
	// repository: Synth reports it.
	cloud.Secrets("oops", fleet.Composed("hunter2"), fleet.SecretsSpec{})
	show.Fleet(f)
	// Output:
	// aws/secrets/db-password {"value":{"fromEnv":"DB_PASSWORD"}}
	// aws/postgres/db {"masterPasswordSecret":{"ref":"aws/secrets/db-password"},"masterUsername":"dbadmin"}
	// aws/secrets/db-url {"value":{"composed":{"args":[{"secretValue":"aws/secrets/db-password"},{"attribute":"endpoint","observed":"aws/postgres/db"}],"format":"postgres://dbadmin:{0}@{1}/main"}}}
	// aws/secrets/oops {"value":{"composed":{"args":[],"format":"hunter2"}}}
	// error aws/secrets/oops composed secret with no dependency is a plaintext in disguise
}

func ExampleFleet_Synth() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	cloud.Queues("jobs", fleet.QueuesSpec{})
	// What types cannot rule out comes back as data, all at once.
	cloud.Queues("jobs", fleet.QueuesSpec{})
	fleet.Forget[aws.Queues](f, "jobs")
	_, diags := f.Synth()
	for _, d := range diags {
		fmt.Println(d.Severity, d.Subject, d.Message)
	}
	// Output:
	// error aws/queues/jobs duplicate address
	// error aws/queues/jobs forget of a resource that is still declared
}

func ExampleForget() {
	f := fleet.New("shop")
	aws.Use(f, "123456789012", aws.Paris)
	// old-jobs is no longer declared; forget drops it from the ledger
	// without deleting it.
	fleet.Forget[aws.Queues](f, "old-jobs")
	doc, _ := f.Synth()
	fmt.Println(doc.Forget)
	// Output: [aws/queues/old-jobs]
}

func ExampleExclude() {
	f := fleet.New("shop")
	aws.Use(f, "123456789012", aws.Paris)
	fleet.Exclude[aws.ObjectStore](f, "legacy-*", "owned by the data team")
	doc, _ := f.Synth()
	for _, x := range doc.Exclusions {
		fmt.Printf("%s: %s\n", x.Address, x.Why)
	}
	// Output: aws/object-store/legacy-*: owned by the data team
}

func ExampleBucket() {
	f := fleet.New("shop")
	onAWS := aws.Use(f, "123456789012", aws.Paris)
	onScaleway := scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Paris)
	assets := onAWS.ObjectStore("shop-assets", fleet.ObjectStoreSpec{})
	ns := onScaleway.FunctionNamespace("shop-fns", scaleway.FunctionNamespaceSpec{})
	// A Scaleway function reading an AWS bucket: a reference across clouds.
	onScaleway.Function("shop-resize", ns, "python311", scaleway.FunctionSpec{SourceBucket: fleet.Bucket(assets)})
	show.Fleet(f)
	// Output:
	// aws/object-store/shop-assets {}
	// scaleway/scaleway-function-namespace/shop-fns {}
	// scaleway/scaleway-function/shop-resize {"namespace":{"ref":"scaleway/scaleway-function-namespace/shop-fns"},"runtime":"python311","sourceBucket":{"ref":"aws/object-store/shop-assets"}}
}

func ExampleLiterals() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	jobs := cloud.Queues("jobs", fleet.QueuesSpec{})
	env := fleet.Literals(map[string]string{"MODE": "prod"}).Merge(fleet.Env{"JOBS_URL": aws.URLOf(jobs)})
	cloud.Compute("api", fleet.Lit("public.ecr.aws/nginx/nginx:1.27"), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{Env: env})
	show.Fleet(f)
	// Output:
	// aws/queues/jobs {}
	// aws/compute/api {"env":{"JOBS_URL":{"attribute":"url","observed":"aws/queues/jobs"},"MODE":"prod"},"executionRole":"arn:aws:iam::123456789012:role/api","image":"public.ecr.aws/nginx/nginx:1.27"}
}

// Command quickstart is the quickstart fleet written in Go: the same fleet
// as fleet.json beside it, which a test keeps identical to what this
// program's synth prints.
//
//	go run ./examples/quickstart synth   # print the document
//	go run ./examples/quickstart plan    # what apply would do
package main

import (
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(quickstart()) }

// quickstart declares a small web backend on AWS in Paris: a bucket for
// assets, a job queue, an image registry, a security group for the web
// tier, and a database whose connection string is a secret composed at
// apply time from the database's password and endpoint.
func quickstart() *fleet.Fleet {
	f := fleet.New("quickstart")
	cloud := aws.Use(f, "123456789012", aws.Paris)

	cloud.ObjectStore("quickstart-assets", fleet.ObjectStoreSpec{
		Versioning: fleet.Set(true),
		Tags:       map[string]string{"team": "web"},
	})
	cloud.Queues("quickstart-jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(60)})
	cloud.ImageRegistry("quickstart-app", fleet.ImageRegistrySpec{ImmutableTags: fleet.Set(true)})
	cloud.SecurityGroup("quickstart-web", "quickstart web tier", aws.SecurityGroupSpec{
		Ingress: []aws.Ingress{{Port: 443, CIDR: "0.0.0.0/0"}},
	})

	// The password never lives in the repository: it is read from the
	// environment of whoever applies.
	password := cloud.Secrets("quickstart-db-password", fleet.FromEnv("QUICKSTART_DB_PASSWORD"), fleet.SecretsSpec{})
	db := cloud.Postgres("quickstart-db", "dbadmin", password, fleet.PostgresSpec{
		MinCapacity: fleet.Set(0.5),
		MaxCapacity: fleet.Set(2.0),
	})
	// Both arguments are dependencies, so one apply creates the password,
	// then the database, then this secret.
	cloud.Secrets("quickstart-db-url",
		fleet.Composed("postgres://dbadmin:{}@{}/main", aws.SecretValueOf(password), aws.EndpointOf(db)),
		fleet.SecretsSpec{})
	return f
}

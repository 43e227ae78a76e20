// Command pgshared is a fleet that runs a PostgreSQL database for another
// fleet: it provides the capability "eu", an instance of
// pgdb.Database, and exposes it. After each successful apply infra
// publishes what the exports resolved to; a consumer's plan reads that.
//
//	go run ./examples/wiring/pgshared synth
package main

import (
	"github.com/infra-iac/infra/examples/wiring/pgdb"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(pgShared()) }

func pgShared() *fleet.Fleet {
	f := fleet.New("pg-shared")
	// No account, as in the documents this example matches: the
	// credentials' account is not checked against one.
	cloud := aws.Use(f, "", aws.Paris)
	password := cloud.Secrets("pg-eu-password", fleet.FromEnv("PG_EU_PASSWORD"), fleet.SecretsSpec{})
	db := cloud.Postgres("pg-eu", "shop", password, fleet.PostgresSpec{
		MinCapacity: fleet.Set(0.5),
		MaxCapacity: fleet.Set(2.0),
	})

	// Each export is bound to a value of this fleet, in a field of the
	// interface's own struct: a value of the wrong type does not compile.
	eu := fleet.Provide(f, "eu", pgdb.Database, pgdb.Exports{
		Endpoint: aws.EndpointOf(db),
		Username: fleet.Lit("shop"),
		Password: aws.SecretRefOf(password),
		Version:  aws.VersionOf(db),
	}, fleet.OneConsumer)
	fleet.Expose(f, eu)
	return f
}

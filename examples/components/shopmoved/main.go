// Command shopmoved is examples/components/shop once shop-b has moved to
// the pg-shared fleet's database (examples/wiring/pgshared): it cuts its
// private database member and wires the hole, the api's slot db, to
// pg-shared's capability "eu". Applying it deletes the cut member's
// database and password, under a heading of their own, and sends the
// api's connection string again, now pointing at pg-shared.
//
//	go run ./examples/components/shopmoved synth
package main

import (
	"github.com/infra-iac/infra/examples/components/webapp"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(shopMoved()) }

func shopMoved() *fleet.Fleet {
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "shop-a", webapp.WebApp, webapp.Example,
		fleet.Settings("db", webapp.DatabaseSettings{MaxCapacity: 4}))
	fleet.Instantiate(f, "shop-b", webapp.WebApp, webapp.Example,
		fleet.Cut("db"),
		fleet.WireMember("api.db", "pg-shared", "eu"))
	return f
}

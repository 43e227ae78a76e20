// Command shop is a fleet with two instances of the web-app component:
// "shop-a" with its private database, and "shop-b", which cuts the
// database member and wires its api to the pg-shared fleet's capability
// "eu" instead (examples/wiring/pgshared).
//
//	go run ./examples/components/shop synth
package main

import (
	"github.com/infra-iac/infra/examples/components/webapp"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(shop()) }

const role = "arn:aws:iam::123456789012:role/shop-api"

func shop() *fleet.Fleet {
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "shop-a", webapp.WebApp, webapp.Settings{Image: "123456789012.dkr.ecr.eu-west-3.amazonaws.com/shop:1", Role: role},
		// Reaches the database member directly: the web app forwards nothing.
		fleet.Settings("db", webapp.DatabaseSettings{MaxCapacity: 4}))
	fleet.Instantiate(f, "shop-b", webapp.WebApp, webapp.Settings{Image: "123456789012.dkr.ecr.eu-west-3.amazonaws.com/shop:1", Role: role},
		fleet.Cut("db"),
		fleet.WireMember("api.db", "pg-shared", "eu"))
	return f
}

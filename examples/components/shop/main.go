// Command shop is a fleet with two instances of the web-app component,
// each with its private database: "shop-a" gives its database member a
// setting of its own, which reaches the member directly, and "shop-b"
// keeps the component's defaults. examples/components/shopmoved is the
// same fleet once shop-b has moved to a shared database.
//
//	go run ./examples/components/shop synth
package main

import (
	"github.com/infra-iac/infra/examples/components/webapp"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(shop()) }

func shop() *fleet.Fleet {
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "shop-a", webapp.WebApp, webapp.Example,
		fleet.Settings("db", webapp.DatabaseSettings{MaxCapacity: 4}))
	fleet.Instantiate(f, "shop-b", webapp.WebApp, webapp.Example)
	return f
}

// Command shopeu is a fleet that connects to a database another fleet
// runs: it uses a pgdb.Database through the slot "db", requires version
// 16 or later, and wires the slot to pg-shared's capability "eu". The
// connection string is a secret of this fleet, composed at apply time from
// the wired exports; the password is read there and nowhere else.
//
//	go run ./examples/wiring/shopeu synth
package main

import (
	"github.com/infra-iac/infra/examples/wiring/pgdb"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(shopEU()) }

func shopEU() *fleet.Fleet {
	f := fleet.New("shop-eu")
	cloud := aws.Use(f, "", aws.Paris)

	// Ask first: what the fleet needs, and from whom.
	db := fleet.Use(f, "db", pgdb.Database, fleet.AtLeast(pgdb.Database.Exports().Version, 16))
	fleet.Wire(f, db, "pg-shared", "eu")

	// Then receive: the slot's exports are the only way to read the
	// wired values, and a secret export is accepted by Composed and by a
	// field that takes a secret only.
	x := db.Exports()
	cloud.Secrets("shop-db-url",
		fleet.Composed("postgres://{}:{}@{}/shop", x.Username, x.Password, x.Endpoint),
		fleet.SecretsSpec{})
	return f
}

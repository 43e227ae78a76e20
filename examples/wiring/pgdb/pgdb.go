// Package pgdb is the interface between a fleet that runs a PostgreSQL
// database and the fleets that connect to it. Both sides import it: the
// provider fills Exports with its database's values (fleet.Provide), a
// consumer reads them through a slot (fleet.Use(…).Exports()), so neither
// can misspell an export, and both documents carry the same definition
// with the same hash.
package pgdb

import "github.com/infra-iac/infra/fleet"

// Exports are what a postgres-database capability publishes.
type Exports struct {
	// Endpoint is the database's host name, known once it exists, usable
	// in its region.
	Endpoint fleet.Output[string]
	// Username is the login, known at plan, usable anywhere.
	Username fleet.Output[string]
	// Password is the login's password, a secret of the provider's
	// account: it travels as the secret's reference.
	Password fleet.SecretExport
	// Version is the engine's version.
	Version fleet.Output[string]
}

// Database is the postgres-database interface.
var Database = fleet.DefineInterface("postgres-database", Exports{
	Endpoint: fleet.NewExport[string]("endpoint", fleet.AfterApply, fleet.RegionLocal),
	Username: fleet.NewExport[string]("username", fleet.AtPlan, fleet.Global|fleet.AccountLocal|fleet.RegionLocal),
	Password: fleet.NewSecretExport("password", fleet.AfterApply, fleet.AccountLocal),
	Version:  fleet.NewExport[string]("version", fleet.AfterApply, fleet.Global|fleet.AccountLocal|fleet.RegionLocal),
})

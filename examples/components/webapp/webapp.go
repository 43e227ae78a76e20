// Package webapp is a component a platform team publishes: a web
// application's bucket (assets), queue (jobs), private PostgreSQL database
// with its password (db), and the compute service that reads them (api).
// An application team instantiates it with a few settings, and may cut the
// private database and wire the api to a shared one instead:
//
//	fleet.Instantiate(f, "shop", webapp.WebApp, webapp.Settings{Image: "…", Role: "…"},
//		fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"))
//
// See docs/components.md.
package webapp

import (
	"github.com/infra-iac/infra/examples/wiring/pgdb"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

// Settings are the web app's own settings. Every member's settings are
// reached directly, settings.<member>, so none is forwarded here.
type Settings struct {
	// Image is the api's container image; Role its execution role's ARN.
	Image string
	Role  string
}

// DatabaseSettings are the private database member's settings.
type DatabaseSettings struct {
	// EngineVersion is the PostgreSQL major version; the web app fixes it.
	EngineVersion string
	// MaxCapacity is the database's maximum capacity, in ACUs.
	MaxCapacity float64
}

// APISettings are the api member's settings.
type APISettings struct {
	Image, Role string
	MemoryMB    int
}

// webApp is what the web app's ask half returns: its members, and the
// database it re-exports, which a fleet may provide to others
// (fleet.ProvideFrom).
type webApp struct {
	DB       fleet.Member
	API      fleet.Member
	Database fleet.Offered[pgdb.Exports]
}

// WebApp is the web-app component. Its database's engine version is
// fixed: the api's driver is built for it.
var WebApp = fleet.DefineComponent("web-app", askWebApp, receiveWebApp,
	fleet.Fixed("db.engineVersion"))

func askWebApp(s Settings) webApp {
	db := fleet.NewMember("db", Database, DatabaseSettings{EngineVersion: "16", MaxCapacity: 2})
	api := fleet.NewMember("api", API, APISettings{Image: s.Image, Role: s.Role, MemoryMB: 512},
		fleet.Bind("db", db, "main"))
	return webApp{DB: db, API: api, Database: fleet.ReExport("database", db, "main", pgdb.Database)}
}

func receiveWebApp(b *fleet.Body, _ webApp) {
	cloud := aws.Use(b.Fleet(), "", "")
	cloud.ObjectStore("assets", fleet.ObjectStoreSpec{Versioning: fleet.Set(true)})
	cloud.Queues("jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(60)})
}

// database is the private database's ask: what it offers.
type database struct {
	Settings DatabaseSettings
	Main     fleet.Offered[pgdb.Exports]
}

// Database is a private PostgreSQL database with its password secret,
// offered as a postgres-database.
var Database = fleet.DefineComponent("private-postgres",
	func(s DatabaseSettings) database {
		return database{Settings: s, Main: fleet.Offer("main", pgdb.Database)}
	},
	func(b *fleet.Body, x database) {
		cloud := aws.Use(b.Fleet(), "", "")
		password := cloud.Secrets("password", fleet.FromEnv("WEBAPP_DB_PASSWORD"), fleet.SecretsSpec{})
		pg := cloud.Postgres("pg", "app", password, fleet.PostgresSpec{
			EngineVersion: fleet.Set(x.Settings.EngineVersion),
			MinCapacity:   fleet.Set(0.5),
			MaxCapacity:   fleet.Set(x.Settings.MaxCapacity),
		})
		fleet.Fill(b, x.Main, pgdb.Exports{
			Endpoint: aws.EndpointOf(pg),
			Username: fleet.Lit("app"),
			Password: aws.SecretRefOf(password),
			Version:  aws.VersionOf(pg),
		})
	})

// api is the api's ask: the database it reads, through a slot.
type api struct {
	Settings APISettings
	DB       fleet.Slot[pgdb.Exports]
}

// API is a compute service that reads its database's connection string
// from a secret at run time: the service's environment holds the secret's
// ARN, so moving the database changes the secret, not the service.
var API = fleet.DefineComponent("api",
	func(s APISettings) api {
		return api{Settings: s, DB: fleet.Need("db", pgdb.Database, fleet.AtLeast(pgdb.Database.Exports().Version, 16))}
	},
	func(b *fleet.Body, x api) {
		cloud := aws.Use(b.Fleet(), "", "")
		db := x.DB.Exports()
		url := cloud.Secrets("db-url",
			fleet.Composed("postgres://{}:{}@{}/app", db.Username, db.Password, db.Endpoint),
			fleet.SecretsSpec{})
		cloud.Compute("service", fleet.Lit(x.Settings.Image), fleet.Lit(x.Settings.Role), fleet.ComputeSpec{
			MemoryMB: fleet.Set(x.Settings.MemoryMB),
			Env:      fleet.Env{"DB_URL_SECRET": aws.ARNOf(url)},
		})
	})

// Example is the settings the examples and their tests use: an image in
// Paris, and the api's execution role.
var Example = Settings{
	Image: "123456789012.dkr.ecr.eu-west-3.amazonaws.com/shop:1",
	Role:  "arn:aws:iam::123456789012:role/shop-api",
}

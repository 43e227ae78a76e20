package fleet_test

import (
	"fmt"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/internal/show"
)

// Cache is an interface, as a package both fleets import would define it.
type Cache struct {
	Endpoint fleet.Output[string]
	Port     fleet.Output[int]
	Token    fleet.SecretExport
}

var cacheInterface = fleet.DefineInterface("cache", Cache{
	Endpoint: fleet.NewExport[string]("endpoint", fleet.AfterApply, fleet.RegionLocal),
	Port:     fleet.NewExport[int]("port", fleet.AtPlan|fleet.AfterApply, fleet.Global),
	Token:    fleet.NewSecretExport("token", fleet.AfterApply, fleet.AccountLocal),
})

func ExampleProvide() {
	f := fleet.New("cache")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	token := cloud.Secrets("cache-token", fleet.FromEnv("CACHE_TOKEN"), fleet.SecretsSpec{})
	db := cloud.Postgres("cache-db", "cache", token, fleet.PostgresSpec{})
	// The bindings are the interface's own struct: a value of the wrong
	// type does not compile, a field left out is an unbound export.
	main := fleet.Provide(f, "main", cacheInterface, Cache{
		Endpoint: aws.EndpointOf(db),
		Port:     fleet.Lit(5432),
		Token:    aws.SecretRefOf(token), // published as the secret's ARN
	}, fleet.OneConsumer)
	fleet.Expose(f, main)

	doc, diags := f.Synth()
	p := doc.Provides["main"]
	fmt.Println(p.Interface, p.Consumers, doc.Exposes, len(diags))
	for _, e := range []string{"endpoint", "port", "token"} {
		fmt.Println(e, p.Exports[e])
	}
	// Output:
	// cache one [main] 0
	// endpoint map[attribute:endpoint observed:aws/postgres/cache-db]
	// port 5432
	// token map[secret:aws/secrets/cache-token]
}

func ExampleUse() {
	f := fleet.New("web")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	// Ask: the slot, what it must satisfy, and who fills it.
	cache := fleet.Use(f, "cache", cacheInterface, fleet.AtLeast(cacheInterface.Exports().Port, 1024).Want())
	fleet.Wire(f, cache, "cache", "main")
	// Receive: the slot's exports are the only way to read the wired values.
	x := cache.Exports()
	cloud.Secrets("web-cache-url", fleet.Composed("redis://:{}@{}:{}", x.Token, x.Endpoint, x.Port), fleet.SecretsSpec{})

	doc, diags := f.Synth()
	r, w := doc.Uses["cache"].Requires[0], doc.Wires["cache"]
	fmt.Println(r.Export, r.Op, r.Value, r.Severity)
	fmt.Println(w.Fleet, w.Provides, len(diags))
	show.Fleet(f)
	// Output:
	// port >= 1024 want
	// cache main 0
	// aws/secrets/web-cache-url {"value":{"composed":{"args":[{"export":"token","use":"cache"},{"export":"endpoint","use":"cache"},{"export":"port","use":"cache"}],"format":"redis://:{0}@{1}:{2}"}}}
}

func ExampleDefineInterface() {
	fmt.Println(cacheInterface.Name(), cacheInterface.Hash() != "")
	// A definition is not a value; a slot's export is, and prints as one.
	f := fleet.New("web")
	fmt.Println(fleet.Use(f, "cache", cacheInterface).Exports().Endpoint, fleet.Use(f, "c2", cacheInterface).Exports().Token)
	// Output:
	// cache true
	// (known after apply) (sensitive)
}

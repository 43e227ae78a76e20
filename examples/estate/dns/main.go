// Command dns is the estate's DNS fleet: one public hosted zone, provided
// and exposed as the capability "zone", a contract.Zone.
//
//	go run ./examples/estate/dns apply
package main

import (
	"github.com/infra-iac/infra/examples/estate/contract"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

// Domain is the zone's domain.
const Domain = "estate.example.com"

func main() { fleet.Main(dns()) }

func dns() *fleet.Fleet {
	f := fleet.New("estate-dns")
	cloud := aws.Use(f, "", aws.Paris)
	zone := cloud.Route53Zone(Domain, aws.Route53ZoneSpec{Comment: fleet.Set("the estate's public zone")})
	z := fleet.Provide(f, "zone", contract.Zone, contract.ZoneExports{
		ZoneID: aws.ZoneIDOf(zone),
		Domain: fleet.Lit(Domain),
	})
	fleet.Expose(f, z)
	return f
}

// Package contract holds the interfaces between the estate's fleets: the
// network fleet provides a Network, the dns fleet a Zone, and the app
// fleet uses both. Each side imports this package, so a misspelled export
// does not compile and both documents carry one definition, one hash.
package contract

import "github.com/infra-iac/infra/fleet"

// NetworkExports are what a network capability publishes: the VPC and one
// subnet in each of two availability zones. An interface export is a
// string, a number, a bool or a list of one of them, and a list can only
// be bound to literals, so the subnets per zone are one pair of exports
// per zone rather than a map.
type NetworkExports struct {
	// VPCID is the VPC's id.
	VPCID fleet.Output[string]
	// ZoneA and SubnetA are the first zone and the id of its subnet.
	ZoneA   fleet.Output[string]
	SubnetA fleet.Output[string]
	// ZoneB and SubnetB are the second zone and the id of its subnet.
	ZoneB   fleet.Output[string]
	SubnetB fleet.Output[string]
}

// Network is the network interface. Every export is known once the
// network fleet has applied, and usable in its region only: an id of a
// VPC or a subnet means nothing in another region.
var Network = fleet.DefineInterface("network", NetworkExports{
	VPCID:   fleet.NewExport[string]("vpc-id", fleet.AfterApply, fleet.RegionLocal),
	ZoneA:   fleet.NewExport[string]("zone-a", fleet.AfterApply, fleet.RegionLocal),
	SubnetA: fleet.NewExport[string]("subnet-a", fleet.AfterApply, fleet.RegionLocal),
	ZoneB:   fleet.NewExport[string]("zone-b", fleet.AfterApply, fleet.RegionLocal),
	SubnetB: fleet.NewExport[string]("subnet-b", fleet.AfterApply, fleet.RegionLocal),
})

// ZoneExports are what a zone capability publishes: a Route 53 hosted
// zone, global as Route 53 is.
type ZoneExports struct {
	// ZoneID is the hosted zone's id, known once it exists.
	ZoneID fleet.Output[string]
	// Domain is the zone's domain, known from the document.
	Domain fleet.Output[string]
}

// Zone is the zone interface.
var Zone = fleet.DefineInterface("zone", ZoneExports{
	ZoneID: fleet.NewExport[string]("zone-id", fleet.AfterApply, fleet.Global),
	Domain: fleet.NewExport[string]("domain", fleet.AtPlan, fleet.Global),
})

// Command network is the estate's network fleet: a VPC with one subnet in
// each of two availability zones (an Application Load Balancer needs two),
// an internet gateway and the route table that makes both subnets public. It provides and exposes the capability
// "network", a contract.Network, for the estate's other fleets.
//
//	go run ./examples/estate/network apply
package main

import (
	"github.com/infra-iac/infra/examples/estate/contract"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

func main() { fleet.Main(network()) }

func network() *fleet.Fleet {
	f := fleet.New("estate-network")
	cloud := aws.Use(f, "", aws.Paris)
	vpc := cloud.VPC("estate-vpc", "10.40.0.0/16", aws.VPCSpec{})
	a := cloud.Subnet("estate-a", vpc, "10.40.1.0/24", "eu-west-3a", aws.SubnetSpec{})
	b := cloud.Subnet("estate-b", vpc, "10.40.2.0/24", "eu-west-3b", aws.SubnetSpec{})
	igw := cloud.InternetGateway("estate-igw", vpc, aws.InternetGatewaySpec{})
	// Both subnets are public: an internet-facing load balancer's must
	// route to the internet gateway.
	cloud.RouteTable("estate-public", vpc, aws.RouteTableSpec{
		GatewayRoutes: map[string]fleet.Ref[aws.InternetGateway]{"0.0.0.0/0": igw},
		Subnets:       map[string]fleet.Ref[aws.Subnet]{"a": a, "b": b},
	})

	// The zones are read from the subnets rather than written twice, so
	// the published pair cannot disagree with where the subnet is.
	n := fleet.Provide(f, "network", contract.Network, contract.NetworkExports{
		VPCID:   aws.VPCIDOf(vpc),
		ZoneA:   aws.AvailabilityZoneOf(a),
		SubnetA: aws.SubnetIDOf(a),
		ZoneB:   aws.AvailabilityZoneOf(b),
		SubnetB: aws.SubnetIDOf(b),
	})
	fleet.Expose(f, n)
	return f
}

// Command app is the estate's application fleet: a function on its own
// role that writes one table, behind a load balancer with its security
// group, and a DNS record. It uses the network fleet's "network" and
// the dns fleet's "zone", and hands what they publish to the function.
//
// Run it from the repository's root, where its zip's path is relative to:
//
//	go run ./examples/estate/app apply
package main

import (
	"github.com/infra-iac/infra/examples/estate/contract"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
)

// Zip is the function's code, relative to the directory infra runs in
// (the repository's root): app.py, zipped by app_test.go's rule.
const Zip = "examples/estate/app/handler.zip"

func main() { fleet.Main(app()) }

func app() *fleet.Fleet {
	f := fleet.New("estate-app")
	cloud := aws.Use(f, "", aws.Paris)

	// Ask first: the two capabilities this fleet runs on, and from whom.
	network := fleet.Use(f, "network", contract.Network)
	fleet.Wire(f, network, "estate-network", "network")
	zone := fleet.Use(f, "zone", contract.Zone)
	fleet.Wire(f, zone, "estate-dns", "zone")
	net, dns := network.Exports(), zone.Exports()

	table := cloud.DynamodbTable("estate-requests", "id", aws.DynamodbTableSpec{})
	// The function may write its table and nothing else: the policy names
	// the table's ARN, known once the table exists.
	write := cloud.IAMPolicy("estate-app-write", aws.PolicyDocument{Statements: []aws.Statement{{
		Effect:    aws.Allow,
		Actions:   []string{"dynamodb:PutItem"},
		Resources: fleet.Outputs{aws.ARNOf(table)},
	}}}.JSON(), aws.IAMPolicySpec{Description: fleet.Set("estate-app writes estate-requests")})
	role := cloud.IAMRole("estate-app", aws.AssumedBy("lambda.amazonaws.com").JSON(),
		aws.IAMRoleSpec{Policies: fleet.Outputs{aws.ARNOf(write)}})

	fn := cloud.LambdaFunction("estate-app", role, aws.LambdaFunctionSpec{
		Zip:     fleet.Set(Zip),
		Runtime: fleet.Set("python3.13"),
		Handler: fleet.Set("app.handler"),
		// The wired values reach the function as its environment: a
		// region-local export is read here, in the network's region.
		Env: fleet.Env{
			"TABLE":   fleet.Lit("estate-requests"),
			"VPC_ID":  net.VPCID,
			"SUBNETS": fleet.Format("{}={},{}={}", net.ZoneA, net.SubnetA, net.ZoneB, net.SubnetB),
			"ZONE_ID": dns.ZoneID,
			"DOMAIN":  dns.Domain,
		},
	})

	// The load balancer's security group is this fleet's, in the network
	// fleet's VPC, read as its id through the slot: a load balancer's
	// groups are in its subnets' VPC. It lets HTTP in from anywhere.
	web := cloud.SecurityGroup("estate-app-lb", "estate-app load balancer", aws.SecurityGroupSpec{
		VPC:     fleet.RefFrom[aws.VPC](net.VPCID),
		Ingress: []aws.Ingress{{Port: 80, CIDR: "0.0.0.0/0"}},
	})

	// The load balancer stands in the network fleet's subnets, read as
	// their ids through the slot, and forwards to the function.
	lb := cloud.ALB("estate-app", map[string]fleet.RefField[aws.Subnet]{
		"eu-west-3a": fleet.RefFrom[aws.Subnet](net.SubnetA),
		"eu-west-3b": fleet.RefFrom[aws.Subnet](net.SubnetB),
	}, aws.ALBSpec{SecurityGroups: map[string]fleet.RefField[aws.SecurityGroup]{"web": web}})
	targets := cloud.ALBTargetGroup("estate-app", aws.ALBTargetGroupSpec{TargetType: fleet.Set("lambda"), Function: fn})
	cloud.ALBListener("estate-app-http", lb, 80, targets, aws.ALBListenerSpec{})

	// The name in front of it, in the dns fleet's zone, read as its id
	// through the slot. The record is this fleet's: its companion TXT
	// record says so, and the zone stays the dns fleet's.
	cloud.Route53Record("api.estate.example.com:A", fleet.RefFrom[aws.Route53Zone](dns.ZoneID), aws.Route53RecordSpec{
		AliasDnsName: aws.DnsNameOf(lb),
		AliasZoneID:  aws.CanonicalHostedZoneIDOf(lb),
	})
	return f
}

package aws

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestSubnetConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	n := 0
	conformance(t, b, srv, drivertest.Case{
		Kind: spec.Subnet,
		// Two VPCs, made through the vpc driver, so that the suite reads
		// the id a subnet's vpc must report from it.
		Setup: func(t *testing.T) {
			makeVPC(t, b, "net-a", "10.0.0.0/16")
			makeVPC(t, b, "net-b", "10.1.0.0/16")
		},
		Create: map[string]any{"vpc": "net-a", "cidr": "10.0.1.0/24", "availabilityZone": testRegion + "a"},
		// Subnets of one VPC cannot share a block.
		Apart: func(f map[string]any) {
			n++
			f["cidr"] = fmt.Sprintf("10.0.%d.0/24", 10+n%200)
		},
		Updates: []map[string]any{{"mapPublicIpOnLaunch": true}, {"mapPublicIpOnLaunch": false}},
		Replaces: []map[string]any{
			{"cidr": "10.0.2.0/28"},
			{"availabilityZone": testRegion + "b"},
			{"vpc": "net-b", "cidr": "10.1.0.0/16", "mapPublicIpOnLaunch": true},
		},
		OddNames: []string{"Mixed.Case_name-0", `star*and?mark[x]\`, strings.Repeat("s", 255)},
	})
}

func subnetTarget(vpc, cidr, zone string) providers.Target {
	return providers.Target{Name: "web", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"vpc": vpc, "cidr": cidr, "availabilityZone": zone}}
}

// A block EC2 would refuse or store otherwise, and a zone of another
// region, are refused before any call.
func TestSubnetRefusesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.Subnet)
	for _, tc := range []struct {
		tg   providers.Target
		want string
	}{
		{subnetTarget("net", "10.0.1.1/24", testRegion+"a"), `write "10.0.1.0/24"`},
		{subnetTarget("net", "10.0.0.0/29", testRegion+"a"), "a /16 (65,536 addresses) to a /28"},
		{subnetTarget("net", "10.0.1.0/24", "us-east-1a"), `availabilityZone "us-east-1a" is not a zone of ` + testRegion},
		{subnetTarget("net", "10.0.1.0/24", testRegion), "is not a zone of"},
	} {
		_, err := d.Create(context.Background(), tc.tg)
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create(%v) = %v (code %s), want invalid argument saying %q", tc.tg.Fields, err, errorCode(err), tc.want)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// The VPC a target refers to is taken by the id the engine hands over (the
// one this run observed or made), with no lookup by name; without it, the
// name is looked up.
func TestSubnetTakesTheVPCIdentity(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	vpc := makeVPC(t, b, "net", "10.0.0.0/16")
	d, _ := b.Driver(spec.Subnet)
	ctx := context.Background()
	before := calls.count("DescribeVpcs")
	tg := subnetTarget("net", "10.0.1.0/24", testRegion+"a")
	tg.Identities = map[spec.Address]string{{Provider: spec.AWS, Kind: spec.VPC, Name: "net"}: vpc.Attributes["vpcId"]}
	res, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Delete(ctx, tg) })
	if n := calls.count("DescribeVpcs") - before; n != 0 {
		t.Errorf("DescribeVpcs was called %d times with the VPC's id at hand", n)
	}
	if res.Fields["vpc"] != vpc.Attributes["vpcId"] {
		t.Errorf("the subnet reports vpc %v, want the VPC's id %s", res.Fields["vpc"], vpc.Attributes["vpcId"])
	}
	// A subnet of a VPC that is not there fails naming it.
	_, err = d.Create(ctx, providers.Target{Name: "lost", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"vpc": "gone", "cidr": "10.0.2.0/24", "availabilityZone": testRegion + "a"}})
	if errorCode(err) != providers.NotFound || !strings.Contains(err.Error(), "its vpc gone") {
		t.Errorf("Create in a missing VPC = %v (code %s), want not found naming the vpc", err, errorCode(err))
	}
}

package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestNatGatewayConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind: spec.NATGateway,
		Setup: func(t *testing.T) {
			makeVPC(t, b, "net", "10.0.0.0/16")
			makeNamed(t, b, spec.Subnet, "public", map[string]any{"vpc": "net", "cidr": "10.0.1.0/24", "availabilityZone": testRegion + "a"})
			makeNamed(t, b, spec.Subnet, "other", map[string]any{"vpc": "net", "cidr": "10.0.2.0/24", "availabilityZone": testRegion + "b"})
		},
		Create:   map[string]any{"subnet": "public"},
		Replaces: []map[string]any{{"subnet": "other"}, {"connectivity": "private"}},
		OddNames: []string{"Mixed.Case_name-0", `star*and?mark[x]\`},
	})
}

// A public gateway's Elastic IP address is allocated with it, tagged with
// the ownership tag and its name, and released after its delete; a private
// one has none.
func TestNatGatewayAllocatesAndReleasesItsAddress(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	makeVPC(t, b, "net", "10.0.0.0/16")
	makeNamed(t, b, spec.Subnet, "public", map[string]any{"vpc": "net", "cidr": "10.0.1.0/24", "availabilityZone": testRegion + "a"})
	d, _ := b.Driver(spec.NATGateway)
	c := ec2Client(b)
	count := func() int {
		out, err := c.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Addresses)
	}
	tg := providers.Target{Name: "egress", Region: testRegion, Owner: "fleet", Fields: map[string]any{"subnet": "public", "connectivity": "public"}}
	made, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	found, err := addresses(ctx, c, "egress", "fleet")
	if err != nil || len(found) != 1 || aws.ToString(found[0].AllocationId) != made.Attributes["allocationId"] {
		t.Fatalf("the gateway's address: %v, %v; want the one tagged Name=egress, %s=fleet, %s", found, err, spec.OwnershipTagKey, made.Attributes["allocationId"])
	}
	if err := d.Delete(ctx, providers.Target{Name: "egress", Region: testRegion, Owner: "fleet", Attributes: made.Attributes}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d addresses after the delete, want none", n)
	}
	tg.Name, tg.Fields["connectivity"] = "inside", "private"
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("a private gateway allocated %d addresses", n)
	}
	if err := d.Delete(ctx, tg); err != nil {
		t.Fatal(err)
	}
}

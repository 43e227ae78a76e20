package aws

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// makeNamed makes a resource of kind k through its driver and deletes it
// when the test ends.
func makeNamed(t *testing.T, b *Backend, k spec.Kind, name string, fields map[string]any) providers.Resource {
	t.Helper()
	d, _ := b.Driver(k)
	tg := providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: fields}
	res, err := d.Create(context.Background(), tg)
	if err != nil {
		t.Fatalf("create %s %s: %v", k, name, err)
	}
	t.Cleanup(func() {
		if err := d.Delete(context.Background(), tg); err != nil && errorCode(err) != providers.NotFound {
			t.Logf("cleanup: delete %s %s: %v", k, name, err)
		}
	})
	return res
}

func TestRouteTableConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	n := 0
	conformance(t, b, srv, drivertest.Case{
		Kind: spec.RouteTable,
		// A VPC with two gateways and two subnets, and another VPC, made
		// through their drivers, so that the suite reads the ids the
		// table must report from them.
		Setup: func(t *testing.T) {
			makeVPC(t, b, "net-a", "10.0.0.0/16")
			makeVPC(t, b, "net-b", "10.1.0.0/16")
			makeNamed(t, b, spec.InternetGateway, "out", map[string]any{"vpc": "net-a"})
			makeNamed(t, b, spec.InternetGateway, "out-b", map[string]any{"vpc": "net-b"})
			makeNamed(t, b, spec.Subnet, "web", map[string]any{"vpc": "net-a", "cidr": "10.0.1.0/24", "availabilityZone": testRegion + "a"})
			makeNamed(t, b, spec.Subnet, "app", map[string]any{"vpc": "net-a", "cidr": "10.0.2.0/24", "availabilityZone": testRegion + "b"})
			makeNamed(t, b, spec.NATGateway, "nat", map[string]any{"subnet": "web"})
		},
		Create: map[string]any{"vpc": "net-a", "gatewayRoutes": map[string]any{"0.0.0.0/0": "out"}},
		// A subnet is associated with one table at a time: only the
		// resource the Update subtest makes takes them.
		Apart: func(f map[string]any) {
			n++
			f["gatewayRoutes"] = map[string]any{fmt.Sprintf("10.%d.0.0/16", 100+n%100): "out"}
		},
		Updates: []map[string]any{
			{"subnets": map[string]any{"web": "web"}},
			{"natRoutes": map[string]any{"192.168.0.0/16": "nat"}, "subnets": map[string]any{"web": "web", "app": "app"}},
			{"gatewayRoutes": map[string]any{}, "natRoutes": map[string]any{"0.0.0.0/0": "nat"}, "subnets": map[string]any{"app": "app"}},
		},
		Replaces: []map[string]any{{"vpc": "net-b", "gatewayRoutes": map[string]any{"0.0.0.0/0": "out-b"}, "natRoutes": map[string]any{}, "subnets": map[string]any{}}},
		OddNames: []string{"Mixed.Case_name-0", `star*and?mark[x]\`},
	})
}

// The VPC's main route table is EC2's: never listed, read or deleted.
func TestRouteTableLeavesTheMainTable(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	vpc := makeVPC(t, b, "net", "10.0.0.0/16")
	c := ec2Client(b)
	d, _ := b.Driver(spec.RouteTable)
	all, err := d.(*routeTables).describe(ctx, testRegion, &ec2.DescribeRouteTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Fatalf("described %d tables besides the main ones, want none", len(all))
	}
	if err := retagEC2(ctx, c, mainTableOf(t, b, vpc.Attributes["vpcId"]), map[string]string{}, map[string]string{"Name": "main", spec.OwnershipTagKey: "fleet"}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.List(ctx, testRegion); err != nil || len(got) != 0 {
		t.Errorf("List = %v, %v; want nothing", got, err)
	}
	if _, err := d.Read(ctx, testRegion, "main"); errorCode(err) != providers.NotFound {
		t.Errorf("Read of the main table = %v, want not found", err)
	}
	if err := d.Delete(ctx, providers.Target{Name: "main", Region: testRegion}); errorCode(err) != providers.NotFound {
		t.Errorf("Delete of the main table = %v, want not found", err)
	}
}

// mainTableOf is the id of the VPC's main route table.
func mainTableOf(t *testing.T, b *Backend, vpc string) string {
	t.Helper()
	out, err := ec2Client(b).DescribeRouteTables(context.Background(), &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{
		{Name: aws.String("vpc-id"), Values: []string{vpc}}, {Name: aws.String("association.main"), Values: []string{"true"}}}})
	if err != nil || len(out.RouteTables) != 1 {
		t.Fatalf("the main table of %s: %v (%d tables)", vpc, err, len(out.RouteTables))
	}
	return aws.ToString(out.RouteTables[0].RouteTableId)
}

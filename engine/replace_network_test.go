package engine

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// A VPC holds its subnets, its internet gateway and its route tables (AWS
// refuses to delete a VPC with any inside): replacing the VPC replaces all
// three around it, though none changes a field of its own, and the
// gateway's vpc is not a forcing field. The table also holds the gateway
// and the subnet it routes to and takes: it goes before both and comes
// after.
const (
	vpcMain     = `{"address": "aws/vpc/main", "spec": {"cidr": "10.0.0.0/16"}}`
	vpcWider    = `{"address": "aws/vpc/main", "spec": {"cidr": "10.0.0.0/15"}}`
	subnetWeb   = `{"address": "aws/subnet/web", "spec": {"vpc": {"ref": "aws/vpc/main"}, "cidr": "10.0.1.0/24", "availabilityZone": "eu-west-3a"}}`
	gatewayOut  = `{"address": "aws/internet-gateway/out", "spec": {"vpc": {"ref": "aws/vpc/main"}}}`
	tablePublic = `{"address": "aws/route-table/public", "spec": {"vpc": {"ref": "aws/vpc/main"}, ` +
		`"gatewayRoutes": {"0.0.0.0/0": {"ref": "aws/internet-gateway/out"}}, "subnets": {"web": {"ref": "aws/subnet/web"}}}}`
)

func TestReplacedVPCReplacesWhatItHolds(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(vpcMain, subnetWeb, gatewayOut, tablePublic))
	d := doc(vpcWider, subnetWeb, gatewayOut, tablePublic)
	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/vpc/main, replace aws/internet-gateway/out, replace aws/subnet/web, replace aws/route-table/public" {
		t.Fatalf("plan: %s", got)
	}
	vpc := actionAt(t, p, "aws/vpc/main")
	if vpc.Order != DeleteFirst || !strings.Contains(vpc.Reason, "cidr forces replacement") ||
		!strings.Contains(vpc.Reason, "infra finds a vpc by its Name tag") ||
		!strings.Contains(vpc.Reason, "aws/internet-gateway/out, aws/route-table/public, aws/subnet/web is deleted before it and created after") {
		t.Errorf("vpc: order %q, reason %q", vpc.Order, vpc.Reason)
	}
	held := []string{"aws/subnet/web", "aws/internet-gateway/out", "aws/route-table/public"}
	for _, a := range held {
		if r := actionAt(t, p, a).Reason; !strings.Contains(r, "aws/vpc/main is replaced and cannot be deleted while vpc is attached to it") {
			t.Errorf("%s: reason %q", a, r)
		}
	}
	calls := f.applyCalls(p)
	at := func(call string) int {
		i := strings.Index(calls, call)
		if i < 0 {
			t.Fatalf("no %q in the calls: %s", call, calls)
		}
		return i
	}
	for _, h := range held {
		if !(at("delete "+h) < at("delete aws/vpc/main") && at("create aws/vpc/main") < at("create "+h)) {
			t.Errorf("%s is not deleted before the VPC and created after it: %s", h, calls)
		}
	}
	// The table goes before what it routes to and takes, and comes after.
	for _, h := range []string{"aws/subnet/web", "aws/internet-gateway/out"} {
		if !(at("delete aws/route-table/public") < at("delete "+h) && at("create "+h) < at("create aws/route-table/public")) {
			t.Errorf("the route table is not deleted before %s and created after it: %s", h, calls)
		}
	}
	newVPC, _ := f.cloud.Get(spec.AWS, spec.VPC, "eu-west-3", "main")
	for k, name := range map[spec.Kind]string{spec.Subnet: "web", spec.InternetGateway: "out", spec.RouteTable: "public"} {
		r, ok := f.cloud.Get(spec.AWS, k, "eu-west-3", name)
		if !ok || r.Fields["vpc"] != newVPC.Attributes["vpcId"] {
			t.Errorf("%s %s is in %v; the VPC is %s", k, name, r.Fields["vpc"], newVPC.Attributes["vpcId"])
		}
	}
	f.converged(d)
}

// A replaced NAT gateway replaces the route table that routes to it
// around it (the table holds it): no table is left routing to a gateway
// that is gone, and the new table routes to the new gateway.
func TestReplacedNATGatewayReplacesItsRouteTable(t *testing.T) {
	f := newFixture(t)
	natA := `{"address": "aws/nat-gateway/egress", "spec": {"subnet": {"ref": "aws/subnet/web"}}}`
	natB := `{"address": "aws/nat-gateway/egress", "spec": {"subnet": {"ref": "aws/subnet/web"}, "connectivity": "private"}}`
	table := `{"address": "aws/route-table/private", "spec": {"vpc": {"ref": "aws/vpc/main"}, "natRoutes": {"0.0.0.0/0": {"ref": "aws/nat-gateway/egress"}}}}`
	f.mustApply(doc(vpcMain, subnetWeb, natA, table))
	d := doc(vpcMain, subnetWeb, natB, table)
	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/nat-gateway/egress, replace aws/route-table/private" {
		t.Fatalf("plan: %s", got)
	}
	calls := f.applyCalls(p)
	if i, j := strings.Index(calls, "delete aws/route-table/private"), strings.Index(calls, "delete aws/nat-gateway/egress"); i < 0 || j < 0 || i > j {
		t.Errorf("the table is not deleted before the gateway: %s", calls)
	}
	nat, _ := f.cloud.Get(spec.AWS, spec.NATGateway, "eu-west-3", "egress")
	rt, _ := f.cloud.Get(spec.AWS, spec.RouteTable, "eu-west-3", "private")
	if routes, _ := rt.Fields["natRoutes"].(map[string]any); routes["0.0.0.0/0"] != nat.Attributes["natGatewayId"] {
		t.Errorf("the table routes to %v; the gateway is %s", rt.Fields["natRoutes"], nat.Attributes["natGatewayId"])
	}
	f.converged(d)
}

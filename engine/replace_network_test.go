package engine

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// A VPC holds its subnets and its internet gateway (AWS refuses to delete a
// VPC with either inside): replacing the VPC replaces both around it,
// though neither changes a field of its own, and the gateway's vpc is not
// a forcing field.
const (
	vpcMain    = `{"address": "aws/vpc/main", "spec": {"cidr": "10.0.0.0/16"}}`
	vpcWider   = `{"address": "aws/vpc/main", "spec": {"cidr": "10.0.0.0/15"}}`
	subnetWeb  = `{"address": "aws/subnet/web", "spec": {"vpc": {"ref": "aws/vpc/main"}, "cidr": "10.0.1.0/24", "availabilityZone": "eu-west-3a"}}`
	gatewayOut = `{"address": "aws/internet-gateway/out", "spec": {"vpc": {"ref": "aws/vpc/main"}}}`
)

func TestReplacedVPCReplacesWhatItHolds(t *testing.T) {
	f := newFixture(t)
	f.mustApply(doc(vpcMain, subnetWeb, gatewayOut))
	d := doc(vpcWider, subnetWeb, gatewayOut)
	p := f.plan(d, false)
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/vpc/main, replace aws/internet-gateway/out, replace aws/subnet/web" {
		t.Fatalf("plan: %s", got)
	}
	vpc := actionAt(t, p, "aws/vpc/main")
	if vpc.Order != DeleteFirst || !strings.Contains(vpc.Reason, "cidr forces replacement") ||
		!strings.Contains(vpc.Reason, "infra finds a vpc by its Name tag") ||
		!strings.Contains(vpc.Reason, "aws/internet-gateway/out, aws/subnet/web is deleted before it and created after") {
		t.Errorf("vpc: order %q, reason %q", vpc.Order, vpc.Reason)
	}
	for _, a := range []string{"aws/subnet/web", "aws/internet-gateway/out"} {
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
	for _, held := range []string{"aws/subnet/web", "aws/internet-gateway/out"} {
		if !(at("delete "+held) < at("delete aws/vpc/main") && at("create aws/vpc/main") < at("create "+held)) {
			t.Errorf("%s is not deleted before the VPC and created after it: %s", held, calls)
		}
	}
	newVPC, _ := f.cloud.Get(spec.AWS, spec.VPC, "eu-west-3", "main")
	for k, name := range map[spec.Kind]string{spec.Subnet: "web", spec.InternetGateway: "out"} {
		r, ok := f.cloud.Get(spec.AWS, k, "eu-west-3", name)
		if !ok || r.Fields["vpc"] != newVPC.Attributes["vpcId"] {
			t.Errorf("%s %s is in %v; the VPC is %s", k, name, r.Fields["vpc"], newVPC.Attributes["vpcId"])
		}
	}
	f.converged(d)
}

package engine

import (
	"strings"
	"testing"
)

// An Application Load Balancer's estate: objects of references (its
// subnets by zone, its security groups under labels) planned by identity,
// references that hold, and a listener between a load balancer and a
// target group.
const (
	albVPC      = `{"address": "aws/vpc/main", "spec": {"cidr": "10.0.0.0/16"}}`
	albSubnetA  = `{"address": "aws/subnet/a", "spec": {"vpc": {"ref": "aws/vpc/main"}, "cidr": "10.0.1.0/24", "availabilityZone": "eu-west-3a"}}`
	albSubnetB  = `{"address": "aws/subnet/b", "spec": {"vpc": {"ref": "aws/vpc/main"}, "cidr": "10.0.2.0/24", "availabilityZone": "eu-west-3b"}}`
	albLB       = `{"address": "aws/alb/front", "spec": {"subnets": {"eu-west-3a": {"ref": "aws/subnet/a"}, "eu-west-3b": {"ref": "aws/subnet/b"}}, "securityGroups": {"public": {"ref": "aws/security-group/web"}}}}`
	albTG       = `{"address": "aws/alb-target-group/app", "spec": {"vpc": {"ref": "aws/vpc/main"}, "protocol": "HTTP", "port": 8080}}`
	albListener = `{"address": "aws/alb-listener/http", "spec": {"loadBalancer": {"ref": "aws/alb/front"}, "port": 80, "targetGroup": {"ref": "aws/alb-target-group/app"}}}`
)

func albDoc(subnetB string) string {
	return doc(albVPC, albSubnetA, subnetB, sg, albLB, albTG, albListener)
}

// Made once, the estate plans nothing: the subnets and groups the load
// balancer reports by id compare with the references it declares, by zone
// and by value.
func TestALBEstateConverges(t *testing.T) {
	f := newFixture(t)
	d := albDoc(albSubnetB)
	if p := f.mustApply(d); p.Summary.Create != 7 {
		t.Fatalf("want 7 creates, got %v", actionsOf(p))
	}
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Fatalf("second plan not empty: %v", actionsOf(again))
	}
}

// A replaced subnet replaces the load balancer around it (the subnet
// cannot go while the load balancer is in it), and the load balancer's
// listener around that.
func TestALBReplacedSubnetReplacesWhatHoldsIt(t *testing.T) {
	f := newFixture(t)
	f.mustApply(albDoc(albSubnetB))
	d := albDoc(strings.Replace(albSubnetB, "10.0.2.0/24", "10.0.3.0/24", 1))
	calls := f.applyCalls(f.plan(d, false))
	before(t, calls, "delete aws/alb-listener/http", "delete aws/alb/front")
	before(t, calls, "delete aws/alb/front", "delete aws/subnet/b")
	before(t, calls, "create aws/subnet/b", "create aws/alb/front")
	before(t, calls, "create aws/alb/front", "create aws/alb-listener/http")
	if again := f.plan(d, false); len(again.Actions) != 0 {
		t.Fatalf("next plan not empty: %v", actionsOf(again))
	}
}

// Destroyed, a listener goes before its load balancer and its target
// group, and the load balancer before its subnets and security group.
func TestALBEstateDestroysListenerFirst(t *testing.T) {
	f := newFixture(t)
	d := albDoc(albSubnetB)
	f.mustApply(d)
	calls := f.applyCalls(f.plan(d, true))
	before(t, calls, "delete aws/alb-listener/http", "delete aws/alb/front")
	before(t, calls, "delete aws/alb-listener/http", "delete aws/alb-target-group/app")
	before(t, calls, "delete aws/alb/front", "delete aws/subnet/a")
	before(t, calls, "delete aws/alb/front", "delete aws/security-group/web")
	before(t, calls, "delete aws/alb-target-group/app", "delete aws/vpc/main")
}

// before fails unless call a comes before call b in calls.
func before(t *testing.T, calls, a, b string) {
	t.Helper()
	i, j := strings.Index(calls, a), strings.Index(calls, b)
	if i < 0 || j < 0 || i > j {
		t.Errorf("want %q before %q in: %s", a, b, calls)
	}
}

package aws

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// The load balancers go in the default VPC, where the security-group
// kind's groups are when they declare no vpc.
func TestALBConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	net := makeNet(t, b, "albnet", "", "172.31.200.0/24", "172.31.201.0/24", "172.31.202.0/24")
	makeGroup(t, b, "alb-web")
	makeGroup(t, b, "alb-admin")
	conformance(t, netReads{b}, srv, drivertest.Case{
		Kind: spec.ALB,
		Create: map[string]any{"subnets": net.zones("ab"),
			"securityGroups": map[string]any{"web": "alb-web"}},
		Updates: []map[string]any{
			{"subnets": net.zones("bc")},
			{"securityGroups": map[string]any{"web": "alb-web", "admin": "alb-admin"}},
			{"idleTimeoutSec": 4000.0, "deletionProtection": true},
			// Off again, or the suite's cleanup could not delete it.
			{"idleTimeoutSec": 1.0, "deletionProtection": false},
		},
		Replaces: []map[string]any{{"scheme": "internal"}},
		OddNames: []string{"Mixed-Case-0", strings.Repeat("b", 32), "internal"},
	})
}

// What Elastic Load Balancing's API reference refuses is refused before
// any call, saying why.
func TestALBRefusesBadValuesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.ALB)
	two := map[string]any{"eu-west-3a": "a", "eu-west-3b": "b"}
	wantRefused(t, d, []refusal{
		{"internal-web", map[string]any{"subnets": two}, "cannot begin with internal-"},
		{"-web", map[string]any{"subnets": two}, "begin or end with a hyphen"},
		{"web_1", map[string]any{"subnets": two}, `character '_'`},
		{strings.Repeat("w", 33), map[string]any{"subnets": two}, "1 to 32 characters"},
		{"web", map[string]any{"subnets": map[string]any{"eu-west-3a": "a"}}, "at least two availability zones"},
		{"web", map[string]any{"subnets": map[string]any{"eu-west-3a": "a", "us-east-1b": "b"}}, `key "us-east-1b" is not an availability zone of eu-west-3`},
		{"web", map[string]any{"subnets": two, "scheme": "public"}, "internet-facing or internal"},
		{"web", map[string]any{"subnets": two, "idleTimeoutSec": 0.0}, "from 1 to 4000"},
		{"web", map[string]any{"subnets": two, "idleTimeoutSec": 4001.0}, "from 1 to 4000"},
		{"web", map[string]any{"subnets": two, "securityGroups": map[string]any{}}, "at least one"},
	})
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// A subnet keyed by another zone than its own, subnets of two VPCs, and a
// group of the security-group kind in the default VPC (it declares no vpc)
// with subnets of another VPC are refused before the load balancer is made.
func TestALBRefusesWhatTheSubnetsContradict(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	def := makeNet(t, b, "def", "", "172.31.210.0/24", "172.31.211.0/24", "172.31.212.0/24")
	own := makeNet(t, b, "own", "10.20.0.0/16", "10.20.1.0/24", "10.20.2.0/24", "10.20.3.0/24")
	makeGroup(t, b, "web")
	d, _ := b.Driver(spec.ALB)
	wantRefused(t, d, []refusal{
		{"web", map[string]any{"subnets": map[string]any{"eu-west-3a": own.subnets["eu-west-3b"], "eu-west-3c": own.subnets["eu-west-3c"]}},
			"own-b is keyed by eu-west-3a but is in eu-west-3b"},
		{"web", map[string]any{"subnets": map[string]any{"eu-west-3a": own.subnets["eu-west-3a"], "eu-west-3b": def.subnets["eu-west-3b"]}},
			"more than one VPC"},
		{"web", map[string]any{"subnets": own.zones("ab"), "securityGroups": map[string]any{"web": "web"}},
			"a security-group is in its vpc, the region's default VPC when it declares none"},
		{"web", map[string]any{"subnets": map[string]any{"eu-west-3a": "nothing-a", "eu-west-3b": own.subnets["eu-west-3b"]}},
			`no subnet named "nothing-a"`},
	})
	if n := calls.count("CreateLoadBalancer"); n != 0 {
		t.Errorf("CreateLoadBalancer was called %d times", n)
	}
}

// refuseDelete answers DeleteLoadBalancer as Elastic Load Balancing does
// for a load balancer whose deletion protection is on (OperationNotPermitted,
// in DeleteLoadBalancer's API reference). moto deletes such a load
// balancer.
func refuseDelete() func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("protected", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if middleware.GetOperationName(ctx) == "DeleteLoadBalancer" {
				return middleware.InitializeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: "OperationNotPermitted",
					Message: "Load balancer 'arn:…' cannot be deleted because deletion protection is enabled"}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}})
}

// A protected load balancer's delete fails naming the field and the fix;
// the driver never turns the protection off itself.
func TestALBDeleteOfAProtectedOneSaysWhatToDo(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option(), refuseDelete())
	net := makeNet(t, b, "dp", "", "172.31.220.0/24", "172.31.221.0/24", "172.31.222.0/24")
	d, _ := b.Driver(spec.ALB)
	ctx := context.Background()
	tg := providers.Target{Name: "kept", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"subnets": net.zones("ab"), "deletionProtection": true}}
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	before := calls.count("ModifyLoadBalancerAttributes")
	err := d.Delete(ctx, tg)
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), "set deletionProtection to false") {
		t.Fatalf("Delete = %v (code %s), want a conflict naming deletionProtection and the fix", err, errorCode(err))
	}
	if n := calls.count("ModifyLoadBalancerAttributes"); n != before {
		t.Errorf("the delete changed the attributes (%d calls)", n-before)
	}
	r, err := d.Read(ctx, testRegion, "kept")
	if err != nil || r.Fields["deletionProtection"] != true {
		t.Errorf("after the refused delete: %v, %v", r.Fields, err)
	}
}

// Another fleet's subnets reach the driver as their ids, each entered in
// Target.Identities under itself (an export of the network fleet's, read
// through a slot): the load balancer is made in them without a lookup by
// a Name tag this fleet does not know, and reports them by id.
func TestALBTakesAnotherFleetsSubnetsByIdentity(t *testing.T) {
	ctx := context.Background()
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	c := testEC2(b)
	vpc, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.30.0.0/16")})
	if err != nil {
		t.Fatal(err)
	}
	subnets, ids := map[string]any{}, map[spec.Address]string{}
	for i, zone := range []string{testRegion + "a", testRegion + "b"} {
		out, err := c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.30.%d.0/24", i+1)), AvailabilityZone: aws.String(zone)})
		if err != nil {
			t.Fatal(err)
		}
		id := aws.ToString(out.Subnet.SubnetId)
		nameTag(t, c, id, "network-"+zone) // the network fleet's name for it
		subnets[zone] = id
		ids[spec.Address{Provider: spec.AWS, Kind: spec.Subnet, Name: id}] = id
	}
	d, _ := b.Driver(spec.ALB)
	r, err := d.Create(ctx, providers.Target{Name: "wired", Region: testRegion, Owner: "app", Fields: map[string]any{"subnets": subnets}, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Delete(ctx, providers.Target{Name: "wired", Region: testRegion, Owner: "app"}) })
	if got := r.Fields[providers.ALBSubnets]; !reflect.DeepEqual(got, subnets) {
		t.Fatalf("made in %v, want %v", got, subnets)
	}
	if n := calls.count("DescribeSubnets"); n != 1 {
		t.Errorf("DescribeSubnets was called %d times, want once, by id", n)
	}
}

// ELBv2 keeps one load balancer to a name: a CreateLoadBalancer that
// repeats one's settings gets that load balancer (an SDK retry of a lost
// answer makes nothing), one that differs is DuplicateLoadBalancerName.
// The harness holds moto to it (the dropped-answer crash test of alb found
// a second load balancer of the name); the driver relies on it.
func TestALBNameTakesOneLoadBalancer(t *testing.T) {
	b, _ := newTestBackend(t)
	net := makeNet(t, b, "onelb", "10.97.0.0/16", "10.97.1.0/24", "10.97.2.0/24", "10.97.3.0/24")
	d, _ := b.Driver(spec.ALB)
	ctx := context.Background()
	made, err := d.Create(ctx, providers.Target{Name: "once", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"subnets": net.zones("ab")}})
	if err != nil {
		t.Fatal(err)
	}
	c := d.(*albs).elb.get(testRegion)
	lbs, err := c.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: []string{made.Attributes["arn"]}})
	if err != nil || len(lbs.LoadBalancers) != 1 {
		t.Fatalf("describe: %v", err)
	}
	lb := lbs.LoadBalancers[0]
	var subnets []string
	for _, z := range lb.AvailabilityZones {
		subnets = append(subnets, aws.ToString(z.SubnetId))
	}
	again, err := c.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: lb.LoadBalancerName, Subnets: subnets,
		Scheme: lb.Scheme, Type: lb.Type})
	if err != nil || aws.ToString(again.LoadBalancers[0].LoadBalancerArn) != made.Attributes["arn"] {
		t.Errorf("the same settings again: %v; want load balancer %s", err, made.Attributes["arn"])
	}
	_, err = c.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: lb.LoadBalancerName, Subnets: subnets,
		Scheme: elbtypes.LoadBalancerSchemeEnumInternal, Type: lb.Type})
	if !isCode(err, "DuplicateLoadBalancerName") {
		t.Errorf("other settings under the name: %v, want DuplicateLoadBalancerName", err)
	}
	all, err := c.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"once"}})
	if err != nil || len(all.LoadBalancers) != 1 {
		t.Errorf("load balancers named once: %v, %v; want one", all, err)
	}
}

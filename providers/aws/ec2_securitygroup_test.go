package aws

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func ingress(rules ...any) []any {
	out := []any{}
	for i := 0; i < len(rules); i += 2 {
		out = append(out, map[string]any{"port": float64(rules[i].(int)), "cidr": rules[i+1].(string)})
	}
	return out
}

func TestSecurityGroupConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	// No PageSize: moto ignores MaxResults on DescribeSecurityGroups, so
	// the listing is one page there whatever the driver asks.
	conformance(t, b, srv, drivertest.Case{
		Kind:   spec.SecurityGroup,
		Create: map[string]any{"description": "web tier", "ingress": ingress(443, "0.0.0.0/0")},
		Updates: []map[string]any{
			{"ingress": ingress(443, "0.0.0.0/0", 80, "10.0.0.0/8", 22, "192.168.1.0/24")},
			{"ingress": ingress(80, "10.0.0.0/8", 443, "::/0")},
			{"ingress": ingress()},
		},
		Replaces: []map[string]any{{"description": "web tier, v2: (ports) #1 & more"}},
		OddNames: []string{"Mixed Case with spaces", "dots.colons:slashes/(and)#@[]+=&;{}!$*", strings.Repeat("g", 255)},
	})
}

func sgTarget(name, desc string, rules []any, tags map[string]any) providers.Target {
	f := map[string]any{"description": desc, "ingress": rules}
	if tags != nil {
		f[spec.TagsField] = tags
	}
	return providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: f}
}

// TestSecurityGroupBehaviour runs the driver's own cases on one emulator
// reset (a reset with EC2 loaded takes seconds). Each subtest removes what
// it made.
func TestSecurityGroupBehaviour(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	dr, _ := b.Driver(spec.SecurityGroup)
	d := dr.(*securityGroups)
	c := d.clients.get(testRegion)
	ctx := context.Background()
	create := creator(d)

	// The predecessor let EC2 refuse an apostrophe after the plan was
	// approved.
	t.Run("RefusesApostropheBeforeAnyCall", func(t *testing.T) {
		before := calls.count("CreateSecurityGroup")
		_, err := d.Create(ctx, sgTarget("web", "Bob's web tier", nil, nil))
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), `'\''`) {
			t.Fatalf("Create = %v (code %s), want invalid argument naming the apostrophe", err, errorCode(err))
		}
		for _, name := range []string{"default", "sg-123", "tab\there"} {
			if _, err := d.Create(ctx, sgTarget(name, "x", nil, nil)); errorCode(err) != providers.InvalidArgument {
				t.Errorf("Create(%q) = %v, want invalid argument", name, err)
			}
		}
		if n := calls.count("CreateSecurityGroup") - before; n != 0 {
			t.Errorf("CreateSecurityGroup was called %d times", n)
		}
	})

	t.Run("RefusesHostBits", func(t *testing.T) {
		_, err := d.Create(ctx, sgTarget("app", "app", ingress(22, "10.1.2.3/8"), nil))
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "10.0.0.0/8") {
			t.Fatalf("Create = %v, want invalid argument suggesting 10.0.0.0/8", err)
		}
	})

	t.Run("NeverManagesDefault", func(t *testing.T) {
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Name == "default" {
				t.Errorf("List shows the default group")
			}
		}
		if _, err := d.Read(ctx, testRegion, "default"); errorCode(err) != providers.NotFound {
			t.Errorf("Read(default) = %v, want not found", err)
		}
	})

	// Rules infra cannot express are reported (so they are drift) and
	// revoked by the update, while the declared ones are kept.
	t.Run("RevokesForeignRules", func(t *testing.T) {
		tg := sgTarget("app", "app", ingress(443, "0.0.0.0/0"), nil)
		res := create(t, tg)
		other := create(t, sgTarget("peer", "peer", nil, nil))
		_, err := c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{
			GroupId: aws.String(res.Attributes["groupId"]),
			IpPermissions: []ec2types.IpPermission{
				{IpProtocol: aws.String("udp"), FromPort: aws.Int32(53), ToPort: aws.Int32(53), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}},
				{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8000), ToPort: aws.Int32(8100), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}},
				{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(443), ToPort: aws.Int32(443), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(other.Attributes["groupId"])}}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Read(ctx, testRegion, "app")
		if err != nil {
			t.Fatal(err)
		}
		rules := got.Fields["ingress"].([]any)
		if len(rules) != 4 {
			t.Fatalf("ingress = %v, want the declared rule and three foreign ones", rules)
		}
		odd := 0
		for _, r := range rules {
			if _, ok := r.(map[string]any)["protocol"]; ok {
				odd++
			}
		}
		if odd != 3 {
			t.Errorf("ingress = %v: want 3 rules marked with their protocol", rules)
		}
		got, err = d.Update(ctx, tg, []string{"ingress"})
		if err != nil {
			t.Fatal(err)
		}
		if want := ingress(443, "0.0.0.0/0"); !sameJSONSet(got.Fields["ingress"].([]any), want) {
			t.Errorf("after update ingress = %v, want %v", got.Fields["ingress"], want)
		}
	})

	// Two VPCs may each have a group of one name: the default VPC's is the
	// one infra means, and the only one listed.
	t.Run("SameNameInAnotherVPC", func(t *testing.T) {
		vpc, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.9.0.0/16")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("shared"), Description: aws.String("elsewhere"), VpcId: vpc.Vpc.VpcId}); err != nil {
			t.Fatal(err)
		}
		create(t, sgTarget("shared", "ours", nil, nil))
		got, err := d.Read(ctx, testRegion, "shared")
		if err != nil {
			t.Fatal(err)
		}
		if got.Fields["description"] != "ours" || got.Owner != "fleet" {
			t.Errorf("Read = %+v, want the default VPC's group", got)
		}
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Fields["description"] != "ours" {
			t.Errorf("List = %v, want the default VPC's group only", rs)
		}
	})
}

func sameJSONSet(a, b []any) bool {
	key := func(xs []any) map[string]int {
		m := map[string]int{}
		for _, x := range xs {
			m[showJSON(x)]++
		}
		return m
	}
	ka, kb := key(a), key(b)
	if len(ka) != len(kb) {
		return false
	}
	for k := range ka {
		if _, ok := kb[k]; !ok {
			return false
		}
	}
	return true
}

func showJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

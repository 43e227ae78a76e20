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

// Two cases: a group in the default VPC (vpc unset), and one in a VPC
// of its own, replaced into another.
func TestSecurityGroupConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	updates := []map[string]any{
		{"ingress": ingress(443, "0.0.0.0/0", 80, "10.0.0.0/8", 22, "192.168.1.0/24")},
		{"ingress": ingress(80, "10.0.0.0/8", 443, "::/0")},
		{"ingress": ingress()},
	}
	// No PageSize: moto ignores MaxResults on DescribeSecurityGroups, so
	// the listing is one page there whatever the driver asks.
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.SecurityGroup,
		Create:   map[string]any{"description": "web tier", "ingress": ingress(443, "0.0.0.0/0")},
		Updates:  updates,
		Replaces: []map[string]any{{"description": "web tier, v2: (ports) #1 & more"}},
		OddNames: []string{"Mixed Case with spaces", "dots.colons:slashes/(and)#@[]+=&;{}!$*", strings.Repeat("g", 255)},
		Untested: map[string]string{"vpc": "the in-vpc case sets it, and replaces the group into another VPC"},
	}, drivertest.Case{
		Kind: spec.SecurityGroup, Name: "in-vpc",
		// Two VPCs, made through the vpc driver, so that the suite reads
		// the id a group's vpc must report from it.
		Setup: func(t *testing.T) {
			makeVPC(t, b, "sg-net-a", "10.0.0.0/16")
			makeVPC(t, b, "sg-net-b", "10.1.0.0/16")
		},
		Create:  map[string]any{"vpc": "sg-net-a", "description": "web tier", "ingress": ingress(443, "0.0.0.0/0")},
		Updates: updates,
		Replaces: []map[string]any{
			{"vpc": "sg-net-b"},
			{"description": "web tier, v2", "ingress": ingress(80, "10.1.0.0/16")},
		},
		OddNames: []string{"dots.colons:slashes/(and)#@[]+=&;{}!$*"},
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

	// A filter takes * and ? as wildcards: a name holding them is found
	// exactly, not as a pattern over its neighbours.
	t.Run("WildcardsInANameAreLiteral", func(t *testing.T) {
		star := create(t, sgTarget("w*b", "star", nil, nil))
		create(t, sgTarget("wxb", "x", nil, nil))
		create(t, sgTarget("w.b", "dot", nil, nil))
		got, err := d.Read(ctx, testRegion, "w*b")
		if err != nil {
			t.Fatal(err)
		}
		if got.Attributes["groupId"] != star.Attributes["groupId"] {
			t.Errorf("Read(w*b) = %s (%v), want %s", got.Attributes["groupId"], got.Fields["description"], star.Attributes["groupId"])
		}
	})
}

// A group declaring its vpc is made there, by the VPC id the engine hands
// over (no lookup by name), reports the id as its vpc and vpcId without a
// describe, and is found by name outside the default VPC.
func TestSecurityGroupInADeclaredVPC(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	vpc := makeVPC(t, b, "sg-net", "10.0.0.0/16")
	id := vpc.Attributes["vpcId"]
	d, _ := b.Driver(spec.SecurityGroup)
	ctx := providers.WithWant(context.Background(), providers.Want{Attributes: map[string]bool{"vpcId": true}})
	tg := sgTarget("web", "web tier", ingress(80, "0.0.0.0/0"), nil)
	tg.Fields["vpc"] = "sg-net"
	tg.Identities = map[spec.Address]string{{Provider: spec.AWS, Kind: spec.VPC, Name: "sg-net"}: id}
	before, vpcs := calls.total(), calls.count("DescribeVpcs")
	res, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Delete(context.Background(), tg) })
	if n, v := calls.total()-before, calls.count("DescribeVpcs")-vpcs; n != 2 || v != 0 {
		t.Errorf("the create made %d calls (%d DescribeVpcs), want CreateSecurityGroup and AuthorizeSecurityGroupIngress only", n, v)
	}
	if res.Fields["vpc"] != id || res.Attributes["vpcId"] != id {
		t.Errorf("the create reports vpc %v and vpcId %q, want %s", res.Fields["vpc"], res.Attributes["vpcId"], id)
	}
	got, err := d.Read(context.Background(), testRegion, "web")
	if err != nil {
		t.Fatal(err)
	}
	if got.Fields["vpc"] != id || got.Owner != "fleet" {
		t.Errorf("Read = %+v, want the group in %s", got, id)
	}
	// A group of a VPC that is not there fails naming it.
	lost := sgTarget("lost", "lost", nil, nil)
	lost.Fields["vpc"] = "gone"
	if _, err := d.Create(ctx, lost); errorCode(err) != providers.NotFound || !strings.Contains(err.Error(), "its vpc gone") {
		t.Errorf("Create in a missing VPC = %v (code %s), want not found naming the vpc", err, errorCode(err))
	}
}

// A group's name is unique only within its VPC. The same name in the
// default VPC and in a declared one is listed once, incomplete and without
// an owner, and reading, updating, releasing or deleting it by name is a
// Conflict naming both groups and their VPCs: infra never guesses.
func TestSecurityGroupSameNameInTwoVPCsIsAConflict(t *testing.T) {
	b, _ := newTestBackend(t)
	dr, _ := b.Driver(spec.SecurityGroup)
	d := dr.(*securityGroups)
	ctx := context.Background()
	def, err := defaultVPC(ctx, d.clients.get(testRegion))
	if err != nil || def == "" {
		t.Fatalf("default VPC: %q, %v", def, err)
	}
	other := makeVPC(t, b, "sg-net", "10.0.0.0/16").Attributes["vpcId"]
	create := creator(d)
	ours := create(t, sgTarget("shared", "ours", nil, nil))
	inVPC := sgTarget("shared", "elsewhere", nil, nil)
	inVPC.Fields["vpc"] = "sg-net"
	theirs := create(t, inVPC)
	create(t, sgTarget("alone", "alone", nil, nil))

	rs, err := d.List(ctx, testRegion)
	if err != nil {
		t.Fatal(err)
	}
	var shared []providers.Resource
	for _, r := range rs {
		if r.Name == "shared" {
			shared = append(shared, r)
		}
	}
	if len(shared) != 1 || shared[0].Complete || shared[0].Owner != "" || len(shared[0].Fields) != 0 || len(shared[0].Attributes) != 0 {
		t.Fatalf("List shows shared as %+v, want it once, incomplete, with its name and region only", shared)
	}
	if len(rs) != 2 {
		t.Errorf("List = %v, want shared and alone", rs)
	}
	wantConflict := func(what string, err error) {
		t.Helper()
		if errorCode(err) != providers.Conflict {
			t.Fatalf("%s = %v (code %s), want a conflict", what, err, errorCode(err))
		}
		for _, s := range []string{ours.Attributes["groupId"] + " in " + def, theirs.Attributes["groupId"] + " in " + other} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s = %v, want it to name %s", what, err, s)
			}
		}
	}
	_, err = d.Read(ctx, testRegion, "shared")
	wantConflict("Read", err)
	_, err = d.Update(ctx, sgTarget("shared", "ours", ingress(22, "0.0.0.0/0"), nil), []string{"ingress"})
	wantConflict("Update", err)
	wantConflict("Release", d.Release(ctx, testRegion, "shared", "fleet"))
	wantConflict("Delete", d.Delete(ctx, providers.Target{Name: "shared", Region: testRegion}))
	// By the id a listing gives, each can still go.
	if err := d.Delete(ctx, providers.Target{Name: "shared", Region: testRegion, Attributes: theirs.Attributes}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Read(ctx, testRegion, "shared")
	if err != nil || got.Attributes["groupId"] != ours.Attributes["groupId"] {
		t.Errorf("Read after the other went = %v, %v; want %s", got.Attributes, err, ours.Attributes["groupId"])
	}
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

package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestVPCConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:   spec.VPC,
		Create: map[string]any{"cidr": "10.0.0.0/16"},
		Updates: []map[string]any{
			{"enableDnsHostnames": true},
			// Support goes off with hostnames, hostnames first.
			{"enableDnsSupport": false, "enableDnsHostnames": false},
			{"enableDnsSupport": true},
		},
		Replaces: []map[string]any{{"cidr": "172.16.0.0/28"}},
		// Names EC2 filters would take for patterns: *, ? and [ ] are
		// matched literally.
		OddNames: []string{"Mixed.Case_name-0", `star*and?mark[x]\`, strings.Repeat("v", 255)},
	})
}

// makeVPC makes a VPC through the driver and deletes it when the test ends.
func makeVPC(t *testing.T, b *Backend, name, cidr string) providers.Resource {
	t.Helper()
	d, _ := b.Driver(spec.VPC)
	tg := providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: map[string]any{"cidr": cidr}}
	res, err := d.Create(context.Background(), tg)
	if err != nil {
		t.Fatalf("create vpc %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := d.Delete(context.Background(), tg); err != nil && errorCode(err) != providers.NotFound {
			t.Logf("cleanup: delete vpc %s: %v", name, err)
		}
	})
	return res
}

func ec2Client(b *Backend) *ec2.Client {
	d, _ := b.Driver(spec.VPC)
	return d.(*vpcs).clients.get(testRegion)
}

// A block EC2 would refuse or store otherwise, and hostnames without the
// DNS server, are refused before any call.
func TestVPCRefusesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.VPC)
	for _, tc := range []struct {
		fields map[string]any
		want   string
	}{
		{map[string]any{"cidr": "10.0.0.1/16"}, `write "10.0.0.0/16"`},
		{map[string]any{"cidr": "10.0.0.0/8"}, "a /16 (65,536 addresses) to a /28"},
		{map[string]any{"cidr": "10.0.0.0/29"}, "a /16 (65,536 addresses) to a /28"},
		{map[string]any{"cidr": "fd00::/56"}, "not an IPv4 CIDR block"},
		{map[string]any{"cidr": "10.0.0.0/16", "enableDnsSupport": false, "enableDnsHostnames": true}, "enableDnsHostnames needs enableDnsSupport"},
		{map[string]any{"cidr": "10.0.0.0/16", "tags": map[string]any{"Name": "other"}}, "the Name tag is the name"},
	} {
		_, err := d.Create(context.Background(), providers.Target{Name: "net", Region: testRegion, Owner: "fleet", Fields: tc.fields})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create(%v) = %v (code %s), want invalid argument saying %q", tc.fields, err, errorCode(err), tc.want)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// Two VPCs with one Name tag: a read names both ids rather than pick one,
// and so does the listing when either is a fleet's; two that are nobody's
// are left out of it.
func TestVPCSameNameIsAConflict(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.VPC)
	c := ec2Client(b)
	ctx := context.Background()
	first := makeVPC(t, b, "twin", "10.0.0.0/16")
	mk := func(cidr, name string, owned bool) string {
		tags := []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String(name)}}
		if owned {
			tags = append(tags, ec2types.Tag{Key: aws.String(spec.OwnershipTagKey), Value: aws.String("fleet")})
		}
		out, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(cidr),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeVpc, Tags: tags}}})
		if err != nil {
			t.Fatal(err)
		}
		id := aws.ToString(out.Vpc.VpcId)
		t.Cleanup(func() { _, _ = c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(id)}) })
		return id
	}
	second := mk("10.1.0.0/16", "twin", false)
	_, err := d.Read(ctx, testRegion, "twin")
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), first.Attributes["vpcId"]) || !strings.Contains(err.Error(), second) {
		t.Errorf("Read = %v (code %s), want a conflict naming %s and %s", err, errorCode(err), first.Attributes["vpcId"], second)
	}
	if _, err := d.List(ctx, testRegion); errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), second) {
		t.Errorf("List = %v, want a conflict naming both", err)
	}
	mk("10.2.0.0/16", "stray", false)
	mk("10.3.0.0/16", "stray", false)
	if err := d.Delete(ctx, providers.Target{Name: "twin", Region: testRegion, Attributes: first.Attributes}); err != nil {
		t.Fatal(err)
	}
	rs, err := d.List(ctx, testRegion)
	if err != nil {
		t.Fatalf("List with two unowned strays: %v", err)
	}
	if got := strings.Join(drivertest.Names(rs), ","); got != "twin" {
		t.Errorf("List = %s, want only twin (the strays share a name and are no fleet's)", got)
	}
}

// DeleteVpc refuses while a subnet is inside: a Conflict, which the engine
// retries, naming the subnet.
func TestVPCDeleteWithSubnetInsideIsAConflictNamingIt(t *testing.T) {
	b, _ := newTestBackend(t)
	vpc := makeVPC(t, b, "busy", "10.0.0.0/16")
	sd, _ := b.Driver(spec.Subnet)
	sub := providers.Target{Name: "inner", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"vpc": "busy", "cidr": "10.0.1.0/24", "availabilityZone": testRegion + "a"}}
	s, err := sd.Create(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sd.Delete(context.Background(), sub) })
	d, _ := b.Driver(spec.VPC)
	err = d.Delete(context.Background(), providers.Target{Name: "busy", Region: testRegion, Attributes: vpc.Attributes})
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), s.Attributes["subnetId"]+" (inner)") {
		t.Fatalf("Delete = %v (code %s), want a conflict naming subnet %s (inner)", err, errorCode(err), s.Attributes["subnetId"])
	}
	if err := sd.Delete(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(context.Background(), providers.Target{Name: "busy", Region: testRegion, Attributes: vpc.Attributes}); err != nil {
		t.Fatalf("Delete once empty: %v", err)
	}
}

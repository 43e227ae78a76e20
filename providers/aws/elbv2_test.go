package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// What the Elastic Load Balancing tests share: a network made through the
// EC2 SDK (the vpc and subnet kinds' drivers are not in this branch yet),
// named by Name tags as those kinds name theirs.

// testNet is a VPC and one subnet per zone of testRegion, by zone.
type testNet struct {
	vpc     string            // the VPC's Name tag
	vpcID   string            // its id
	subnets map[string]string // zone → Name tag
}

// makeNet makes a VPC (or tags the region's default VPC, when cidr is
// empty, so that the security-group kind's groups are in it) and a subnet
// in each of the region's three zones, all tagged Name=prefix-….
func makeNet(t *testing.T, b *Backend, prefix, cidr string, subnetCIDRs ...string) testNet {
	t.Helper()
	ctx := context.Background()
	c := testEC2(b)
	n := testNet{vpc: prefix + "-vpc", subnets: map[string]string{}}
	if cidr == "" {
		id, err := defaultVPC(ctx, c)
		if err != nil || id == "" {
			t.Fatalf("default VPC: %q, %v", id, err)
		}
		n.vpcID = id
	} else {
		out, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(cidr)})
		if err != nil {
			t.Fatal(err)
		}
		n.vpcID = aws.ToString(out.Vpc.VpcId)
	}
	nameTag(t, c, n.vpcID, n.vpc)
	for i, zone := range []string{testRegion + "a", testRegion + "b", testRegion + "c"} {
		out, err := c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(n.vpcID), CidrBlock: aws.String(subnetCIDRs[i]),
			AvailabilityZone: aws.String(zone)})
		if err != nil {
			t.Fatal(err)
		}
		n.subnets[zone] = fmt.Sprintf("%s-%c", prefix, 'a'+i)
		nameTag(t, c, aws.ToString(out.Subnet.SubnetId), n.subnets[zone])
	}
	return n
}

func nameTag(t *testing.T, c *ec2.Client, id, name string) {
	t.Helper()
	if _, err := c.CreateTags(context.Background(), &ec2.CreateTagsInput{Resources: []string{id},
		Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String(name)}}}); err != nil {
		t.Fatal(err)
	}
}

func testEC2(b *Backend) *ec2.Client {
	cfg := b.cfg.Copy()
	cfg.Region = testRegion
	return ec2.NewFromConfig(cfg)
}

// zones is a subnets field of the net's subnets in the zones named by
// their letters ("ab": eu-west-3a and eu-west-3b).
func (n testNet) zones(letters string) map[string]any {
	out := map[string]any{}
	for _, l := range letters {
		z := testRegion + string(l)
		out[z] = n.subnets[z]
	}
	return out
}

// netReads is the backend with stand-ins that read vpc and subnet
// resources by their Name tag, for the conformance suite, which reads a
// referenced resource through the backend to learn the identity a
// reference resolves to. Once those kinds' drivers are in the backend,
// they are used instead.
type netReads struct{ *Backend }

func (b netReads) Driver(k spec.Kind) (providers.Driver, bool) {
	if d, ok := b.Backend.Driver(k); ok || (k != spec.VPC && k != spec.Subnet) {
		return d, ok
	}
	return nameReader{kind: k, c: testEC2(b.Backend)}, true
}

// nameReader reads a VPC or a subnet by its Name tag, for its identity.
type nameReader struct {
	kind spec.Kind
	c    *ec2.Client
}

var errReadOnly = errors.New("a test stand-in that only reads")

func (r nameReader) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	filter := []ec2types.Filter{{Name: aws.String("tag:Name"), Values: []string{name}}}
	id := ""
	if r.kind == spec.VPC {
		out, err := r.c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{Filters: filter})
		if err != nil || len(out.Vpcs) != 1 {
			return providers.Resource{}, fmt.Errorf("vpc %q: %v (%d found)", name, err, len(out.Vpcs))
		}
		id = aws.ToString(out.Vpcs[0].VpcId)
	} else {
		out, err := r.c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: filter})
		if err != nil || len(out.Subnets) != 1 {
			return providers.Resource{}, fmt.Errorf("subnet %q: %v (%d found)", name, err, len(out.Subnets))
		}
		id = aws.ToString(out.Subnets[0].SubnetId)
	}
	info, _ := spec.Lookup(r.kind)
	return providers.Resource{Name: name, Region: region, Attributes: map[string]string{info.Identity: id}}, nil
}

func (nameReader) List(context.Context, string) ([]providers.Resource, error) {
	return nil, errReadOnly
}
func (nameReader) Create(context.Context, providers.Target) (providers.Resource, error) {
	return providers.Resource{}, errReadOnly
}
func (nameReader) Update(context.Context, providers.Target, []string) (providers.Resource, error) {
	return providers.Resource{}, errReadOnly
}
func (nameReader) Delete(context.Context, providers.Target) error { return errReadOnly }

// makeGroup makes a security group of the security-group kind, in the
// default VPC, owned by the suite's fleet.
func makeGroup(t *testing.T, b *Backend, name string) string {
	t.Helper()
	d, _ := b.Driver(spec.SecurityGroup)
	r, err := d.Create(context.Background(), providers.Target{Name: name, Region: testRegion, Owner: "conformance",
		Fields: map[string]any{"description": "load balancer " + name, "ingress": ingress(443, "0.0.0.0/0")}})
	if err != nil {
		t.Fatal(err)
	}
	return r.Attributes["groupId"]
}

// refusal is a create a driver refuses, and what its error says.
type refusal struct {
	name   string
	fields map[string]any
	want   string
}

// wantRefused holds d to refusing each create as an invalid argument,
// saying what the refusal wants.
func wantRefused(t *testing.T, d providers.Driver, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		_, err := d.Create(context.Background(), providers.Target{Name: c.name, Region: testRegion, Owner: "fleet", Fields: c.fields})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(%s, %v) = %v (code %s), want invalid argument saying %q", c.name, c.fields, err, errorCode(err), c.want)
		}
	}
}

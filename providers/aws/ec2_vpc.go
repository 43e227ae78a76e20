package aws

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// vpcs is the vpc kind: an EC2 VPC, named by its Name tag, with its
// primary IPv4 block and the two DNS attributes.
type vpcs struct {
	clients *regional[*ec2.Client]
}

var (
	_ providers.Driver       = (*vpcs)(nil)
	_ providers.Releaser     = (*vpcs)(nil)
	_ providers.ListedReader = (*vpcs)(nil)
)

func init() {
	register(entry{
		kind: spec.VPC, service: "ec2",
		actions: []string{"ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeSubnets", "ec2:DescribeInternetGateways",
			"ec2:DescribeSecurityGroups", "ec2:CreateVpc", "ec2:ModifyVpcAttribute", "ec2:CreateTags", "ec2:DeleteTags", "ec2:DeleteVpc"},
		scopes: map[string][]ActionScope{
			"ec2:DescribeVpcAttribute":     {{Scope: ScopeAny}},
			"ec2:DescribeInternetGateways": {{Scope: ScopeAny}},
			"ec2:CreateVpc":                {{Scope: ScopeCreate}},
			"ec2:ModifyVpcAttribute":       {{Scope: ScopeOwned}},
			"ec2:DeleteVpc":                {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:ec2:{region}:{account}:vpc/{id}",
		sweep:     &SweepTarget{NameTag: "Name", Why: "a VPC's ARN holds its id; its name is its Name tag"},
		arn:       nameTagARN("vpc"),
		errors: map[string]providers.Code{
			"InvalidVpcID.NotFound": providers.NotFound, "InvalidVpcID.Malformed": providers.NotFound,
			"InvalidVpc.Range": providers.InvalidArgument,
			// Something is still inside the VPC (a subnet, an attached
			// gateway, a security group).
			"DependencyViolation": providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &vpcs{clients: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })}
		},
	})
}

// vpcWait bounds the wait for a new VPC to become available.
const vpcWait = 5 * time.Minute

// What EC2 gives a VPC it makes (not the default VPC) unless told: the
// Amazon DNS server answers, and instances get no public DNS names
// (Amazon VPC User Guide, "DNS attributes for your VPC").
const (
	vpcDNSSupportDefault   = true
	vpcDNSHostnamesDefault = false
)

// vpcDNS is the DNS attributes a target asks for, EC2's defaults where it
// sets none.
func vpcDNS(in providers.VPCInput) (support, hostnames bool) {
	support, hostnames = vpcDNSSupportDefault, vpcDNSHostnamesDefault
	if in.HasEnableDnsSupport() {
		support = in.EnableDnsSupport
	}
	if in.HasEnableDnsHostnames() {
		hostnames = in.EnableDnsHostnames
	}
	return support, hostnames
}

// target decodes and checks a target before any call.
func (d *vpcs) target(t providers.Target) (providers.VPCInput, map[string]string, error) {
	in, err := providers.DecodeVPC(t.Fields)
	if err != nil {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/vpc: %s: %v", t.Name, err)
	}
	if support, hostnames := vpcDNS(in); hostnames && !support {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/vpc: %s: enableDnsHostnames needs enableDnsSupport: EC2 gives DNS names only where its DNS server answers", t.Name)
	}
	tags, err := namedTags(spec.VPC, t)
	return in, tags, err
}

func vpcNamed(v ec2types.Vpc) named {
	return named{id: aws.ToString(v.VpcId), tags: ec2TagMap(v.Tags)}
}

func (d *vpcs) List(ctx context.Context, region string) ([]providers.Resource, error) {
	all, err := describeVPCs(ctx, d.clients.get(region), region)
	if err != nil {
		return nil, fmt.Errorf("aws/vpc: DescribeVpcs in %s: %w", region, err)
	}
	// The DNS attributes need a call each: the listing is not complete.
	return listNamed(spec.VPC, region, all, vpcNamed, func(v ec2types.Vpc) providers.Resource { return vpcResource(region, v) })
}

func describeVPCs(ctx context.Context, c *ec2.Client, region string, filters ...ec2types.Filter) ([]ec2types.Vpc, error) {
	return ec2Describe(ctx, ec2.NewDescribeVpcsPaginator(c, &ec2.DescribeVpcsInput{Filters: filters}), spec.VPC, region,
		func(p *ec2.DescribeVpcsOutput) []ec2types.Vpc { return p.Vpcs })
}

// findVPC returns the VPC named name, NotFound, or a Conflict when two
// carry the name.
func findVPC(ctx context.Context, c *ec2.Client, region, name string) (ec2types.Vpc, error) {
	all, err := describeVPCs(ctx, c, region, nameFilter(name))
	if err != nil {
		return ec2types.Vpc{}, fmt.Errorf("aws/vpc: %s: DescribeVpcs: %w", name, err)
	}
	return theOne(spec.VPC, region, name, all, vpcNamed)
}

// vpcIDOf is the id of the VPC named name that a target refers to: the
// one this run observed or made (Identities), else the one of that name.
func vpcIDOf(ctx context.Context, c *ec2.Client, t providers.Target, name string) (string, error) {
	if id := t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.VPC, Name: name}]; id != "" {
		return id, nil
	}
	v, err := findVPC(ctx, c, t.Region, name)
	if err != nil {
		return "", err
	}
	return aws.ToString(v.VpcId), nil
}

func (d *vpcs) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	v, err := findVPC(ctx, c, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	res := vpcResource(region, v)
	if err := d.readDNS(ctx, c, name, aws.ToString(v.VpcId), res.Fields); err != nil {
		return providers.Resource{}, err
	}
	return res, nil
}

// ReadListed finishes a VPC that DescribeVpcs just reported, with its
// cidr, tags and id: only the DNS attributes the engine wants are left to
// read, so a VPC declaring neither costs no call.
func (d *vpcs) ReadListed(ctx context.Context, listed providers.Resource, _ map[string]string) (providers.Resource, error) {
	id := listed.Attributes["vpcId"]
	if id == "" {
		return d.Read(ctx, listed.Region, listed.Name)
	}
	res := listed
	res.Fields = maps.Clone(listed.Fields)
	if err := d.readDNS(ctx, d.clients.get(listed.Region), listed.Name, id, res.Fields); err != nil {
		return providers.Resource{}, err
	}
	return res, nil
}

// readDNS reads into fields each DNS attribute it does not hold yet and
// the engine wants, one DescribeVpcAttribute each (the call takes one
// attribute).
func (d *vpcs) readDNS(ctx context.Context, c *ec2.Client, name, id string, fields map[string]any) error {
	for _, a := range []struct {
		field string
		attr  ec2types.VpcAttributeName
	}{{providers.VPCEnableDnsSupport, ec2types.VpcAttributeNameEnableDnsSupport},
		{providers.VPCEnableDnsHostnames, ec2types.VpcAttributeNameEnableDnsHostnames}} {
		if _, known := fields[a.field]; known || !providers.WantsField(ctx, a.field) {
			continue
		}
		out, err := c.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(id), Attribute: a.attr})
		if err != nil {
			return fmt.Errorf("aws/vpc: %s: DescribeVpcAttribute %s: %w", name, a.attr, err)
		}
		v := out.EnableDnsSupport
		if a.attr == ec2types.VpcAttributeNameEnableDnsHostnames {
			v = out.EnableDnsHostnames
		}
		fields[a.field] = v != nil && aws.ToBool(v.Value)
	}
	return nil
}

func vpcResource(region string, v ec2types.Vpc) providers.Resource {
	tags := ec2TagMap(v.Tags)
	return providers.Resource{
		Name:   tags["Name"],
		Region: region,
		Fields: map[string]any{
			providers.VPCCidr: aws.ToString(v.CidrBlock),
			spec.TagsField:    userTags(tags),
		},
		Attributes: map[string]string{
			"vpcId": aws.ToString(v.VpcId),
			"arn":   ec2ARN(region, aws.ToString(v.OwnerId), "vpc", aws.ToString(v.VpcId)),
		},
		Owner: tags[spec.OwnershipTagKey],
	}
}

func (d *vpcs) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if _, err := blockSize(spec.VPC, t.Name, in.Cidr); err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	// CreateVpc takes no client token: a resend of a create whose answer
	// was lost makes a second VPC of the name.
	out, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(in.Cidr), TagSpecifications: tagSpec(ec2types.ResourceTypeVpc, tags)}, noBlindResend)
	var v ec2types.Vpc
	if err == nil {
		v = *out.Vpc
	} else if v, err = namedDespite(err, t, func() (ec2types.Vpc, error) { return findVPC(ctx, c, t.Region, t.Name) }, vpcNamed); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/vpc: %s: CreateVpc: %w", t.Name, err)
	}
	id := aws.ToString(v.VpcId)
	if v.State != ec2types.VpcStateAvailable {
		// A VPC is pending a moment after its create; EC2 documents
		// available as the state it reaches.
		if err := ec2.NewVpcAvailableWaiter(c).Wait(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{id}}, vpcWait); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/vpc: %s: wait for %s to be available: %w", t.Name, id, err)
		}
	}
	// Only what differs from what EC2 makes is sent: a failure here leaves
	// a tagged VPC whose attributes the next plan reads and updates.
	support, hostnames := vpcDNS(in)
	if err := d.setDNS(ctx, c, t.Name, id, support, support != vpcDNSSupportDefault, hostnames, hostnames != vpcDNSHostnamesDefault); err != nil {
		return providers.Resource{}, err
	}
	v.Tags = ec2Tags(tags)
	res := vpcResource(t.Region, v)
	res.Fields[providers.VPCEnableDnsSupport] = support
	res.Fields[providers.VPCEnableDnsHostnames] = hostnames
	return res, nil
}

// setDNS writes the DNS attributes asked for, one ModifyVpcAttribute
// each, as the API demands, in the order EC2 accepts: support on before
// hostnames, hostnames off before support, since EC2 gives DNS names only
// where its DNS server answers.
func (d *vpcs) setDNS(ctx context.Context, c *ec2.Client, name, id string, support, setSupport, hostnames, setHostnames bool) error {
	modify := func(set bool, attr string, in *ec2.ModifyVpcAttributeInput) error {
		if !set {
			return nil
		}
		in.VpcId = aws.String(id)
		if _, err := c.ModifyVpcAttribute(ctx, in); err != nil {
			return fmt.Errorf("aws/vpc: %s: ModifyVpcAttribute %s: %w", name, attr, err)
		}
		return nil
	}
	sup := func() error {
		return modify(setSupport, providers.VPCEnableDnsSupport, &ec2.ModifyVpcAttributeInput{
			EnableDnsSupport: &ec2types.AttributeBooleanValue{Value: aws.Bool(support)}})
	}
	host := func() error {
		return modify(setHostnames, providers.VPCEnableDnsHostnames, &ec2.ModifyVpcAttributeInput{
			EnableDnsHostnames: &ec2types.AttributeBooleanValue{Value: aws.Bool(hostnames)}})
	}
	first, then := sup, host
	if setSupport && !support {
		first, then = host, sup
	}
	if err := first(); err != nil {
		return err
	}
	return then()
}

func (d *vpcs) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	var setSupport, setHostnames, retag bool
	for _, f := range changed {
		switch f {
		case providers.VPCEnableDnsSupport:
			setSupport = true
		case providers.VPCEnableDnsHostnames:
			setHostnames = true
		case providers.VPCTags:
			retag = true
		case providers.VPCCidr:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/vpc: %s: EC2 cannot change a VPC's primary block; cidr forces replacement", t.Name)
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/vpc: %s: unknown field %q", t.Name, f)
		}
	}
	c := d.clients.get(t.Region)
	v, err := findVPC(ctx, c, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	id := aws.ToString(v.VpcId)
	// Turning support off needs hostnames off, which the target says
	// (checked above) but may not list as changed.
	if setSupport && !in.EnableDnsSupport && !setHostnames {
		setHostnames = in.HasEnableDnsHostnames()
	}
	if err := d.setDNS(ctx, c, t.Name, id, in.EnableDnsSupport, setSupport, in.EnableDnsHostnames, setHostnames); err != nil {
		return providers.Resource{}, err
	}
	if retag {
		if err := retagEC2(ctx, c, id, ec2TagMap(v.Tags), tags, "Name"); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/vpc: %s: retag: %w", t.Name, err)
		}
		v.Tags = ec2Tags(tags)
	}
	// The VPC as found, with what was written; the attributes not written
	// are read.
	res := vpcResource(t.Region, v)
	if setSupport {
		res.Fields[providers.VPCEnableDnsSupport] = in.EnableDnsSupport
	}
	if setHostnames {
		res.Fields[providers.VPCEnableDnsHostnames] = in.EnableDnsHostnames
	}
	if err := d.readDNS(ctx, c, t.Name, id, res.Fields); err != nil {
		return providers.Resource{}, err
	}
	return res, nil
}

// Delete deletes the VPC by the id this run listed. EC2 refuses while
// anything is inside it (DependencyViolation, a Conflict the engine
// retries once the dependants are gone); the error then names what the
// driver can see inside.
func (d *vpcs) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	id := t.Attributes["vpcId"]
	if id == "" {
		v, err := findVPC(ctx, c, t.Region, t.Name)
		if err != nil {
			return err
		}
		id = aws.ToString(v.VpcId)
	}
	_, err := c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(id)})
	switch {
	case err == nil || isCode(err, "InvalidVpcID.NotFound"):
		// Gone already: a retry of a delete whose answer was lost.
		return nil
	case isCode(err, "DependencyViolation"):
		inside := vpcContents(ctx, c, t.Region, id)
		return fmt.Errorf("aws/vpc: %s: DeleteVpc: %s still holds %s; delete or detach it first: %w", t.Name, id, inside, err)
	}
	return fmt.Errorf("aws/vpc: %s: DeleteVpc: %w", t.Name, err)
}

// vpcContents names what keeps a VPC from being deleted that its driver
// can see: its subnets, attached internet gateways and security groups
// other than its default one. It is said in an error, so a failed describe
// is said in it too.
func vpcContents(ctx context.Context, c *ec2.Client, region, id string) string {
	in := []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{id}}}
	var parts []string
	say := func(what string, items []named, err error) {
		switch {
		case err != nil:
			parts = append(parts, fmt.Sprintf("(%s: %v)", what, err))
		case len(items) > 0:
			ids := make([]string, len(items))
			for i, n := range items {
				ids[i] = n.id
				if n.tags["Name"] != "" {
					ids[i] += " (" + n.tags["Name"] + ")"
				}
			}
			parts = append(parts, what+" "+strings.Join(ids, ", "))
		}
	}
	subnets, err := ec2Describe(ctx, ec2.NewDescribeSubnetsPaginator(c, &ec2.DescribeSubnetsInput{Filters: in}), spec.VPC, region,
		func(p *ec2.DescribeSubnetsOutput) []named { return namedOf(p.Subnets, subnetNamed) })
	say("subnets", subnets, err)
	gateways, err := ec2Describe(ctx, ec2.NewDescribeInternetGatewaysPaginator(c, &ec2.DescribeInternetGatewaysInput{
		Filters: []ec2types.Filter{{Name: aws.String("attachment.vpc-id"), Values: []string{id}}}}), spec.VPC, region,
		func(p *ec2.DescribeInternetGatewaysOutput) []named { return namedOf(p.InternetGateways, gatewayNamed) })
	say("internet gateways", gateways, err)
	groups, err := ec2Describe(ctx, ec2.NewDescribeSecurityGroupsPaginator(c, &ec2.DescribeSecurityGroupsInput{Filters: in}), spec.VPC, region,
		func(p *ec2.DescribeSecurityGroupsOutput) []named {
			var out []named
			for _, g := range p.SecurityGroups {
				if aws.ToString(g.GroupName) != "default" {
					out = append(out, named{id: aws.ToString(g.GroupId), tags: map[string]string{"Name": aws.ToString(g.GroupName)}})
				}
			}
			return out
		})
	say("security groups", groups, err)
	if len(parts) == 0 {
		return "something the driver does not list (a route table, a network interface, an endpoint)"
	}
	return strings.Join(parts, "; ")
}

func namedOf[T any](items []T, of func(T) named) []named {
	out := make([]named, len(items))
	for i, x := range items {
		out[i] = of(x)
	}
	return out
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *vpcs) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	v, err := findVPC(ctx, c, region, name)
	if err != nil {
		return err
	}
	return releaseNamed(ctx, c, spec.VPC, name, vpcNamed(v), owner)
}

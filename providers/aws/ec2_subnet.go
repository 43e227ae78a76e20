package aws

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// subnets is the subnet kind: an EC2 subnet of a VPC in one availability
// zone, named by its Name tag.
type subnets struct {
	clients *regional[*ec2.Client]
}

var (
	_ providers.Driver   = (*subnets)(nil)
	_ providers.Releaser = (*subnets)(nil)
)

func init() {
	register(entry{
		kind: spec.Subnet, service: "ec2",
		actions: []string{"ec2:DescribeSubnets", "ec2:DescribeVpcs", "ec2:CreateSubnet", "ec2:ModifySubnetAttribute",
			"ec2:CreateTags", "ec2:DeleteTags", "ec2:DeleteSubnet"},
		scopes: map[string][]ActionScope{
			// The subnet is made tagged, in a VPC of a fleet's: the
			// executor cannot carve subnets out of a VPC that is no
			// fleet's.
			"ec2:CreateSubnet": {
				{Resource: "subnet/*", Scope: ScopeCreate},
				{Resource: "vpc/*", Scope: ScopeOwned},
			},
			"ec2:ModifySubnetAttribute": {{Scope: ScopeOwned}},
			"ec2:DeleteSubnet":          {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:ec2:{region}:{account}:subnet/{id}",
		sweep:     &SweepTarget{NameTag: "Name", Why: "a subnet's ARN holds its id; its name is its Name tag"},
		arn:       nameTagARN("subnet"),
		// InvalidSubnetID.NotFound is the instance kind's (a subnetId that
		// names no subnet is a wrong argument there): this driver finds
		// subnets by filter, which answers none rather than the code, and
		// takes the code at delete for done.
		errors: map[string]providers.Code{
			"InvalidSubnet.Range": providers.InvalidArgument,
			// Another subnet of the VPC holds part of the block: one this
			// apply deletes, or one to move first.
			"InvalidSubnet.Conflict": providers.Conflict,
			"DependencyViolation":    providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &subnets{clients: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })}
		},
	})
}

// subnetWait bounds the wait for a new subnet to become available.
const subnetWait = 5 * time.Minute

// What EC2 gives a subnet it makes in a VPC (not a default subnet):
// instances started in it get no public IPv4 address unless told
// (ModifySubnetAttribute's MapPublicIpOnLaunch).
const subnetMapPublicDefault = false

// target decodes and checks a target before any call: a canonical block
// of /16 to /28, and a zone of the subnet's region.
func (d *subnets) target(t providers.Target) (providers.SubnetInput, map[string]string, error) {
	in, err := providers.DecodeSubnet(t.Fields)
	if err != nil {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/subnet: %s: %v", t.Name, err)
	}
	tags, err := namedTags(spec.Subnet, t)
	return in, tags, err
}

func checkZone(name, region, zone string) error {
	if !strings.HasPrefix(zone, region) || len(zone) == len(region) {
		return providers.Errorf(providers.InvalidArgument, "aws/subnet: %s: availabilityZone %q is not a zone of %s (such as %sa)", name, zone, region, region)
	}
	return nil
}

func subnetNamed(s ec2types.Subnet) named {
	return named{id: aws.ToString(s.SubnetId), tags: ec2TagMap(s.Tags)}
}

func describeSubnets(ctx context.Context, c *ec2.Client, region string, filters ...ec2types.Filter) ([]ec2types.Subnet, error) {
	return ec2Describe(ctx, ec2.NewDescribeSubnetsPaginator(c, &ec2.DescribeSubnetsInput{Filters: filters}), spec.Subnet, region,
		func(p *ec2.DescribeSubnetsOutput) []ec2types.Subnet { return p.Subnets })
}

func (d *subnets) List(ctx context.Context, region string) ([]providers.Resource, error) {
	all, err := describeSubnets(ctx, d.clients.get(region), region)
	if err != nil {
		return nil, fmt.Errorf("aws/subnet: DescribeSubnets in %s: %w", region, err)
	}
	return listNamed(spec.Subnet, region, all, subnetNamed, func(s ec2types.Subnet) providers.Resource { return subnetResource(region, s) })
}

func (d *subnets) find(ctx context.Context, region, name string) (ec2types.Subnet, error) {
	all, err := describeSubnets(ctx, d.clients.get(region), region, nameFilter(name))
	if err != nil {
		return ec2types.Subnet{}, fmt.Errorf("aws/subnet: %s: DescribeSubnets: %w", name, err)
	}
	return theOne(spec.Subnet, region, name, all, subnetNamed)
}

func (d *subnets) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	s, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return subnetResource(region, s), nil
}

// subnetResource reports a subnet; its vpc is the VPC's id, the vpc
// kind's identity, so a subnet of a replaced or foreign VPC of the same
// name is drift.
func subnetResource(region string, s ec2types.Subnet) providers.Resource {
	tags := ec2TagMap(s.Tags)
	id := aws.ToString(s.SubnetId)
	arn := aws.ToString(s.SubnetArn)
	if arn == "" {
		arn = ec2ARN(region, aws.ToString(s.OwnerId), "subnet", id)
	}
	return providers.Resource{
		Name:   tags["Name"],
		Region: region,
		Fields: map[string]any{
			providers.SubnetVPC:                 aws.ToString(s.VpcId),
			providers.SubnetCidr:                aws.ToString(s.CidrBlock),
			providers.SubnetAvailabilityZone:    aws.ToString(s.AvailabilityZone),
			providers.SubnetMapPublicIPOnLaunch: aws.ToBool(s.MapPublicIpOnLaunch),
			spec.TagsField:                      userTags(tags),
		},
		Attributes: map[string]string{"subnetId": id, "arn": arn, "availabilityZone": aws.ToString(s.AvailabilityZone)},
		Owner:      tags[spec.OwnershipTagKey],
		// DescribeSubnets carries everything Read reports.
		Complete: true,
	}
}

func (d *subnets) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if _, err := blockSize(spec.Subnet, t.Name, in.Cidr); err != nil {
		return providers.Resource{}, err
	}
	if err := checkZone(t.Name, t.Region, in.AvailabilityZone); err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	vpc, err := vpcIDOf(ctx, c, t, in.VPC)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/subnet: %s: its vpc %s: %w", t.Name, in.VPC, err)
	}
	// The VPC may have been made a moment ago, and EC2 is eventually
	// consistent. CreateSubnet takes no client token: a resend of a create
	// whose answer was lost makes a second subnet of the name.
	out, err := c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(vpc), CidrBlock: aws.String(in.Cidr),
		AvailabilityZone: aws.String(in.AvailabilityZone), TagSpecifications: tagSpec(ec2types.ResourceTypeSubnet, tags)},
		untilVisible("InvalidVpcID.NotFound"), noBlindResend)
	var s ec2types.Subnet
	if err == nil {
		s = *out.Subnet
	} else if s, err = namedDespite(err, t, func() (ec2types.Subnet, error) { return d.find(ctx, t.Region, t.Name) }, subnetNamed); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/subnet: %s: CreateSubnet in %s: %w", t.Name, vpc, err)
	}
	id := aws.ToString(s.SubnetId)
	if s.State != ec2types.SubnetStateAvailable {
		// EC2 documents available as the state a new subnet reaches.
		if err := ec2.NewSubnetAvailableWaiter(c).Wait(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{id}}, subnetWait); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/subnet: %s: wait for %s to be available: %w", t.Name, id, err)
		}
	}
	public := subnetMapPublicDefault
	if in.HasMapPublicIPOnLaunch() {
		public = in.MapPublicIPOnLaunch
	}
	if public != subnetMapPublicDefault {
		// A failure here leaves a tagged subnet that the next plan reads
		// and updates.
		if err := d.setPublic(ctx, c, t.Name, id, public); err != nil {
			return providers.Resource{}, err
		}
	}
	// What was sent is what the subnet is: no read back.
	s.Tags, s.MapPublicIpOnLaunch = ec2Tags(tags), aws.Bool(public)
	return subnetResource(t.Region, s), nil
}

func (d *subnets) setPublic(ctx context.Context, c *ec2.Client, name, id string, public bool) error {
	if _, err := c.ModifySubnetAttribute(ctx, &ec2.ModifySubnetAttributeInput{SubnetId: aws.String(id),
		MapPublicIpOnLaunch: &ec2types.AttributeBooleanValue{Value: aws.Bool(public)}}); err != nil {
		return fmt.Errorf("aws/subnet: %s: ModifySubnetAttribute mapPublicIpOnLaunch: %w", name, err)
	}
	return nil
}

func (d *subnets) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	var public, retag bool
	for _, f := range changed {
		switch f {
		case providers.SubnetMapPublicIPOnLaunch:
			public = true
		case providers.SubnetTags:
			retag = true
		case providers.SubnetVPC, providers.SubnetCidr, providers.SubnetAvailabilityZone:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/subnet: %s: EC2 cannot change a subnet's %s; it forces replacement", t.Name, f)
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/subnet: %s: unknown field %q", t.Name, f)
		}
	}
	s, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	id := aws.ToString(s.SubnetId)
	if public {
		if err := d.setPublic(ctx, c, t.Name, id, in.MapPublicIPOnLaunch); err != nil {
			return providers.Resource{}, err
		}
		s.MapPublicIpOnLaunch = aws.Bool(in.MapPublicIPOnLaunch)
	}
	if retag {
		if err := retagEC2(ctx, c, id, ec2TagMap(s.Tags), tags, "Name"); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/subnet: %s: retag: %w", t.Name, err)
		}
		s.Tags = ec2Tags(tags)
	}
	// The subnet as found, with what was written: no read back.
	return subnetResource(t.Region, s), nil
}

// Delete deletes the subnet by the id this run listed. EC2 refuses while
// an instance or a network interface is in it (DependencyViolation, a
// Conflict the engine retries once they are gone).
func (d *subnets) Delete(ctx context.Context, t providers.Target) error {
	id := t.Attributes["subnetId"]
	if id == "" {
		s, err := d.find(ctx, t.Region, t.Name)
		if err != nil {
			return err
		}
		id = aws.ToString(s.SubnetId)
	}
	_, err := d.clients.get(t.Region).DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(id)})
	switch {
	case err == nil || isCode(err, "InvalidSubnetID.NotFound"):
		// Gone already: a retry of a delete whose answer was lost.
		return nil
	case isCode(err, "DependencyViolation"):
		return fmt.Errorf("aws/subnet: %s: DeleteSubnet: %s still holds an instance or a network interface; terminate or delete it first: %w", t.Name, id, err)
	}
	return fmt.Errorf("aws/subnet: %s: DeleteSubnet: %w", t.Name, err)
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *subnets) Release(ctx context.Context, region, name, owner string) error {
	s, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	return releaseNamed(ctx, d.clients.get(region), spec.Subnet, name, subnetNamed(s), owner)
}

package aws

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// internetGateways is the internet-gateway kind: an EC2 internet gateway,
// named by its Name tag, attached to one VPC.
type internetGateways struct {
	clients *regional[*ec2.Client]
}

var (
	_ providers.Driver   = (*internetGateways)(nil)
	_ providers.Releaser = (*internetGateways)(nil)
)

func init() {
	register(entry{
		kind: spec.InternetGateway, service: "ec2",
		actions: []string{"ec2:DescribeInternetGateways", "ec2:DescribeVpcs", "ec2:CreateInternetGateway", "ec2:AttachInternetGateway",
			"ec2:DetachInternetGateway", "ec2:CreateTags", "ec2:DeleteTags", "ec2:DeleteInternetGateway"},
		// A fleet's gateway goes on and off a fleet's VPC only: the
		// executor cannot open a VPC that is no fleet's to the internet.
		// Attach and detach touch the gateway and the VPC, both owned: one
		// scope for every resource the action touches says that (and costs
		// the role's policy, which IAM caps, no statement of its own).
		scopes: map[string][]ActionScope{
			"ec2:DescribeInternetGateways": {{Scope: ScopeAny}},
			"ec2:CreateInternetGateway":    {{Scope: ScopeCreate}},
			"ec2:AttachInternetGateway":    {{Scope: ScopeOwned}},
			"ec2:DetachInternetGateway":    {{Scope: ScopeOwned}},
			"ec2:DeleteInternetGateway":    {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:ec2:{region}:{account}:internet-gateway/{id}",
		sweep:     &SweepTarget{NameTag: "Name", Why: "an internet gateway's ARN holds its id; its name is its Name tag"},
		arn:       nameTagARN("internet-gateway"),
		errors: map[string]providers.Code{
			"InvalidInternetGatewayID.NotFound": providers.NotFound, "InvalidInternetGatewayID.Malformed": providers.NotFound,
			// The VPC has another gateway attached (one this apply may
			// detach), or the gateway another VPC.
			"Resource.AlreadyAssociated": providers.Conflict,
			"DependencyViolation":        providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &internetGateways{clients: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })}
		},
	})
}

// gatewayVisible retries a call naming a gateway or a VPC made a moment
// ago (EC2 is eventually consistent).
var gatewayVisible = untilVisible("InvalidInternetGatewayID.NotFound", "InvalidVpcID.NotFound")

func gatewayNamed(g ec2types.InternetGateway) named {
	return named{id: aws.ToString(g.InternetGatewayId), tags: ec2TagMap(g.Tags)}
}

func (d *internetGateways) describe(ctx context.Context, region string, in *ec2.DescribeInternetGatewaysInput) ([]ec2types.InternetGateway, error) {
	return ec2Describe(ctx, ec2.NewDescribeInternetGatewaysPaginator(d.clients.get(region), in), spec.InternetGateway, region,
		func(p *ec2.DescribeInternetGatewaysOutput) []ec2types.InternetGateway { return p.InternetGateways })
}

func (d *internetGateways) List(ctx context.Context, region string) ([]providers.Resource, error) {
	all, err := d.describe(ctx, region, &ec2.DescribeInternetGatewaysInput{})
	if err != nil {
		return nil, fmt.Errorf("aws/internet-gateway: DescribeInternetGateways in %s: %w", region, err)
	}
	return listNamed(spec.InternetGateway, region, all, gatewayNamed,
		func(g ec2types.InternetGateway) providers.Resource { return gatewayResource(region, g) })
}

func (d *internetGateways) find(ctx context.Context, region, name string) (ec2types.InternetGateway, error) {
	all, err := d.describe(ctx, region, &ec2.DescribeInternetGatewaysInput{Filters: []ec2types.Filter{nameFilter(name)}})
	if err != nil {
		return ec2types.InternetGateway{}, fmt.Errorf("aws/internet-gateway: %s: DescribeInternetGateways: %w", name, err)
	}
	return theOne(spec.InternetGateway, region, name, all, gatewayNamed)
}

func (d *internetGateways) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	g, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return gatewayResource(region, g), nil
}

// attachedTo lists the VPCs the gateway is on or going on, sorted: an
// attachment detaching or detached is on its way off.
func attachedTo(g ec2types.InternetGateway) []string {
	var out []string
	for _, a := range g.Attachments {
		if a.State != ec2types.AttachmentStatusDetaching && a.State != ec2types.AttachmentStatusDetached {
			out = append(out, aws.ToString(a.VpcId))
		}
	}
	sort.Strings(out)
	return out
}

// gatewayResource reports a gateway; its vpc is the attached VPC's id
// (the vpc kind's identity), empty when it is attached to none, so a
// detached gateway, or one on another VPC, is drift.
func gatewayResource(region string, g ec2types.InternetGateway) providers.Resource {
	tags := ec2TagMap(g.Tags)
	id := aws.ToString(g.InternetGatewayId)
	return providers.Resource{
		Name:   tags["Name"],
		Region: region,
		Fields: map[string]any{
			providers.InternetGatewayVPC: strings.Join(attachedTo(g), ","),
			spec.TagsField:               userTags(tags),
		},
		Attributes: map[string]string{
			"internetGatewayId": id,
			"arn":               ec2ARN(region, aws.ToString(g.OwnerId), "internet-gateway", id),
		},
		Owner: tags[spec.OwnershipTagKey],
		// DescribeInternetGateways carries everything Read reports.
		Complete: true,
	}
}

func (d *internetGateways) target(t providers.Target) (providers.InternetGatewayInput, map[string]string, error) {
	in, err := providers.DecodeInternetGateway(t.Fields)
	if err != nil {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/internet-gateway: %s: %v", t.Name, err)
	}
	if in.VPC == "" {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/internet-gateway: %s: vpc is required: a gateway attached to no VPC carries no traffic", t.Name)
	}
	tags, err := namedTags(spec.InternetGateway, t)
	return in, tags, err
}

func (d *internetGateways) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	vpc, err := vpcIDOf(ctx, c, t, in.VPC)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/internet-gateway: %s: its vpc %s: %w", t.Name, in.VPC, err)
	}
	// CreateInternetGateway takes no client token: a resend of a create
	// whose answer was lost makes a second gateway of the name.
	out, err := c.CreateInternetGateway(ctx, &ec2.CreateInternetGatewayInput{TagSpecifications: tagSpec(ec2types.ResourceTypeInternetGateway, tags)}, noBlindResend)
	var g ec2types.InternetGateway
	if err == nil {
		g = *out.InternetGateway
	} else if g, err = namedDespite(err, t, func() (ec2types.InternetGateway, error) { return d.find(ctx, t.Region, t.Name) }, gatewayNamed); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/internet-gateway: %s: CreateInternetGateway: %w", t.Name, err)
	}
	// A failure here leaves a tagged gateway attached to nothing, which
	// the next plan reads as drift of vpc and attaches.
	if err := d.attach(ctx, c, t.Name, aws.ToString(g.InternetGatewayId), vpc); err != nil {
		return providers.Resource{}, err
	}
	// What was sent is what the gateway is: no read back.
	g.Tags = ec2Tags(tags)
	g.Attachments = []ec2types.InternetGatewayAttachment{{VpcId: aws.String(vpc), State: ec2types.AttachmentStatusAttached}}
	return gatewayResource(t.Region, g), nil
}

func (d *internetGateways) attach(ctx context.Context, c *ec2.Client, name, id, vpc string) error {
	if _, err := c.AttachInternetGateway(ctx, &ec2.AttachInternetGatewayInput{InternetGatewayId: aws.String(id), VpcId: aws.String(vpc)},
		gatewayVisible); err != nil {
		return fmt.Errorf("aws/internet-gateway: %s: AttachInternetGateway %s to %s: %w", name, id, vpc, err)
	}
	return nil
}

// detach takes the gateway off every VPC it is on. One already off is
// done. EC2 refuses while the VPC holds instances with public addresses
// (DependencyViolation, a Conflict).
func (d *internetGateways) detach(ctx context.Context, c *ec2.Client, name string, g ec2types.InternetGateway, keep string) error {
	id := aws.ToString(g.InternetGatewayId)
	for _, vpc := range attachedTo(g) {
		if vpc == keep {
			continue
		}
		_, err := c.DetachInternetGateway(ctx, &ec2.DetachInternetGatewayInput{InternetGatewayId: aws.String(id), VpcId: aws.String(vpc)})
		if err != nil && !isCode(err, "Gateway.NotAttached") {
			return fmt.Errorf("aws/internet-gateway: %s: DetachInternetGateway %s from %s: %w", name, id, vpc, err)
		}
	}
	return nil
}

// Update moves the gateway to another VPC in place, detaching it first
// (a gateway is on one VPC at a time), and retags it.
func (d *internetGateways) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	var move, retag bool
	for _, f := range changed {
		switch f {
		case providers.InternetGatewayVPC:
			move = true
		case providers.InternetGatewayTags:
			retag = true
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/internet-gateway: %s: unknown field %q", t.Name, f)
		}
	}
	g, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	id := aws.ToString(g.InternetGatewayId)
	if move {
		vpc, err := vpcIDOf(ctx, c, t, in.VPC)
		if err != nil {
			return providers.Resource{}, fmt.Errorf("aws/internet-gateway: %s: its vpc %s: %w", t.Name, in.VPC, err)
		}
		if err := d.detach(ctx, c, t.Name, g, vpc); err != nil {
			return providers.Resource{}, err
		}
		if on := attachedTo(g); len(on) != 1 || on[0] != vpc {
			if err := d.attach(ctx, c, t.Name, id, vpc); err != nil {
				return providers.Resource{}, err
			}
		}
		g.Attachments = []ec2types.InternetGatewayAttachment{{VpcId: aws.String(vpc), State: ec2types.AttachmentStatusAttached}}
	}
	if retag {
		if err := retagEC2(ctx, c, id, ec2TagMap(g.Tags), tags, "Name"); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/internet-gateway: %s: retag: %w", t.Name, err)
		}
		g.Tags = ec2Tags(tags)
	}
	// The gateway as found, with what was written: no read back.
	return gatewayResource(t.Region, g), nil
}

// Delete detaches the gateway from its VPC, as EC2 demands, then deletes
// it. A gateway already gone is done.
func (d *internetGateways) Delete(ctx context.Context, t providers.Target) error {
	in := &ec2.DescribeInternetGatewaysInput{Filters: []ec2types.Filter{nameFilter(t.Name)}}
	if id := t.Attributes["internetGatewayId"]; id != "" {
		// By the id this run listed; its attachments are read again,
		// since they are what the delete must undo.
		in = &ec2.DescribeInternetGatewaysInput{InternetGatewayIds: []string{id}}
	}
	all, err := d.describe(ctx, t.Region, in)
	if isCode(err, "InvalidInternetGatewayID.NotFound") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("aws/internet-gateway: %s: DescribeInternetGateways: %w", t.Name, err)
	}
	g, err := theOne(spec.InternetGateway, t.Region, t.Name, all, gatewayNamed)
	if err != nil {
		return err
	}
	c := d.clients.get(t.Region)
	if err := d.detach(ctx, c, t.Name, g, ""); err != nil {
		return err
	}
	_, err = c.DeleteInternetGateway(ctx, &ec2.DeleteInternetGatewayInput{InternetGatewayId: g.InternetGatewayId})
	if err != nil && !isCode(err, "InvalidInternetGatewayID.NotFound") {
		return fmt.Errorf("aws/internet-gateway: %s: DeleteInternetGateway: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *internetGateways) Release(ctx context.Context, region, name, owner string) error {
	g, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	return releaseNamed(ctx, d.clients.get(region), spec.InternetGateway, name, gatewayNamed(g), owner)
}

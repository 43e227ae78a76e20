package aws

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// natGateways is the nat-gateway kind: an EC2 NAT gateway in one subnet,
// named by its Name tag. A public one sends through an Elastic IP address
// that the driver allocates with it, tagged with the ownership tag and the
// gateway's name, and releases after it.
type natGateways struct {
	clients *regional[*ec2.Client]
	account accountOf
}

var (
	_ providers.Driver   = (*natGateways)(nil)
	_ providers.Releaser = (*natGateways)(nil)
)

func init() {
	register(entry{
		kind: spec.NATGateway, service: "ec2",
		actions: []string{"ec2:DescribeNatGateways", "ec2:DescribeSubnets", "ec2:DescribeAddresses", "ec2:AllocateAddress",
			"ec2:CreateNatGateway", "ec2:CreateTags", "ec2:DeleteTags", "ec2:DeleteNatGateway", "ec2:ReleaseAddress"},
		// The gateway and its address are made tagged, in a fleet's
		// subnet, and only a fleet's address is released: the executor
		// cannot give a subnet that is no fleet's a way out, nor free an
		// address someone else holds.
		scopes: map[string][]ActionScope{
			"ec2:DescribeNatGateways": {{Scope: ScopeAny}},
			"ec2:DescribeAddresses":   {{Scope: ScopeAny}},
			"ec2:AllocateAddress":     {{Resource: "elastic-ip/*", Scope: ScopeCreate}},
			"ec2:CreateNatGateway": {
				{Resource: "natgateway/*", Scope: ScopeCreate},
				{Resource: "subnet/*", Scope: ScopeOwned},
				{Resource: "elastic-ip/*", Scope: ScopeOwned},
			},
			"ec2:DeleteNatGateway": {{Scope: ScopeOwned}},
			"ec2:ReleaseAddress":   {{Resource: "elastic-ip/*", Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:ec2:{region}:{account}:natgateway/{id}",
		sweep:     &SweepTarget{NameTag: "Name", Why: "a NAT gateway's ARN holds its id; its name is its Name tag"},
		arn:       nameTagARN("natgateway"),
		errors: map[string]providers.Code{
			"NatGatewayNotFound": providers.NotFound, "InvalidNatGatewayID.NotFound": providers.NotFound,
			"InvalidAllocationID.NotFound": providers.NotFound,
			// The account's Elastic IP addresses or NAT gateways are at
			// their quota.
			"AddressLimitExceeded":    providers.Conflict,
			"NatGatewayLimitExceeded": providers.Conflict,
		},
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return &natGateways{clients: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) }), account: account}
		},
	})
}

// natWait bounds the wait for a NAT gateway to become available, or
// deleted: EC2 takes minutes for either.
const natWait = 15 * time.Minute

// What a gateway's connectivity may be; public is the default.
const (
	natPublic  = string(ec2types.ConnectivityTypePublic)
	natPrivate = string(ec2types.ConnectivityTypePrivate)
)

// natVisible retries a call naming a subnet or an address made a moment
// ago (EC2 is eventually consistent).
var natVisible = untilVisible("InvalidSubnetID.NotFound", "InvalidAllocationID.NotFound", "InvalidElasticIpID.NotFound")

func natNamed(g ec2types.NatGateway) named {
	return named{id: aws.ToString(g.NatGatewayId), tags: ec2TagMap(g.Tags)}
}

// natLive says whether g is a gateway, rather than the record EC2 keeps
// for a while of one deleted or failed.
func natLive(g ec2types.NatGateway) bool {
	return g.State == ec2types.NatGatewayStatePending || g.State == ec2types.NatGatewayStateAvailable
}

// describeNATs lists the gateways in; only the live ones unless all.
func describeNATs(ctx context.Context, c *ec2.Client, region string, in *ec2.DescribeNatGatewaysInput, all bool) ([]ec2types.NatGateway, error) {
	found, err := ec2Describe(ctx, ec2.NewDescribeNatGatewaysPaginator(c, in), spec.NATGateway, region,
		func(p *ec2.DescribeNatGatewaysOutput) []ec2types.NatGateway { return p.NatGateways })
	if all {
		return found, err
	}
	out := found[:0]
	for _, g := range found {
		if natLive(g) {
			out = append(out, g)
		}
	}
	return out, err
}

// findNATGateway returns the live gateway named name, NotFound, or a
// Conflict when two carry the name.
func findNATGateway(ctx context.Context, c *ec2.Client, region, name string) (ec2types.NatGateway, error) {
	all, err := describeNATs(ctx, c, region, &ec2.DescribeNatGatewaysInput{Filter: []ec2types.Filter{nameFilter(name)}}, false)
	if err != nil {
		return ec2types.NatGateway{}, fmt.Errorf("aws/nat-gateway: %s: DescribeNatGateways: %w", name, err)
	}
	return theOne(spec.NATGateway, region, name, all, natNamed)
}

func (d *natGateways) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.clients.get(region)
	all, err := describeNATs(ctx, c, region, &ec2.DescribeNatGatewaysInput{}, false)
	if err != nil {
		return nil, fmt.Errorf("aws/nat-gateway: DescribeNatGateways in %s: %w", region, err)
	}
	account, err := d.account(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws/nat-gateway: the account, for the gateways' ARNs in %s: %w", region, err)
	}
	return listNamed(spec.NATGateway, region, all, natNamed,
		func(g ec2types.NatGateway) providers.Resource { return natResource(region, account, g) })
}

func (d *natGateways) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	g, err := findNATGateway(ctx, d.clients.get(region), region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	account, err := d.account(ctx)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/nat-gateway: %s: the account, for its ARN: %w", name, err)
	}
	return natResource(region, account, g), nil
}

// natResource reports a gateway; its subnet is the subnet's id (the
// subnet kind's identity). DescribeNatGateways carries no owner, so the
// ARN is made of the account.
func natResource(region, account string, g ec2types.NatGateway) providers.Resource {
	tags := ec2TagMap(g.Tags)
	id := aws.ToString(g.NatGatewayId)
	attrs := map[string]string{
		"natGatewayId": id,
		"arn":          ec2ARN(region, account, "natgateway", id),
	}
	for _, a := range g.NatGatewayAddresses {
		if aws.ToString(a.AllocationId) != "" && (a.IsPrimary == nil || aws.ToBool(a.IsPrimary)) {
			attrs["allocationId"], attrs["publicIp"] = aws.ToString(a.AllocationId), aws.ToString(a.PublicIp)
			break
		}
	}
	return providers.Resource{
		Name:   tags["Name"],
		Region: region,
		Fields: map[string]any{
			providers.NatGatewaySubnet:       aws.ToString(g.SubnetId),
			providers.NatGatewayConnectivity: string(g.ConnectivityType),
			spec.TagsField:                   userTags(tags),
		},
		Attributes: attrs,
		Owner:      tags[spec.OwnershipTagKey],
		// DescribeNatGateways carries everything Read reports.
		Complete: true,
	}
}

// target decodes and checks a target before any call.
func (d *natGateways) target(t providers.Target) (providers.NatGatewayInput, map[string]string, error) {
	in, err := providers.DecodeNatGateway(t.Fields)
	if err != nil {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/nat-gateway: %s: %v", t.Name, err)
	}
	if !in.HasConnectivity() {
		in.Connectivity = natPublic
	}
	if in.Connectivity != natPublic && in.Connectivity != natPrivate {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/nat-gateway: %s: connectivity %q; write %q or %q", t.Name, in.Connectivity, natPublic, natPrivate)
	}
	tags, err := namedTags(spec.NATGateway, t)
	return in, tags, err
}

// subnetOf is the id of the subnet named name that a target refers to,
// and its VPC's: the one this run observed or made (its VPC then
// unknown, empty), else the one of that name.
func subnetOf(ctx context.Context, c *ec2.Client, t providers.Target, name string) (id, vpc string, err error) {
	if id := identity(t, spec.Subnet, name); id != "" {
		return id, "", nil
	}
	all, err := describeSubnets(ctx, c, t.Region, nameFilter(name))
	if err != nil {
		return "", "", fmt.Errorf("DescribeSubnets: %w", err)
	}
	s, err := theOne(spec.Subnet, t.Region, name, all, subnetNamed)
	return aws.ToString(s.SubnetId), aws.ToString(s.VpcId), err
}

// addressTags are the tags of a public gateway's Elastic IP address: the
// ownership tag and the gateway's name, which is how a delete, a retry
// and a forget find it.
func addressTags(name, owner string) map[string]string {
	return map[string]string{"Name": name, spec.OwnershipTagKey: owner}
}

// addresses lists the Elastic IP addresses named name and owned by owner.
func addresses(ctx context.Context, c *ec2.Client, name, owner string) ([]ec2types.Address, error) {
	out, err := c.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:Name"), Values: []string{name}},
		{Name: aws.String("tag:" + spec.OwnershipTagKey), Values: []string{owner}},
	}})
	if err != nil {
		return nil, err
	}
	var found []ec2types.Address
	for _, a := range out.Addresses {
		if tags := ec2TagMap(a.Tags); tags["Name"] == name && tags[spec.OwnershipTagKey] == owner {
			found = append(found, a)
		}
	}
	return found, nil
}

// address is the allocation id of the Elastic IP address a public gateway
// named t.Name is made with: one of the fleet's of that name that nothing
// uses (an earlier create's that stopped before the gateway), else a new
// one. AllocateAddress takes no client token: a lost answer is found by
// its tags.
func (d *natGateways) address(ctx context.Context, c *ec2.Client, t providers.Target) (string, bool, error) {
	free := func() (ec2types.Address, string, error) {
		found, err := addresses(ctx, c, t.Name, t.Owner)
		if err != nil {
			return ec2types.Address{}, "", err
		}
		for _, a := range found {
			if aws.ToString(a.AssociationId) == "" && aws.ToString(a.NetworkInterfaceId) == "" {
				return a, t.Owner, nil
			}
		}
		return ec2types.Address{}, "", providers.Errorf(providers.NotFound, "no free address")
	}
	if a, _, err := free(); err == nil {
		return aws.ToString(a.AllocationId), false, nil
	} else if errorCode(err) != providers.NotFound {
		return "", false, fmt.Errorf("aws/nat-gateway: %s: DescribeAddresses: %w", t.Name, err)
	}
	out, err := c.AllocateAddress(ctx, &ec2.AllocateAddressInput{Domain: ec2types.DomainTypeVpc,
		TagSpecifications: tagSpec(ec2types.ResourceTypeElasticIp, addressTags(t.Name, t.Owner))}, noBlindResend)
	if err == nil {
		return aws.ToString(out.AllocationId), true, nil
	}
	a, err := madeDespite(err, t.Owner, free)
	if err != nil {
		return "", false, fmt.Errorf("aws/nat-gateway: %s: AllocateAddress for its public address: %w", t.Name, err)
	}
	return aws.ToString(a.AllocationId), true, nil
}

func (d *natGateways) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	subnet, _, err := subnetOf(ctx, c, t, in.Subnet)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/nat-gateway: %s: its subnet %s: %w", t.Name, in.Subnet, err)
	}
	req := &ec2.CreateNatGatewayInput{SubnetId: aws.String(subnet), ConnectivityType: ec2types.ConnectivityType(in.Connectivity),
		TagSpecifications: tagSpec(ec2types.ResourceTypeNatgateway, tags)}
	allocated := false
	if in.Connectivity == natPublic {
		var id string
		if id, allocated, err = d.address(ctx, c, t); err != nil {
			return providers.Resource{}, err
		}
		req.AllocationId = aws.String(id)
	}
	// The SDK fills the client token, so EC2 takes a resend of a create
	// whose answer was lost for the same gateway.
	out, err := c.CreateNatGateway(ctx, req, natVisible)
	if err != nil {
		if allocated && !mayHaveActed(err) {
			// Refused: the address made for it would be left to nothing.
			if rerr := d.release(ctx, c, aws.ToString(req.AllocationId)); rerr != nil {
				err = fmt.Errorf("%w (and its address %s is left: %v)", err, aws.ToString(req.AllocationId), rerr)
			}
		}
		return providers.Resource{}, fmt.Errorf("aws/nat-gateway: %s: CreateNatGateway in %s: %w", t.Name, subnet, err)
	}
	g := *out.NatGateway
	if g.State != ec2types.NatGatewayStateAvailable {
		id := aws.ToString(g.NatGatewayId)
		// EC2 documents available as the state a new gateway reaches, in
		// minutes, and failed for one it could not make.
		done, err := ec2.NewNatGatewayAvailableWaiter(c).WaitForOutput(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{id}}, natWait)
		if err != nil {
			return providers.Resource{}, fmt.Errorf("aws/nat-gateway: %s: wait for %s to be available: %w", t.Name, id, err)
		}
		if len(done.NatGateways) == 1 {
			g = done.NatGateways[0]
		}
	}
	g.Tags = ec2Tags(tags)
	account, err := d.account(ctx)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/nat-gateway: %s: the account, for its ARN: %w", t.Name, err)
	}
	return natResource(t.Region, account, g), nil
}

func (d *natGateways) release(ctx context.Context, c *ec2.Client, allocation string) error {
	_, err := c.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: aws.String(allocation)})
	if err != nil && !isCode(err, "InvalidAllocationID.NotFound") {
		return fmt.Errorf("ReleaseAddress %s: %w", allocation, err)
	}
	return nil
}

// Update retags the gateway; its subnet and connectivity force
// replacement. Its address keeps its own tags.
func (d *natGateways) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	_, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	retag := false
	for _, f := range changed {
		switch f {
		case providers.NatGatewayTags:
			retag = true
		case providers.NatGatewaySubnet, providers.NatGatewayConnectivity:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/nat-gateway: %s: EC2 cannot change a NAT gateway's %s; it forces replacement", t.Name, f)
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/nat-gateway: %s: unknown field %q", t.Name, f)
		}
	}
	c := d.clients.get(t.Region)
	g, err := findNATGateway(ctx, c, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	if retag {
		if err := retagEC2(ctx, c, aws.ToString(g.NatGatewayId), ec2TagMap(g.Tags), tags, "Name"); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/nat-gateway: %s: retag: %w", t.Name, err)
		}
		g.Tags = ec2Tags(tags)
	}
	account, err := d.account(ctx)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/nat-gateway: %s: the account, for its ARN: %w", t.Name, err)
	}
	// The gateway as found, with what was written: no read back.
	return natResource(t.Region, account, g), nil
}

// Delete deletes the gateway, waits until EC2 says it is deleted (its
// address is in use until then), and releases its address and any other
// of the fleet's addresses of its name that nothing uses (one a delete
// that stopped after the gateway left). A gateway already gone is done.
func (d *natGateways) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	var g ec2types.NatGateway
	if id := t.Attributes["natGatewayId"]; id != "" {
		all, err := describeNATs(ctx, c, t.Region, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{id}}, true)
		switch {
		case err != nil && !isCode(err, "NatGatewayNotFound", "InvalidNatGatewayID.NotFound"):
			return fmt.Errorf("aws/nat-gateway: %s: DescribeNatGateways: %w", t.Name, err)
		case len(all) == 1:
			g = all[0]
		}
	} else {
		found, err := findNATGateway(ctx, c, t.Region, t.Name)
		if err != nil && errorCode(err) != providers.NotFound {
			return err
		}
		g = found
	}
	owner := t.Owner
	if o := ec2TagMap(g.Tags)[spec.OwnershipTagKey]; o != "" {
		owner = o
	}
	var allocations []string
	for _, a := range g.NatGatewayAddresses {
		if id := aws.ToString(a.AllocationId); id != "" {
			allocations = append(allocations, id)
		}
	}
	if id := aws.ToString(g.NatGatewayId); id != "" && g.State != ec2types.NatGatewayStateDeleted {
		if g.State != ec2types.NatGatewayStateDeleting {
			_, err := c.DeleteNatGateway(ctx, &ec2.DeleteNatGatewayInput{NatGatewayId: aws.String(id)})
			if err != nil && !isCode(err, "NatGatewayNotFound", "InvalidNatGatewayID.NotFound") {
				return fmt.Errorf("aws/nat-gateway: %s: DeleteNatGateway: %w", t.Name, err)
			}
		}
		err := ec2.NewNatGatewayDeletedWaiter(c).Wait(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{id}}, natWait)
		if err != nil {
			return fmt.Errorf("aws/nat-gateway: %s: wait for %s to be deleted, before its address is released: %w", t.Name, id, err)
		}
	}
	if owner != "" {
		found, err := addresses(ctx, c, t.Name, owner)
		if err != nil {
			return fmt.Errorf("aws/nat-gateway: %s: DescribeAddresses, for its address: %w", t.Name, err)
		}
		for _, a := range found {
			if aws.ToString(a.AssociationId) == "" && aws.ToString(a.NetworkInterfaceId) == "" {
				allocations = append(allocations, aws.ToString(a.AllocationId))
			}
		}
	}
	seen := map[string]bool{}
	for _, id := range allocations {
		if seen[id] {
			continue
		}
		seen[id] = true
		if err := d.release(ctx, c, id); err != nil {
			return fmt.Errorf("aws/nat-gateway: %s: its address: %w; release it once the gateway is gone", t.Name, err)
		}
	}
	return nil
}

// Release removes this fleet's ownership tag from the gateway and its
// address, keeping every other tag.
func (d *natGateways) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	g, err := findNATGateway(ctx, c, region, name)
	if err != nil {
		return err
	}
	found, err := addresses(ctx, c, name, owner)
	if err != nil {
		return fmt.Errorf("aws/nat-gateway: %s: DescribeAddresses, for its address: %w", name, err)
	}
	for _, a := range found {
		if err := releaseEC2(ctx, c, aws.ToString(a.AllocationId), ec2TagMap(a.Tags), owner); err != nil {
			return fmt.Errorf("aws/nat-gateway: %s: DeleteTags on its address %s: %w", name, aws.ToString(a.AllocationId), err)
		}
	}
	return releaseNamed(ctx, c, spec.NATGateway, name, natNamed(g), owner)
}

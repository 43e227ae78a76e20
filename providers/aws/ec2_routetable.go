package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// routeTables is the route-table kind: an EC2 route table of a VPC, named
// by its Name tag, with the routes it holds besides the VPC's local one
// and the subnets associated with it. A VPC's main route table is EC2's,
// made and deleted with the VPC: the kind never lists, adopts or deletes
// one.
type routeTables struct {
	clients *regional[*ec2.Client]
}

var (
	_ providers.Driver   = (*routeTables)(nil)
	_ providers.Releaser = (*routeTables)(nil)
)

func init() {
	register(entry{
		kind: spec.RouteTable, service: "ec2",
		actions: []string{"ec2:DescribeRouteTables", "ec2:DescribeVpcs", "ec2:DescribeSubnets", "ec2:DescribeInternetGateways",
			"ec2:DescribeNatGateways", "ec2:CreateRouteTable", "ec2:CreateRoute", "ec2:ReplaceRoute", "ec2:DeleteRoute",
			"ec2:AssociateRouteTable", "ec2:ReplaceRouteTableAssociation", "ec2:DisassociateRouteTable",
			"ec2:CreateTags", "ec2:DeleteTags", "ec2:DeleteRouteTable"},
		// A fleet's table is made in a fleet's VPC, routes to a fleet's
		// gateways and takes a fleet's subnets: one owned scope for every
		// resource a route or an association touches says that, so the
		// executor cannot reroute a subnet or a table that is no fleet's.
		scopes: map[string][]ActionScope{
			"ec2:DescribeRouteTables":          {{Scope: ScopeAny}},
			"ec2:DescribeNatGateways":          {{Scope: ScopeAny}},
			"ec2:CreateRouteTable":             {{Resource: "route-table/*", Scope: ScopeCreate}, {Resource: "vpc/*", Scope: ScopeOwned}},
			"ec2:CreateRoute":                  {{Scope: ScopeOwned}},
			"ec2:ReplaceRoute":                 {{Scope: ScopeOwned}},
			"ec2:DeleteRoute":                  {{Scope: ScopeOwned}},
			"ec2:AssociateRouteTable":          {{Scope: ScopeOwned}},
			"ec2:DisassociateRouteTable":       {{Scope: ScopeOwned}},
			"ec2:ReplaceRouteTableAssociation": {{Scope: ScopeOwned}},
			"ec2:DeleteRouteTable":             {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:ec2:{region}:{account}:route-table/{id}",
		sweep:     &SweepTarget{NameTag: "Name", Why: "a route table's ARN holds its id; its name is its Name tag"},
		arn:       nameTagARN("route-table"),
		errors: map[string]providers.Code{
			"InvalidRouteTableID.NotFound": providers.NotFound, "InvalidRouteTableID.Malformed": providers.NotFound,
			"InvalidAssociationID.NotFound": providers.NotFound,
			"InvalidRoute.NotFound":         providers.NotFound,
			// A route of the destination exists already (one a lost
			// answer made): Create and Update replace it.
			"RouteAlreadyExists":        providers.Conflict,
			"InvalidGatewayID.NotFound": providers.InvalidArgument,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &routeTables{clients: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })}
		},
	})
}

// tableVisible retries a call naming a table, a VPC, a gateway or a subnet
// made a moment ago (EC2 is eventually consistent).
var tableVisible = untilVisible("InvalidRouteTableID.NotFound", "InvalidVpcID.NotFound", "InvalidGatewayID.NotFound",
	"InvalidNatGatewayID.NotFound", "InvalidSubnetID.NotFound")

func tableNamed(rt ec2types.RouteTable) named {
	return named{id: aws.ToString(rt.RouteTableId), tags: ec2TagMap(rt.Tags)}
}

// isMain says whether rt is its VPC's main route table, which is EC2's.
func isMain(rt ec2types.RouteTable) bool {
	for _, a := range rt.Associations {
		if aws.ToBool(a.Main) {
			return true
		}
	}
	return false
}

// describe lists the route tables in, leaving out every main one.
func (d *routeTables) describe(ctx context.Context, region string, in *ec2.DescribeRouteTablesInput) ([]ec2types.RouteTable, error) {
	all, err := ec2Describe(ctx, ec2.NewDescribeRouteTablesPaginator(d.clients.get(region), in), spec.RouteTable, region,
		func(p *ec2.DescribeRouteTablesOutput) []ec2types.RouteTable { return p.RouteTables })
	out := all[:0]
	for _, rt := range all {
		if !isMain(rt) {
			out = append(out, rt)
		}
	}
	return out, err
}

func (d *routeTables) List(ctx context.Context, region string) ([]providers.Resource, error) {
	all, err := d.describe(ctx, region, &ec2.DescribeRouteTablesInput{})
	if err != nil {
		return nil, fmt.Errorf("aws/route-table: DescribeRouteTables in %s: %w", region, err)
	}
	return listNamed(spec.RouteTable, region, all, tableNamed,
		func(rt ec2types.RouteTable) providers.Resource { return tableResource(region, rt) })
}

func (d *routeTables) find(ctx context.Context, region, name string) (ec2types.RouteTable, error) {
	all, err := d.describe(ctx, region, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{nameFilter(name)}})
	if err != nil {
		return ec2types.RouteTable{}, fmt.Errorf("aws/route-table: %s: DescribeRouteTables: %w", name, err)
	}
	return theOne(spec.RouteTable, region, name, all, tableNamed)
}

func (d *routeTables) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	rt, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return tableResource(region, rt), nil
}

// routeTarget is the id a route sends its traffic to, whichever kind of
// target it is: a route to something infra does not make (a peering, an
// instance) is reported by that id, so it differs from any target.
func routeTarget(r ec2types.Route) string {
	for _, id := range []*string{r.GatewayId, r.NatGatewayId, r.TransitGatewayId, r.VpcPeeringConnectionId,
		r.NetworkInterfaceId, r.InstanceId, r.EgressOnlyInternetGatewayId, r.CarrierGatewayId, r.LocalGatewayId} {
		if aws.ToString(id) != "" {
			return aws.ToString(id)
		}
	}
	return ""
}

// tableRoutes are the routes a table holds that the routes field speaks
// of, by destination: the IPv4 ones made by CreateRoute. The local route
// is the VPC's, and a propagated one a virtual gateway's.
func tableRoutes(rt ec2types.RouteTable) map[string]string {
	out := map[string]string{}
	for _, r := range rt.Routes {
		if r.Origin == ec2types.RouteOriginCreateRoute && aws.ToString(r.DestinationCidrBlock) != "" {
			out[aws.ToString(r.DestinationCidrBlock)] = routeTarget(r)
		}
	}
	return out
}

// tableSubnets are the subnets associated with the table, by their id to
// the association's: one being disassociated is on its way off.
func tableSubnets(rt ec2types.RouteTable) map[string]string {
	out := map[string]string{}
	for _, a := range rt.Associations {
		if aws.ToString(a.SubnetId) == "" || a.AssociationState != nil &&
			(a.AssociationState.State == ec2types.RouteTableAssociationStateCodeDisassociating ||
				a.AssociationState.State == ec2types.RouteTableAssociationStateCodeDisassociated) {
			continue
		}
		out[aws.ToString(a.SubnetId)] = aws.ToString(a.RouteTableAssociationId)
	}
	return out
}

// tableResource reports a table: its vpc is the VPC's id, each route's
// target the gateway's id (the gateway kinds' identity), and its subnets their ids under themselves
// (the declaration's labels are its own; the field compares by value).
func tableResource(region string, rt ec2types.RouteTable) providers.Resource {
	tags := ec2TagMap(rt.Tags)
	id := aws.ToString(rt.RouteTableId)
	// A route to a NAT gateway is natRoutes'; one to anything else
	// (an internet gateway, or what infra does not make) is
	// gatewayRoutes', so that it differs from the declaration.
	gateways, nats := map[string]any{}, map[string]any{}
	for dst, to := range tableRoutes(rt) {
		if strings.HasPrefix(to, "nat-") {
			nats[dst] = to
		} else {
			gateways[dst] = to
		}
	}
	subnets := map[string]any{}
	for s := range tableSubnets(rt) {
		subnets[s] = s
	}
	return providers.Resource{
		Name:   tags["Name"],
		Region: region,
		Fields: map[string]any{
			providers.RouteTableVPC:           aws.ToString(rt.VpcId),
			providers.RouteTableGatewayRoutes: gateways,
			providers.RouteTableNatRoutes:     nats,
			providers.RouteTableSubnets:       subnets,
			spec.TagsField:                    userTags(tags),
		},
		Attributes: map[string]string{
			"routeTableId": id,
			"arn":          ec2ARN(region, aws.ToString(rt.OwnerId), "route-table", id),
		},
		Owner: tags[spec.OwnershipTagKey],
		// DescribeRouteTables carries everything Read reports.
		Complete: true,
	}
}

// target decodes and checks a target before any call: each route's
// destination is a canonical IPv4 block, as EC2 stores it.
func (d *routeTables) target(t providers.Target) (providers.RouteTableInput, map[string]string, error) {
	in, err := providers.DecodeRouteTable(t.Fields)
	if err != nil {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/route-table: %s: %v", t.Name, err)
	}
	for dst := range routesOf(in) {
		if _, bad := spec.ParseCIDR(dst); bad != nil {
			return in, nil, providers.Errorf(providers.InvalidArgument, "aws/route-table: %s: route to %s: %s; %s", t.Name, dst, bad.What, bad.Fix)
		}
		if _, both := in.GatewayRoutes[dst]; both && in.NatRoutes[dst] != "" {
			return in, nil, providers.Errorf(providers.InvalidArgument, "aws/route-table: %s: %s is in gatewayRoutes and natRoutes; a destination has one route, so keep one", t.Name, dst)
		}
	}
	tags, err := namedTags(spec.RouteTable, t)
	return in, tags, err
}

// route is one declared route's target: the gateway's kind and name.
type route struct {
	kind spec.Kind
	name string
}

// routesOf merges the target's two route fields by destination.
func routesOf(in providers.RouteTableInput) map[string]route {
	out := map[string]route{}
	for dst, n := range in.GatewayRoutes {
		out[dst] = route{spec.InternetGateway, n}
	}
	for dst, n := range in.NatRoutes {
		out[dst] = route{spec.NATGateway, n}
	}
	return out
}

// gatewayID is the id of the gateway a route sends traffic to: the one
// this run observed or made, else the one of that name.
func (d *routeTables) gatewayID(ctx context.Context, c *ec2.Client, t providers.Target, r route) (string, error) {
	if id := identity(t, r.kind, r.name); id != "" {
		return id, nil
	}
	if r.kind == spec.NATGateway {
		g, err := findNATGateway(ctx, c, t.Region, r.name)
		return aws.ToString(g.NatGatewayId), err
	}
	gws, err := ec2Describe(ctx, ec2.NewDescribeInternetGatewaysPaginator(c, &ec2.DescribeInternetGatewaysInput{Filters: []ec2types.Filter{nameFilter(r.name)}}),
		spec.RouteTable, t.Region, func(p *ec2.DescribeInternetGatewaysOutput) []ec2types.InternetGateway { return p.InternetGateways })
	if err != nil {
		return "", fmt.Errorf("DescribeInternetGateways: %w", err)
	}
	g, err := theOne(spec.InternetGateway, t.Region, r.name, gws, gatewayNamed)
	return aws.ToString(g.InternetGatewayId), err
}

// subnetIDs resolves the target's subnets to their ids, each in vpc.
func (d *routeTables) subnetIDs(ctx context.Context, c *ec2.Client, t providers.Target, in providers.RouteTableInput, vpc string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, name := range in.Subnets {
		id, in, err := subnetOf(ctx, c, t, name)
		if err != nil {
			return nil, fmt.Errorf("aws/route-table: %s: subnets: %s: %w", t.Name, name, err)
		}
		if in != "" && in != vpc {
			return nil, providers.Errorf(providers.InvalidArgument, "aws/route-table: %s: subnets: %s is in %s, the table in %s; a table takes its own VPC's subnets", t.Name, name, in, vpc)
		}
		out[id] = true
	}
	return out, nil
}

func (d *routeTables) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	vpc, err := vpcIDOf(ctx, c, t, in.VPC)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/route-table: %s: its vpc %s: %w", t.Name, in.VPC, err)
	}
	// The SDK fills CreateRouteTable's client token, which EC2 dedupes
	// a resend by; the emulator does not, so a resend is left to what
	// surely did not act, and a lost answer is found by the name.
	out, err := c.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: aws.String(vpc), TagSpecifications: tagSpec(ec2types.ResourceTypeRouteTable, tags)},
		tableVisible, noBlindResend)
	var rt ec2types.RouteTable
	if err == nil {
		rt = *out.RouteTable
	} else if rt, err = namedDespite(err, t, func() (ec2types.RouteTable, error) { return d.find(ctx, t.Region, t.Name) }, tableNamed); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/route-table: %s: CreateRouteTable in %s: %w", t.Name, vpc, err)
	}
	rt.Tags = ec2Tags(tags)
	// A failure from here leaves a tagged table whose routes and subnets
	// the next plan reads as drift and updates.
	if err := d.setRoutes(ctx, c, t, in, &rt); err != nil {
		return providers.Resource{}, err
	}
	if err := d.setSubnets(ctx, c, t, in, &rt); err != nil {
		return providers.Resource{}, err
	}
	return tableResource(t.Region, rt), nil
}

// setRoutes makes the table's routes the target's: each missing one
// created, each to another target replaced, each undeclared one deleted.
// rt ends as what was written.
func (d *routeTables) setRoutes(ctx context.Context, c *ec2.Client, t providers.Target, in providers.RouteTableInput, rt *ec2types.RouteTable) error {
	id := aws.ToString(rt.RouteTableId)
	have := tableRoutes(*rt)
	declared := routesOf(in)
	want := map[string]string{}
	for _, dst := range slices.Sorted(maps.Keys(declared)) {
		to, err := d.gatewayID(ctx, c, t, declared[dst])
		if err != nil {
			return fmt.Errorf("aws/route-table: %s: route to %s: its %s %s: %w", t.Name, dst, declared[dst].kind, declared[dst].name, err)
		}
		want[dst] = to
	}
	for _, dst := range slices.Sorted(maps.Keys(want)) {
		to, now := want[dst], have[dst]
		var err error
		switch {
		case now == to:
			continue
		case now == "":
			err = d.putRoute(ctx, c, id, dst, to, false)
			if isCode(err, "RouteAlreadyExists") {
				// A resend whose first attempt made it, or a route of
				// the destination made elsewhere: point it here.
				err = d.putRoute(ctx, c, id, dst, to, true)
			}
		default:
			err = d.putRoute(ctx, c, id, dst, to, true)
		}
		if err != nil {
			return fmt.Errorf("aws/route-table: %s: route to %s through %s %s: %w", t.Name, dst, declared[dst].kind, declared[dst].name, err)
		}
	}
	for _, dst := range slices.Sorted(maps.Keys(have)) {
		if _, keep := want[dst]; keep {
			continue
		}
		_, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(id), DestinationCidrBlock: aws.String(dst)})
		if err != nil && !isCode(err, "InvalidRoute.NotFound") {
			return fmt.Errorf("aws/route-table: %s: DeleteRoute %s: %w", t.Name, dst, err)
		}
	}
	routes := []ec2types.Route{}
	for _, r := range rt.Routes {
		if r.Origin != ec2types.RouteOriginCreateRoute {
			routes = append(routes, r)
		}
	}
	for _, dst := range slices.Sorted(maps.Keys(want)) {
		routes = append(routes, gatewayRoute(dst, want[dst]))
	}
	rt.Routes = routes
	return nil
}

// gatewayRoute is the route CreateRoute makes to the gateway id to: a NAT
// gateway's id goes in its own parameter, every gateway's else in
// GatewayId.
func gatewayRoute(dst, to string) ec2types.Route {
	r := ec2types.Route{DestinationCidrBlock: aws.String(dst), Origin: ec2types.RouteOriginCreateRoute, State: ec2types.RouteStateActive}
	if strings.HasPrefix(to, "nat-") {
		r.NatGatewayId = aws.String(to)
	} else {
		r.GatewayId = aws.String(to)
	}
	return r
}

// putRoute sends the route to the gateway id to: CreateRoute for a new
// one, ReplaceRoute to point an existing one elsewhere; the two take the
// same parameters.
func (d *routeTables) putRoute(ctx context.Context, c *ec2.Client, table, dst, to string, replace bool) error {
	r := gatewayRoute(dst, to)
	var err error
	if replace {
		_, err = c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(table), DestinationCidrBlock: r.DestinationCidrBlock,
			GatewayId: r.GatewayId, NatGatewayId: r.NatGatewayId}, tableVisible)
		if err != nil {
			return fmt.Errorf("ReplaceRoute: %w", err)
		}
		return nil
	}
	_, err = c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(table), DestinationCidrBlock: r.DestinationCidrBlock,
		GatewayId: r.GatewayId, NatGatewayId: r.NatGatewayId}, tableVisible)
	if err != nil {
		return fmt.Errorf("CreateRoute: %w", err)
	}
	return nil
}

// setSubnets makes the subnets associated with the table the target's:
// each undeclared one disassociated (it falls back to the VPC's main
// table), each declared one associated, or moved here from the VPC's
// other table that holds it. rt ends as what was written.
func (d *routeTables) setSubnets(ctx context.Context, c *ec2.Client, t providers.Target, in providers.RouteTableInput, rt *ec2types.RouteTable) error {
	id := aws.ToString(rt.RouteTableId)
	want, err := d.subnetIDs(ctx, c, t, in, aws.ToString(rt.VpcId))
	if err != nil {
		return err
	}
	have := tableSubnets(*rt)
	for _, s := range slices.Sorted(maps.Keys(have)) {
		if want[s] {
			continue
		}
		_, err := c.DisassociateRouteTable(ctx, &ec2.DisassociateRouteTableInput{AssociationId: aws.String(have[s])})
		if err != nil && !isCode(err, "InvalidAssociationID.NotFound") {
			return fmt.Errorf("aws/route-table: %s: DisassociateRouteTable %s from %s: %w", t.Name, s, id, err)
		}
	}
	var missing []string
	for s := range want {
		if have[s] == "" {
			missing = append(missing, s)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		// A subnet explicitly associated with another table must be moved
		// (AssociateRouteTable refuses it): look for those first.
		elsewhere, err := associations(ctx, c, t.Region, missing)
		if err != nil {
			return fmt.Errorf("aws/route-table: %s: DescribeRouteTables: %w", t.Name, err)
		}
		for _, s := range missing {
			if err := d.associate(ctx, c, t, id, s, elsewhere[s]); err != nil {
				return err
			}
		}
	}
	var assoc []ec2types.RouteTableAssociation
	for _, a := range rt.Associations {
		if aws.ToString(a.SubnetId) == "" || want[aws.ToString(a.SubnetId)] {
			assoc = append(assoc, a)
		}
	}
	for _, s := range missing {
		assoc = append(assoc, ec2types.RouteTableAssociation{SubnetId: aws.String(s), RouteTableId: aws.String(id),
			AssociationState: &ec2types.RouteTableAssociationState{State: ec2types.RouteTableAssociationStateCodeAssociated}})
	}
	rt.Associations = assoc
	return nil
}

// association is a subnet's explicit association with a table.
type association struct{ table, id string }

// associations finds the tables the subnets are explicitly associated
// with, by subnet.
func associations(ctx context.Context, c *ec2.Client, region string, subnets []string) (map[string]association, error) {
	all, err := ec2Describe(ctx, ec2.NewDescribeRouteTablesPaginator(c, &ec2.DescribeRouteTablesInput{
		Filters: []ec2types.Filter{{Name: aws.String("association.subnet-id"), Values: subnets}}}), spec.RouteTable, region,
		func(p *ec2.DescribeRouteTablesOutput) []ec2types.RouteTable { return p.RouteTables })
	if err != nil {
		return nil, err
	}
	out := map[string]association{}
	for _, rt := range all {
		for s, a := range tableSubnets(rt) {
			out[s] = association{table: aws.ToString(rt.RouteTableId), id: a}
		}
	}
	return out, nil
}

// associate associates subnet s with the table id, moving it from the
// table it is on (from); already on this one is done, which is what a
// resend whose first attempt acted finds.
func (d *routeTables) associate(ctx context.Context, c *ec2.Client, t providers.Target, id, s string, from association) error {
	if from.table == id {
		return nil
	}
	if from.id != "" {
		_, err := c.ReplaceRouteTableAssociation(ctx, &ec2.ReplaceRouteTableAssociationInput{AssociationId: aws.String(from.id), RouteTableId: aws.String(id)}, tableVisible)
		if err != nil {
			return fmt.Errorf("aws/route-table: %s: ReplaceRouteTableAssociation of %s from %s: %w", t.Name, s, from.table, err)
		}
		return nil
	}
	_, err := c.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: aws.String(id), SubnetId: aws.String(s)}, tableVisible)
	if isCode(err, "Resource.AlreadyAssociated") {
		now, lerr := associations(ctx, c, t.Region, []string{s})
		if lerr == nil && now[s].table == id {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("aws/route-table: %s: AssociateRouteTable %s: %w", t.Name, s, err)
	}
	return nil
}

func (d *routeTables) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	var routes, subnets, retag bool
	for _, f := range changed {
		switch f {
		case providers.RouteTableGatewayRoutes, providers.RouteTableNatRoutes:
			routes = true
		case providers.RouteTableSubnets:
			subnets = true
		case providers.RouteTableTags:
			retag = true
		case providers.RouteTableVPC:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/route-table: %s: EC2 cannot move a route table to another VPC; vpc forces replacement", t.Name)
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/route-table: %s: unknown field %q", t.Name, f)
		}
	}
	rt, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	if routes {
		if err := d.setRoutes(ctx, c, t, in, &rt); err != nil {
			return providers.Resource{}, err
		}
	}
	if subnets {
		if err := d.setSubnets(ctx, c, t, in, &rt); err != nil {
			return providers.Resource{}, err
		}
	}
	if retag {
		if err := retagEC2(ctx, c, aws.ToString(rt.RouteTableId), ec2TagMap(rt.Tags), tags, "Name"); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/route-table: %s: retag: %w", t.Name, err)
		}
		rt.Tags = ec2Tags(tags)
	}
	// The table as found, with what was written: no read back.
	return tableResource(t.Region, rt), nil
}

// Delete disassociates the table's subnets, as EC2 demands (they fall
// back to the VPC's main table), then deletes it. A table already gone is
// done; a main table is never this kind's.
func (d *routeTables) Delete(ctx context.Context, t providers.Target) error {
	in := &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{nameFilter(t.Name)}}
	if id := t.Attributes["routeTableId"]; id != "" {
		// By the id this run listed; its associations are read again,
		// since they are what the delete must undo.
		in = &ec2.DescribeRouteTablesInput{RouteTableIds: []string{id}}
	}
	all, err := d.describe(ctx, t.Region, in)
	if isCode(err, "InvalidRouteTableID.NotFound") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("aws/route-table: %s: DescribeRouteTables: %w", t.Name, err)
	}
	rt, err := theOne(spec.RouteTable, t.Region, t.Name, all, tableNamed)
	if err != nil {
		return err
	}
	c := d.clients.get(t.Region)
	subnets := tableSubnets(rt)
	for _, s := range slices.Sorted(maps.Keys(subnets)) {
		_, err := c.DisassociateRouteTable(ctx, &ec2.DisassociateRouteTableInput{AssociationId: aws.String(subnets[s])})
		if err != nil && !isCode(err, "InvalidAssociationID.NotFound") {
			return fmt.Errorf("aws/route-table: %s: DisassociateRouteTable %s: %w", t.Name, s, err)
		}
	}
	_, err = c.DeleteRouteTable(ctx, &ec2.DeleteRouteTableInput{RouteTableId: rt.RouteTableId})
	switch {
	case err == nil || isCode(err, "InvalidRouteTableID.NotFound"):
		return nil
	case isCode(err, "DependencyViolation"):
		return fmt.Errorf("aws/route-table: %s: DeleteRouteTable: %s is still associated with a subnet or gateway; disassociate it first: %w", t.Name, aws.ToString(rt.RouteTableId), err)
	}
	return fmt.Errorf("aws/route-table: %s: DeleteRouteTable: %w", t.Name, err)
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *routeTables) Release(ctx context.Context, region, name, owner string) error {
	rt, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	return releaseNamed(ctx, d.clients.get(region), spec.RouteTable, name, tableNamed(rt), owner)
}

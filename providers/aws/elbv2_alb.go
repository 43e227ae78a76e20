package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// albs is the alb kind: an Application Load Balancer, named by its name.
// Its subnets and security groups are this fleet's subnet and
// security-group resources, found through EC2.
type albs struct{ elbAndEC2 }

var (
	_ providers.Driver       = (*albs)(nil)
	_ providers.Releaser     = (*albs)(nil)
	_ providers.ListedReader = (*albs)(nil)
)

func init() {
	register(entry{
		kind: spec.ALB, service: "elasticloadbalancing",
		actions: []string{"elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeLoadBalancerAttributes",
			"elasticloadbalancing:DescribeTags", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups",
			"elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags",
			"elasticloadbalancing:ModifyLoadBalancerAttributes", "elasticloadbalancing:SetSubnets",
			"elasticloadbalancing:SetSecurityGroups", "elasticloadbalancing:DeleteLoadBalancer",
			// The driver never calls it: ELB does, with the caller's
			// rights, to make the account's service-linked role at its
			// first load balancer (ScopeServiceLinkedRole).
			"iam:CreateServiceLinkedRole"},
		scopes: elbScopes(map[string][]ActionScope{
			"elasticloadbalancing:DescribeLoadBalancers":          {{Scope: ScopeAny}},
			"elasticloadbalancing:DescribeLoadBalancerAttributes": {{Scope: ScopeAny}},
			"elasticloadbalancing:CreateLoadBalancer":             {{Scope: ScopeCreate}},
			"elasticloadbalancing:ModifyLoadBalancerAttributes":   {{Scope: ScopeOwned}},
			"elasticloadbalancing:SetSubnets":                     {{Scope: ScopeOwned}},
			"elasticloadbalancing:SetSecurityGroups":              {{Scope: ScopeOwned}},
			"elasticloadbalancing:DeleteLoadBalancer":             {{Scope: ScopeOwned}},
		}),
		arnFormat: "arn:{partition}:elasticloadbalancing:{region}:{account}:loadbalancer/app/{name}/{id}",
		// loadbalancer/app/NAME/ID; a Network Load Balancer's is
		// loadbalancer/net/…, not this kind's.
		arn:    namedBeforeID("loadbalancer/app/"),
		errors: elbErrors,
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &albs{newELBAndEC2(cfg)}
		},
	})
}

// albWait bounds the waits for a load balancer to be active after its
// create, and gone after its delete; AWS takes a few minutes at most.
const albWait = 10 * time.Minute

// The load balancer attributes the kind's fields are.
const (
	attrIdleTimeout        = "idle_timeout.timeout_seconds"
	attrDeletionProtection = "deletion_protection.enabled"
)

// target decodes and checks a target before any call.
func (d *albs) target(t providers.Target) (providers.ALBInput, error) {
	if err := checkELBName(spec.ALB, t.Name); err != nil {
		return providers.ALBInput{}, err
	}
	in, err := providers.DecodeALB(t.Fields)
	if err != nil {
		return in, providers.Errorf(providers.InvalidArgument, "aws/alb: %s: %v", t.Name, err)
	}
	if in.HasScheme() && in.Scheme != string(elbtypes.LoadBalancerSchemeEnumInternetFacing) && in.Scheme != string(elbtypes.LoadBalancerSchemeEnumInternal) {
		return in, providers.Errorf(providers.InvalidArgument, "aws/alb: %s: scheme %q: write internet-facing or internal", t.Name, in.Scheme)
	}
	if in.HasIdleTimeoutSec() {
		if err := checkWhole(spec.ALB, t.Name, providers.ALBIdleTimeoutSec, in.IdleTimeoutSec, 1, 4000); err != nil {
			return in, err
		}
	}
	if in.HasSubnets() {
		if err := checkZones(t.Name, t.Region, in.Subnets); err != nil {
			return in, err
		}
	}
	if in.HasSecurityGroups() && len(in.SecurityGroups) == 0 {
		return in, providers.Errorf(providers.InvalidArgument,
			"aws/alb: %s: securityGroups is empty; an Application Load Balancer has at least one (leave the field unset for the VPC's default group)", t.Name)
	}
	return in, nil
}

// checkZones holds the subnets to CreateLoadBalancer's rule for an
// Application Load Balancer, subnets in at least two availability zones,
// one a zone, and each key to being a zone of the region.
func checkZones(name, region string, subnets map[string]string) error {
	if len(subnets) < 2 {
		return providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets: an Application Load Balancer needs subnets in at least two availability zones, has %d", name, len(subnets))
	}
	for zone := range subnets {
		if !strings.HasPrefix(zone, region) || len(zone) == len(region) {
			return providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets: key %q is not an availability zone of %s; key each subnet by its zone, such as %sa", name, zone, region, region)
		}
	}
	return nil
}

// subnets resolves the target's subnets (zone to name) to their ids, and
// checks that each is in the zone it is keyed by and that all are in one
// VPC, which it returns. A subnet this run observed or made is known by
// its id; the others are looked up by their Name tag.
func (d *albs) subnets(ctx context.Context, t providers.Target, byZone map[string]string) ([]string, string, error) {
	c := d.ec2.get(t.Region)
	named := map[string]ec2types.Subnet{}
	var ids, names []string
	idName := map[string]string{}
	for _, n := range byZone {
		if id := identity(t, spec.Subnet, n); id != "" {
			ids, idName[id] = append(ids, id), n
		} else {
			names = append(names, filterPattern(n))
		}
	}
	collect := func(in *ec2.DescribeSubnetsInput, each func(ec2types.Subnet) error) error {
		return eachPage(ctx, ec2.NewDescribeSubnetsPaginator(c, in), spec.ALB, t.Region, func(page *ec2.DescribeSubnetsOutput) error {
			for _, s := range page.Subnets {
				if err := each(s); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if len(ids) > 0 {
		err := collect(&ec2.DescribeSubnetsInput{SubnetIds: ids}, func(s ec2types.Subnet) error {
			named[idName[aws.ToString(s.SubnetId)]] = s
			return nil
		})
		if err != nil {
			return nil, "", fmt.Errorf("aws/alb: %s: DescribeSubnets: %w", t.Name, err)
		}
	}
	if len(names) > 0 {
		want := map[string]bool{}
		for _, n := range byZone {
			want[n] = true
		}
		err := collect(&ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:Name"), Values: names}}}, func(s ec2types.Subnet) error {
			n := ec2TagMap(s.Tags)["Name"]
			if !want[n] {
				return nil
			}
			if prev, dup := named[n]; dup && aws.ToString(prev.SubnetId) != aws.ToString(s.SubnetId) {
				return providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets: two subnets carry Name=%q (%s, %s); infra cannot tell which is meant",
					t.Name, n, aws.ToString(prev.SubnetId), aws.ToString(s.SubnetId))
			}
			named[n] = s
			return nil
		})
		if err != nil {
			return nil, "", fmt.Errorf("aws/alb: %s: DescribeSubnets: %w", t.Name, err)
		}
	}
	zones := make([]string, 0, len(byZone))
	for z := range byZone {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	out := make([]string, 0, len(zones))
	vpc := ""
	for _, z := range zones {
		s, ok := named[byZone[z]]
		if !ok {
			return nil, "", providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets: no subnet named %q in %s", t.Name, byZone[z], t.Region)
		}
		if got := aws.ToString(s.AvailabilityZone); got != z {
			return nil, "", providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets: %s is keyed by %s but is in %s", t.Name, byZone[z], z, got)
		}
		if vpc != "" && aws.ToString(s.VpcId) != vpc {
			return nil, "", providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets: the subnets are in more than one VPC (%s, %s); a load balancer's are in one",
				t.Name, vpc, aws.ToString(s.VpcId))
		}
		vpc = aws.ToString(s.VpcId)
		out = append(out, aws.ToString(s.SubnetId))
	}
	return out, vpc, nil
}

// groups resolves the target's security groups to their ids, and checks
// that each is in vpc, the load balancer's: a group of the security-group
// kind is in its vpc, or the region's default VPC when it declares none, so
// a group of another VPC is said here rather than by a refused create.
func (d *albs) groups(ctx context.Context, t providers.Target, labelled map[string]string, vpc string) ([]string, error) {
	c := d.ec2.get(t.Region)
	var out, known []string
	for _, n := range labelled {
		if id := identity(t, spec.SecurityGroup, n); id != "" {
			known = append(known, id)
			continue
		}
		found, err := securityGroupsNamed(ctx, c, n)
		if err != nil && !isCode(err, "InvalidGroup.NotFound") {
			return nil, fmt.Errorf("aws/alb: %s: DescribeSecurityGroups: %w", t.Name, err)
		}
		g, ok, err := pickGroup(ctx, c, found, vpc)
		if err != nil {
			return nil, fmt.Errorf("aws/alb: %s: DescribeVpcs: %w", t.Name, err)
		}
		if !ok {
			return nil, providers.Errorf(providers.InvalidArgument, "aws/alb: %s: securityGroups: no security group named %q in %s, the subnets' VPC "+
				"(a security-group is in its vpc, the region's default VPC when it declares none)", t.Name, n, vpc)
		}
		out = append(out, aws.ToString(g.GroupId))
	}
	if len(known) > 0 {
		p := ec2.NewDescribeSecurityGroupsPaginator(c, &ec2.DescribeSecurityGroupsInput{GroupIds: known})
		err := eachPage(ctx, p, spec.ALB, t.Region, func(page *ec2.DescribeSecurityGroupsOutput) error {
			for _, g := range page.SecurityGroups {
				if got := aws.ToString(g.VpcId); got != vpc {
					return providers.Errorf(providers.InvalidArgument, "aws/alb: %s: securityGroups: %s is in %s, the subnets in %s "+
						"(a security-group is in its vpc, the region's default VPC when it declares none)", t.Name, aws.ToString(g.GroupName), got, vpc)
				}
				out = append(out, aws.ToString(g.GroupId))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("aws/alb: %s: DescribeSecurityGroups: %w", t.Name, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

// albAttributes are the load balancer attributes the target sets, as
// ModifyLoadBalancerAttributes takes them; only those of fields when
// fields is not nil.
func albAttributes(in providers.ALBInput, fields []string) []elbtypes.LoadBalancerAttribute {
	want := func(f string) bool { return fields == nil || slices.Contains(fields, f) }
	var out []elbtypes.LoadBalancerAttribute
	if in.HasIdleTimeoutSec() && want(providers.ALBIdleTimeoutSec) {
		out = append(out, elbtypes.LoadBalancerAttribute{Key: aws.String(attrIdleTimeout), Value: aws.String(strconv.Itoa(int(in.IdleTimeoutSec)))})
	}
	if in.HasDeletionProtection() && want(providers.ALBDeletionProtection) {
		out = append(out, elbtypes.LoadBalancerAttribute{Key: aws.String(attrDeletionProtection), Value: aws.String(strconv.FormatBool(in.DeletionProtection))})
	}
	return out
}

func (d *albs) modifyAttributes(ctx context.Context, c *elbv2.Client, name, arn string, attrs []elbtypes.LoadBalancerAttribute) (map[string]string, error) {
	if len(attrs) == 0 {
		return nil, nil
	}
	out, err := c.ModifyLoadBalancerAttributes(ctx, &elbv2.ModifyLoadBalancerAttributesInput{LoadBalancerArn: aws.String(arn), Attributes: attrs})
	if err != nil {
		return nil, fmt.Errorf("aws/alb: %s: ModifyLoadBalancerAttributes: %w", name, err)
	}
	return attributeMap(out.Attributes), nil
}

func attributeMap(attrs []elbtypes.LoadBalancerAttribute) map[string]string {
	out := make(map[string]string, len(attrs))
	for _, a := range attrs {
		out[aws.ToString(a.Key)] = aws.ToString(a.Value)
	}
	return out
}

func (d *albs) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if !in.HasSubnets() {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets is required", t.Name)
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	subnets, vpc, err := d.subnets(ctx, t, in.Subnets)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &elbv2.CreateLoadBalancerInput{Name: aws.String(t.Name), Type: elbtypes.LoadBalancerTypeEnumApplication,
		Subnets: subnets, Scheme: elbtypes.LoadBalancerSchemeEnum(in.Scheme),
		// The ownership tag goes with the create: the load balancer never
		// exists untagged.
		Tags: elbTags(tags)}
	if in.HasSecurityGroups() {
		if req.SecurityGroups, err = d.groups(ctx, t, in.SecurityGroups, vpc); err != nil {
			return providers.Resource{}, err
		}
	}
	c := d.elb.get(t.Region)
	out, err := c.CreateLoadBalancer(ctx, req)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb: %s: CreateLoadBalancer: %w", t.Name, err)
	}
	if len(out.LoadBalancers) != 1 {
		return providers.Resource{}, fmt.Errorf("aws/alb: %s: CreateLoadBalancer answered %d load balancers", t.Name, len(out.LoadBalancers))
	}
	arn := aws.ToString(out.LoadBalancers[0].LoadBalancerArn)
	// The attributes are set while it provisions. A failure here leaves a
	// tagged load balancer with AWS's defaults, which the next plan reads
	// as drift and updates.
	attrs, err := d.modifyAttributes(ctx, c, t.Name, arn, albAttributes(in, nil))
	if err != nil {
		return providers.Resource{}, err
	}
	active, err := elbv2.NewLoadBalancerAvailableWaiter(c).WaitForOutput(ctx,
		&elbv2.DescribeLoadBalancersInput{LoadBalancerArns: []string{arn}}, albWait)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb: %s: wait for it to be active: %w", t.Name, err)
	}
	if len(active.LoadBalancers) != 1 {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "aws/alb: %s: vanished while provisioning", t.Name)
	}
	// The tags and attributes are what was sent and answered: no read.
	return albResource(t.Region, active.LoadBalancers[0], tags, attrs), nil
}

// albResource is what the kind reports of a load balancer, its tags and
// its attributes (nil when not read).
func albResource(region string, lb elbtypes.LoadBalancer, tags, attrs map[string]string) providers.Resource {
	subnets := map[string]any{}
	for _, z := range lb.AvailabilityZones {
		subnets[aws.ToString(z.ZoneName)] = aws.ToString(z.SubnetId)
	}
	// Under their own ids: the declaration's labels are its own, and the
	// field compares by value.
	groups := map[string]any{}
	for _, g := range lb.SecurityGroups {
		groups[g] = g
	}
	r := providers.Resource{
		Name: aws.ToString(lb.LoadBalancerName), Region: region, Owner: tags[spec.OwnershipTagKey],
		Fields: map[string]any{
			providers.ALBSubnets:        subnets,
			providers.ALBSecurityGroups: groups,
			providers.ALBScheme:         string(lb.Scheme),
			spec.TagsField:              reportedTags(tags),
		},
		Attributes: albAttrs(lb),
	}
	setALBAttributes(r.Fields, attrs)
	if lb.CreatedTime != nil {
		r.Created = *lb.CreatedTime
	}
	return r
}

// setALBAttributes puts into fields the attributes attrs holds.
func setALBAttributes(fields map[string]any, attrs map[string]string) {
	if v, err := strconv.Atoi(attrs[attrIdleTimeout]); err == nil {
		fields[providers.ALBIdleTimeoutSec] = float64(v)
	}
	if v, err := strconv.ParseBool(attrs[attrDeletionProtection]); err == nil {
		fields[providers.ALBDeletionProtection] = v
	}
}

func albAttrs(lb elbtypes.LoadBalancer) map[string]string {
	return map[string]string{
		"arn":                   aws.ToString(lb.LoadBalancerArn),
		"dnsName":               aws.ToString(lb.DNSName),
		"canonicalHostedZoneId": aws.ToString(lb.CanonicalHostedZoneId),
		"vpcId":                 aws.ToString(lb.VpcId),
	}
}

// List reports what DescribeLoadBalancers says: the subnets, groups and
// scheme. The tags and the attributes are a call each: not complete.
func (d *albs) List(ctx context.Context, region string) ([]providers.Resource, error) {
	var out []providers.Resource
	err := eachALB(ctx, d.elb.get(region), spec.ALB, region, func(lb elbtypes.LoadBalancer) error {
		r := albResource(region, lb, nil, nil)
		delete(r.Fields, spec.TagsField) // not read yet
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/alb: DescribeLoadBalancers in %s: %w", region, err)
	}
	return out, nil
}

func (d *albs) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.elb.get(region)
	lb, err := loadBalancerNamed(ctx, c, spec.ALB, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return d.finish(ctx, c, name, albResource(region, lb, nil, nil), nil)
}

// ReadListed finishes a load balancer DescribeLoadBalancers just
// reported: its tags, unless the tag scan's are given, and its attributes
// only where the engine wants the idle timeout or the deletion protection.
// One gone since the listing answers LoadBalancerNotFound: absent.
func (d *albs) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	return d.finish(ctx, d.elb.get(listed.Region), listed.Name, listed, tags)
}

// finish adds to r, a load balancer as described, its tags (read unless
// given) and the attributes wanted.
func (d *albs) finish(ctx context.Context, c *elbv2.Client, name string, r providers.Resource, tags map[string]string) (providers.Resource, error) {
	arn := r.Attributes["arn"]
	if tags == nil {
		all, err := tagsOf(ctx, c, []string{arn})
		if err != nil {
			return providers.Resource{}, fmt.Errorf("aws/alb: %s: DescribeTags: %w", name, err)
		}
		tags = all[arn]
	}
	r.Fields = maps.Clone(r.Fields)
	r.Fields[spec.TagsField] = reportedTags(tags)
	r.Owner = tags[spec.OwnershipTagKey]
	if !providers.WantsField(ctx, providers.ALBIdleTimeoutSec) && !providers.WantsField(ctx, providers.ALBDeletionProtection) {
		return r, nil
	}
	attrs, err := c.DescribeLoadBalancerAttributes(ctx, &elbv2.DescribeLoadBalancerAttributesInput{LoadBalancerArn: aws.String(arn)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb: %s: DescribeLoadBalancerAttributes: %w", name, err)
	}
	setALBAttributes(r.Fields, attributeMap(attrs.Attributes))
	return r, nil
}

// located is the load balancer's ARN and VPC: what this run observed, else
// a describe.
func (d *albs) located(ctx context.Context, c *elbv2.Client, t providers.Target) (arn, vpc string, err error) {
	if arn, vpc = t.Attributes["arn"], t.Attributes["vpcId"]; arn != "" && vpc != "" {
		return arn, vpc, nil
	}
	lb, err := loadBalancerNamed(ctx, c, spec.ALB, t.Name)
	if err != nil {
		return "", "", err
	}
	return aws.ToString(lb.LoadBalancerArn), aws.ToString(lb.VpcId), nil
}

func (d *albs) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.elb.get(t.Region)
	arn, vpc, err := d.located(ctx, c, t)
	if err != nil {
		return providers.Resource{}, err
	}
	var attrFields []string
	for _, f := range changed {
		switch f {
		case providers.ALBSubnets:
			err = d.setSubnets(ctx, c, t, in, arn, vpc)
		case providers.ALBSecurityGroups:
			err = d.setGroups(ctx, c, t, in, arn, vpc)
		case providers.ALBIdleTimeoutSec, providers.ALBDeletionProtection:
			attrFields = append(attrFields, f)
		case providers.ALBTags:
			var want map[string]string
			if want, err = desiredTags(t); err == nil {
				err = retagELB(ctx, c, spec.ALB, t.Name, arn, want)
			}
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/alb: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	if len(attrFields) > 0 {
		if _, err := d.modifyAttributes(ctx, c, t.Name, arn, albAttributes(in, attrFields)); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *albs) setSubnets(ctx context.Context, c *elbv2.Client, t providers.Target, in providers.ALBInput, arn, vpc string) error {
	ids, now, err := d.subnets(ctx, t, in.Subnets)
	if err != nil {
		return err
	}
	if now != vpc {
		return providers.Errorf(providers.InvalidArgument, "aws/alb: %s: subnets: the new subnets are in %s, the load balancer in %s; it cannot move to another VPC", t.Name, now, vpc)
	}
	if _, err := c.SetSubnets(ctx, &elbv2.SetSubnetsInput{LoadBalancerArn: aws.String(arn), Subnets: ids}); err != nil {
		return fmt.Errorf("aws/alb: %s: SetSubnets: %w", t.Name, err)
	}
	return nil
}

func (d *albs) setGroups(ctx context.Context, c *elbv2.Client, t providers.Target, in providers.ALBInput, arn, vpc string) error {
	ids, err := d.groups(ctx, t, in.SecurityGroups, vpc)
	if err != nil {
		return err
	}
	if _, err := c.SetSecurityGroups(ctx, &elbv2.SetSecurityGroupsInput{LoadBalancerArn: aws.String(arn), SecurityGroups: ids}); err != nil {
		return fmt.Errorf("aws/alb: %s: SetSecurityGroups: %w", t.Name, err)
	}
	return nil
}

// Delete deletes the load balancer and its listeners, and waits until it
// is gone, so that a replacement can take its name and its subnets and
// security groups can go. A protected one is refused by Elastic Load
// Balancing; infra never turns the protection off on its own.
func (d *albs) Delete(ctx context.Context, t providers.Target) error {
	c := d.elb.get(t.Region)
	arn := t.Attributes["arn"]
	if arn == "" {
		lb, err := loadBalancerNamed(ctx, c, spec.ALB, t.Name)
		if err != nil {
			return err
		}
		arn = aws.ToString(lb.LoadBalancerArn)
	}
	if _, err := c.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(arn)}); err != nil {
		if isCode(err, "OperationNotPermitted") {
			return fmt.Errorf("aws/alb: %s: DeleteLoadBalancer: its deletion protection is on (deletionProtection: true); "+
				"set deletionProtection to false and apply, then delete or replace it: %w", t.Name, err)
		}
		return fmt.Errorf("aws/alb: %s: DeleteLoadBalancer: %w", t.Name, err)
	}
	err := elbv2.NewLoadBalancersDeletedWaiter(c).Wait(ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: []string{arn}}, albWait)
	if err != nil {
		return fmt.Errorf("aws/alb: %s: wait for it to be deleted: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *albs) Release(ctx context.Context, region, name, owner string) error {
	c := d.elb.get(region)
	lb, err := loadBalancerNamed(ctx, c, spec.ALB, name)
	if err != nil {
		return err
	}
	return releaseELB(ctx, c, spec.ALB, name, aws.ToString(lb.LoadBalancerArn), owner)
}

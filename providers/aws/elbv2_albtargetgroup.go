package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// albTargetGroups is the alb-target-group kind: an Elastic Load Balancing
// target group an Application Load Balancer forwards to, named by its name.
// Its VPC is this fleet's vpc resource, found through EC2; a lambda
// group's function is granted its invocation through Lambda
// (elbv2_albtargetgroup_lambda.go).
type albTargetGroups struct {
	elbAndEC2
	lambda  *regional[*lambda.Client]
	account accountOf
}

var (
	_ providers.Driver       = (*albTargetGroups)(nil)
	_ providers.Releaser     = (*albTargetGroups)(nil)
	_ providers.ListedReader = (*albTargetGroups)(nil)
)

func init() {
	register(entry{
		kind: spec.ALBTargetGroup, service: "elasticloadbalancing",
		actions: []string{"elasticloadbalancing:DescribeTargetGroups", "elasticloadbalancing:DescribeTags", "ec2:DescribeVpcs",
			"elasticloadbalancing:CreateTargetGroup", "elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags",
			"elasticloadbalancing:ModifyTargetGroup", "elasticloadbalancing:DeleteTargetGroup",
			"elasticloadbalancing:DescribeTargetHealth", "elasticloadbalancing:RegisterTargets", "elasticloadbalancing:DeregisterTargets",
			"lambda:GetPolicy", "lambda:AddPermission", "lambda:RemovePermission",
			// The driver never calls it: ELB does, with the caller's
			// rights, to make the account's service-linked role at its
			// first load balancer or target group (ScopeServiceLinkedRole).
			"iam:CreateServiceLinkedRole"},
		scopes: elbScopes(map[string][]ActionScope{
			"elasticloadbalancing:DescribeTargetGroups": {{Scope: ScopeAny}},
			"elasticloadbalancing:CreateTargetGroup":    {{Scope: ScopeCreate}},
			"elasticloadbalancing:ModifyTargetGroup":    {{Scope: ScopeOwned}},
			"elasticloadbalancing:DeleteTargetGroup":    {{Scope: ScopeOwned}},
			"elasticloadbalancing:DescribeTargetHealth": {{Scope: ScopeAny}},
			// IAM authorizes both on the target group, by its tags.
			"elasticloadbalancing:RegisterTargets":   {{Scope: ScopeOwned}},
			"elasticloadbalancing:DeregisterTargets": {{Scope: ScopeOwned}},
			// On the function (aws:ResourceTag on Lambda's function
			// resource): only a fleet's function is granted or revoked.
			// They are not elsewhere: no lambda-function driver calls
			// them to decide their scope, and none deletes (the sweep's
			// statement takes only deletes).
			"lambda:GetPolicy":        {{Scope: ScopeAny}},
			"lambda:AddPermission":    {{Scope: ScopeOwned}},
			"lambda:RemovePermission": {{Scope: ScopeOwned}},
		}),
		arnFormat: "arn:{partition}:elasticloadbalancing:{region}:{account}:targetgroup/{name}/{id}",
		// targetgroup/NAME/ID. A Network Load Balancer's target groups
		// share the form; the read that follows the scan finds them not
		// this kind's.
		arn:    namedBeforeID("targetgroup/"),
		errors: elbErrors,
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return &albTargetGroups{elbAndEC2: newELBAndEC2(cfg), lambda: newLambda(cfg), account: account}
		},
	})
}

// Health check timeouts infra leaves at Elastic Load Balancing's defaults
// (CreateTargetGroup's HealthCheckTimeoutSeconds), which the interval
// must exceed.
var defaultHealthTimeout = map[string]int{"HTTP": 6, "HTTPS": 10}

// target decodes and checks a target before any call, by the rules of
// CreateTargetGroup's API reference.
func (d *albTargetGroups) target(t providers.Target) (providers.ALBTargetGroupInput, error) {
	k := spec.ALBTargetGroup
	if err := checkELBName(k, t.Name); err != nil {
		return providers.ALBTargetGroupInput{}, err
	}
	in, err := providers.DecodeALBTargetGroup(t.Fields)
	if err != nil {
		return in, providers.Errorf(providers.InvalidArgument, "aws/alb-target-group: %s: %v", t.Name, err)
	}
	refuse := func(format string, args ...any) error {
		return providers.Errorf(providers.InvalidArgument, "aws/alb-target-group: %s: "+format, append([]any{t.Name}, args...)...)
	}
	switch tt := targetType(in); tt {
	case elbtypes.TargetTypeEnumLambda:
		for _, f := range []struct {
			name string
			set  bool
		}{{providers.ALBTargetGroupVPC, in.HasVPC()}, {providers.ALBTargetGroupProtocol, in.HasProtocol()}, {providers.ALBTargetGroupPort, in.HasPort()},
			{providers.ALBTargetGroupHealthCheckPath, in.HasHealthCheckPath()}, {providers.ALBTargetGroupHealthCheckIntervalSec, in.HasHealthCheckIntervalSec()},
			{providers.ALBTargetGroupHealthyThreshold, in.HasHealthyThreshold()}} {
			if f.set {
				return in, refuse("%s does not apply to a lambda target group (its health checks are off, and infra leaves them so)", f.name)
			}
		}
		return in, nil
	case elbtypes.TargetTypeEnumInstance, elbtypes.TargetTypeEnumIp:
		if in.HasFunction() {
			return in, refuse("function is for lambda target groups only (targetType %s registers no function)", tt)
		}
	default:
		return in, refuse("targetType %q: write instance, ip or lambda", tt)
	}
	if !in.HasVPC() || !in.HasProtocol() || !in.HasPort() {
		return in, refuse("vpc, protocol and port are required for %s targets", targetType(in))
	}
	timeout, ok := defaultHealthTimeout[in.Protocol]
	if !ok {
		return in, refuse("protocol %q: an Application Load Balancer's target group takes HTTP or HTTPS", in.Protocol)
	}
	if err := checkWhole(k, t.Name, providers.ALBTargetGroupPort, in.Port, 1, 65535); err != nil {
		return in, err
	}
	if in.HasHealthCheckPath() && (!strings.HasPrefix(in.HealthCheckPath, "/") || len(in.HealthCheckPath) > 1024) {
		return in, refuse("healthCheckPath %q: write a path starting with /, of at most 1024 characters", in.HealthCheckPath)
	}
	if in.HasHealthCheckIntervalSec() {
		if err := checkWhole(k, t.Name, providers.ALBTargetGroupHealthCheckIntervalSec, in.HealthCheckIntervalSec, 5, 300); err != nil {
			return in, err
		}
		if int(in.HealthCheckIntervalSec) <= timeout {
			return in, refuse("healthCheckIntervalSec %v: it must be longer than the health check's timeout, %d s for %s", in.HealthCheckIntervalSec, timeout, in.Protocol)
		}
	}
	if in.HasHealthyThreshold() {
		if err := checkWhole(k, t.Name, providers.ALBTargetGroupHealthyThreshold, in.HealthyThreshold, 2, 10); err != nil {
			return in, err
		}
	}
	return in, nil
}

// targetType is the target's, or Elastic Load Balancing's default.
func targetType(in providers.ALBTargetGroupInput) elbtypes.TargetTypeEnum {
	if !in.HasTargetType() {
		return elbtypes.TargetTypeEnumInstance
	}
	return elbtypes.TargetTypeEnum(in.TargetType)
}

// vpcID is the target's VPC's id: what this run observed or made, else a
// look-up by its Name tag.
func (d *albTargetGroups) vpcID(ctx context.Context, t providers.Target, name string) (string, error) {
	if id := identity(t, spec.VPC, name); id != "" {
		return id, nil
	}
	var ids []string
	p := ec2.NewDescribeVpcsPaginator(d.ec2.get(t.Region), &ec2.DescribeVpcsInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:Name"), Values: []string{filterPattern(name)}}}})
	err := eachPage(ctx, p, spec.ALBTargetGroup, t.Region, func(page *ec2.DescribeVpcsOutput) error {
		for _, v := range page.Vpcs {
			if ec2TagMap(v.Tags)["Name"] == name {
				ids = append(ids, aws.ToString(v.VpcId))
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("aws/alb-target-group: %s: DescribeVpcs: %w", t.Name, err)
	case len(ids) == 0:
		return "", providers.Errorf(providers.InvalidArgument, "aws/alb-target-group: %s: vpc: no VPC named %q in %s", t.Name, name, t.Region)
	case len(ids) > 1:
		return "", providers.Errorf(providers.InvalidArgument, "aws/alb-target-group: %s: vpc: %d VPCs carry Name=%q (%s); infra cannot tell which is meant",
			t.Name, len(ids), name, strings.Join(ids, ", "))
	}
	return ids[0], nil
}

func (d *albTargetGroups) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &elbv2.CreateTargetGroupInput{Name: aws.String(t.Name), TargetType: targetType(in), Tags: elbTags(tags)}
	if in.HasVPC() {
		vpc, err := d.vpcID(ctx, t, in.VPC)
		if err != nil {
			return providers.Resource{}, err
		}
		req.VpcId, req.Protocol, req.Port = aws.String(vpc), elbtypes.ProtocolEnum(in.Protocol), aws.Int32(int32(in.Port))
	}
	if in.HasHealthCheckPath() {
		req.HealthCheckPath = aws.String(in.HealthCheckPath)
	}
	if in.HasHealthCheckIntervalSec() {
		req.HealthCheckIntervalSeconds = aws.Int32(int32(in.HealthCheckIntervalSec))
	}
	if in.HasHealthyThreshold() {
		req.HealthyThresholdCount = aws.Int32(int32(in.HealthyThreshold))
	}
	out, err := d.elb.get(t.Region).CreateTargetGroup(ctx, req)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb-target-group: %s: CreateTargetGroup: %w", t.Name, err)
	}
	if len(out.TargetGroups) != 1 {
		return providers.Resource{}, fmt.Errorf("aws/alb-target-group: %s: CreateTargetGroup answered %d target groups", t.Name, len(out.TargetGroups))
	}
	// The answer is the target group as made; its tags are what was sent.
	r := targetGroupResource(t.Region, out.TargetGroups[0], tags)
	if targetType(in) == elbtypes.TargetTypeEnumLambda {
		fn := ""
		if in.Function != "" {
			if fn, err = d.functionARN(ctx, t, in.Function); err != nil {
				return providers.Resource{}, err
			}
			if err := d.setFunction(ctx, d.elb.get(t.Region), t, r.Attributes["arn"], fn); err != nil {
				return providers.Resource{}, err
			}
		}
		r.Fields[providers.ALBTargetGroupFunction] = in.Function
	}
	return r, nil
}

// albTargetGroup reports whether a target group is one an Application
// Load Balancer forwards to, this kind's: HTTP or HTTPS to instances or
// IP addresses, or a Lambda function's.
func albTargetGroup(g elbtypes.TargetGroup) bool {
	switch g.TargetType {
	case elbtypes.TargetTypeEnumLambda:
		return true
	case elbtypes.TargetTypeEnumInstance, elbtypes.TargetTypeEnumIp:
		return g.Protocol == elbtypes.ProtocolEnumHttp || g.Protocol == elbtypes.ProtocolEnumHttps
	}
	return false
}

func targetGroupResource(region string, g elbtypes.TargetGroup, tags map[string]string) providers.Resource {
	f := map[string]any{
		providers.ALBTargetGroupTargetType: string(g.TargetType),
		spec.TagsField:                     reportedTags(tags),
	}
	if v := aws.ToString(g.VpcId); v != "" {
		f[providers.ALBTargetGroupVPC] = v
	}
	if g.Protocol != "" {
		f[providers.ALBTargetGroupProtocol] = string(g.Protocol)
	}
	if g.Port != nil {
		f[providers.ALBTargetGroupPort] = float64(*g.Port)
	}
	if g.HealthCheckPath != nil {
		f[providers.ALBTargetGroupHealthCheckPath] = aws.ToString(g.HealthCheckPath)
	}
	if g.HealthCheckIntervalSeconds != nil {
		f[providers.ALBTargetGroupHealthCheckIntervalSec] = float64(*g.HealthCheckIntervalSeconds)
	}
	if g.HealthyThresholdCount != nil {
		f[providers.ALBTargetGroupHealthyThreshold] = float64(*g.HealthyThresholdCount)
	}
	return providers.Resource{Name: aws.ToString(g.TargetGroupName), Region: region, Owner: tags[spec.OwnershipTagKey], Fields: f,
		Attributes: map[string]string{"arn": aws.ToString(g.TargetGroupArn)}}
}

// List reads every target group and their tags (twenty a call), which is
// all Read reports: the listing is complete.
func (d *albTargetGroups) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.elb.get(region)
	var groups []elbtypes.TargetGroup
	var arns []string
	err := eachPage(ctx, elbv2.NewDescribeTargetGroupsPaginator(c, &elbv2.DescribeTargetGroupsInput{}), spec.ALBTargetGroup, region,
		func(page *elbv2.DescribeTargetGroupsOutput) error {
			for _, g := range page.TargetGroups {
				if albTargetGroup(g) {
					groups, arns = append(groups, g), append(arns, aws.ToString(g.TargetGroupArn))
				}
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("aws/alb-target-group: DescribeTargetGroups in %s: %w", region, err)
	}
	tags, err := tagsOf(ctx, c, arns)
	if err != nil {
		return nil, fmt.Errorf("aws/alb-target-group: DescribeTags in %s: %w", region, err)
	}
	out := make([]providers.Resource, 0, len(groups))
	for _, g := range groups {
		r := targetGroupResource(region, g, tags[aws.ToString(g.TargetGroupArn)])
		// A lambda group's function is left to ReadListed
		// (DescribeTargetHealth), which reads it only when wanted.
		r.Complete = g.TargetType != elbtypes.TargetTypeEnumLambda
		out = append(out, r)
	}
	return out, nil
}

// describe finds the target group called name.
func (d *albTargetGroups) describe(ctx context.Context, c *elbv2.Client, name string) (elbtypes.TargetGroup, error) {
	out, err := c.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{name}})
	if err != nil {
		return elbtypes.TargetGroup{}, fmt.Errorf("aws/alb-target-group: %s: DescribeTargetGroups: %w", name, err)
	}
	for _, g := range out.TargetGroups {
		if aws.ToString(g.TargetGroupName) != name {
			continue
		}
		if !albTargetGroup(g) {
			return elbtypes.TargetGroup{}, providers.Errorf(providers.NotFound, "aws/alb-target-group: %s is a %s %s target group, not an Application Load Balancer's",
				name, g.Protocol, g.TargetType)
		}
		return g, nil
	}
	return elbtypes.TargetGroup{}, providers.Errorf(providers.NotFound, "aws/alb-target-group: no target group named %q", name)
}

func (d *albTargetGroups) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.elb.get(region)
	g, err := d.describe(ctx, c, name)
	if err != nil {
		return providers.Resource{}, err
	}
	arn := aws.ToString(g.TargetGroupArn)
	tags, err := tagsOf(ctx, c, []string{arn})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb-target-group: %s: DescribeTags: %w", name, err)
	}
	return d.finish(ctx, c, targetGroupResource(region, g, tags[arn]))
}

// ReadListed finishes a group List reported, with the tags of the
// listing's DescribeTags: as fresh as the tag scan's or fresher (the
// Tagging API lags), so a stale scan never sends the engine to confirm
// them; the scan's stand in for a listing without tags. Only a lambda
// group's function is left, one DescribeTargetHealth, read when the engine
// wants it; one gone since the listing then answers TargetGroupNotFound:
// absent.
func (d *albTargetGroups) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	_, tagged := listed.Fields[spec.TagsField]
	if listed.Attributes["arn"] == "" || listed.Fields[providers.ALBTargetGroupTargetType] == nil || !tagged && tags == nil {
		return d.Read(ctx, listed.Region, listed.Name)
	}
	r := listed
	r.Fields = maps.Clone(listed.Fields)
	if !tagged {
		r.Fields[spec.TagsField] = reportedTags(tags)
		r.Owner = tags[spec.OwnershipTagKey]
	}
	return d.finish(ctx, d.elb.get(listed.Region), r)
}

// finish adds to r, a group as described with its tags, the function
// registered with it, for a lambda group whose function the engine wants.
func (d *albTargetGroups) finish(ctx context.Context, c *elbv2.Client, r providers.Resource) (providers.Resource, error) {
	if r.Fields[providers.ALBTargetGroupTargetType] != string(elbtypes.TargetTypeEnumLambda) || !providers.WantsField(ctx, providers.ALBTargetGroupFunction) {
		return r, nil
	}
	if err := d.reportFunction(ctx, c, &r); err != nil {
		return providers.Resource{}, err
	}
	return r, nil
}

// arnOf is the target group's ARN: the one this run observed, else the
// describe's.
func (d *albTargetGroups) arnOf(ctx context.Context, c *elbv2.Client, name string, attrs map[string]string) (string, error) {
	if a := attrs["arn"]; a != "" {
		return a, nil
	}
	g, err := d.describe(ctx, c, name)
	if err != nil {
		return "", err
	}
	return aws.ToString(g.TargetGroupArn), nil
}

func (d *albTargetGroups) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.elb.get(t.Region)
	arn, err := d.arnOf(ctx, c, t.Name, t.Attributes)
	if err != nil {
		return providers.Resource{}, err
	}
	health := &elbv2.ModifyTargetGroupInput{TargetGroupArn: aws.String(arn)}
	modify := false
	for _, f := range changed {
		switch f {
		case providers.ALBTargetGroupHealthCheckPath:
			health.HealthCheckPath, modify = aws.String(in.HealthCheckPath), true
		case providers.ALBTargetGroupHealthCheckIntervalSec:
			health.HealthCheckIntervalSeconds, modify = aws.Int32(int32(in.HealthCheckIntervalSec)), true
		case providers.ALBTargetGroupHealthyThreshold:
			health.HealthyThresholdCount, modify = aws.Int32(int32(in.HealthyThreshold)), true
		case providers.ALBTargetGroupFunction:
			fn := ""
			if in.Function != "" {
				if fn, err = d.functionARN(ctx, t, in.Function); err != nil {
					return providers.Resource{}, err
				}
			}
			if err := d.setFunction(ctx, c, t, arn, fn); err != nil {
				return providers.Resource{}, err
			}
		case providers.ALBTargetGroupTags:
			want, err := desiredTags(t)
			if err == nil {
				err = retagELB(ctx, c, spec.ALBTargetGroup, t.Name, arn, want)
			}
			if err != nil {
				return providers.Resource{}, err
			}
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/alb-target-group: %s: field %q cannot be updated in place", t.Name, f)
		}
	}
	if modify {
		if _, err := c.ModifyTargetGroup(ctx, health); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/alb-target-group: %s: ModifyTargetGroup: %w", t.Name, err)
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// Delete deletes the target group, then the statement that let Elastic
// Load Balancing invoke its function, on the function registered with it
// and on the declared one (a retry of a delete that stopped between the
// two finds no group, and no registration). One a listener still forwards
// to is refused (ResourceInUse, a conflict the engine retries once the
// listener is gone). Its function is not deregistered first: the
// registration goes with the group (DeleteTargetGroup's reference), and
// the sweep's role, which may only delete, can then delete it.
func (d *albTargetGroups) Delete(ctx context.Context, t providers.Target) error {
	c := d.elb.get(t.Region)
	var fns []string
	if in, err := providers.DecodeALBTargetGroup(t.Fields); err == nil && in.Function != "" && t.Fields != nil {
		fn, err := d.functionARN(ctx, t, in.Function)
		if err != nil {
			return err
		}
		fns = append(fns, fn)
	}
	revoke := func() error {
		slices.Sort(fns)
		for _, fn := range slices.Compact(fns) {
			if err := d.revokeInvoke(ctx, t.Region, t.Name, fn); err != nil {
				return err
			}
		}
		return nil
	}
	arn, err := d.arnOf(ctx, c, t.Name, t.Attributes)
	if err != nil {
		if errorCode(err) == providers.NotFound {
			if rerr := revoke(); rerr != nil {
				return rerr
			}
		}
		return err
	}
	registered, err := registeredFunctions(ctx, c, arn)
	switch {
	case err == nil:
		fns = append(fns, registered...)
	case !isCode(err, "TargetGroupNotFound"):
		return fmt.Errorf("aws/alb-target-group: %s: DescribeTargetHealth: %w", t.Name, err)
	}
	if _, err := c.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(arn)}); err != nil && !isCode(err, "TargetGroupNotFound") {
		return fmt.Errorf("aws/alb-target-group: %s: DeleteTargetGroup: %w", t.Name, err)
	}
	return revoke()
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *albTargetGroups) Release(ctx context.Context, region, name, owner string) error {
	c := d.elb.get(region)
	arn, err := d.arnOf(ctx, c, name, nil)
	if err != nil {
		return err
	}
	return releaseELB(ctx, c, spec.ALBTargetGroup, name, arn, owner)
}

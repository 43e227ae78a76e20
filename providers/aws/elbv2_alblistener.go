package aws

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// albListeners is the alb-listener kind: a listener of an Application Load
// Balancer whose default action forwards to one target group. Elastic Load
// Balancing gives listeners no name, only an ARN made of its load
// balancer's and a random id, so a listener's name is its Name tag, as an
// instance's is: the name is the address's, free of the load balancer and
// the port, and the port can change in place. Finding a listener by name
// reads every load balancer's listeners; the listing is complete, so a plan
// lists once instead.
type albListeners struct {
	elb *regional[*elbv2.Client]
}

var (
	_ providers.Driver     = (*albListeners)(nil)
	_ providers.Releaser   = (*albListeners)(nil)
	_ providers.ListerFrom = (*albListeners)(nil)
)

func init() {
	register(entry{
		kind: spec.ALBListener, service: "elasticloadbalancing",
		actions: []string{"elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeListeners",
			"elasticloadbalancing:DescribeTargetGroups", "elasticloadbalancing:DescribeTags", "elasticloadbalancing:CreateListener",
			"elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags", "elasticloadbalancing:ModifyListener",
			"elasticloadbalancing:DeleteListener"},
		scopes: elbScopes(map[string][]ActionScope{
			"elasticloadbalancing:DescribeLoadBalancers": {{Scope: ScopeAny}},
			"elasticloadbalancing:DescribeListeners":     {{Scope: ScopeAny}},
			"elasticloadbalancing:DescribeTargetGroups":  {{Scope: ScopeAny}},
			// IAM authorizes CreateListener on the load balancer (its only
			// resource type in the service reference), with the request's
			// tags: an Application Load Balancer's, the ownership tag in
			// the request. That the load balancer is the fleet's too is
			// not expressible in the same statement.
			"elasticloadbalancing:CreateListener": {{Resource: "loadbalancer/app/*/*", Scope: ScopeCreate}},
			"elasticloadbalancing:ModifyListener": {{Scope: ScopeOwned}},
			"elasticloadbalancing:DeleteListener": {{Scope: ScopeOwned}},
		}),
		// listener/app/LB-NAME/LB-ID/ID: the listener's own name is not in it.
		arnFormat: "arn:{partition}:elasticloadbalancing:{region}:{account}:listener/app/{id}/{id}/{id}",
		sweep:     &SweepTarget{NameTag: "Name", Why: "a listener's ARN holds its load balancer's name and ids, not its own; its name is its Name tag"},
		// Whether the Tagging API returns listeners is not established (the
		// emulator does not), so discover lists them, with their tags.
		deepScan: true,
		errors:   elbErrors,
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &albListeners{elb: newELB(cfg)}
		},
	})
}

// sslPolicy is the security policy of every HTTPS listener infra makes or
// turns HTTPS: ModifyListener needs one to turn a listener HTTPS, so that
// a listener is the same whichever way it became HTTPS. It is the one the
// Application Load Balancer guide recommends (TLS 1.3 and 1.2).
const sslPolicy = "ELBSecurityPolicy-TLS13-1-2-2021-06"

// listenerTags is a listener's tag set: the user's, the ownership tag, and
// Name, which is its name and so not a user tag.
func listenerTags(t providers.Target) (map[string]string, error) {
	tags, err := desiredTags(t)
	if err != nil {
		return nil, err
	}
	if v, ok := tags["Name"]; ok && v != t.Name {
		return nil, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: the Name tag is the listener's name; remove it from tags", t.Name)
	}
	if len(t.Name) == 0 || len(t.Name) > 256 {
		return nil, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: a listener's name is 1 to 256 characters (it is the Name tag), this one %d", len(t.Name))
	}
	tags["Name"] = t.Name
	return tags, nil
}

// target decodes and checks a target before any call.
func (d *albListeners) target(t providers.Target) (providers.ALBListenerInput, map[string]string, error) {
	tags, err := listenerTags(t)
	if err != nil {
		return providers.ALBListenerInput{}, nil, err
	}
	in, err := providers.DecodeALBListener(t.Fields)
	if err != nil {
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: %v", t.Name, err)
	}
	if in.HasPort() {
		if err := checkWhole(spec.ALBListener, t.Name, providers.ALBListenerPort, in.Port, 1, 65535); err != nil {
			return in, nil, err
		}
	}
	switch protocol(in) {
	case elbtypes.ProtocolEnumHttp:
		if in.CertificateARN != "" {
			return in, nil, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: certificateArn is for an HTTPS listener; this one is HTTP", t.Name)
		}
	case elbtypes.ProtocolEnumHttps:
		if !strings.HasPrefix(in.CertificateARN, "arn:") {
			return in, nil, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: an HTTPS listener needs certificateArn, the ARN of its certificate (ACM or IAM)", t.Name)
		}
	default:
		return in, nil, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: protocol %q: an Application Load Balancer listens on HTTP or HTTPS", t.Name, in.Protocol)
	}
	return in, tags, nil
}

func protocol(in providers.ALBListenerInput) elbtypes.ProtocolEnum {
	if !in.HasProtocol() {
		return elbtypes.ProtocolEnumHttp
	}
	return elbtypes.ProtocolEnum(in.Protocol)
}

// loadBalancerARN and targetGroupARN resolve the target's references: the
// identity this run observed or made, else a describe by name. A missing
// one is a wrong argument, never the listener being absent.
func (d *albListeners) loadBalancerARN(ctx context.Context, c *elbv2.Client, t providers.Target, name string) (string, error) {
	if arn := identity(t, spec.ALB, name); arn != "" {
		return arn, nil
	}
	lb, err := loadBalancerNamed(ctx, c, spec.ALBListener, name)
	if errorCode(err) == providers.NotFound {
		return "", providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: loadBalancer: %v", t.Name, err)
	}
	return aws.ToString(lb.LoadBalancerArn), err
}

func (d *albListeners) targetGroupARN(ctx context.Context, c *elbv2.Client, t providers.Target, name string) (string, error) {
	if arn := identity(t, spec.ALBTargetGroup, name); arn != "" {
		return arn, nil
	}
	out, err := c.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{name}})
	if isCode(err, "TargetGroupNotFound") || err == nil && len(out.TargetGroups) != 1 {
		return "", providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: targetGroup: no target group named %q", t.Name, name)
	}
	if err != nil {
		return "", fmt.Errorf("aws/alb-listener: %s: DescribeTargetGroups: %w", t.Name, err)
	}
	return aws.ToString(out.TargetGroups[0].TargetGroupArn), nil
}

func forward(arn string) []elbtypes.Action {
	return []elbtypes.Action{{Type: elbtypes.ActionTypeEnumForward, TargetGroupArn: aws.String(arn)}}
}

func certificates(arn string) []elbtypes.Certificate {
	return []elbtypes.Certificate{{CertificateArn: aws.String(arn)}}
}

func (d *albListeners) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if !in.HasLoadBalancer() || !in.HasPort() || !in.HasTargetGroup() {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: loadBalancer, port and targetGroup are required", t.Name)
	}
	c := d.elb.get(t.Region)
	lb, err := d.loadBalancerARN(ctx, c, t, in.LoadBalancer)
	if err != nil {
		return providers.Resource{}, err
	}
	tg, err := d.targetGroupARN(ctx, c, t, in.TargetGroup)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(lb), Port: aws.Int32(int32(in.Port)), Protocol: protocol(in),
		DefaultActions: forward(tg),
		// The name and the ownership tag go with the create: the listener
		// never exists unnamed or untagged.
		Tags: elbTags(tags)}
	if protocol(in) == elbtypes.ProtocolEnumHttps {
		req.Certificates, req.SslPolicy = certificates(in.CertificateARN), aws.String(sslPolicy)
	}
	out, err := c.CreateListener(ctx, req)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb-listener: %s: CreateListener: %w", t.Name, err)
	}
	if len(out.Listeners) != 1 {
		return providers.Resource{}, fmt.Errorf("aws/alb-listener: %s: CreateListener answered %d listeners", t.Name, len(out.Listeners))
	}
	return listenerResource(t.Region, out.Listeners[0], tags), nil
}

// listenerResource is what the kind reports of a listener and its tags.
func listenerResource(region string, l elbtypes.Listener, tags map[string]string) providers.Resource {
	user := reportedTags(tags)
	delete(user, "Name")
	f := map[string]any{
		providers.ALBListenerLoadBalancer: aws.ToString(l.LoadBalancerArn),
		providers.ALBListenerProtocol:     string(l.Protocol),
		providers.ALBListenerTargetGroup:  forwardsTo(l.DefaultActions),
		spec.TagsField:                    user,
	}
	if l.Port != nil {
		f[providers.ALBListenerPort] = float64(*l.Port)
	}
	if len(l.Certificates) > 0 {
		f[providers.ALBListenerCertificateARN] = aws.ToString(l.Certificates[0].CertificateArn)
	}
	return providers.Resource{Name: tags["Name"], Region: region, Owner: tags[spec.OwnershipTagKey], Fields: f,
		Attributes: map[string]string{"arn": aws.ToString(l.ListenerArn)}, Complete: true}
}

// forwardsTo is the target group a default action forwards all traffic
// to. Anything else (a redirect, a fixed response, weights over several
// groups, set outside infra) reads as a description that no target group
// ARN equals, so it is drift and the update puts the forward back.
func forwardsTo(actions []elbtypes.Action) string {
	if len(actions) == 1 && actions[0].Type == elbtypes.ActionTypeEnumForward {
		a := actions[0]
		if arn := aws.ToString(a.TargetGroupArn); arn != "" {
			return arn
		}
		if fc := a.ForwardConfig; fc != nil && len(fc.TargetGroups) == 1 {
			return aws.ToString(fc.TargetGroups[0].TargetGroupArn)
		}
	}
	var kinds []string
	for _, a := range actions {
		kinds = append(kinds, string(a.Type))
	}
	return "(actions: " + strings.Join(kinds, ", ") + ")"
}

// listeners reads every listener of every Application Load Balancer in the
// region, with its tags, one load balancer's listeners a call and twenty
// listeners' tags a call.
func (d *albListeners) listeners(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.elb.get(region)
	var arns []string
	err := eachALB(ctx, c, spec.ALBListener, region, func(lb elbtypes.LoadBalancer) error {
		arns = append(arns, aws.ToString(lb.LoadBalancerArn))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/alb-listener: DescribeLoadBalancers in %s: %w", region, err)
	}
	return listenersOf(ctx, c, region, arns)
}

// listenersOf reads the listeners of the load balancers arns, with their
// tags. A load balancer deleted since it was listed has none.
func listenersOf(ctx context.Context, c *elbv2.Client, region string, arns []string) ([]providers.Resource, error) {
	var all []elbtypes.Listener
	for _, arn := range arns {
		p := elbv2.NewDescribeListenersPaginator(c, &elbv2.DescribeListenersInput{LoadBalancerArn: aws.String(arn)})
		err := eachPage(ctx, p, spec.ALBListener, region, func(page *elbv2.DescribeListenersOutput) error {
			all = append(all, page.Listeners...)
			return nil
		})
		var gone *elbtypes.LoadBalancerNotFoundException
		if errors.As(err, &gone) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("aws/alb-listener: DescribeListeners of %s: %w", arn, err)
		}
	}
	lis := make([]string, len(all))
	for i, l := range all {
		lis[i] = aws.ToString(l.ListenerArn)
	}
	tags, err := tagsOf(ctx, c, lis)
	if err != nil {
		return nil, fmt.Errorf("aws/alb-listener: DescribeTags in %s: %w", region, err)
	}
	out := make([]providers.Resource, 0, len(all))
	for _, l := range all {
		out = append(out, listenerResource(region, l, tags[aws.ToString(l.ListenerArn)]))
	}
	return out, nil
}

func (d *albListeners) ListsFrom() spec.Kind { return spec.ALB }

// ListFrom lists the listeners of the load balancers alb's listing found,
// without describing them again.
func (d *albListeners) ListFrom(ctx context.Context, region string, albs []providers.Resource) ([]providers.Resource, bool, error) {
	arns := make([]string, 0, len(albs))
	for _, lb := range albs {
		arn := lb.Attributes["arn"]
		if arn == "" {
			return nil, false, nil
		}
		arns = append(arns, arn)
	}
	all, err := listenersOf(ctx, d.elb.get(region), region, arns)
	if err != nil {
		return nil, false, err
	}
	return namedListeners(all), true, nil
}

// List reports the listeners that carry a Name tag; one without is not
// infra's to name.
func (d *albListeners) List(ctx context.Context, region string) ([]providers.Resource, error) {
	all, err := d.listeners(ctx, region)
	if err != nil {
		return nil, err
	}
	return namedListeners(all), nil
}

// namedListeners keeps the listeners that carry a Name tag, by name.
func namedListeners(all []providers.Resource) []providers.Resource {
	out := all[:0]
	for _, r := range all {
		if r.Name != "" {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (d *albListeners) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	all, err := d.listeners(ctx, region)
	if err != nil {
		return providers.Resource{}, err
	}
	// Picking one would let the other be changed or deleted by mistake.
	return theOne(spec.ALBListener, region, name, all, func(r providers.Resource) named {
		return named{id: r.Attributes["arn"], tags: map[string]string{"Name": r.Name}}
	})
}

// readARN reads one listener by its ARN, with its tags.
func (d *albListeners) readARN(ctx context.Context, c *elbv2.Client, region, name, arn string) (providers.Resource, error) {
	out, err := c.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{arn}})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb-listener: %s: DescribeListeners: %w", name, err)
	}
	if len(out.Listeners) != 1 {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "aws/alb-listener: %s: no listener %s", name, arn)
	}
	tags, err := tagsOf(ctx, c, []string{arn})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/alb-listener: %s: DescribeTags: %w", name, err)
	}
	return listenerResource(region, out.Listeners[0], tags[arn]), nil
}

// arnOf is the listener's ARN: the one this run observed, else a read.
func (d *albListeners) arnOf(ctx context.Context, region, name string, attrs map[string]string) (string, error) {
	if a := attrs["arn"]; a != "" {
		return a, nil
	}
	r, err := d.Read(ctx, region, name)
	if err != nil {
		return "", err
	}
	return r.Attributes["arn"], nil
}

func (d *albListeners) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, tags, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.elb.get(t.Region)
	arn, err := d.arnOf(ctx, t.Region, t.Name, t.Attributes)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &elbv2.ModifyListenerInput{ListenerArn: aws.String(arn)}
	modify := false
	for _, f := range changed {
		switch f {
		case providers.ALBListenerPort:
			req.Port, modify = aws.Int32(int32(in.Port)), true
		case providers.ALBListenerProtocol, providers.ALBListenerCertificateARN:
			// Turning HTTPS needs the policy and the certificate; turning
			// HTTP drops them (ModifyListener's reference).
			req.Protocol, modify = protocol(in), true
			if protocol(in) == elbtypes.ProtocolEnumHttps {
				req.Certificates, req.SslPolicy = certificates(in.CertificateARN), aws.String(sslPolicy)
			}
		case providers.ALBListenerTargetGroup:
			tg, err := d.targetGroupARN(ctx, c, t, in.TargetGroup)
			if err != nil {
				return providers.Resource{}, err
			}
			req.DefaultActions, modify = forward(tg), true
		case providers.ALBListenerTags:
			if err := retagELB(ctx, c, spec.ALBListener, t.Name, arn, tags, "Name"); err != nil {
				return providers.Resource{}, err
			}
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/alb-listener: %s: field %q cannot be updated in place", t.Name, f)
		}
	}
	if modify {
		if _, err := c.ModifyListener(ctx, req); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/alb-listener: %s: ModifyListener: %w", t.Name, err)
		}
	}
	return d.readARN(ctx, c, t.Region, t.Name, arn)
}

// Delete deletes the listener; a load balancer's delete deletes its
// listeners too, so one already gone is done.
func (d *albListeners) Delete(ctx context.Context, t providers.Target) error {
	arn, err := d.arnOf(ctx, t.Region, t.Name, t.Attributes)
	if err != nil {
		return err
	}
	_, err = d.elb.get(t.Region).DeleteListener(ctx, &elbv2.DeleteListenerInput{ListenerArn: aws.String(arn)})
	if err != nil && !isCode(err, "ListenerNotFound", "LoadBalancerNotFound") {
		return fmt.Errorf("aws/alb-listener: %s: DeleteListener: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag,
// the name among them.
func (d *albListeners) Release(ctx context.Context, region, name, owner string) error {
	arn, err := d.arnOf(ctx, region, name, nil)
	if err != nil {
		return err
	}
	return releaseELB(ctx, d.elb.get(region), spec.ALBListener, name, arn, owner)
}

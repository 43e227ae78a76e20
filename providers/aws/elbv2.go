package aws

// What the Elastic Load Balancing v2 kinds share (alb, alb-target-group,
// alb-listener): their client, error codes, names and tags.

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

func newELB(cfg aws.Config) *regional[*elbv2.Client] {
	return newRegional(cfg, func(c aws.Config) *elbv2.Client { return elbv2.NewFromConfig(c) })
}

// elbAndEC2 are the clients of a kind whose references are EC2's (a
// load balancer's subnets, a target group's VPC).
type elbAndEC2 struct {
	elb *regional[*elbv2.Client]
	ec2 *regional[*ec2.Client]
}

func newELBAndEC2(cfg aws.Config) elbAndEC2 {
	return elbAndEC2{elb: newELB(cfg), ec2: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })}
}

// elbErrors are Elastic Load Balancing v2's error codes (the API
// reference's Errors of each call), for the three kinds alike.
var elbErrors = map[string]providers.Code{
	"LoadBalancerNotFound": providers.NotFound, "TargetGroupNotFound": providers.NotFound, "ListenerNotFound": providers.NotFound,
	"DuplicateLoadBalancerName": providers.AlreadyExists, "DuplicateTargetGroupName": providers.AlreadyExists,
	"DuplicateListener": providers.AlreadyExists,
	// A target group a listener forwards to; a protected load balancer
	// (OperationNotPermitted).
	"ResourceInUse": providers.Conflict, "OperationNotPermitted": providers.Conflict,
	// Quotas.
	"TooManyLoadBalancers": providers.Conflict, "TooManyTargetGroups": providers.Conflict, "TooManyListeners": providers.Conflict,
	"TooManyTags": providers.Conflict, "TooManyCertificates": providers.Conflict,
	"InvalidConfigurationRequest": providers.InvalidArgument, "InvalidSubnet": providers.InvalidArgument,
	"SubnetNotFound": providers.InvalidArgument, "InvalidSecurityGroup": providers.InvalidArgument,
	"InvalidScheme": providers.InvalidArgument, "CertificateNotFound": providers.InvalidArgument,
	"SSLPolicyNotFound": providers.InvalidArgument, "UnsupportedProtocol": providers.InvalidArgument,
	"IncompatibleProtocols": providers.InvalidArgument, "InvalidLoadBalancerAction": providers.InvalidArgument,
	"AvailabilityZoneNotSupported": providers.InvalidArgument, "DuplicateTagKeys": providers.InvalidArgument,
}

// namedBeforeID is the tag scan's parser of ARNs whose resource part is
// prefix, the name and an id (loadbalancer/app/NAME/ID).
func namedBeforeID(prefix string) func(string, map[string]string) (string, string, bool) {
	return func(resource string, _ map[string]string) (string, string, bool) {
		rest, ok := strings.CutPrefix(resource, prefix)
		name, id, _ := strings.Cut(rest, "/")
		return name, "", ok && name != "" && id != "" && !strings.Contains(id, "/")
	}
}

// elbScopes is a kind's own scopes with those of the tagging calls every
// ELB kind makes. AddTags is also what a create with tags is authorized
// by (Elastic Load Balancing's "permissions to tag resources during
// creation"): the resource has no tag yet, so it is the adoption half of
// ScopeTagging, with the ownership tag in the request.
func elbScopes(own map[string][]ActionScope) map[string][]ActionScope {
	out := map[string][]ActionScope{
		"elasticloadbalancing:DescribeTags": {{Scope: ScopeAny}},
		"elasticloadbalancing:AddTags":      {{Scope: ScopeTagging}},
		"elasticloadbalancing:RemoveTags":   {{Scope: ScopeOwned}},
	}
	maps.Copy(out, own)
	return out
}

// checkELBName holds a load balancer's or a target group's name to what
// CreateLoadBalancer and CreateTargetGroup state: at most 32 characters,
// only letters, digits and hyphens, not beginning or ending with a hyphen;
// and, for a load balancer, not beginning with "internal-".
func checkELBName(k spec.Kind, name string) error {
	if len(name) == 0 || len(name) > 32 {
		return providers.Errorf(providers.InvalidArgument, "aws/%s: %q: a name is 1 to 32 characters, this one %d", k, name, len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return providers.Errorf(providers.InvalidArgument, "aws/%s: %q: character %q is not allowed (letters, digits and hyphens only)", k, name, r)
		}
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		return providers.Errorf(providers.InvalidArgument, "aws/%s: %q: a name cannot begin or end with a hyphen", k, name)
	}
	if k == spec.ALB && strings.HasPrefix(name, "internal-") {
		return providers.Errorf(providers.InvalidArgument, "aws/%s: %q: a load balancer's name cannot begin with internal-", k, name)
	}
	return nil
}

// checkWhole refuses a number that is not a whole one within [lo, hi].
func checkWhole(k spec.Kind, name, field string, v float64, lo, hi int) error {
	if v != float64(int(v)) || int(v) < lo || int(v) > hi {
		return providers.Errorf(providers.InvalidArgument, "aws/%s: %s: %s must be a whole number from %d to %d, is %v", k, name, field, lo, hi, v)
	}
	return nil
}

func elbTags(m map[string]string) []elbtypes.Tag {
	return tagList(m, func(k, v *string) elbtypes.Tag { return elbtypes.Tag{Key: k, Value: v} })
}

// elbTagsPerCall is the most ARNs DescribeTags takes.
const elbTagsPerCall = 20

// tagsOf reads the tags of each ARN, twenty a call, by ARN.
func tagsOf(ctx context.Context, c *elbv2.Client, arns []string) (map[string]map[string]string, error) {
	out := make(map[string]map[string]string, len(arns))
	for len(arns) > 0 {
		n := min(len(arns), elbTagsPerCall)
		page, err := c.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns[:n]})
		if err != nil {
			return nil, err
		}
		for _, d := range page.TagDescriptions {
			out[aws.ToString(d.ResourceArn)] = tagMapOf(d.Tags, func(t elbtypes.Tag) (k, v *string) { return t.Key, t.Value })
		}
		arns = arns[n:]
	}
	return out, nil
}

// retagELB moves a resource's tags to want; the keys keep names (the
// ownership tag, a listener's Name) are never removed.
func retagELB(ctx context.Context, c *elbv2.Client, k spec.Kind, name, arn string, want map[string]string, keep ...string) error {
	have, err := tagsOf(ctx, c, []string{arn})
	if err != nil {
		return fmt.Errorf("aws/%s: %s: DescribeTags: %w", k, name, err)
	}
	set, remove := tagChanges(have[arn], want, append(keep, spec.OwnershipTagKey)...)
	if len(set) > 0 {
		if _, err := c.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{arn}, Tags: elbTags(set)}); err != nil {
			return fmt.Errorf("aws/%s: %s: AddTags: %w", k, name, err)
		}
	}
	if len(remove) > 0 {
		if _, err := c.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{arn}, TagKeys: remove}); err != nil {
			return fmt.Errorf("aws/%s: %s: RemoveTags: %w", k, name, err)
		}
	}
	return nil
}

// releaseELB removes the ownership tag when it names owner, keeping every
// other tag.
func releaseELB(ctx context.Context, c *elbv2.Client, k spec.Kind, name, arn, owner string) error {
	tags, err := tagsOf(ctx, c, []string{arn})
	if err != nil {
		return fmt.Errorf("aws/%s: %s: DescribeTags: %w", k, name, err)
	}
	if tags[arn][spec.OwnershipTagKey] != owner {
		return nil
	}
	if _, err := c.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{arn}, TagKeys: []string{spec.OwnershipTagKey}}); err != nil {
		return fmt.Errorf("aws/%s: %s: RemoveTags: %w", k, name, err)
	}
	return nil
}

// identity is the identity this run observed or made of the resource of
// kind k named name (Target.Identities); empty when it must be looked up.
func identity(t providers.Target, k spec.Kind, name string) string {
	return t.Identities[spec.Address{Provider: spec.AWS, Kind: k, Name: name}]
}

// loadBalancerNamed describes the Application Load Balancer called name.
// Another type's load balancer of that name (names are unique across
// types) is not one: NotFound, saying so.
func loadBalancerNamed(ctx context.Context, c *elbv2.Client, k spec.Kind, name string) (elbtypes.LoadBalancer, error) {
	out, err := c.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{name}})
	if err != nil {
		return elbtypes.LoadBalancer{}, fmt.Errorf("aws/%s: %s: DescribeLoadBalancers: %w", k, name, err)
	}
	for _, lb := range out.LoadBalancers {
		if aws.ToString(lb.LoadBalancerName) != name {
			continue
		}
		if lb.Type != elbtypes.LoadBalancerTypeEnumApplication {
			return elbtypes.LoadBalancer{}, providers.Errorf(providers.NotFound, "aws/%s: %s is a %s load balancer, not an Application Load Balancer", k, name, lb.Type)
		}
		return lb, nil
	}
	return elbtypes.LoadBalancer{}, providers.Errorf(providers.NotFound, "aws/%s: no load balancer named %q", k, name)
}

// eachALB hands every Application Load Balancer of the region to each,
// reading every page.
func eachALB(ctx context.Context, c *elbv2.Client, k spec.Kind, region string, each func(elbtypes.LoadBalancer) error) error {
	p := elbv2.NewDescribeLoadBalancersPaginator(c, &elbv2.DescribeLoadBalancersInput{})
	return eachPage(ctx, p, k, region, func(page *elbv2.DescribeLoadBalancersOutput) error {
		for _, lb := range page.LoadBalancers {
			if lb.Type == elbtypes.LoadBalancerTypeEnumApplication {
				if err := each(lb); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

package aws

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// logGroups is the log-group kind: a CloudWatch Logs log group, named by
// its log group name.
type logGroups struct {
	clients *regional[*cloudwatchlogs.Client]
}

var (
	_ providers.Driver   = (*logGroups)(nil)
	_ providers.Releaser = (*logGroups)(nil)
)

// logRetentionDays are the values PutRetentionPolicy accepts for
// retentionInDays (the SDK's doc comment, quoting the API reference).
var logRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545,
	731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

func init() {
	register(entry{
		kind: spec.LogGroup, service: "logs",
		actions: []string{"logs:DescribeLogGroups", "logs:ListTagsForResource", "logs:CreateLogGroup", "logs:TagResource",
			"logs:UntagResource", "logs:PutRetentionPolicy", "logs:DeleteLogGroup"},
		scopes: map[string][]ActionScope{
			"logs:DescribeLogGroups":   {{Scope: ScopeAny}},
			"logs:ListTagsForResource": {{Scope: ScopeAny}},
			"logs:CreateLogGroup":      {{Scope: ScopeCreate}},
			"logs:TagResource":         {{Scope: ScopeTagging}},
			"logs:UntagResource":       {{Scope: ScopeOwned}},
			"logs:PutRetentionPolicy":  {{Scope: ScopeOwned}},
			"logs:DeleteLogGroup":      {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:logs:{region}:{account}:log-group:{name}",
		// The Tagging API returns log groups (moto too) under
		// arn:aws:logs:REGION:ACCOUNT:log-group:NAME, without the ":*" of
		// DescribeLogGroups' arn. A log group name holds no colon.
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			name, ok := strings.CutPrefix(resource, "log-group:")
			return name, "", ok && name != "" && !strings.Contains(name, ":")
		},
		errors: map[string]providers.Code{
			"ResourceAlreadyExistsException": providers.AlreadyExists,
			// Another operation on the group is under way.
			"OperationAbortedException": providers.Conflict,
			"LimitExceededException":    providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &logGroups{clients: newRegional(cfg, func(c aws.Config) *cloudwatchlogs.Client { return cloudwatchlogs.NewFromConfig(c) })}
		},
	})
}

// target decodes and checks a target before any call: retentionDays must
// be one of the values PutRetentionPolicy accepts.
func (d *logGroups) target(t providers.Target) (providers.LogGroupInput, error) {
	in, err := providers.DecodeLogGroup(t.Fields)
	if err != nil {
		return in, providers.Errorf(providers.InvalidArgument, "aws/log-group: %s: %v", t.Name, err)
	}
	if in.HasRetentionDays() && !slices.Contains(logRetentionDays, int(in.RetentionDays)) || in.RetentionDays != float64(int(in.RetentionDays)) {
		vals := make([]string, len(logRetentionDays))
		for i, v := range logRetentionDays {
			vals[i] = strconv.Itoa(v)
		}
		return in, providers.Errorf(providers.InvalidArgument, "aws/log-group: %s: retentionDays %v is not one CloudWatch Logs accepts (%s; unset: never expire)",
			t.Name, in.RetentionDays, strings.Join(vals, ", "))
	}
	return in, nil
}

// describe finds the group named exactly name: DescribeLogGroups' filter
// is a prefix, so the listing may hold others.
func (d *logGroups) describe(ctx context.Context, c *cloudwatchlogs.Client, region, name string) (logstypes.LogGroup, error) {
	var found *logstypes.LogGroup
	p := cloudwatchlogs.NewDescribeLogGroupsPaginator(c, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String(name)})
	err := eachPage(ctx, p, spec.LogGroup, region, func(page *cloudwatchlogs.DescribeLogGroupsOutput) error {
		for i := range page.LogGroups {
			if aws.ToString(page.LogGroups[i].LogGroupName) == name {
				found = &page.LogGroups[i]
			}
		}
		return nil
	})
	if err != nil {
		return logstypes.LogGroup{}, fmt.Errorf("aws/log-group: %s: DescribeLogGroups: %w", name, err)
	}
	if found == nil {
		return logstypes.LogGroup{}, providers.Errorf(providers.NotFound, "aws/log-group: %s: no such log group", name)
	}
	return *found, nil
}

// groupARN is the group's ARN as the tagging calls take it: without the
// trailing ":*" of DescribeLogGroups' arn.
func groupARN(g logstypes.LogGroup) string {
	if a := aws.ToString(g.LogGroupArn); a != "" {
		return a
	}
	return strings.TrimSuffix(aws.ToString(g.Arn), ":*")
}

func (d *logGroups) List(ctx context.Context, region string) ([]providers.Resource, error) {
	var out []providers.Resource
	p := cloudwatchlogs.NewDescribeLogGroupsPaginator(d.clients.get(region), &cloudwatchlogs.DescribeLogGroupsInput{})
	err := eachPage(ctx, p, spec.LogGroup, region, func(page *cloudwatchlogs.DescribeLogGroupsOutput) error {
		for _, g := range page.LogGroups {
			// An address's name holds no '/', so a group whose name does
			// (Lambda's own /aws/lambda/NAME) is one infra neither makes
			// nor can name: it is not listed, rather than listed under an
			// address nothing can read back.
			if strings.Contains(aws.ToString(g.LogGroupName), "/") {
				continue
			}
			out = append(out, providers.Resource{Name: aws.ToString(g.LogGroupName), Region: region,
				Attributes: map[string]string{"arn": groupARN(g)}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/log-group: DescribeLogGroups in %s: %w", region, err)
	}
	return out, nil
}

func (d *logGroups) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	g, err := d.describe(ctx, c, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	arn := groupARN(g)
	tags, err := c.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/log-group: %s: ListTagsForResource: %w", name, err)
	}
	res := providers.Resource{Name: name, Region: region, Owner: tags.Tags[spec.OwnershipTagKey],
		Fields:     map[string]any{spec.TagsField: reportedTags(tags.Tags)},
		Attributes: map[string]string{"arn": arn}}
	if g.RetentionInDays != nil {
		res.Fields[providers.LogGroupRetentionDays] = float64(*g.RetentionInDays)
	}
	return res, nil
}

func (d *logGroups) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	// Tags go with the create, so a group never exists without its
	// ownership tag.
	if _, err := c.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(t.Name), Tags: tags}); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/log-group: %s: CreateLogGroup: %w", t.Name, err)
	}
	if in.HasRetentionDays() {
		if err := d.putRetention(ctx, c, t.Name, in); err != nil {
			return providers.Resource{}, err
		}
	}
	// CreateLogGroup returns nothing: the ARN is the describe's.
	return d.Read(ctx, t.Region, t.Name)
}

// putRetention sets the group's retention. An unset retentionDays is
// never compared, so there is no call that takes one away.
func (d *logGroups) putRetention(ctx context.Context, c *cloudwatchlogs.Client, name string, in providers.LogGroupInput) error {
	if _, err := c.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String(name),
		RetentionInDays: aws.Int32(int32(in.RetentionDays))}); err != nil {
		return fmt.Errorf("aws/log-group: %s: PutRetentionPolicy: %w", name, err)
	}
	return nil
}

func (d *logGroups) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	for _, f := range changed {
		switch f {
		case providers.LogGroupRetentionDays:
			err = d.putRetention(ctx, c, t.Name, in)
		case providers.LogGroupTags:
			err = d.retag(ctx, c, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/log-group: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// arnOf is the group's tagging ARN: the one the engine observed, else the
// describe's.
func (d *logGroups) arnOf(ctx context.Context, c *cloudwatchlogs.Client, region, name string, attrs map[string]string) (string, error) {
	if a := attrs["arn"]; a != "" {
		return a, nil
	}
	g, err := d.describe(ctx, c, region, name)
	if err != nil {
		return "", err
	}
	return groupARN(g), nil
}

func (d *logGroups) retag(ctx context.Context, c *cloudwatchlogs.Client, t providers.Target) error {
	arn, err := d.arnOf(ctx, c, t.Region, t.Name, t.Attributes)
	if err != nil {
		return err
	}
	have, err := c.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return fmt.Errorf("aws/log-group: %s: ListTagsForResource: %w", t.Name, err)
	}
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have.Tags, want, spec.OwnershipTagKey)
	if len(set) > 0 {
		if _, err := c.TagResource(ctx, &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: set}); err != nil {
			return fmt.Errorf("aws/log-group: %s: TagResource: %w", t.Name, err)
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &cloudwatchlogs.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: remove}); err != nil {
			return fmt.Errorf("aws/log-group: %s: UntagResource: %w", t.Name, err)
		}
	}
	return nil
}

// Delete deletes the group and every log stream and event in it; the
// deletion is immediate, and the name is free again at once.
func (d *logGroups) Delete(ctx context.Context, t providers.Target) error {
	if _, err := d.clients.get(t.Region).DeleteLogGroup(ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: aws.String(t.Name)}); err != nil {
		return fmt.Errorf("aws/log-group: %s: DeleteLogGroup: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *logGroups) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	arn, err := d.arnOf(ctx, c, region, name, nil)
	if err != nil {
		return err
	}
	tags, err := c.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return fmt.Errorf("aws/log-group: %s: ListTagsForResource: %w", name, err)
	}
	if tags.Tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	if _, err := c.UntagResource(ctx, &cloudwatchlogs.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{spec.OwnershipTagKey}}); err != nil {
		return fmt.Errorf("aws/log-group: %s: UntagResource: %w", name, err)
	}
	return nil
}

package aws

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// snsTopics is the sns-topic kind: an SNS topic, named by its topic name.
// A name ending in ".fifo" is a FIFO topic, as SNS requires.
type snsTopics struct {
	clients *regional[*sns.Client]
	account accountOf
}

var (
	_ providers.Driver   = (*snsTopics)(nil)
	_ providers.Releaser = (*snsTopics)(nil)
)

// topicName is CreateTopic's rule (the SDK's doc comment, quoting the API
// reference): 1 to 256 ASCII letters, digits, '_' and '-', a FIFO topic's
// ending in ".fifo".
var topicName = regexp.MustCompile(`^([A-Za-z0-9_-]{1,256}|[A-Za-z0-9_-]{1,251}\.fifo)$`)

func init() {
	register(entry{
		kind: spec.SNSTopic, service: "sns",
		actions: []string{"sns:ListTopics", "sns:GetTopicAttributes", "sns:ListTagsForResource", "sns:CreateTopic",
			"sns:TagResource", "sns:UntagResource", "sns:SetTopicAttributes", "sns:DeleteTopic"},
		scopes: map[string][]ActionScope{
			"sns:ListTopics":          {{Scope: ScopeAny}},
			"sns:GetTopicAttributes":  {{Scope: ScopeAny}},
			"sns:ListTagsForResource": {{Scope: ScopeAny}},
			"sns:CreateTopic":         {{Scope: ScopeCreate}},
			// CreateTopic with tags needs sns:TagResource too.
			"sns:TagResource":        {{Scope: ScopeTagging}},
			"sns:UntagResource":      {{Scope: ScopeOwned}},
			"sns:SetTopicAttributes": {{Scope: ScopeOwned}},
			"sns:DeleteTopic":        {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:sns:{region}:{account}:{name}",
		// The Tagging API returns topics as arn:aws:sns:REGION:ACCOUNT:NAME;
		// a subscription's ARN adds ":ID" to its topic's.
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			return resource, "", resource != "" && !strings.Contains(resource, ":")
		},
		errors: map[string]providers.Code{
			// SNS's own codes (the API reference's Errors sections).
			"AuthorizationError": providers.PermissionDenied,
			"ResourceNotFound":   providers.NotFound,
			"ConcurrentAccess":   providers.Conflict,
			"Throttled":          providers.Throttled,
			"InvalidSecurity":    providers.PermissionDenied,
		},
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return &snsTopics{clients: newRegional(cfg, func(c aws.Config) *sns.Client { return sns.NewFromConfig(c) }), account: account}
		},
	})
}

// target decodes and checks a target before any call: the name is one
// SNS takes, fifo agrees with it, and only a FIFO topic deduplicates.
func (d *snsTopics) target(t providers.Target) (providers.SnsTopicInput, bool, error) {
	in, err := providers.DecodeSnsTopic(t.Fields)
	if err != nil {
		return in, false, providers.Errorf(providers.InvalidArgument, "aws/sns-topic: %s: %v", t.Name, err)
	}
	if !topicName.MatchString(t.Name) {
		return in, false, providers.Errorf(providers.InvalidArgument,
			"aws/sns-topic: %s: a topic name is 1 to 256 ASCII letters, digits, '_' and '-', a FIFO topic's ending in .fifo", t.Name)
	}
	fifo := strings.HasSuffix(t.Name, ".fifo")
	if in.HasFifo() && in.Fifo != fifo {
		return in, false, providers.Errorf(providers.InvalidArgument,
			"aws/sns-topic: %s: fifo is %v, but a FIFO topic's name ends in .fifo and no other's does: rename it or drop fifo", t.Name, in.Fifo)
	}
	if in.HasContentBasedDeduplication() && !fifo {
		return in, false, providers.Errorf(providers.InvalidArgument,
			"aws/sns-topic: %s: contentBasedDeduplication is for FIFO topics only (a name ending in .fifo)", t.Name)
	}
	return in, fifo, nil
}

// topicARN is the ARN of the topic named name in region: SNS names a topic
// by its ARN, which holds the account.
func (d *snsTopics) topicARN(ctx context.Context, region, name string) (string, error) {
	return snsTopicARN(ctx, d.account, region, name)
}

func snsTopicARN(ctx context.Context, account accountOf, region, name string) (string, error) {
	if region == "" {
		// The account's call (STS) is not refused without a region.
		return "", fmt.Errorf("aws/sns-topic: %s: %w", name, ErrNoRegion)
	}
	id, err := account(ctx)
	if err != nil {
		return "", fmt.Errorf("aws/sns-topic: %s: the account: %w", name, err)
	}
	return "arn:" + Partition(region) + ":sns:" + region + ":" + id + ":" + name, nil
}

// topicNameOf is the name at the end of a topic's ARN.
func topicNameOf(arn string) string { return arn[strings.LastIndex(arn, ":")+1:] }

func (d *snsTopics) List(ctx context.Context, region string) ([]providers.Resource, error) {
	var out []providers.Resource
	p := sns.NewListTopicsPaginator(d.clients.get(region), &sns.ListTopicsInput{})
	err := eachPage(ctx, p, spec.SNSTopic, region, func(page *sns.ListTopicsOutput) error {
		for _, tp := range page.Topics {
			arn := aws.ToString(tp.TopicArn)
			out = append(out, providers.Resource{Name: topicNameOf(arn), Region: region, Attributes: map[string]string{"arn": arn}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/sns-topic: ListTopics in %s: %w", region, err)
	}
	return out, nil
}

func (d *snsTopics) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	arn, err := d.topicARN(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(region)
	attrs, err := c.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/sns-topic: %s: GetTopicAttributes: %w", name, err)
	}
	tags, err := d.tags(ctx, c, name, arn)
	if err != nil {
		return providers.Resource{}, err
	}
	a := attrs.Attributes
	fifo := a["FifoTopic"] == "true"
	res := providers.Resource{Name: name, Region: region, Owner: tags[spec.OwnershipTagKey],
		Fields: map[string]any{spec.TagsField: reportedTags(tags), providers.SnsTopicDisplayName: a["DisplayName"],
			providers.SnsTopicFifo: fifo},
		Attributes: map[string]string{"arn": arn}}
	if fifo {
		res.Fields[providers.SnsTopicContentBasedDeduplication] = a["ContentBasedDeduplication"] == "true"
	}
	for _, k := range []string{"KmsMasterKeyId", "DeliveryPolicy", "TracingConfig", "ArchivePolicy"} {
		if v := a[k]; v != "" && !(k == "TracingConfig" && v == "PassThrough") {
			res.Unmodelled = append(res.Unmodelled, k+"="+v)
		}
	}
	return res, nil
}

// tags are every tag of the topic.
func (d *snsTopics) tags(ctx context.Context, c *sns.Client, name, arn string) (map[string]string, error) {
	out, err := c.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("aws/sns-topic: %s: ListTagsForResource: %w", name, err)
	}
	tags := make(map[string]string, len(out.Tags))
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

func snsTags(tags map[string]string) []snstypes.Tag {
	out := make([]snstypes.Tag, 0, len(tags))
	for k, v := range tags {
		out = append(out, snstypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out
}

func (d *snsTopics) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, fifo, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	attrs := map[string]string{}
	if in.DisplayName != "" {
		attrs["DisplayName"] = in.DisplayName
	}
	if fifo {
		// SNS makes a FIFO topic only when asked, name or not.
		attrs["FifoTopic"] = "true"
	}
	if in.HasContentBasedDeduplication() {
		attrs["ContentBasedDeduplication"] = strconv.FormatBool(in.ContentBasedDeduplication)
	}
	// Tags go with the create, so a topic never exists without its
	// ownership tag. CreateTopic is idempotent: for a name that exists it
	// answers the existing topic's ARN, or refuses when the tags or
	// attributes differ (InvalidParameter, "Topic already exists with
	// different tags"). Either way the topic is not made here.
	if _, err := d.clients.get(t.Region).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(t.Name), Attributes: attrs,
		Tags: snsTags(tags)}); err != nil {
		var api smithy.APIError
		if errors.As(err, &api) && api.ErrorCode() == "InvalidParameter" && strings.Contains(api.ErrorMessage(), "already exists") {
			return providers.Resource{}, fmt.Errorf("aws/sns-topic: %s: CreateTopic: %w: %w", t.Name,
				providers.Errorf(providers.AlreadyExists, "the topic exists with other tags or attributes"), err)
		}
		return providers.Resource{}, fmt.Errorf("aws/sns-topic: %s: CreateTopic: %w", t.Name, err)
	}
	res, err := d.Read(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	if res.Owner != t.Owner {
		// The topic was there before, and is not this fleet's: it is
		// neither adopted nor tagged.
		return providers.Resource{}, providers.Errorf(providers.AlreadyExists,
			"aws/sns-topic: %s: CreateTopic: the topic exists and %s", t.Name, ownerWords(res.Owner))
	}
	return res, nil
}

// ownerWords says whose a resource's mark says it is.
func ownerWords(owner string) string {
	if owner == "" {
		return "carries no " + spec.OwnershipTagKey + " tag"
	}
	return "is tagged " + spec.OwnershipTagKey + "=" + owner
}

func (d *snsTopics) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, _, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	arn, err := d.arnOf(ctx, t.Region, t.Name, t.Attributes)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	for _, f := range changed {
		switch f {
		case providers.SnsTopicDisplayName:
			err = d.set(ctx, c, t.Name, arn, "DisplayName", in.DisplayName)
		case providers.SnsTopicContentBasedDeduplication:
			err = d.set(ctx, c, t.Name, arn, "ContentBasedDeduplication", strconv.FormatBool(in.ContentBasedDeduplication))
		case providers.SnsTopicTags:
			err = d.retag(ctx, c, t, arn)
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/sns-topic: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *snsTopics) set(ctx context.Context, c *sns.Client, name, arn, attr, value string) error {
	if _, err := c.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String(attr),
		AttributeValue: aws.String(value)}); err != nil {
		return fmt.Errorf("aws/sns-topic: %s: SetTopicAttributes %s: %w", name, attr, err)
	}
	return nil
}

// arnOf is the topic's ARN: the one the engine observed, else made from
// the account.
func (d *snsTopics) arnOf(ctx context.Context, region, name string, attrs map[string]string) (string, error) {
	if a := attrs["arn"]; a != "" {
		return a, nil
	}
	return d.topicARN(ctx, region, name)
}

func (d *snsTopics) retag(ctx context.Context, c *sns.Client, t providers.Target, arn string) error {
	have, err := d.tags(ctx, c, t.Name, arn)
	if err != nil {
		return err
	}
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have, want, spec.OwnershipTagKey)
	if len(set) > 0 {
		if _, err := c.TagResource(ctx, &sns.TagResourceInput{ResourceArn: aws.String(arn), Tags: snsTags(set)}); err != nil {
			return fmt.Errorf("aws/sns-topic: %s: TagResource: %w", t.Name, err)
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &sns.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: remove}); err != nil {
			return fmt.Errorf("aws/sns-topic: %s: UntagResource: %w", t.Name, err)
		}
	}
	return nil
}

// Delete deletes the topic and, with it, every subscription to it (SNS's
// DeleteTopic). Deleting a topic that is gone succeeds.
func (d *snsTopics) Delete(ctx context.Context, t providers.Target) error {
	arn, err := d.arnOf(ctx, t.Region, t.Name, t.Attributes)
	if err != nil {
		return err
	}
	if _, err := d.clients.get(t.Region).DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(arn)}); err != nil {
		return fmt.Errorf("aws/sns-topic: %s: DeleteTopic: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *snsTopics) Release(ctx context.Context, region, name, owner string) error {
	arn, err := d.topicARN(ctx, region, name)
	if err != nil {
		return err
	}
	c := d.clients.get(region)
	tags, err := d.tags(ctx, c, name, arn)
	if err != nil {
		return err
	}
	if tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	if _, err := c.UntagResource(ctx, &sns.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{spec.OwnershipTagKey}}); err != nil {
		return fmt.Errorf("aws/sns-topic: %s: UntagResource: %w", name, err)
	}
	return nil
}

package aws

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/sqsqueue"
	"github.com/infra-iac/infra/spec"
)

// queues is the queues kind: an SQS queue, named by its QueueName. A name
// ending in ".fifo" is a FIFO queue, as SQS requires.
type queues struct {
	clients *regional[*sqs.Client]
	// pageSize is ListQueues' MaxResults. It is always sent: without it
	// SQS returns at most 1,000 queues and no token for the rest.
	pageSize int32
}

var (
	_ providers.Driver       = (*queues)(nil)
	_ providers.Releaser     = (*queues)(nil)
	_ providers.ListedReader = (*queues)(nil)
)

func init() {
	register(entry{
		kind: spec.Queues, service: "sqs",
		actions: []string{"sqs:ListQueues", "sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ListQueueTags", "sqs:CreateQueue",
			"sqs:SetQueueAttributes", "sqs:TagQueue", "sqs:UntagQueue", "sqs:DeleteQueue"},
		arn: func(resource string, _ map[string]string) (string, string, bool) { return resource, "", true },
		errors: map[string]providers.Code{
			"AWS.SimpleQueueService.NonExistentQueue": providers.NotFound, "QueueDoesNotExist": providers.NotFound,
			"QueueAlreadyExists": providers.AlreadyExists,
			// SQS keeps a deleted queue's name for 60 s; a replace waits it out.
			"AWS.SimpleQueueService.QueueDeletedRecently": providers.Conflict, "QueueDeletedRecently": providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &queues{clients: newRegional(cfg, func(c aws.Config) *sqs.Client { return sqs.NewFromConfig(c) }), pageSize: 1000}
		},
	})
}

func (d *queues) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &sqs.ListQueuesInput{MaxResults: aws.Int32(d.pageSize)}
	var out []providers.Resource
	err := eachPage(ctx, sqs.NewListQueuesPaginator(d.clients.get(region), in), spec.Queues, region, func(page *sqs.ListQueuesOutput) error {
		for _, u := range page.QueueUrls {
			out = append(out, providers.Resource{Name: sqsqueue.Name(u), Region: region, Attributes: map[string]string{"url": u}})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d *queues) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return providers.Resource{}, err
	}
	return d.read(ctx, c, region, name, aws.ToString(u.QueueUrl))
}

// ReadListed reads a listed queue by the URL its listing gave, saving the
// GetQueueUrl a Read needs, and with the tags of the tag scan when it has
// them: one call instead of three.
func (d *queues) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	u := listed.Attributes["url"]
	if u == "" {
		return d.Read(ctx, listed.Region, listed.Name)
	}
	return d.readTagged(ctx, d.clients.get(listed.Region), listed.Region, listed.Name, u, tags)
}

func (d *queues) read(ctx context.Context, c *sqs.Client, region, name, queueURL string) (providers.Resource, error) {
	return d.readTagged(ctx, c, region, name, queueURL, nil)
}

// readTagged reads a queue's attributes when the engine wants them (the
// visibility timeout, the ARN), and its tags unless known.
func (d *queues) readTagged(ctx context.Context, c *sqs.Client, region, name, queueURL string, tags map[string]string) (providers.Resource, error) {
	attrs := &sqs.GetQueueAttributesOutput{Attributes: map[string]string{}}
	if providers.WantsField(ctx, providers.QueuesVisibilityTimeoutSec) || providers.WantsAttribute(ctx, "arn") || providers.WantsCreated(ctx) {
		var err error
		if attrs, err = c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(queueURL), AttributeNames: sqsqueue.ReadAttributes(),
		}); err != nil {
			return providers.Resource{}, err
		}
	}
	if tags == nil {
		out, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(queueURL)})
		if err != nil {
			return providers.Resource{}, err
		}
		tags = out.Tags
	}
	res := providers.Resource{
		Name: name, Region: region,
		Fields:     map[string]any{spec.TagsField: reportedTags(tags)},
		Attributes: map[string]string{"url": queueURL},
		Owner:      tags[spec.OwnershipTagKey],
	}
	if arn := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]; arn != "" {
		res.Attributes["arn"] = arn
	}
	sqsqueue.Report(&res, attrs.Attributes)
	return res, nil
}

func (d *queues) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c := d.clients.get(t.Region)
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	attrs := sqsqueue.CreateAttributes(t)
	// Tags go with the create, so a queue never exists without its
	// ownership tag.
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(t.Name), Attributes: attrs, Tags: tags})
	if err != nil {
		return providers.Resource{}, err
	}
	// What was sent is what the queue is.
	res := providers.Resource{Name: t.Name, Region: t.Region, Owner: t.Owner,
		Fields: map[string]any{spec.TagsField: reportedTags(tags)}, Attributes: map[string]string{"url": aws.ToString(out.QueueUrl)}}
	if providers.WantsAttribute(ctx, "arn") {
		// The ARN is the cloud's to say, and something reads it: ask for
		// it alone.
		a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			return providers.Resource{}, err
		}
		res.Attributes["arn"] = a.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	}
	if v, ok := providers.FieldNumber(t.Fields, providers.QueuesVisibilityTimeoutSec); ok {
		res.Fields[providers.QueuesVisibilityTimeoutSec] = float64(int(v))
	}
	return res, nil
}

func (d *queues) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c := d.clients.get(t.Region)
	queueURL, err := d.url(ctx, c, t)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, f := range changed {
		switch f {
		case providers.QueuesVisibilityTimeoutSec:
			var attrs map[string]string
			if attrs, err = sqsqueue.VisibilityUpdate(t.Fields); err != nil {
				return providers.Resource{}, err
			}
			_, err = c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: queueURL, Attributes: attrs})
		case spec.TagsField:
			err = d.retag(ctx, c, queueURL, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "queues: field %q cannot be updated in place", f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	if t.Owner == "" || t.Attributes["arn"] == "" && providers.WantsAttribute(ctx, "arn") {
		return d.read(ctx, c, t.Region, t.Name, aws.ToString(queueURL))
	}
	// The declared fields are as the target says, the mark is its
	// owner's, and an update changes no attribute: no read back.
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	res := providers.Resource{Name: t.Name, Region: t.Region, Owner: t.Owner, Fields: map[string]any{}, Attributes: map[string]string{"url": aws.ToString(queueURL)}}
	if arn := t.Attributes["arn"]; arn != "" {
		res.Attributes["arn"] = arn
	}
	if _, declared := t.Fields[spec.TagsField]; declared {
		res.Fields[spec.TagsField] = reportedTags(tags)
	}
	if v, ok := providers.FieldNumber(t.Fields, providers.QueuesVisibilityTimeoutSec); ok {
		res.Fields[providers.QueuesVisibilityTimeoutSec] = float64(int(v))
	}
	return res, nil
}

// url is the queue's URL: the one the engine observed, else looked up.
func (d *queues) url(ctx context.Context, c *sqs.Client, t providers.Target) (*string, error) {
	if u := t.Attributes["url"]; u != "" {
		return aws.String(u), nil
	}
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(t.Name)})
	if err != nil {
		return nil, err
	}
	return u.QueueUrl, nil
}

func (d *queues) retag(ctx context.Context, c *sqs.Client, queueURL *string, t providers.Target) error {
	have, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: queueURL})
	if err != nil {
		return err
	}
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have.Tags, want, spec.OwnershipTagKey)
	if len(set) > 0 {
		if _, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: queueURL, Tags: set}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: queueURL, TagKeys: remove}); err != nil {
			return err
		}
	}
	return nil
}

func (d *queues) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	queueURL, err := d.url(ctx, c, t)
	if err != nil {
		return err
	}
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: queueURL})
	return err
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *queues) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return err
	}
	tags, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: u.QueueUrl})
	if err != nil {
		return err
	}
	if tags.Tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	_, err = c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: u.QueueUrl, TagKeys: []string{spec.OwnershipTagKey}})
	return err
}

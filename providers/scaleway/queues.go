package scaleway

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/sqsqueue"
	"github.com/infra-iac/infra/spec"
)

// queues is the queues kind: a Scaleway Queues queue, on the SQS API of
// the project's endpoint with the project's minted credential. Scaleway
// queues take no tags, so the owner is the name prefix "<fleet>-". A
// project whose Queues are not activated has no queues; only a create
// activates them, so planning stays read-only.
type queues struct {
	b        *Backend
	pageSize int32
}

var _ providers.Driver = (*queues)(nil)

func init() {
	register(entry{kind: spec.Queues, new: func(b *Backend) providers.Driver { return &queues{b: b, pageSize: 1000} }})
}

func (d *queues) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c, err := d.b.sqsClient(ctx, region, false)
	if errors.Is(err, errQueuesOff) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fleet := d.b.fleetName()
	var out []providers.Resource
	in := &sqs.ListQueuesInput{MaxResults: aws.Int32(d.pageSize)}
	p := sqs.NewListQueuesPaginator(c.client, in)
	for pages := 0; p.HasMorePages(); pages++ {
		if pages == listPageLimit {
			return nil, errors.New("scaleway/queues: listing passed the page budget; refusing to report a prefix of it")
		}
		var page *sqs.ListQueuesOutput
		if err := d.b.retryFresh(ctx, c, func() (err error) { page, err = p.NextPage(ctx); return err }); err != nil {
			return nil, err
		}
		for _, u := range page.QueueUrls {
			name := sqsqueue.Name(u)
			out = append(out, providers.Resource{Name: name, Region: region, Owner: prefixOwner(fleet, name),
				Attributes: map[string]string{"url": u}})
		}
	}
	return out, nil
}

func (d *queues) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, err := d.b.sqsClient(ctx, region, false)
	if errors.Is(err, errQueuesOff) {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "scaleway/queues/%s: Queues are not activated in %s", name, region)
	}
	if err != nil {
		return providers.Resource{}, err
	}
	u, err := d.url(ctx, c, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return d.read(ctx, c, region, name, u)
}

func (d *queues) url(ctx context.Context, c *sqsCredential, name string) (string, error) {
	var out *sqs.GetQueueUrlOutput
	err := d.b.retryFresh(ctx, c, func() (err error) {
		out, err = c.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		return err
	})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.QueueUrl), nil
}

func (d *queues) read(ctx context.Context, c *sqsCredential, region, name, queueURL string) (providers.Resource, error) {
	var attrs *sqs.GetQueueAttributesOutput
	err := d.b.retryFresh(ctx, c, func() (err error) {
		attrs, err = c.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL),
			AttributeNames: sqsqueue.ReadAttributes()})
		return err
	})
	if err != nil {
		return providers.Resource{}, err
	}
	res := providers.Resource{Name: name, Region: region, Owner: prefixOwner(d.b.fleetName(), name), Fields: map[string]any{},
		Attributes: map[string]string{"url": queueURL}}
	if arn := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]; arn != "" {
		res.Attributes["arn"] = arn
	}
	sqsqueue.Report(&res, attrs.Attributes)
	return res, nil
}

func (d *queues) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	if err := requirePrefix(spec.Queues, t); err != nil {
		return providers.Resource{}, err
	}
	if err := noUserTags(spec.Queues, t); err != nil {
		return providers.Resource{}, err
	}
	c, err := d.b.sqsClient(ctx, t.Region, true)
	if err != nil {
		return providers.Resource{}, err
	}
	attrs := sqsqueue.CreateAttributes(t)
	var out *sqs.CreateQueueOutput
	err = d.b.retryFresh(ctx, c, func() (err error) {
		out, err = c.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(t.Name), Attributes: attrs})
		return err
	})
	if err != nil {
		return providers.Resource{}, err
	}
	return d.read(ctx, c, t.Region, t.Name, aws.ToString(out.QueueUrl))
}

func (d *queues) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, err := d.b.sqsClient(ctx, t.Region, false)
	if err != nil {
		return providers.Resource{}, err
	}
	u, err := d.url(ctx, c, t.Name)
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
			_, err = c.client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(u), Attributes: attrs})
		case spec.TagsField:
			err = noUserTags(spec.Queues, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "queues: field %q cannot be updated in place", f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.read(ctx, c, t.Region, t.Name, u)
}

func (d *queues) Delete(ctx context.Context, t providers.Target) error {
	c, err := d.b.sqsClient(ctx, t.Region, false)
	if errors.Is(err, errQueuesOff) {
		return providers.Errorf(providers.NotFound, "scaleway/queues/%s: Queues are not activated in %s", t.Name, t.Region)
	}
	if err != nil {
		return err
	}
	u, err := d.url(ctx, c, t.Name)
	if err != nil {
		return err
	}
	_, err = c.client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
	return err
}

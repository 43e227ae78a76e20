package gcp

import (
	"context"
	"errors"
	"slices"
	"strings"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// queues is queues: a Pub/Sub topic and one pull subscription of the same
// name, both labelled with the mark. The topic's message storage policy
// allows the region alone, which is what places a queue in a region (a
// topic itself is global). visibilityTimeoutSec is the subscription's ack
// deadline.
//
// The topic is made first and the subscription second. Should the
// subscription fail, the topic is deleted again; should the process die
// between the two, Read reports the queue with an ack deadline of 0 and
// "Subscription=missing", any update makes the subscription, and a
// repeated create completes it.
type queues struct{ b *Backend }

var _ providers.Driver = (*queues)(nil)

func init() {
	register(entry{kind: spec.Queues, new: func(b *Backend) providers.Driver { return &queues{b: b} }})
}

func (d *queues) client(ctx context.Context) (*pubsub.Client, string, error) {
	c, err := d.b.pubsubClient(ctx)
	if err != nil {
		return nil, "", err
	}
	project, err := d.b.scope(ctx)
	return c, project, err
}

func topicName(project, name string) string { return "projects/" + project + "/topics/" + name }
func subscriptionName(project, name string) string {
	return "projects/" + project + "/subscriptions/" + name
}

// shortName is the last segment of a resource name.
func shortName(full string) string { return full[strings.LastIndex(full, "/")+1:] }

// regionOf is the one region a topic's storage policy allows; empty when
// it allows none or several.
func regionOf(t *pubsubpb.Topic) string {
	if p := t.GetMessageStoragePolicy(); p != nil && len(p.AllowedPersistenceRegions) == 1 {
		return p.AllowedPersistenceRegions[0]
	}
	return ""
}

func queueResource(region string, t *pubsubpb.Topic, s *pubsubpb.Subscription) providers.Resource {
	tags, owner := reported(t.Labels)
	r := providers.Resource{Name: shortName(t.Name), Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags, "visibilityTimeoutSec": 0.0},
		Attributes: map[string]string{"arn": t.Name}}
	if s == nil {
		r.Unmodelled = []string{"Subscription=missing"}
		return r
	}
	r.Fields["visibilityTimeoutSec"] = float64(s.AckDeadlineSeconds)
	r.Attributes["url"] = s.Name
	return r
}

func (d *queues) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	subs := map[string]*pubsubpb.Subscription{}
	si := c.SubscriptionAdminClient.ListSubscriptions(ctx, &pubsubpb.ListSubscriptionsRequest{Project: "projects/" + project, PageSize: int32(d.b.opts.PageSize)})
	if err := drain(si.Next, func(s *pubsubpb.Subscription) { subs[shortName(s.Name)] = s }); err != nil {
		return nil, err
	}
	var out []providers.Resource
	ti := c.TopicAdminClient.ListTopics(ctx, &pubsubpb.ListTopicsRequest{Project: "projects/" + project, PageSize: int32(d.b.opts.PageSize)})
	err = drain(ti.Next, func(t *pubsubpb.Topic) {
		if regionOf(t) == region {
			s := subs[shortName(t.Name)]
			if s != nil && s.Topic != t.Name {
				s = nil // a subscription of that name on another topic is not this queue's
			}
			out = append(out, queueResource(region, t, s))
		}
	})
	return out, err
}

// drain reads an iterator to its end, within the listing budget.
func drain[T any](next func() (T, error), each func(T)) error {
	for n := 0; ; n++ {
		if n == listPageLimit*100 {
			return errors.New("gcp: listing passed the page budget; refusing to report a prefix of it")
		}
		v, err := next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return err
		}
		each(v)
	}
}

func (d *queues) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	t, err := c.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: topicName(project, name)})
	if err != nil {
		return providers.Resource{}, err
	}
	if got := regionOf(t); got != region {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "gcp/queues/%s: the topic stores messages in %q, not %s", name, got, region)
	}
	s, err := d.subscription(ctx, c, project, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return queueResource(region, t, s), nil
}

// subscription is the queue's subscription, nil when it is missing.
func (d *queues) subscription(ctx context.Context, c *pubsub.Client, project, name string) (*pubsubpb.Subscription, error) {
	s, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: subscriptionName(project, name)})
	if errorCode(err) == providers.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.Topic != topicName(project, name) {
		return nil, providers.Errorf(providers.Conflict, "gcp/queues/%s: the subscription %s reads %s, not this queue's topic: delete or rename it", name, s.Name, s.Topic)
	}
	return s, nil
}

func (d *queues) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	l, err := labels(t)
	if err != nil {
		return providers.Resource{}, err
	}
	topic, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topicName(project, t.Name), Labels: l,
		MessageStoragePolicy: &pubsubpb.MessageStoragePolicy{AllowedPersistenceRegions: []string{t.Region}}})
	if errorCode(err) == providers.AlreadyExists {
		// A create repeated after a lost answer, or after a crash between
		// the topic and the subscription: completed only if the topic is
		// this fleet's.
		topic, err = d.ours(ctx, c, project, t)
	}
	if err != nil {
		return providers.Resource{}, err
	}
	s, err := d.ensureSubscription(ctx, c, project, t, l)
	if err != nil {
		_ = c.TopicAdminClient.DeleteTopic(context.WithoutCancel(ctx), &pubsubpb.DeleteTopicRequest{Topic: topic.Name})
		return providers.Resource{}, err
	}
	return queueResource(t.Region, topic, s), nil
}

// ours is the existing topic a repeated create may complete: this fleet's,
// in the target's region.
func (d *queues) ours(ctx context.Context, c *pubsub.Client, project string, t providers.Target) (*pubsubpb.Topic, error) {
	topic, err := c.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: topicName(project, t.Name)})
	if err != nil {
		return nil, err
	}
	if topic.Labels[spec.OwnershipTagKey] != t.Owner || regionOf(topic) != t.Region {
		return nil, providers.Errorf(providers.AlreadyExists, "gcp/queues/%s: a topic of that name already exists and is not this fleet's", t.Name)
	}
	return topic, nil
}

// ensureSubscription makes the queue's subscription, or returns the one
// that exists.
func (d *queues) ensureSubscription(ctx context.Context, c *pubsub.Client, project string, t providers.Target, l map[string]string) (*pubsubpb.Subscription, error) {
	decl, err := providers.DecodeQueues(t.Fields)
	if err != nil {
		return nil, err
	}
	ack := int32(decl.VisibilityTimeoutSec)
	if !decl.HasVisibilityTimeoutSec() {
		ack = 30
	}
	s, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: subscriptionName(project, t.Name),
		Topic: topicName(project, t.Name), AckDeadlineSeconds: ack, Labels: l})
	if errorCode(err) == providers.AlreadyExists {
		if s, err = d.subscription(ctx, c, project, t.Name); err == nil && s == nil {
			err = providers.Errorf(providers.Conflict, "gcp/queues/%s: the subscription was deleted while it was being made", t.Name)
		}
	}
	return s, err
}

func (d *queues) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeQueues(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	l, err := labels(t)
	if err != nil {
		return providers.Resource{}, err
	}
	var subPaths []string
	topic := &pubsubpb.Topic{Name: topicName(project, t.Name)}
	sub := &pubsubpb.Subscription{Name: subscriptionName(project, t.Name), AckDeadlineSeconds: int32(decl.VisibilityTimeoutSec), Labels: l}
	for _, f := range changed {
		switch f {
		case providers.QueuesVisibilityTimeoutSec:
			subPaths = append(subPaths, "ack_deadline_seconds")
		case spec.TagsField:
			topic.Labels = l
			if _, err := c.TopicAdminClient.UpdateTopic(ctx, &pubsubpb.UpdateTopicRequest{Topic: topic,
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"labels"}}}); err != nil {
				return providers.Resource{}, err
			}
			subPaths = append(subPaths, "labels")
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "queues: field %q cannot be updated in place", f)
		}
	}
	if err := d.updateSubscription(ctx, c, project, t, sub, subPaths); err != nil {
		return providers.Resource{}, err
	}
	return d.Read(ctx, t.Region, t.Name)
}

// updateSubscription applies the changed paths, or makes the subscription
// when a crash left the queue without one.
func (d *queues) updateSubscription(ctx context.Context, c *pubsub.Client, project string, t providers.Target, sub *pubsubpb.Subscription, paths []string) error {
	have, err := d.subscription(ctx, c, project, t.Name)
	if err != nil {
		return err
	}
	if have == nil {
		_, err := d.ensureSubscription(ctx, c, project, t, sub.Labels)
		return err
	}
	if len(paths) == 0 {
		return nil
	}
	if !slices.Contains(paths, "ack_deadline_seconds") {
		sub.AckDeadlineSeconds = have.AckDeadlineSeconds
	}
	_, err = c.SubscriptionAdminClient.UpdateSubscription(ctx, &pubsubpb.UpdateSubscriptionRequest{Subscription: sub,
		UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
	return err
}

func (d *queues) Delete(ctx context.Context, t providers.Target) error {
	c, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	err = c.SubscriptionAdminClient.DeleteSubscription(ctx, &pubsubpb.DeleteSubscriptionRequest{Subscription: subscriptionName(project, t.Name)})
	if err != nil && errorCode(err) != providers.NotFound {
		return err
	}
	return c.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: topicName(project, t.Name)})
}

package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// snsSubscriptions is the sns-subscription kind: a subscription of an SQS
// queue to an SNS topic, with the statement in the queue's policy that
// lets the topic send to it. SNS gives a subscription no name and no tags,
// so the statement's Sid holds both the name the fleet gave it and the
// ownership mark (sns_subscription_policy.go).
type snsSubscriptions struct {
	sns     *regional[*sns.Client]
	sqs     *regional[*sqs.Client]
	account accountOf
	edits   queuePolicies
	// settle is how long a policy write is given before the read that
	// checks it; it doubles with each write.
	settle time.Duration
}

var (
	_ providers.Driver   = (*snsSubscriptions)(nil)
	_ providers.Releaser = (*snsSubscriptions)(nil)
)

// subscriptionName is the names the Sid holds in few characters: the
// queue's policy has room for 8,192 bytes and 20 statements (SQS policy
// quotas).
var subscriptionName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func init() {
	register(entry{
		kind: spec.SNSSubscription, service: "sns",
		actions: []string{"sns:ListSubscriptions", "sns:GetSubscriptionAttributes", "sqs:GetQueueUrl", "sqs:GetQueueAttributes",
			"sns:Subscribe", "sns:SetSubscriptionAttributes", "sns:Unsubscribe", "sqs:SetQueueAttributes"},
		// The sqs: actions keep the queues kind's scopes: the queue's policy
		// is changed only on a queue tagged for a fleet. SNS authorizes the
		// subscription actions on the subscription's topic (IAM's service
		// reference: Subscribe takes a topic, Unsubscribe and
		// Get/SetSubscriptionAttributes may), so changes need the topic to
		// be the fleet's.
		scopes: map[string][]ActionScope{
			"sns:ListSubscriptions":         {{Scope: ScopeAny}},
			"sns:GetSubscriptionAttributes": {{Scope: ScopeAny}},
			"sns:Subscribe":                 {{Scope: ScopeOwned}},
			"sns:SetSubscriptionAttributes": {{Scope: ScopeOwned}},
			"sns:Unsubscribe":               {{Scope: ScopeOwned}},
		},
		// A subscription's ARN is its topic's and an id.
		arnFormat: "arn:{partition}:sns:{region}:{account}:{id}:{id}",
		sweep: &SweepTarget{ARNs: []string{"arn:{partition}:sns:*:{account}:{prefix}*"},
			Why: "a subscription's ARN is its topic's ARN and an id: the sweep unsubscribes from topics named with the prefix"},
		// No tags: the Tagging API never returns a subscription.
		deepScan: true,
		errors: map[string]providers.Code{
			"SubscriptionLimitExceeded": providers.Conflict,
			"FilterPolicyLimitExceeded": providers.Conflict,
		},
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return &snsSubscriptions{
				sns:     newRegional(cfg, func(c aws.Config) *sns.Client { return sns.NewFromConfig(c) }),
				sqs:     newRegional(cfg, func(c aws.Config) *sqs.Client { return sqs.NewFromConfig(c) }),
				account: account, settle: 250 * time.Millisecond,
			}
		},
	})
}

// target decodes and checks a target before any call.
func (d *snsSubscriptions) target(t providers.Target) (providers.SnsSubscriptionInput, error) {
	in, err := providers.DecodeSnsSubscription(t.Fields)
	bad := func(format string, args ...any) error {
		return providers.Errorf(providers.InvalidArgument, "aws/sns-subscription: %s: "+format, append([]any{t.Name}, args...)...)
	}
	switch {
	case err != nil:
		return in, bad("%v", err)
	case !subscriptionName.MatchString(t.Name):
		return in, bad("a subscription's name is 1 to 64 ASCII letters, digits, '.', '_' and '-' (its queue's policy holds it)")
	case in.Topic == "" || in.Queue == "":
		return in, bad("a subscription needs its topic and its queue")
	}
	if in.FilterPolicy != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(in.FilterPolicy), &obj); err != nil || obj == nil {
			return in, bad("filterPolicy is not a JSON object (%v): write one such as {\"event\": [\"created\"]}, or \"\" for none", err)
		}
		if len(obj) == 0 {
			return in, bad(`filterPolicy {} filters nothing: write "" for none`)
		}
	}
	return in, nil
}

// queueStatement is a statement of the driver's in a queue's policy, with the
// subscription it names when SNS has it.
type queueStatement struct {
	name, owner, sid string
	topicARN         string
	queue            queueRef
	sub              *snstypes.Subscription
}

// scan reads every subscription of the region to an SQS queue of the
// account's in it, and the policy of each such queue: the statements
// there name the subscriptions. extra are queues to read though no
// subscription points at them (a delete's own queue, for a statement
// whose subscription went with its topic). Subscriptions no statement
// names are returned apart.
func (d *snsSubscriptions) scan(ctx context.Context, region string, extra ...string) ([]queueStatement, []snstypes.Subscription, error) {
	var subs []snstypes.Subscription
	p := sns.NewListSubscriptionsPaginator(d.sns.get(region), &sns.ListSubscriptionsInput{})
	// The region's own call goes first: the account's is not refused
	// without a region (STS is global), and a region-less call is a bug
	// the region's call names.
	err := eachPage(ctx, p, spec.SNSSubscription, region, func(page *sns.ListSubscriptionsOutput) error {
		for _, s := range page.Subscriptions {
			// A subscription not yet confirmed has no ARN (cross-account
			// queues, which are not this kind's).
			if aws.ToString(s.Protocol) == "sqs" && strings.HasPrefix(aws.ToString(s.SubscriptionArn), "arn:") {
				subs = append(subs, s)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("aws/sns-subscription: ListSubscriptions in %s: %w", region, err)
	}
	account, err := d.account(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("aws/sns-subscription: the account: %w", err)
	}
	queues := map[string]bool{}
	for _, q := range extra {
		queues[q] = true
	}
	for _, s := range subs {
		// arn:PARTITION:sqs:REGION:ACCOUNT:NAME: only queues here are read.
		parts := strings.Split(aws.ToString(s.Endpoint), ":")
		if len(parts) == 6 && parts[3] == region && parts[4] == account {
			queues[parts[5]] = true
		}
	}
	var out []queueStatement
	c := d.sqs.get(region)
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		q, err := readQueue(ctx, c, name)
		if errorCode(err) == providers.NotFound {
			continue // gone with its statements; SNS keeps the subscription a while
		}
		if err != nil {
			return nil, nil, fmt.Errorf("aws/sns-subscription: %w", err)
		}
		out = append(out, q.statements(subs)...)
	}
	var unnamed []snstypes.Subscription
	for i := range subs {
		if !slices.ContainsFunc(out, func(n queueStatement) bool { return n.sub == &subs[i] }) {
			unnamed = append(unnamed, subs[i])
		}
	}
	return out, unnamed, nil
}

// statements are the statements of q's policy the driver wrote, each with its
// subscription among subs.
func (q queueRef) statements(subs []snstypes.Subscription) []queueStatement {
	var out []queueStatement
	for _, raw := range q.policy.statements {
		st := parseStatement(raw)
		name, owner, ok := parseSid(st.Sid)
		if !ok || st.topicARN() == "" {
			continue
		}
		n := queueStatement{name: name, owner: owner, sid: st.Sid, topicARN: st.topicARN(), queue: q}
		for i := range subs {
			if aws.ToString(subs[i].TopicArn) == n.topicARN && aws.ToString(subs[i].Endpoint) == q.arn {
				n.sub = &subs[i]
			}
		}
		out = append(out, n)
	}
	return out
}

// find is the one statement named name, with or without its
// subscription; NotFound when there is none.
func (d *snsSubscriptions) find(ctx context.Context, region, name string, extra ...string) (queueStatement, error) {
	all, _, err := d.scan(ctx, region, extra...)
	if err != nil {
		return queueStatement{}, err
	}
	var hits []queueStatement
	for _, n := range all {
		if n.name == name {
			hits = append(hits, n)
		}
	}
	switch len(hits) {
	case 0:
		return queueStatement{}, providers.Errorf(providers.NotFound, "aws/sns-subscription: %s: no queue policy in %s names it", name, region)
	case 1:
		return hits[0], nil
	}
	where := make([]string, len(hits))
	for i, h := range hits {
		where[i] = h.queue.name + " (from " + topicNameOf(h.topicARN) + ")"
	}
	return queueStatement{}, fmt.Errorf("aws/sns-subscription: %s: %d queue policies name it: %s", name, len(hits), strings.Join(where, ", "))
}

// report reads the subscription's attributes.
func (d *snsSubscriptions) report(ctx context.Context, region string, n queueStatement) (providers.Resource, error) {
	arn := aws.ToString(n.sub.SubscriptionArn)
	out, err := d.sns.get(region).GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(arn)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/sns-subscription: %s: GetSubscriptionAttributes: %w", n.name, err)
	}
	a := out.Attributes
	filter := a["FilterPolicy"]
	if strings.TrimSpace(filter) == "{}" {
		filter = "" // an empty filter policy filters nothing
	}
	res := providers.Resource{Name: n.name, Region: region, Owner: n.owner, Complete: true,
		Fields: map[string]any{providers.SnsSubscriptionTopic: n.topicARN, providers.SnsSubscriptionQueue: n.queue.name,
			providers.SnsSubscriptionRawMessageDelivery: a["RawMessageDelivery"] == "true", providers.SnsSubscriptionFilterPolicy: filter},
		Attributes: map[string]string{"arn": arn}}
	if s := a["FilterPolicyScope"]; s != "" && s != "MessageAttributes" {
		res.Unmodelled = append(res.Unmodelled, "FilterPolicyScope="+s)
	}
	for _, k := range []string{"RedrivePolicy", "DeliveryPolicy", "ReplayPolicy"} {
		if v := a[k]; v != "" {
			res.Unmodelled = append(res.Unmodelled, k+"="+v)
		}
	}
	return res, nil
}

func (d *snsSubscriptions) List(ctx context.Context, region string) ([]providers.Resource, error) {
	all, _, err := d.scan(ctx, region)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []providers.Resource
	for _, n := range all {
		if n.sub == nil {
			continue
		}
		if seen[n.name] {
			return nil, fmt.Errorf("aws/sns-subscription: %s: more than one queue policy in %s names it", n.name, region)
		}
		seen[n.name] = true
		res, err := d.report(ctx, region, n)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

func (d *snsSubscriptions) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	if n.sub == nil {
		// The statement stays after SNS dropped the subscription (its
		// topic was deleted): a create makes it again.
		return providers.Resource{}, providers.Errorf(providers.NotFound,
			"aws/sns-subscription: %s: %s's policy names it, but %s has no such subscription", name, n.queue.name, topicNameOf(n.topicARN))
	}
	return d.report(ctx, region, n)
}

// topicARN is the target topic's ARN: the identity this run observed or
// made, else made from the account.
func (d *snsSubscriptions) topicARN(ctx context.Context, t providers.Target, topic string) (string, error) {
	if id := t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.SNSTopic, Name: topic}]; id != "" {
		return id, nil
	}
	return snsTopicARN(ctx, d.account, t.Region, topic)
}

func (d *snsSubscriptions) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	topicARN, err := d.topicARN(ctx, t, in.Topic)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.sqs.get(t.Region)
	queue, err := readQueue(ctx, c, in.Queue)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/sns-subscription: %s: %w", t.Name, err)
	}
	if err := d.free(ctx, t, queue, topicARN); err != nil {
		return providers.Resource{}, err
	}
	sid := statementSid(t.Name, t.Owner)
	// The statement first: it is the mark, so a subscription is never
	// made without it (a create stopped after it is found again by Read
	// as not made yet, and finished by the next create).
	if err := d.edits.edit(ctx, c, queue, d.settle, policyEdit{sid: sid, statement: newStatement(sid, queue.arn, topicARN)}); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/sns-subscription: %s: %w", t.Name, err)
	}
	attrs := map[string]string{"RawMessageDelivery": strconv.FormatBool(in.RawMessageDelivery)}
	if in.FilterPolicy != "" {
		attrs["FilterPolicy"] = in.FilterPolicy
	}
	out, err := d.sns.get(t.Region).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topicARN), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queue.arn), Attributes: attrs, ReturnSubscriptionArn: true})
	if err != nil {
		err = fmt.Errorf("aws/sns-subscription: %s: Subscribe: %w", t.Name, err)
		// Take the statement back, so a refused subscription (a FIFO
		// queue on a standard topic) leaves nothing behind.
		if undo := d.edits.edit(ctx, c, queue, d.settle, policyEdit{sid: sid}); undo != nil {
			err = errors.Join(err, fmt.Errorf("and its statement stays in %s's policy: %w", queue.name, undo))
		}
		return providers.Resource{}, err
	}
	return providers.Resource{Name: t.Name, Region: t.Region, Owner: t.Owner,
		Fields: map[string]any{providers.SnsSubscriptionTopic: topicARN, providers.SnsSubscriptionQueue: in.Queue,
			providers.SnsSubscriptionRawMessageDelivery: in.RawMessageDelivery, providers.SnsSubscriptionFilterPolicy: in.FilterPolicy},
		Attributes: map[string]string{"arn": aws.ToString(out.SubscriptionArn)}}, nil
}

// free refuses a create whose name another subscription holds in the
// region, or whose topic and queue another subscription joins already:
// SNS keeps one subscription per topic and queue, and Subscribe answers
// an existing one's ARN rather than refuse.
func (d *snsSubscriptions) free(ctx context.Context, t providers.Target, queue queueRef, topicARN string) error {
	all, unnamed, err := d.scan(ctx, t.Region)
	if err != nil {
		return err
	}
	taken := func(format string, args ...any) error {
		return providers.Errorf(providers.AlreadyExists, "aws/sns-subscription: %s: "+format, append([]any{t.Name}, args...)...)
	}
	for _, n := range append(all, queue.statements(nil)...) {
		same := n.topicARN == topicARN && n.queue.arn == queue.arn
		switch {
		case n.name == t.Name && (!same || n.owner != t.Owner):
			return taken("the name is %s's subscription of %s to %s", ownerOrNone(n.owner), n.queue.name, topicNameOf(n.topicARN))
		case n.name == t.Name && n.sub != nil:
			return taken("it exists")
		case n.name != t.Name && same && n.sub != nil:
			return taken("%s is subscribed to %s already, as %s (%s)", queue.name, topicNameOf(topicARN), n.name, ownerOrNone(n.owner))
		}
	}
	for _, s := range unnamed {
		if aws.ToString(s.TopicArn) == topicARN && aws.ToString(s.Endpoint) == queue.arn {
			return taken("%s is subscribed to %s already, and no statement of its policy names the subscription: it is not this fleet's",
				queue.name, topicNameOf(topicARN))
		}
	}
	return nil
}

func ownerOrNone(owner string) string {
	if owner == "" {
		return "no fleet"
	}
	return "fleet " + owner
}

func (d *snsSubscriptions) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	n, err := d.find(ctx, t.Region, t.Name, in.Queue)
	if err != nil {
		return providers.Resource{}, err
	}
	if n.sub == nil {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "aws/sns-subscription: %s: the subscription is gone", t.Name)
	}
	switch n.owner {
	case t.Owner:
	case "":
		// Adopted: the mark is written into the statement's Sid.
		sid := statementSid(t.Name, t.Owner)
		if err := d.edits.edit(ctx, d.sqs.get(t.Region), n.queue, d.settle, policyEdit{sid: n.sid},
			policyEdit{sid: sid, statement: newStatement(sid, n.queue.arn, n.topicARN)}); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/sns-subscription: %s: %w", t.Name, err)
		}
		n.owner, n.sid = t.Owner, sid
	default:
		return providers.Resource{}, providers.Errorf(providers.PermissionDenied, "aws/sns-subscription: %s: it is fleet %s's", t.Name, n.owner)
	}
	c := d.sns.get(t.Region)
	for _, f := range changed {
		switch f {
		case providers.SnsSubscriptionRawMessageDelivery:
			err = d.set(ctx, c, t.Name, n, "RawMessageDelivery", strconv.FormatBool(in.RawMessageDelivery))
		case providers.SnsSubscriptionFilterPolicy:
			// An empty JSON object removes a filter policy.
			filter := in.FilterPolicy
			if filter == "" {
				filter = "{}"
			}
			err = d.set(ctx, c, t.Name, n, "FilterPolicy", filter)
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/sns-subscription: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.report(ctx, t.Region, n)
}

func (d *snsSubscriptions) set(ctx context.Context, c *sns.Client, name string, n queueStatement, attr, value string) error {
	if _, err := c.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: n.sub.SubscriptionArn,
		AttributeName: aws.String(attr), AttributeValue: aws.String(value)}); err != nil {
		return fmt.Errorf("aws/sns-subscription: %s: SetSubscriptionAttributes %s: %w", name, attr, err)
	}
	return nil
}

// Delete unsubscribes, then takes the statement out of the queue's policy,
// keeping every other statement. It never deletes what names another fleet.
func (d *snsSubscriptions) Delete(ctx context.Context, t providers.Target) error {
	var extra []string
	if q, _ := t.Fields[providers.SnsSubscriptionQueue].(string); q != "" {
		extra = append(extra, q)
	}
	n, err := d.find(ctx, t.Region, t.Name, extra...)
	if err != nil {
		return err
	}
	if n.owner != "" && n.owner != t.Owner {
		return providers.Errorf(providers.PermissionDenied, "aws/sns-subscription: %s: it is fleet %s's, not fleet %s's", t.Name, n.owner, t.Owner)
	}
	if n.sub != nil {
		_, err := d.sns.get(t.Region).Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: n.sub.SubscriptionArn})
		if err != nil && errorCode(err) != providers.NotFound {
			return fmt.Errorf("aws/sns-subscription: %s: Unsubscribe: %w", t.Name, err)
		}
	}
	if err := d.edits.edit(ctx, d.sqs.get(t.Region), n.queue, d.settle, policyEdit{sid: n.sid}); err != nil {
		return fmt.Errorf("aws/sns-subscription: %s: %w", t.Name, err)
	}
	return nil
}

// Release takes the fleet out of the statement's Sid and keeps the name
// and the permission: the subscription goes on delivering, unowned.
func (d *snsSubscriptions) Release(ctx context.Context, region, name, owner string) error {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	if n.owner != owner {
		return nil
	}
	sid := statementSid(name, "")
	if err := d.edits.edit(ctx, d.sqs.get(region), n.queue, d.settle, policyEdit{sid: n.sid},
		policyEdit{sid: sid, statement: newStatement(sid, n.queue.arn, n.topicARN)}); err != nil {
		return fmt.Errorf("aws/sns-subscription: %s: %w", name, err)
	}
	return nil
}

package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

const testFleet = "conformance"

// makeTopics and makeQueues make what subscriptions refer to, as the
// fleet's own.
func makeTopics(t *testing.T, b *Backend, names ...string) {
	t.Helper()
	d, _ := b.Driver(spec.SNSTopic)
	for _, n := range names {
		if _, err := d.Create(context.Background(), providers.Target{Name: n, Region: testRegion, Owner: testFleet, Fields: map[string]any{}}); err != nil {
			t.Fatalf("topic %s: %v", n, err)
		}
	}
}

func makeQueues(t *testing.T, b *Backend, names ...string) {
	t.Helper()
	d, _ := b.Driver(spec.Queues)
	for _, n := range names {
		if _, err := d.Create(context.Background(), providers.Target{Name: n, Region: testRegion, Owner: testFleet, Fields: map[string]any{}}); err != nil {
			t.Fatalf("queue %s: %v", n, err)
		}
	}
}

func TestSNSSubscriptionConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:  spec.SNSSubscription,
		Setup: func(t *testing.T) { makeTopics(t, b, "ct-orders", "ct-audit"); makeQueues(t, b, "ct-other") },
		// SNS keeps one subscription per topic and queue: each gets a
		// queue of its own.
		Vary: func(t *testing.T, name string, fields map[string]any) {
			q := "q-" + strings.ReplaceAll(name, ".", "-")
			makeQueues(t, b, q)
			fields["queue"] = q
		},
		Create: map[string]any{"topic": "ct-orders", "rawMessageDelivery": false},
		Updates: []map[string]any{{"rawMessageDelivery": true}, {"filterPolicy": `{"event": ["created"]}`},
			{"filterPolicy": `{"event":["created","updated"],"n":[{"numeric":[">",1]}]}`}, {"filterPolicy": ""}},
		Replaces: []map[string]any{{"topic": "ct-audit"}, {"queue": "ct-other"}},
		OddNames: []string{"Mixed.Case_0-Z", strings.Repeat("s", 64)},
	})
}

// A name the queue's policy cannot hold, a filter policy that is not a
// JSON object, and a subscription without its topic are refused before any
// call.
func TestSNSSubscriptionRefusesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.SNSSubscription)
	ok := map[string]any{"topic": "orders", "queue": "jobs"}
	with := func(k string, v any) map[string]any {
		f := spec.CloneMap(ok)
		f[k] = v
		return f
	}
	for _, c := range []struct {
		name   string
		fields map[string]any
		says   string
	}{
		{"has space", ok, "1 to 64"},
		{strings.Repeat("s", 65), ok, "1 to 64"},
		{"s", with("filterPolicy", `["created"]`), "not a JSON object"},
		{"s", with("filterPolicy", `{"event": [`), "not a JSON object"},
		{"s", with("filterPolicy", `{}`), `write "" for none`},
		{"s", map[string]any{"queue": "jobs"}, "needs its topic"},
	} {
		_, err := d.Create(context.Background(), providers.Target{Name: c.name, Region: testRegion, Owner: testFleet, Fields: c.fields})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Create %.20s %v = %v (code %s), want invalid argument saying %q", c.name, c.fields, err, errorCode(err), c.says)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

func TestSNSSubscriptionSidRoundTrips(t *testing.T) {
	for _, c := range []struct{ name, owner string }{{"orders-to-billing", "shop"}, {"Z.z_Zf-", "a-b_c"}, {"x", ""}} {
		sid := statementSid(c.name, c.owner)
		for _, r := range sid {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				t.Errorf("Sid %q holds %q, which IAM's grammar does not allow", sid, r)
			}
		}
		if name, owner, ok := parseSid(sid); !ok || name != c.name || owner != c.owner {
			t.Errorf("parseSid(%q) = %q, %q, %v; want %q, %q", sid, name, owner, ok, c.name, c.owner)
		}
	}
	for _, sid := range []string{"InfraSubscription", "Other", "InfraSubscriptionaZq", "InfraSubscriptionaZf", "InfraSubscriptionZfshop", "InfraSubscriptiona-b"} {
		if _, _, ok := parseSid(sid); ok {
			t.Errorf("parseSid(%q) is ours", sid)
		}
	}
}

// queuePolicyOf is the queue's policy as SQS holds it.
func queuePolicyOf(t *testing.T, c *sqs.Client, queueURL string) queuePolicy {
	t.Helper()
	q := queueRef{name: queueURL, url: queueURL}
	if err := q.read(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return q.policy
}

func sids(p queuePolicy) []string {
	var out []string
	for _, s := range p.statements {
		out = append(out, parseStatement(s).Sid)
	}
	return out
}

// A subscription adds its statement to the queue's policy beside the ones
// there, a message published to the topic arrives in the queue, and the
// delete takes exactly that statement out again.
func TestSNSSubscriptionDeliversAndKeepsOtherStatements(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	makeTopics(t, b, "orders")
	makeQueues(t, b, "billing")
	q := sqs.NewFromConfig(b.Config(), func(o *sqs.Options) { o.Region = testRegion })
	u, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("billing")})
	if err != nil {
		t.Fatal(err)
	}
	theirs := `{"Version":"2012-10-17","Id":"theirs","Statement":[{"Sid":"Theirs","Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"sqs:ReceiveMessage","Resource":"*"}]}`
	if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: u.QueueUrl, Attributes: map[string]string{"Policy": theirs}}); err != nil {
		t.Fatal(err)
	}
	d, _ := b.Driver(spec.SNSSubscription)
	tg := providers.Target{Name: "orders-to-billing", Region: testRegion, Owner: testFleet,
		Fields: map[string]any{"topic": "orders", "queue": "billing", "rawMessageDelivery": true, "filterPolicy": `{"event": ["created"]}`}}
	res, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	p := queuePolicyOf(t, q, aws.ToString(u.QueueUrl))
	if got := sids(p); len(got) != 2 || got[0] != "Theirs" || got[1] != statementSid(tg.Name, testFleet) {
		t.Fatalf("the queue's statements are %v, want Theirs and the subscription's", got)
	}
	if id := string(p.rest["Id"]); id != `"theirs"` {
		t.Errorf("the policy's Id is %s, want the one it had", id)
	}
	ours := parseStatement(p.statements[1])
	if ours.topicARN() != res.Fields["topic"] || !strings.HasSuffix(ours.queueARN(), ":billing") {
		t.Errorf("the statement lets %s send to %s", ours.topicARN(), ours.queueARN())
	}

	s := sns.NewFromConfig(b.Config(), func(o *sns.Options) { o.Region = testRegion })
	publish := func(event, body string) {
		if _, err := s.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(res.Fields["topic"].(string)), Message: aws.String(body),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"event": {DataType: aws.String("String"), StringValue: aws.String(event)}}}); err != nil {
			t.Fatal(err)
		}
	}
	publish("deleted", "filtered out")
	publish("created", "order 42")
	var bodies []string
	for deadline := time.Now().Add(10 * time.Second); len(bodies) == 0 && time.Now().Before(deadline); {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
	}
	if len(bodies) != 1 || bodies[0] != "order 42" {
		t.Errorf("the queue received %q, want the one matching message, raw", bodies)
	}

	if err := d.Delete(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if got := sids(queuePolicyOf(t, q, aws.ToString(u.QueueUrl))); len(got) != 1 || got[0] != "Theirs" {
		t.Errorf("after the delete the queue's statements are %v, want Theirs alone", got)
	}
}

// Subscriptions of one queue made at once each add their statement: none
// is lost to another's read-modify-write of the policy, and each write
// happens once, one after the other.
func TestSNSSubscriptionConcurrentCreatesKeepEveryStatement(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	const n = 6
	var topics []string
	for i := range n {
		topics = append(topics, fmt.Sprintf("t%d", i))
	}
	makeTopics(t, b, topics...)
	makeQueues(t, b, "shared")
	d, _ := b.Driver(spec.SNSSubscription)
	before := calls.count("SetQueueAttributes")
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.Create(context.Background(), providers.Target{Name: fmt.Sprintf("s%d", i), Region: testRegion, Owner: testFleet,
				Fields: map[string]any{"topic": topics[i], "queue": "shared", "rawMessageDelivery": false}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create s%d: %v", i, err)
		}
	}
	if w := calls.count("SetQueueAttributes") - before; w != n {
		t.Errorf("%d policy writes for %d subscriptions, want one each", w, n)
	}
	rs, err := d.List(context.Background(), testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if got := drivertest.Names(rs); len(got) != n {
		t.Errorf("listed %v, want all %d", got, n)
	}
	q := sqs.NewFromConfig(b.Config(), func(o *sqs.Options) { o.Region = testRegion })
	u, err := q.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String("shared")})
	if err != nil {
		t.Fatal(err)
	}
	if got := sids(queuePolicyOf(t, q, aws.ToString(u.QueueUrl))); len(got) != n {
		t.Errorf("the queue's policy holds %d statements, want %d: %v", len(got), n, got)
	}
}

// A read that does not show an edit made a moment before (SQS takes up to
// a minute to show a change everywhere) gets the edit written again: the
// driver's own recent edits are applied over what a read shows.
func TestSNSSubscriptionPolicyEditsSurviveAStaleRead(t *testing.T) {
	p, _ := parseQueuePolicy(`{"Statement":[{"Sid":"Theirs","Effect":"Allow"}]}`)
	a := policyEdit{sid: "A", statement: newStatement("A", "arn:aws:sqs:r:1:q", "arn:aws:sns:r:1:ta")}
	bEdit := policyEdit{sid: "B", statement: newStatement("B", "arn:aws:sqs:r:1:q", "arn:aws:sns:r:1:tb")}
	// A was written, but this read is from before it.
	got := p.with([]policyEdit{a, bEdit})
	if s := sids(got); strings.Join(s, ",") != "Theirs,A,B" {
		t.Errorf("statements after both edits over a stale read: %v", s)
	}
	if p.shows([]policyEdit{a}) || !got.shows([]policyEdit{a, bEdit}) {
		t.Error("shows does not tell a stale read from a fresh one")
	}
	removed := got.with([]policyEdit{{sid: "A"}})
	if s := sids(removed); strings.Join(s, ",") != "Theirs,B" || !removed.shows([]policyEdit{a, {sid: "A"}}) {
		t.Errorf("after removing A: %v", s)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(removed.String()), &doc); err != nil || doc["Version"] != "2012-10-17" {
		t.Errorf("written policy %s: %v", removed.String(), err)
	}
	if empty := p.with([]policyEdit{{sid: "Theirs"}}); empty.String() != "" {
		t.Errorf("a policy without statements is written as %q, want \"\" (no policy)", empty.String())
	}
}

// A subscription SNS has for the topic and queue, which no statement
// names, is someone else's: a create refuses it rather than answer its ARN
// as its own.
func TestSNSSubscriptionCreateDoesNotTakeAnotherSubscription(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	makeTopics(t, b, "orders")
	makeQueues(t, b, "billing")
	td, _ := b.Driver(spec.SNSTopic)
	topic, err := td.Read(ctx, testRegion, "orders")
	if err != nil {
		t.Fatal(err)
	}
	qd, _ := b.Driver(spec.Queues)
	queue, err := qd.Read(providers.WithWant(ctx, providers.Want{Attributes: map[string]bool{"arn": true}}), testRegion, "billing")
	if err != nil {
		t.Fatal(err)
	}
	s := sns.NewFromConfig(b.Config(), func(o *sns.Options) { o.Region = testRegion })
	if _, err := s.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic.Attributes["arn"]), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queue.Attributes["arn"])}); err != nil {
		t.Fatal(err)
	}
	d, _ := b.Driver(spec.SNSSubscription)
	_, err = d.Create(ctx, providers.Target{Name: "mine", Region: testRegion, Owner: testFleet,
		Fields: map[string]any{"topic": "orders", "queue": "billing", "rawMessageDelivery": false}})
	if errorCode(err) != providers.AlreadyExists {
		t.Fatalf("Create = %v (code %s), want already exists", err, errorCode(err))
	}
	if _, err := d.Read(ctx, testRegion, "mine"); errorCode(err) != providers.NotFound {
		t.Errorf("Read = %v, want not found: the refused create wrote its statement", err)
	}
}

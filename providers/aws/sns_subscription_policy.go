package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/infra-iac/infra/providers"
)

// A subscription's statement in its queue's access policy lets the topic
// send to the queue, and its Sid is where the subscription's name and the
// ownership mark live (spec.MarkStatement): SNS gives a subscription
// neither. The Sid is "InfraSubscription", the name, and "Zf" and the
// fleet; a released one has no "Zf" part. IAM's policy grammar allows
// only ASCII letters and digits in a Sid, so '-', '_', '.' and 'Z' are
// written "Zh", "Zu", "Zd" and "Zz".
const sidPrefix = "InfraSubscription"

var sidEscapes = map[rune]string{'-': "Zh", '_': "Zu", '.': "Zd", 'Z': "Zz"}

func statementSid(name, owner string) string {
	esc := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if e, ok := sidEscapes[r]; ok {
				b.WriteString(e)
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	sid := sidPrefix + esc(name)
	if owner != "" {
		sid += "Zf" + esc(owner)
	}
	return sid
}

// parseSid reads a Sid statementSid wrote; ok is false for any other.
func parseSid(sid string) (name, owner string, ok bool) {
	rest, ok := strings.CutPrefix(sid, sidPrefix)
	if !ok {
		return "", "", false
	}
	var parts [2]strings.Builder
	part, fleet := 0, false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == 'Z' && i+1 < len(rest):
			i++
			switch rest[i] {
			case 'h':
				parts[part].WriteByte('-')
			case 'u':
				parts[part].WriteByte('_')
			case 'd':
				parts[part].WriteByte('.')
			case 'z':
				parts[part].WriteByte('Z')
			case 'f':
				if fleet {
					return "", "", false
				}
				part, fleet = 1, true
			default:
				return "", "", false
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' && c != 'Z' || c >= '0' && c <= '9':
			parts[part].WriteByte(c)
		default:
			return "", "", false
		}
	}
	name, owner = parts[0].String(), parts[1].String()
	if name == "" || fleet && owner == "" {
		return "", "", false
	}
	return name, owner, true
}

// queuePolicy is a queue's access policy: the statements, each kept as SQS
// gave it, and the document's other keys.
type queuePolicy struct {
	rest       map[string]json.RawMessage
	statements []json.RawMessage
}

func parseQueuePolicy(s string) (queuePolicy, error) {
	p := queuePolicy{rest: map[string]json.RawMessage{}}
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(s), &p.rest); err != nil {
		return p, fmt.Errorf("the queue's policy is not JSON: %w", err)
	}
	st := p.rest["Statement"]
	delete(p.rest, "Statement")
	if len(st) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(st, &p.statements); err != nil {
		// The grammar allows one statement without the list.
		p.statements = []json.RawMessage{st}
	}
	return p, nil
}

// String is the policy SetQueueAttributes takes: "" removes it.
func (p queuePolicy) String() string {
	if len(p.statements) == 0 {
		return ""
	}
	doc := map[string]json.RawMessage{"Version": json.RawMessage(`"2012-10-17"`)}
	for k, v := range p.rest {
		doc[k] = v
	}
	st, _ := json.Marshal(p.statements)
	doc["Statement"] = st
	b, _ := json.Marshal(doc) // raw messages and strings only: it cannot fail
	return string(b)
}

// subStatement is what a statement says: its Sid, the topic it lets send
// (aws:SourceArn) and the queue it lets it send to.
type subStatement struct {
	Sid       string
	Resource  any
	Condition map[string]map[string]any
}

func (s subStatement) topicARN() string {
	return firstString(s.Condition["ArnEquals"]["aws:SourceArn"])
}
func (s subStatement) queueARN() string { return firstString(s.Resource) }

func firstString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		if len(x) == 1 {
			s, _ := x[0].(string)
			return s
		}
	}
	return ""
}

func parseStatement(raw json.RawMessage) subStatement {
	var s subStatement
	_ = json.Unmarshal(raw, &s) // a statement of another shape has no Sid of ours
	return s
}

// newStatement lets topicARN, and only it, send to queueARN.
func newStatement(sid, queueARN, topicARN string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"Sid": sid, "Effect": "Allow", "Principal": map[string]string{"Service": "sns.amazonaws.com"},
		"Action": "sqs:SendMessage", "Resource": queueARN, "Condition": map[string]any{"ArnEquals": map[string]string{"aws:SourceArn": topicARN}}})
	return b
}

// policyEdit is one change this driver made to a queue's policy: the
// statement with sid set to statement, or removed when it is nil.
type policyEdit struct {
	sid       string
	statement json.RawMessage
	at        time.Time
}

// with is p after the edits, in order.
func (p queuePolicy) with(edits []policyEdit) queuePolicy {
	out := queuePolicy{rest: p.rest, statements: append([]json.RawMessage(nil), p.statements...)}
	for _, e := range edits {
		kept := out.statements[:0]
		for _, s := range out.statements {
			if parseStatement(s).Sid != e.sid {
				kept = append(kept, s)
			}
		}
		out.statements = kept
		if e.statement != nil {
			out.statements = append(out.statements, e.statement)
		}
	}
	return out
}

// shows says whether p already holds every edit's outcome: the last
// statement set under each sid present with its topic and queue, each
// removed one absent. SQS may rewrite a statement's form, so statements
// are compared by what they grant.
func (p queuePolicy) shows(edits []policyEdit) bool {
	last := map[string]json.RawMessage{}
	for _, e := range edits {
		last[e.sid] = e.statement
	}
	have := map[string]subStatement{}
	for _, s := range p.statements {
		st := parseStatement(s)
		if _, ours := last[st.Sid]; ours {
			if _, twice := have[st.Sid]; twice {
				return false
			}
			have[st.Sid] = st
		}
	}
	for sid, want := range last {
		got, present := have[sid]
		if want == nil {
			if present {
				return false
			}
			continue
		}
		w := parseStatement(want)
		if !present || got.topicARN() != w.topicARN() || got.queueARN() != w.queueARN() {
			return false
		}
	}
	return true
}

// queuePolicies serializes this driver's edits of each queue's policy and
// remembers them, by queue ARN.
//
// SetQueueAttributes replaces the whole policy, and SQS has no conditional
// write, so two subscriptions to one queue made at once would each read
// the policy, add their statement and write: the second write loses the
// first statement. Edits of one queue therefore take the queue's lock for
// the read, the write and the read that checks it. And since SQS takes up
// to 60 seconds to show a change everywhere (SetQueueAttributes' doc
// comment), a read may not show an edit made a moment before, under the
// lock or not: every edit of the last two minutes is applied again to what
// a read shows, and written again until a read shows them all.
type queuePolicies struct {
	mu     sync.Mutex
	queues map[string]*queueEdits
}

type queueEdits struct {
	mu     sync.Mutex
	recent []policyEdit
}

// editMemory is how long an edit is applied again over what reads show:
// SQS's 60 seconds, twice.
const editMemory = 2 * time.Minute

// policyTries bounds the writes of one edit: with the settle time doubling
// to 8 s, a minute and more of reads that do not show it yet.
const policyTries = 12

func (q *queuePolicies) of(queueARN string) *queueEdits {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queues == nil {
		q.queues = map[string]*queueEdits{}
	}
	e := q.queues[queueARN]
	if e == nil {
		e = &queueEdits{}
		q.queues[queueARN] = e
	}
	return e
}

// queueRef is a queue as a subscription needs it.
type queueRef struct {
	name, url, arn string
	policy         queuePolicy
}

// readQueue finds a queue by name in the client's region, with its ARN
// and policy.
func readQueue(ctx context.Context, c *sqs.Client, name string) (queueRef, error) {
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return queueRef{}, fmt.Errorf("queue %s: GetQueueUrl: %w", name, err)
	}
	q := queueRef{name: name, url: aws.ToString(u.QueueUrl)}
	if err := q.read(ctx, c); err != nil {
		return queueRef{}, err
	}
	return q, nil
}

func (q *queueRef) read(ctx context.Context, c *sqs.Client) error {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn, sqstypes.QueueAttributeNamePolicy}})
	if err != nil {
		return fmt.Errorf("queue %s: GetQueueAttributes: %w", q.name, err)
	}
	q.arn = out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	if q.policy, err = parseQueuePolicy(out.Attributes[string(sqstypes.QueueAttributeNamePolicy)]); err != nil {
		return fmt.Errorf("queue %s: %w", q.name, err)
	}
	return nil
}

// edit makes the edits to q's policy, keeping every other statement, and
// returns once a read shows them (see queuePolicies).
func (q *queuePolicies) edit(ctx context.Context, c *sqs.Client, queue queueRef, settle time.Duration, edits ...policyEdit) error {
	e := q.of(queue.arn)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	kept := e.recent[:0]
	for _, r := range e.recent {
		if now.Sub(r.at) < editMemory {
			kept = append(kept, r)
		}
	}
	for _, x := range edits {
		x.at = now
		kept = append(kept, x)
	}
	e.recent = kept
	for try := 0; ; try++ {
		if err := queue.read(ctx, c); err != nil {
			return err
		}
		if queue.policy.shows(e.recent) {
			return nil
		}
		if try == policyTries {
			return providers.Errorf(providers.Conflict, "queue %s: its policy does not show this change after %d writes", queue.name, try)
		}
		want := queue.policy.with(e.recent)
		if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(queue.url),
			Attributes: map[string]string{string(sqstypes.QueueAttributeNamePolicy): want.String()}}); err != nil {
			return fmt.Errorf("queue %s: SetQueueAttributes Policy: %w", queue.name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settle):
		}
		settle = min(2*settle, 8*time.Second)
	}
}

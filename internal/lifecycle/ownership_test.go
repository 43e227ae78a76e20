package lifecycle

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// Ownership against the emulator: a lost ledger is rebuilt from the tags;
// a tagged resource the ledger lost is deleted with the reason shown;
// another fleet's, an untagged and an excluded resource are left alone;
// forget removes only this fleet's tag.

type ownFixture struct {
	t     *testing.T
	ctx   context.Context
	b     *awsprovider.Backend
	e     *engine.Engine
	store state.Store
	sqs   *sqs.Client
}

func newOwnFixture(t *testing.T) *ownFixture {
	moto.Fresh(t)
	ctx := context.Background()
	b, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	cfg := b.Config().Copy()
	cfg.Region = "eu-west-3"
	return &ownFixture{t: t, ctx: ctx, b: b, store: store, sqs: sqs.NewFromConfig(cfg),
		e: engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})}
}

func ownDoc(extra string, resources ...string) string {
	return `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}` +
		extra + `, "resources": [` + strings.Join(resources, ",") + `]}`
}

func (f *ownFixture) plan(doc string) *engine.Plan {
	f.t.Helper()
	ledger, err := f.store.LoadLedger(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	p, err := f.e.Plan(f.ctx, Compile(f.t, doc), nil, ledger, engine.PlanOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *ownFixture) apply(doc string) *engine.Plan {
	f.t.Helper()
	p := f.plan(doc)
	if _, err := f.e.Apply(f.ctx, p, engine.ApplyOptions{Store: f.store}); err != nil {
		f.t.Fatalf("apply: %v\n%s", err, Render(p))
	}
	return p
}

func (f *ownFixture) queueTags(name string) map[string]string {
	f.t.Helper()
	u, err := f.sqs.GetQueueUrl(f.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		f.t.Fatalf("queue %s: %v", name, err)
	}
	out, err := f.sqs.ListQueueTags(f.ctx, &sqs.ListQueueTagsInput{QueueUrl: u.QueueUrl})
	if err != nil {
		f.t.Fatal(err)
	}
	return out.Tags
}

const (
	ownQueue  = `{"address": "aws/queues/own-jobs", "spec": {"tags": {"team": "web"}}}`
	ownBucket = `{"address": "aws/object-store/own-assets", "spec": {"versioning": true}}`
	ownSecret = `{"address": "aws/secrets/own-token", "spec": {"value": {"fromEnv": "OWN_TOKEN"}}}`
)

func TestLostLedgerIsRebuiltByDiscover(t *testing.T) {
	f := newOwnFixture(t)
	t.Setenv("OWN_TOKEN", "token")
	doc := ownDoc("", ownQueue, ownBucket, ownSecret)
	f.apply(doc)
	// The ledger is lost.
	fresh, _ := state.OpenFile(t.TempDir(), "shop")
	f.store = fresh
	dx, err := f.e.Discover(f.ctx, Compile(t, doc), state.NewLedger())
	if err != nil {
		t.Fatal(err)
	}
	if len(dx.Ledger.Rows) != 3 || len(dx.Added) != 3 {
		t.Fatalf("rebuilt %v", dx.Ledger.Rows)
	}
	if _, err := f.store.LoadLedger(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.store.SaveLedger(f.ctx, dx.Ledger); err != nil {
		t.Fatal(err)
	}
	if p := f.plan(doc); p.HasChanges() {
		t.Fatalf("plan after discover --write:\n%s", Render(p))
	}
}

func TestTaggedButUnrecordedIsDeletedWithTheReason(t *testing.T) {
	f := newOwnFixture(t)
	t.Setenv("OWN_TOKEN", "token")
	f.apply(ownDoc("", ownQueue, ownBucket, ownSecret))
	// The ledger is lost, and the queue's line is deleted too: only its tag
	// remembers it.
	fresh, _ := state.OpenFile(t.TempDir(), "shop")
	f.store = fresh
	doc := ownDoc("", ownBucket, ownSecret)
	p := f.plan(doc)
	var del *engine.Action
	for i := range p.Actions {
		if p.Actions[i].Action == engine.Delete {
			del = &p.Actions[i]
		}
	}
	if del == nil || del.Address.String() != "aws/queues/own-jobs" || del.Reason != "tagged for this fleet, not in the ledger" {
		t.Fatalf("plan:\n%s", Render(p))
	}
	if !strings.Contains(Render(p), "(tagged for this fleet, not in the ledger)") {
		t.Fatalf("the reason is not shown:\n%s", Render(p))
	}
	f.apply(doc)
	if _, err := f.sqs.GetQueueUrl(f.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("own-jobs")}); err == nil {
		t.Fatal("the tagged orphan survived")
	}
}

func TestOthersUntaggedAndExcludedAreLeftAlone(t *testing.T) {
	f := newOwnFixture(t)
	for name, tags := range map[string]map[string]string{
		"own-billing":  {spec.OwnershipTagKey: "billing"},
		"own-handmade": nil,
		"own-excluded": {spec.OwnershipTagKey: "shop"},
	} {
		if _, err := f.sqs.CreateQueue(f.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	doc := ownDoc(`, "exclusions": [{"address": "aws/queues/own-excluded", "why": "handed to the data team"}]`,
		`{"address": "aws/queues/own-billing", "spec": {"visibilityTimeoutSec": 99}}`,
		`{"address": "aws/queues/own-handmade", "spec": {"visibilityTimeoutSec": 99}}`,
		`{"address": "aws/queues/own-jobs", "spec": {}}`)
	p := f.apply(doc)
	if p.Summary != (engine.Summary{Create: 1}) {
		t.Fatalf("plan:\n%s", Render(p))
	}
	rows := map[string]string{}
	for _, d := range p.Diagnostics {
		rows[d.Subject] = d.Message
		if d.Subject == "aws/queues/own-billing" && (d.ID != spec.RowForeignOwner || d.Evidence != "billing") {
			t.Errorf("a foreign resource's row names its rule and its owner: %#v", d)
		}
	}
	if !strings.Contains(rows["aws/queues/own-billing"], "tagged managed-by-infra=billing") ||
		!strings.Contains(rows["aws/queues/own-handmade"], "carries no managed-by-infra tag") {
		t.Fatalf("diagnostics: %v", p.Diagnostics)
	}
	// The excluded one carries our tag and is in no ledger: the tag scan
	// finds it, and the exclusion wins (the summary above: nothing else).
	for _, name := range []string{"own-billing", "own-handmade", "own-excluded"} {
		if _, err := f.sqs.GetQueueUrl(f.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	attrs, _ := f.sqs.GetQueueUrl(f.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("own-billing")})
	got, err := f.sqs.GetQueueAttributes(f.ctx, &sqs.GetQueueAttributesInput{QueueUrl: attrs.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameVisibilityTimeout}})
	if err != nil || got.Attributes["VisibilityTimeout"] != "30" {
		t.Errorf("another fleet's queue was touched: %v %v", got, err)
	}
	// Even the next plan, with the ledger holding only own-jobs, leaves them.
	if p := f.plan(doc); p.HasChanges() {
		t.Fatalf("second plan:\n%s", Render(p))
	}
}

func TestForgetRemovesOnlyOurTag(t *testing.T) {
	f := newOwnFixture(t)
	f.apply(ownDoc("", ownQueue))
	if tags := f.queueTags("own-jobs"); tags[spec.OwnershipTagKey] != "shop" || tags["team"] != "web" {
		t.Fatalf("tags after create: %v", tags)
	}
	doc := ownDoc(`, "forget": ["aws/queues/own-jobs"]`)
	p := f.apply(doc)
	if p.Summary != (engine.Summary{Forget: 1}) {
		t.Fatalf("plan:\n%s", Render(p))
	}
	tags := f.queueTags("own-jobs")
	if _, ours := tags[spec.OwnershipTagKey]; ours || tags["team"] != "web" {
		t.Fatalf("tags after forget: %v", tags)
	}
	ledger, _ := f.store.LoadLedger(f.ctx)
	if len(ledger.Rows) != 0 {
		t.Fatalf("ledger after forget: %v", ledger.Rows)
	}
	if p := f.plan(doc); p.HasChanges() {
		t.Fatalf("plan after forget:\n%s", Render(p))
	}
}

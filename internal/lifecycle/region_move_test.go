package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// A tagged queue that moves region is replaced: deleted in the region its
// ledger row records, made in the new one. The tag scan finds the old
// queue with its tags; confirming them once read it at region "", which
// the SDK retried for the whole retry budget. The budget here is short,
// so that a regression fails in seconds instead of hanging.
func TestTaggedQueueMovesRegion(t *testing.T) {
	moto.Fresh(t)
	ctx := context.Background()
	b, err := awsprovider.New(ctx, awsprovider.Options{RetryBudget: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	f := &ownFixture{t: t, ctx: ctx, b: b, store: store,
		e: engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})}
	f.apply(ownDoc("", `{"address": "aws/queues/move-jobs", "spec": {"tags": {"team": "web"}}}`))

	moved := ownDoc("", `{"address": "aws/queues/move-jobs", "region": "eu-west-1", "spec": {"tags": {"team": "web"}}}`)
	start := time.Now()
	p := f.apply(moved)
	if got := strings.Join(actionNames(p), ", "); got != "replace aws/queues/move-jobs" {
		t.Fatalf("plan: %s\n%s", got, Render(p))
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the move took %s to plan and apply", d)
	}
	for region, want := range map[string]bool{"eu-west-3": false, "eu-west-1": true} {
		_, err := sqs.NewFromConfig(b.Config(), func(o *sqs.Options) { o.Region = region }).
			GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("move-jobs")})
		if got := err == nil; got != want {
			t.Errorf("queue in %s: %v, want %v (%v)", region, got, want, err)
		}
	}
	f.planIsEmpty(moved)
}

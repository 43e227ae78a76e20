package gcp

import (
	"context"
	"slices"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// TestAQueueHalfMadeIsCompleted: a crash between the topic and its
// subscription leaves a marked topic alone. Read says so (ack deadline 0,
// Subscription=missing); a repeated create completes it; a topic of that
// name another fleet marked is refused, not completed.
func TestAQueueHalfMadeIsCompleted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.backend.pubsubClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, owner := range map[string]string{"half": fleet, "theirs": "other"} {
		if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topicName(testProject, name),
			Labels:               map[string]string{spec.OwnershipTagKey: owner},
			MessageStoragePolicy: &pubsubpb.MessageStoragePolicy{AllowedPersistenceRegions: []string{testRegion}}}); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := e.backend.Driver(spec.Queues)
	r, err := d.Read(ctx, testRegion, "half")
	if err != nil || r.Owner != fleet || r.Fields["visibilityTimeoutSec"] != 0.0 || !slices.Contains(r.Unmodelled, "Subscription=missing") {
		t.Fatalf("read of the half-made queue: %+v, %v", r, err)
	}
	tg := providers.Target{Name: "half", Region: testRegion, Owner: fleet, Fields: map[string]any{"visibilityTimeoutSec": 45.0}}
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatalf("a repeated create does not complete the queue: %v", err)
	}
	if r, err = d.Read(ctx, testRegion, "half"); err != nil || r.Fields["visibilityTimeoutSec"] != 45.0 || r.Attributes["url"] == "" {
		t.Fatalf("after the create: %+v, %v", r, err)
	}
	tg.Name = "theirs"
	if _, err := d.Create(ctx, tg); e.backend.ErrorCode(err) != providers.AlreadyExists {
		t.Fatalf("another fleet's topic: %v", err)
	}
	if _, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: subscriptionName(testProject, "theirs")}); errorCode(err) != providers.NotFound {
		t.Fatalf("a subscription was made on another fleet's topic: %v", err)
	}
}

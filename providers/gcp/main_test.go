package gcp

import (
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/infra-iac/infra/internal/gcpfake"
	"github.com/infra-iac/infra/internal/gcptest"
	"github.com/infra-iac/infra/internal/gcsfake"
)

const (
	testProject = "infra-conformance"
	testRegion  = "europe-west9"
	otherRegion = "europe-central2"
)

// env is one test's GCP: Cloud Storage on fake-gcs-server, Pub/Sub on
// pstest (Google's own fake), and the REST APIs without an emulator on
// gcpfake, whose every exchange is checked against the discovery
// documents. The backend reaches each as it would reach Google: by
// endpoint, with a service-account key for the REST APIs.
type env struct {
	backend *Backend
	rest    *gcpfake.Server
	gcs     *gcsfake.Server
	pubsub  *pstest.Server
	fakes   *gcptest.Fakes
}

func newEnv(t testing.TB) *env {
	t.Helper()
	f := gcptest.Start(t, testProject)
	b, err := New(Options{Project: testProject, APIURL: f.APIURL,
		RESTOptions: f.RESTOptions, StorageOptions: f.StorageOptions, PubSubOptions: f.PubSubOptions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &env{backend: b, rest: f.REST, gcs: f.GCS, pubsub: f.PubSub, fakes: f}
}

// reset wipes every emulator. pstest has no reset of its own, so the
// topics and subscriptions are deleted through the admin API.
func (e *env) reset(t *testing.T) {
	e.gcs.Reset()
	e.rest.Reset()
	c, err := e.backend.pubsubClient(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	project := "projects/" + testProject
	var subs, topics []string
	if err := drain(c.SubscriptionAdminClient.ListSubscriptions(t.Context(), &pubsubpb.ListSubscriptionsRequest{Project: project}).Next,
		func(s *pubsubpb.Subscription) { subs = append(subs, s.Name) }); err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		if err := c.SubscriptionAdminClient.DeleteSubscription(t.Context(), &pubsubpb.DeleteSubscriptionRequest{Subscription: s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := drain(c.TopicAdminClient.ListTopics(t.Context(), &pubsubpb.ListTopicsRequest{Project: project}).Next,
		func(tp *pubsubpb.Topic) { topics = append(topics, tp.Name) }); err != nil {
		t.Fatal(err)
	}
	for _, tp := range topics {
		if err := c.TopicAdminClient.DeleteTopic(t.Context(), &pubsubpb.DeleteTopicRequest{Topic: tp}); err != nil {
			t.Fatal(err)
		}
	}
}

package gcp

import (
	"strconv"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/infra-iac/infra/internal/gcpfake"
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
}

func newEnv(t *testing.T) *env {
	t.Helper()
	rest := gcpfake.New(t, gcpfake.Options{Projects: []string{testProject}})
	number, err := strconv.ParseInt(rest.ProjectNumber(testProject), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	gcs := gcsfake.New(t, map[string]int64{testProject: number})
	ps := pstest.NewServer()
	t.Cleanup(func() { _ = ps.Close() })
	b, err := New(Options{
		Project:        testProject,
		APIURL:         rest.URL(),
		RESTOptions:    []option.ClientOption{option.WithCredentialsFile(rest.ServiceAccountKey(t, testProject, "infra@"+testProject+".iam.gserviceaccount.com"))},
		StorageOptions: []option.ClientOption{option.WithEndpoint(gcs.Endpoint()), option.WithoutAuthentication()},
		PubSubOptions: []option.ClientOption{option.WithEndpoint(ps.Addr), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &env{backend: b, rest: rest, gcs: gcs, pubsub: ps}
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

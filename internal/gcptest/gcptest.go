// Package gcptest starts GCP for a test: Cloud Storage on fake-gcs-server
// (internal/gcsfake), Pub/Sub on pstest (Google's own fake), and the REST
// APIs without an emulator on internal/gcpfake, whose every exchange is
// checked against the discovery documents. It gives the client options
// that reach them, as a GCP backend's options take them; it does not
// build the backend, so that the backend's own tests can use it.
package gcptest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/infra-iac/infra/internal/gcpfake"
	"github.com/infra-iac/infra/internal/gcsfake"
)

// Fakes are one test's GCP.
type Fakes struct {
	Project string
	REST    *gcpfake.Server
	GCS     *gcsfake.Server
	PubSub  *pstest.Server
	// APIURL, RESTOptions, StorageOptions and PubSubOptions are what a GCP
	// backend's options take to reach the fakes: a service-account key
	// for the REST APIs, the emulators' endpoints without credentials.
	APIURL                                     string
	RESTOptions, StorageOptions, PubSubOptions []option.ClientOption
	// PubSubCalls counts the calls made through PubSubOptions, which pstest
	// does not record.
	PubSubCalls atomic.Int64
}

// Start starts the fakes for project, stopped when the test ends.
func Start(t testing.TB, project string) *Fakes {
	t.Helper()
	rest := gcpfake.New(t, gcpfake.Options{Projects: []string{project}})
	number, err := strconv.ParseInt(rest.ProjectNumber(project), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	gcs := gcsfake.New(t, map[string]int64{project: number})
	ps := pstest.NewServer()
	t.Cleanup(func() { _ = ps.Close() })
	f := &Fakes{Project: project, REST: rest, GCS: gcs, PubSub: ps, APIURL: rest.URL(),
		RESTOptions:    []option.ClientOption{option.WithCredentialsFile(rest.ServiceAccountKey(t, project, "infra@"+project+".iam.gserviceaccount.com"))},
		StorageOptions: []option.ClientOption{option.WithEndpoint(gcs.Endpoint()), option.WithoutAuthentication()},
	}
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		f.PubSubCalls.Add(1)
		return invoke(ctx, method, req, reply, cc, opts...)
	}
	plain := []option.ClientOption{option.WithEndpoint(ps.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
	f.PubSubOptions = append(slices.Clone(plain), option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(count)))
	rest.AddAssetSource(gcs.Assets)
	// The search's own reads of pstest are the fake's, not the caller's:
	// not counted.
	rest.AddAssetSource(f.topicAssets(t, plain))
	return f
}

// topicAssets reports pstest's topics to the asset search, as Cloud Asset
// Inventory does: global, with their labels.
func (f *Fakes) topicAssets(t testing.TB, opts []option.ClientOption) gcpfake.AssetSource {
	c, err := pubsub.NewClient(context.Background(), f.Project, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return func(project string) []gcpfake.Asset {
		var out []gcpfake.Asset
		it := c.TopicAdminClient.ListTopics(context.Background(), &pubsubpb.ListTopicsRequest{Project: "projects/" + project})
		for {
			tp, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return out
			}
			if err != nil {
				// The search cannot carry it: fail the test, not the search.
				t.Errorf("gcptest: list pstest's topics for the asset search: %v", err)
				return out
			}
			out = append(out, gcpfake.Asset{Name: "//pubsub.googleapis.com/" + tp.Name, Type: "pubsub.googleapis.com/Topic",
				Location: "global", Labels: tp.Labels})
		}
	}
}

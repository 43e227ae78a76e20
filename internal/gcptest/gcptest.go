// Package gcptest starts GCP for a test: Cloud Storage on fake-gcs-server
// (internal/gcsfake), Pub/Sub on pstest (Google's own fake), and the REST
// APIs without an emulator on internal/gcpfake, whose every exchange is
// checked against the discovery documents. It gives the client options
// that reach them, as a GCP backend's options take them; it does not
// build the backend, so that the backend's own tests can use it.
package gcptest

import (
	"strconv"
	"testing"

	"cloud.google.com/go/pubsub/v2/pstest"
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
	return &Fakes{Project: project, REST: rest, GCS: gcs, PubSub: ps, APIURL: rest.URL(),
		RESTOptions:    []option.ClientOption{option.WithCredentialsFile(rest.ServiceAccountKey(t, project, "infra@"+project+".iam.gserviceaccount.com"))},
		StorageOptions: []option.ClientOption{option.WithEndpoint(gcs.Endpoint()), option.WithoutAuthentication()},
		PubSubOptions: []option.ClientOption{option.WithEndpoint(ps.Addr), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))},
	}
}

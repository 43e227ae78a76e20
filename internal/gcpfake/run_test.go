package gcpfake

import (
	"context"
	"net/http"
	"strings"
	"testing"

	run "cloud.google.com/go/run/apiv2"
	"cloud.google.com/go/run/apiv2/runpb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
)

// runClient is the real GAPIC REST client, authenticated with a key the
// fake issued.
func runClient(t *testing.T, srv *Server, project string) *run.ServicesClient {
	t.Helper()
	key := srv.ServiceAccountKey(t, project, "deployer@"+project+".iam.gserviceaccount.com")
	c, err := run.NewServicesRESTClient(context.Background(),
		option.WithEndpoint(srv.URL()), option.WithAuthCredentialsFile(option.ServiceAccount, key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const runParent = "projects/p/locations/europe-west9"

func helloService() *runpb.Service {
	return &runpb.Service{Labels: map[string]string{"team": "a"}, Ingress: runpb.IngressTraffic_INGRESS_TRAFFIC_ALL,
		Template: &runpb.RevisionTemplate{Timeout: durationpb.New(30e9), Containers: []*runpb.Container{{
			Image:     "europe-west9-docker.pkg.dev/p/r/hello:1",
			Resources: &runpb.ResourceRequirements{Limits: map[string]string{"memory": "256Mi"}},
			Env:       []*runpb.EnvVar{{Name: "MODE", Values: &runpb.EnvVar_Value{Value: "test"}}},
		}}}}
}

func createHello(t *testing.T, c *run.ServicesClient, id string) *runpb.Service {
	t.Helper()
	op, err := c.CreateService(context.Background(), &runpb.CreateServiceRequest{Parent: runParent, ServiceId: id, Service: helloService()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := op.Wait(context.Background())
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	return svc
}

// TestCloudRunLifecycle: create (its operation polled once and its Any
// response decoded by the client), get, list by pages, update with the
// etag, delete.
func TestCloudRunLifecycle(t *testing.T) {
	srv := New(t, Options{Projects: []string{"p"}})
	c := runClient(t, srv, "p")
	ctx := context.Background()
	svc := createHello(t, c, "hello")
	ct := svc.GetTemplate().GetContainers()[0]
	if svc.Name != runParent+"/services/hello" || svc.Reconciling || svc.TerminalCondition.GetState() != runpb.Condition_CONDITION_SUCCEEDED ||
		!strings.HasPrefix(svc.Uri, "https://hello-") || !strings.HasSuffix(svc.Uri, "-ew.a.run.app") ||
		ct.GetResources().GetLimits()["memory"] != "256Mi" || ct.GetResources().GetLimits()["cpu"] != "1000m" ||
		svc.GetTemplate().GetTimeout().GetSeconds() != 30 || svc.Labels["team"] != "a" || svc.Generation != 1 {
		t.Fatalf("created %v", svc)
	}
	polled := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && strings.Contains(r.Path, "/operations/") {
			polled++
		}
	}
	if polled != 1 {
		t.Fatalf("the client polled the operation %d times, want 1", polled)
	}
	srv.SetOperationPolls("run", 0)
	createHello(t, c, "other")
	var names []string
	it := c.ListServices(ctx, &runpb.ListServicesRequest{Parent: runParent, PageSize: 1})
	for {
		s, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, s.Name)
	}
	if len(names) != 2 || !strings.HasSuffix(names[0], "/hello") || !strings.HasSuffix(names[1], "/other") {
		t.Fatalf("listed %v", names)
	}
	updateAndDelete(t, c)
}

func updateAndDelete(t *testing.T, c *run.ServicesClient) {
	t.Helper()
	ctx := context.Background()
	got, err := c.GetService(ctx, &runpb.GetServiceRequest{Name: runParent + "/services/hello"})
	if err != nil {
		t.Fatal(err)
	}
	stale := got.Etag
	got.Template.Containers[0].Image = "europe-west9-docker.pkg.dev/p/r/hello:2"
	op, err := c.UpdateService(ctx, &runpb.UpdateServiceRequest{Service: got})
	if err != nil {
		t.Fatal(err)
	}
	upd, err := op.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if upd.Generation != 2 || upd.Template.Containers[0].Image != "europe-west9-docker.pkg.dev/p/r/hello:2" ||
		!strings.Contains(upd.LatestReadyRevision, "/revisions/hello-00002-") || upd.Etag == stale || upd.Uri != got.Uri {
		t.Fatalf("updated %v", upd)
	}
	got.Etag = stale
	_, err = c.UpdateService(ctx, &runpb.UpdateServiceRequest{Service: got})
	wantAPIError(t, err, http.StatusConflict, "ABORTED", codes.Aborted)
	dop, err := c.DeleteService(ctx, &runpb.DeleteServiceRequest{Name: upd.Name})
	if err != nil {
		t.Fatal(err)
	}
	if gone, err := dop.Wait(ctx); err != nil || gone.DeleteTime == nil {
		t.Fatalf("delete answered %v, %v", gone, err)
	}
	_, err = c.GetService(ctx, &runpb.GetServiceRequest{Name: upd.Name})
	wantAPIError(t, err, http.StatusNotFound, "NOT_FOUND", codes.NotFound)
}

// TestCloudRunRules: what Cloud Run refuses, and a failing operation.
func TestCloudRunRules(t *testing.T) {
	srv := New(t, Options{})
	srv.SetOperationPolls("run", 0)
	const svcBody = `{"template":{"containers":[{"image":"i"}]}}`
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"no serviceId", "POST", "/v2/" + runParent + "/services", svcBody, 400, "service_id"},
		{"no image", "POST", "/v2/" + runParent + "/services?serviceId=s", `{"template":{"containers":[{}]}}`, 400, "image is required"},
		{"reserved env", "POST", "/v2/" + runParent + "/services?serviceId=s",
			`{"template":{"containers":[{"image":"i","env":[{"name":"PORT","value":"1"}]}]}}`, 400, "reserved env names"},
		{"memory", "POST", "/v2/" + runParent + "/services?serviceId=s",
			`{"template":{"containers":[{"image":"i","resources":{"limits":{"memory":"64Mi"}}}]}}`, 400, "128Mi to 32Gi"},
		{"create", "POST", "/v2/" + runParent + "/services?serviceId=s", svcBody, 200, `"done": true`},
		{"duplicate", "POST", "/v2/" + runParent + "/services?serviceId=s", svcBody, 409, "already exists"},
		{"update mask", "PATCH", "/v2/" + runParent + "/services/s?updateMask=labels", svcBody, 501, "updateMask"},
		{"missing", "PATCH", "/v2/" + runParent + "/services/t", svcBody, 404, "was not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, srv, tc.method, tc.path, tc.body)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s; want %d with %q", code, body, tc.code, tc.want)
			}
		})
	}
	c := runClient(t, srv, "p")
	srv.FailNextOperation("run.projects.locations.services.create", "the container did not listen on PORT=8080")
	op, err := c.CreateService(context.Background(), &runpb.CreateServiceRequest{Parent: runParent, ServiceId: "bad", Service: helloService()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "did not listen") {
		t.Fatalf("wait: %v", err)
	}
	got, err := c.GetService(context.Background(), &runpb.GetServiceRequest{Name: runParent + "/services/bad"})
	if err != nil || got.TerminalCondition.GetState() != runpb.Condition_CONDITION_FAILED || got.Reconciling {
		t.Fatalf("the failed service: %v, %v", got, err)
	}
}

// TestCloudRunMismatch: a body field the API lacks is caught, and so is
// an answer the client could not get.
func TestCloudRunMismatch(t *testing.T) {
	srv := New(t, Options{mutate: func(id string, m map[string]any) {
		if id == "run.projects.locations.services.get" {
			m["reconciling"] = "no"
		}
	}})
	srv.SetOperationPolls("run", 0)
	code, body := do(t, srv, "POST", "/v2/"+runParent+"/services?serviceId=s", `{"template":{"container":[]}}`)
	wantViolation(t, srv, code, body, "run.projects.locations.services.create", `unknown property "container"`)
	c := runClient(t, srv, "p")
	createHello(t, c, "hello")
	_, err := c.GetService(context.Background(), &runpb.GetServiceRequest{Name: runParent + "/services/hello"})
	wantAPIError(t, err, http.StatusInternalServerError, "INTERNAL", codes.Internal)
	if v := srv.TakeViolations(); len(v) != 1 || !strings.Contains(v[0], "GoogleCloudRunV2Service.reconciling: want boolean") {
		t.Fatalf("violations %q", v)
	}
}

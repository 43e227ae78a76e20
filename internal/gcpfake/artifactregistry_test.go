package gcpfake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	artifactregistry "cloud.google.com/go/artifactregistry/apiv1"
	"cloud.google.com/go/artifactregistry/apiv1/artifactregistrypb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// arClient is the real GAPIC REST client, authenticated with a key the
// fake issued.
func arClient(t *testing.T, srv *Server, project string) *artifactregistry.Client {
	t.Helper()
	key := srv.ServiceAccountKey(t, project, "deployer@"+project+".iam.gserviceaccount.com")
	c, err := artifactregistry.NewRESTClient(context.Background(),
		option.WithEndpoint(srv.URL()), option.WithAuthCredentialsFile(option.ServiceAccount, key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func dockerRepo(immutable bool, labels map[string]string) *artifactregistrypb.Repository {
	return &artifactregistrypb.Repository{Format: artifactregistrypb.Repository_DOCKER, Labels: labels,
		FormatConfig: &artifactregistrypb.Repository_DockerConfig{DockerConfig: &artifactregistrypb.Repository_DockerRepositoryConfig{ImmutableTags: immutable}}}
}

func createRepo(t *testing.T, c *artifactregistry.Client, parent, id string, r *artifactregistrypb.Repository) *artifactregistrypb.Repository {
	t.Helper()
	op, err := c.CreateRepository(context.Background(), &artifactregistrypb.CreateRepositoryRequest{Parent: parent, RepositoryId: id, Repository: r})
	if err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	got, err := op.Wait(context.Background())
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	return got
}

// TestArtifactRegistryLifecycle: create (an operation done at once, whose
// Any the client decodes), get, list in pages, patch by mask, delete.
func TestArtifactRegistryLifecycle(t *testing.T) {
	srv := New(t, Options{Projects: []string{"proj-a"}})
	c := arClient(t, srv, "proj-a")
	ctx := context.Background()
	parent := "projects/proj-a/locations/europe-west9"
	got := createRepo(t, c, parent, "web", dockerRepo(true, map[string]string{"team": "a"}))
	if got.Name != parent+"/repositories/web" || got.Format != artifactregistrypb.Repository_DOCKER || !got.GetDockerConfig().GetImmutableTags() ||
		got.Labels["team"] != "a" || got.Mode != artifactregistrypb.Repository_STANDARD_REPOSITORY ||
		got.RegistryUri != "europe-west9-docker.pkg.dev/proj-a/web" || got.CreateTime == nil {
		t.Fatalf("created %v", got)
	}
	for _, id := range []string{"b-repo", "a-repo", "c-repo"} {
		createRepo(t, c, parent, id, dockerRepo(false, nil))
	}
	createRepo(t, c, "projects/proj-a/locations/europe-central2", "elsewhere", dockerRepo(false, nil))
	var names []string
	it := c.ListRepositories(ctx, &artifactregistrypb.ListRepositoriesRequest{Parent: parent, PageSize: 2})
	for {
		r, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, r.Name[len(parent)+len("/repositories/"):])
	}
	if fmt.Sprint(names) != "[a-repo b-repo c-repo web]" {
		t.Fatalf("listed %v", names)
	}
	upd, err := c.UpdateRepository(ctx, &artifactregistrypb.UpdateRepositoryRequest{
		Repository: &artifactregistrypb.Repository{Name: parent + "/repositories/web", Labels: map[string]string{"team": "b"}, Description: "ignored"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"docker_config.immutable_tags", "labels"}}})
	if err != nil {
		t.Fatal(err)
	}
	if upd.GetDockerConfig().GetImmutableTags() || upd.Labels["team"] != "b" || upd.Description != "" || upd.Format != artifactregistrypb.Repository_DOCKER {
		t.Fatalf("patched %v", upd)
	}
	op, err := c.DeleteRepository(ctx, &artifactregistrypb.DeleteRepositoryRequest{Name: parent + "/repositories/web"})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetRepository(ctx, &artifactregistrypb.GetRepositoryRequest{Name: parent + "/repositories/web"})
	wantAPIError(t, err, http.StatusNotFound, "NOT_FOUND", codes.NotFound)
}

// TestArtifactRegistryPolling: an operation that is still running answers
// not done, and the client's Wait polls operations.get until it is.
func TestArtifactRegistryPolling(t *testing.T) {
	srv := New(t, Options{})
	c := arClient(t, srv, "p")
	srv.SetPendingPolls(1)
	ctx := context.Background()
	op, err := c.CreateRepository(ctx, &artifactregistrypb.CreateRepositoryRequest{Parent: "projects/p/locations/us", RepositoryId: "r",
		Repository: dockerRepo(false, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if op.Done() || !strings.HasPrefix(op.Name(), "projects/p/locations/us/operations/") {
		t.Fatalf("operation %s done=%v, want running", op.Name(), op.Done())
	}
	start := time.Now()
	got, err := op.Wait(ctx)
	if err != nil || got.GetName() != "projects/p/locations/us/repositories/r" || got.RegistryUri != "us-docker.pkg.dev/p/r" {
		t.Fatalf("waited %v: %v %v", time.Since(start), got, err)
	}
	polls := 0
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "/operations/") {
			polls++
		}
	}
	if polls != 1 {
		t.Fatalf("%d polls, want 1", polls)
	}
	if code, body := do(t, srv, "GET", "/v1/projects/p/locations/us/operations/nope", ""); code != http.StatusNotFound {
		t.Fatalf("unknown operation: %d %s", code, body)
	}
}

func TestArtifactRegistryErrors(t *testing.T) {
	srv := New(t, Options{})
	c := arClient(t, srv, "p")
	ctx := context.Background()
	parent := "projects/p/locations/europe-west9"
	createRepo(t, c, parent, "r", dockerRepo(false, nil))
	create := func(id string, r *artifactregistrypb.Repository) error {
		_, err := c.CreateRepository(ctx, &artifactregistrypb.CreateRepositoryRequest{Parent: parent, RepositoryId: id, Repository: r})
		return err
	}
	// Through a GAPIC REST client a 409 is codes.Aborted: the code comes
	// from the HTTP status alone.
	wantAPIError(t, create("r", dockerRepo(false, nil)), http.StatusConflict, "ALREADY_EXISTS", codes.Aborted)
	for _, tc := range []struct {
		id   string
		repo *artifactregistrypb.Repository
		want string
	}{
		{"Bad_Id", dockerRepo(false, nil), "Invalid repository id"},
		{"ends-", dockerRepo(false, nil), "Invalid repository id"},
		{"no-format", &artifactregistrypb.Repository{}, "format must be specified"},
		{"bad-label", dockerRepo(false, map[string]string{"Team": "a"}), `Label "Team"`},
		{"maven-docker", &artifactregistrypb.Repository{Format: artifactregistrypb.Repository_MAVEN,
			FormatConfig: &artifactregistrypb.Repository_DockerConfig{DockerConfig: &artifactregistrypb.Repository_DockerRepositoryConfig{ImmutableTags: true}}}, "DOCKER repositories only"},
	} {
		ae := wantAPIError(t, create(tc.id, tc.repo), http.StatusBadRequest, "INVALID_ARGUMENT", codes.InvalidArgument)
		if !strings.Contains(ae.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.id, ae, tc.want)
		}
	}
	_, err := c.UpdateRepository(ctx, &artifactregistrypb.UpdateRepositoryRequest{
		Repository: &artifactregistrypb.Repository{Name: parent + "/repositories/r", Format: artifactregistrypb.Repository_NPM},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"format"}}})
	wantAPIError(t, err, http.StatusBadRequest, "INVALID_ARGUMENT", codes.InvalidArgument)
	_, err = c.ListRepositories(ctx, &artifactregistrypb.ListRepositoriesRequest{Parent: parent, Filter: `name="x"`}).Next()
	wantAPIError(t, err, http.StatusNotImplemented, "UNIMPLEMENTED", codes.Unimplemented)
}

// TestArtifactRegistryPackagesAndReset: seeded packages list; Reset forgets
// repositories, operations and packages.
func TestArtifactRegistryPackagesAndReset(t *testing.T) {
	srv := New(t, Options{})
	c := arClient(t, srv, "p")
	ctx := context.Background()
	name := "projects/p/locations/europe-west9/repositories/r"
	if srv.AddPackage(name, "app") {
		t.Fatal("a package went into a repository that does not exist")
	}
	createRepo(t, c, "projects/p/locations/europe-west9", "r", dockerRepo(false, nil))
	if !srv.AddPackage(name, "app") {
		t.Fatal("AddPackage refused an existing repository")
	}
	p, err := c.ListPackages(ctx, &artifactregistrypb.ListPackagesRequest{Parent: name, PageSize: 1}).Next()
	if err != nil || p.Name != name+"/packages/app" {
		t.Fatalf("packages: %v %v", p, err)
	}
	srv.Reset()
	_, err = c.GetRepository(ctx, &artifactregistrypb.GetRepositoryRequest{Name: name})
	wantAPIError(t, err, http.StatusNotFound, "NOT_FOUND", codes.NotFound)
	_, err = c.ListPackages(ctx, &artifactregistrypb.ListPackagesRequest{Parent: name}).Next()
	wantAPIError(t, err, http.StatusNotFound, "NOT_FOUND", codes.NotFound)
}

// TestArtifactRegistryMismatch: an operation answer that breaks the
// schema reaches the client as HTTP 500 and is recorded.
func TestArtifactRegistryMismatch(t *testing.T) {
	srv := New(t, Options{mutate: func(id string, m map[string]any) {
		if id == "artifactregistry.projects.locations.repositories.create" {
			m["done"] = "yes"
		}
	}})
	c := arClient(t, srv, "p")
	_, err := c.CreateRepository(context.Background(), &artifactregistrypb.CreateRepositoryRequest{Parent: "projects/p/locations/us",
		RepositoryId: "r", Repository: dockerRepo(false, nil)})
	wantAPIError(t, err, http.StatusInternalServerError, "INTERNAL", codes.Internal)
	if v := srv.TakeViolations(); len(v) != 1 || !strings.Contains(v[0], "Operation.done: want boolean, got string") {
		t.Fatalf("violations %q", v)
	}
	// A request the document does not allow: repositories take no
	// "repository_id" spelling.
	code, body := do(t, srv, "POST", "/v1/projects/p/locations/us/repositories?repository_id=r", `{"format":"DOCKER"}`)
	wantViolation(t, srv, code, body, "artifactregistry.projects.locations.repositories.create", `unknown query parameter "repository_id"`)
}

// TestSharedLocationsPath: Artifact Registry's locations methods share
// their path with Secret Manager's; the request is served, as
// UNIMPLEMENTED, not refused as ambiguous.
func TestSharedLocationsPath(t *testing.T) {
	srv := New(t, Options{})
	if code, body := do(t, srv, "GET", "/v1/projects/p/locations/us", ""); code != http.StatusNotImplemented || !strings.Contains(body, "secretmanager.projects.locations.get") {
		t.Fatalf("locations.get: %d %s", code, body)
	}
}

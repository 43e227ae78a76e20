package gcp

import (
	"strings"
	"testing"

	"cloud.google.com/go/artifactregistry/apiv1/artifactregistrypb"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

func registryDriver(t *testing.T, e *env) *registries {
	t.Helper()
	d, ok := e.backend.Driver(spec.ImageRegistry)
	if !ok {
		t.Fatal("no image-registry driver")
	}
	return d.(*registries)
}

func registryTarget(name string) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: fleet,
		Fields: map[string]any{"immutableTags": true, spec.TagsField: map[string]any{"team": "web"}}}
}

// TestRegistryDeleteRefusesImages: a repository holding an image is not
// deleted (Artifact Registry would take the images with it); once empty,
// it is.
func TestRegistryDeleteRefusesImages(t *testing.T) {
	e := newEnv(t)
	d := registryDriver(t, e)
	tg := registryTarget("with-images")
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	repo := repositoryName(testProject, testRegion, tg.Name)
	if !e.rest.AddPackage(repo, "app") {
		t.Fatal("the fake has no repository " + repo)
	}
	err := d.Delete(t.Context(), tg)
	if providers.CodeOf(e.backend, err) != providers.Conflict || !strings.Contains(err.Error(), "gcp/image-registry/with-images: the repository holds images (app among them)") {
		t.Fatalf("delete of a repository with images: %v (code %s), want a conflict naming the image", err, providers.CodeOf(e.backend, err))
	}
	if _, err := d.Read(t.Context(), testRegion, tg.Name); err != nil {
		t.Fatalf("the refused delete removed it: %v", err)
	}
}

// TestRegistryWaitsForOperations: a create and a delete whose operations
// are still running when answered are waited for (the client polls).
func TestRegistryWaitsForOperations(t *testing.T) {
	e := newEnv(t)
	d := registryDriver(t, e)
	e.rest.SetPendingPolls(1)
	tg := registryTarget("slow")
	res, err := d.Create(t.Context(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fields["immutableTags"] != true || res.Owner != fleet || res.Attributes["uri"] != testRegion+"-docker.pkg.dev/"+testProject+"/slow" ||
		res.Attributes["arn"] != repositoryName(testProject, testRegion, "slow") {
		t.Fatalf("created %+v", res)
	}
	if err := d.Delete(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	polls := 0
	for _, r := range e.rest.Requests() {
		if strings.Contains(r.Path, "/operations/") {
			polls++
		}
	}
	if polls != 2 {
		t.Fatalf("%d operation polls, want one for the create and one for the delete", polls)
	}
}

// TestRegistryOtherFormat: a repository of another format under the name
// is not an image registry: not listed, read as not found, never deleted.
func TestRegistryOtherFormat(t *testing.T) {
	e := newEnv(t)
	d := registryDriver(t, e)
	c, _, err := d.client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	op, err := c.CreateRepository(t.Context(), &artifactregistrypb.CreateRepositoryRequest{Parent: repositoryParent(testProject, testRegion),
		RepositoryId: "jars", Repository: &artifactregistrypb.Repository{Format: artifactregistrypb.Repository_MAVEN}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	rs, err := d.List(t.Context(), testRegion)
	if err != nil || len(rs) != 0 {
		t.Fatalf("listed %v %v, want nothing", rs, err)
	}
	if _, err := d.Read(t.Context(), testRegion, "jars"); providers.CodeOf(e.backend, err) != providers.NotFound || !strings.Contains(err.Error(), "MAVEN") {
		t.Fatalf("read: %v", err)
	}
	if err := d.Delete(t.Context(), registryTarget("jars")); providers.CodeOf(e.backend, err) != providers.NotFound {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.GetRepository(t.Context(), &artifactregistrypb.GetRepositoryRequest{Name: repositoryName(testProject, testRegion, "jars")}); err != nil {
		t.Fatalf("the maven repository is gone: %v", err)
	}
}

package gcpfake

import (
	"context"
	"errors"
	"net/http"
	"testing"

	cloudresourcemanager "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

// TestResourceManagerProjectsGet drives the discovery-generated client,
// authenticated through Application Default Credentials pointing at a
// key the fake issued.
func TestResourceManagerProjectsGet(t *testing.T) {
	srv := New(t, Options{Projects: []string{"proj-a"}})
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", srv.ServiceAccountKey(t, "proj-a", "reader@proj-a.iam.gserviceaccount.com"))
	svc, err := cloudresourcemanager.NewService(context.Background(), option.WithEndpoint(srv.URL()+"/"))
	if err != nil {
		t.Fatal(err)
	}
	num := srv.ProjectNumber("proj-a")
	for _, name := range []string{"projects/proj-a", "projects/" + num} {
		p, err := svc.Projects.Get(name).Do()
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "projects/"+num || p.ProjectId != "proj-a" || p.State != "ACTIVE" || p.DisplayName != "proj-a" || p.CreateTime == "" {
			t.Fatalf("%s: %+v", name, p)
		}
	}
	for _, name := range []string{"projects/proj-b", "projects/123456789012"} {
		_, err = svc.Projects.Get(name).Do()
		var ge *googleapi.Error
		if !errors.As(err, &ge) || ge.Code != http.StatusForbidden {
			t.Fatalf("%s: %v", name, err)
		}
	}
	r := srv.Requests()[0]
	if r.Path != "/v3/projects/proj-a" || r.Query.Encode() != "alt=json&prettyPrint=false" {
		t.Fatalf("sent %s?%s", r.Path, r.Query.Encode())
	}
}

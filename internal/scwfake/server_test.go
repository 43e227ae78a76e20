package scwfake_test

import (
	"net/http"
	"testing"

	"github.com/infra-iac/infra/internal/scwfake"
)

// TestUnscopedListingsAreCaught: the scoping check flags a listing without
// a project, and passes scoped ones and IAM's organization listings.
func TestUnscopedListingsAreCaught(t *testing.T) {
	fake := scwfake.Start(scwfake.Options{})
	defer fake.Close()
	for _, path := range []string{
		"/functions/v1beta1/regions/fr-par/namespaces?project_id=p",
		"/iam/v1alpha1/applications?organization_id=o",
		"/secret-manager/v1beta1/regions/fr-par/secrets?organization_id=o", // organization-wide: flagged
		"/containers/v1/regions/fr-par/containers",                         // unscoped: flagged
		"/serverless-sqldb/v1alpha1/regions/fr-par/databases/some-id",      // a read, not a listing
	} {
		resp, err := http.Get(fake.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := fake.UnscopedListings()
	if len(got) != 2 || got[0].Path != "/secret-manager/v1beta1/regions/fr-par/secrets" || got[1].Path != "/containers/v1/regions/fr-par/containers" {
		t.Fatalf("flagged %+v", got)
	}
}

package scaleway

import (
	"testing"

	function "github.com/scaleway/scaleway-sdk-go/api/function/v1beta1"
	registry "github.com/scaleway/scaleway-sdk-go/api/registry/v1"
	secret "github.com/scaleway/scaleway-sdk-go/api/secret/v1beta1"
	sdb "github.com/scaleway/scaleway-sdk-go/api/serverless_sqldb/v1alpha1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
)

// TestErrorCodesOfTheRecordedQuirks classifies the answers the recordings
// show: Functions and Registry 404s without a type, the typed 404 of
// Secret Manager, and Serverless SQL's 403 for a database that is gone —
// a denial, which only a delete's own wait may take for "gone".
func TestErrorCodesOfTheRecordedQuirks(t *testing.T) {
	e := newEnv(t, "shop")
	c := e.backend.Client()
	missing := "00000000-0000-4000-8000-000000000000"
	_, fnErr := function.NewAPI(c).GetNamespace(&function.GetNamespaceRequest{Region: scw.RegionFrPar, NamespaceID: missing})
	_, regErr := registry.NewAPI(c).GetNamespace(&registry.GetNamespaceRequest{Region: scw.RegionFrPar, NamespaceID: missing})
	_, secErr := secret.NewAPI(c).GetSecret(&secret.GetSecretRequest{Region: scw.RegionFrPar, SecretID: missing})
	_, sdbErr := sdb.NewAPI(c).GetDatabase(&sdb.GetDatabaseRequest{Region: scw.RegionFrPar, DatabaseID: missing})
	for _, x := range []struct {
		what string
		err  error
		want providers.Code
	}{
		{"function namespace (untyped 404)", fnErr, providers.NotFound},
		{"registry namespace (untyped 404)", regErr, providers.NotFound},
		{"secret (typed 404)", secErr, providers.NotFound},
		{"serverless SQL database (403)", sdbErr, providers.PermissionDenied},
	} {
		if got := e.backend.ErrorCode(x.err); got != x.want {
			t.Errorf("%s: %v is %s, want %s", x.what, x.err, got, x.want)
		}
	}
	if !gone(sdbErr, true) || gone(sdbErr, false) {
		t.Error("a 403 is gone only after our own Serverless SQL delete")
	}
}

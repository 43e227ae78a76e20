package scaleway

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/scwfake"
)

// TestMain shares one moto_server among the package's tests (it takes
// seconds to start) and stops it at the end.
func TestMain(m *testing.M) { moto.Main(m) }

const (
	testProject = "11111111-2222-3333-4444-555555555555"
	testOrg     = "99999999-8888-7777-6666-555555555555"
	testRegion  = "fr-par"
	otherRegion = "nl-ams"
	testAccess  = "SCWTESTTESTTESTTEST0"
	testSecret  = "00000000-0000-0000-0000-000000000001"
)

// env is a fake Scaleway (REST APIs), moto behind a region proxy (S3 and
// SQS), and a backend pointed at them.
type env struct {
	fake    *scwfake.Server
	proxy   *scwfake.RegionProxy
	moto    *moto.Server
	backend *Backend
}

// newEnv starts the fake and returns a backend with the standard
// configuration path: SCW_* variables, no config file.
func newEnv(t *testing.T, fleet string) *env {
	t.Helper()
	return newEnvOn(t, fleet, moto.Shared(t))
}

// newEnvOn is newEnv with the moto_server that plays Scaleway's S3 and
// SQS given.
func newEnvOn(t *testing.T, fleet string, m *moto.Server) *env {
	t.Helper()
	if err := m.Reset(); err != nil {
		t.Fatal(err)
	}
	proxy, err := scwfake.StartRegionProxy(m.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	fake := scwfake.Start(scwfake.Options{SQSEndpoint: proxy.URL, CredentialLag: 2})
	t.Cleanup(fake.Close)
	fake.AddProject(testProject, testOrg, "infra-tests")
	fake.AddAPIKey(testAccess, testProject, "")
	setTestEnv(t, fake.URL, testProject)
	b, err := New(Options{S3Endpoint: proxy.URL, Fleet: fleet, PageSize: 2, WaitInterval: 5 * time.Millisecond,
		WaitTimeout: 30 * time.Second, Settle: 5 * time.Second, ClientOptions: []scw.ClientOption{}})
	if err != nil {
		t.Fatal(err)
	}
	return &env{fake: fake, proxy: proxy, moto: m, backend: b}
}

// setTestEnv gives the SDK its standard variables and no config file.
func setTestEnv(t *testing.T, apiURL, project string) {
	t.Setenv("SCW_CONFIG_PATH", filepath.Join(t.TempDir(), "absent.yaml"))
	t.Setenv("SCW_ACCESS_KEY", testAccess)
	t.Setenv("SCW_SECRET_KEY", testSecret)
	t.Setenv("SCW_DEFAULT_PROJECT_ID", project)
	t.Setenv("SCW_DEFAULT_REGION", testRegion)
	t.Setenv("SCW_API_URL", apiURL)
	// The SDK refuses a set-but-empty variable: these are unset.
	for _, k := range []string{"SCW_DEFAULT_ORGANIZATION_ID", "SCW_DEFAULT_ZONE", "SCW_PROFILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// reset wipes both clouds between subtests, keeping the project and key.
func (e *env) reset(t *testing.T) {
	t.Helper()
	e.fake.Reset()
	e.fake.AddProject(testProject, testOrg, "infra-tests")
	e.fake.AddAPIKey(testAccess, testProject, "")
	if err := e.moto.Reset(); err != nil {
		t.Fatal(err)
	}
	// The memo of the SQS credential points at what was just wiped.
	e.backend.mu.Lock()
	e.backend.sqs = map[string]*sqsCredential{}
	e.backend.mu.Unlock()
}

// assertScoped fails when a listing reached the fake without a project.
func (e *env) assertScoped(t *testing.T) {
	t.Helper()
	lists := 0
	for _, r := range e.fake.Requests() {
		if r.IsList() {
			lists++
		}
	}
	if lists == 0 {
		t.Error("the fake saw no listing: the scoping check would be vacuous")
	}
	t.Logf("%d listings reached the fake, each checked for its project", lists)
	for _, r := range e.fake.UnscopedListings() {
		t.Errorf("a listing without project_id reached the fake: %s %s?%s", r.Method, r.Path, r.Query.Encode())
	}
}

package lifecycle

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/internal/gcptest"
	"github.com/infra-iac/infra/internal/testbin"
	"github.com/infra-iac/infra/providers"
	gcpprovider "github.com/infra-iac/infra/providers/gcp"
	"github.com/infra-iac/infra/spec"
)

// The same guarantee on GCP, with the infra binary as a user runs it,
// configured by the environment alone (GOOGLE_APPLICATION_CREDENTIALS,
// GOOGLE_CLOUD_PROJECT, INFRA_GCP_API_URL, STORAGE_EMULATOR_HOST,
// PUBSUB_EMULATOR_HOST): killed at the k-th request to the REST APIs or
// Cloud Storage, after the fake acted and before the answer arrives, for
// every k, an apply of every GCP kind converges in one re-run; destroy
// then leaves nothing. Then the same with the response dropped. Pub/Sub
// speaks gRPC, which faultproxy does not carry: its calls are not struck
// (a topic made without its subscription is TestAQueueHalfMadeIsCompleted's).

const (
	gcpCrashProject = "crash-gcp-1"
	gcpCrashRegion  = "europe-west9"
	gcpCrashSecret  = "crash-secret-value"
)

func gcpCrashDoc() string {
	var rs []string
	for i := 1; i <= 2; i++ {
		rs = append(rs,
			fmt.Sprintf(`{"address": "gcp/object-store/crash-assets-%d", "spec": {"versioning": true, "forceDestroy": true, "tags": {"team": "web"}}}`, i),
			fmt.Sprintf(`{"address": "gcp/queues/crash-jobs-%d", "spec": {"visibilityTimeoutSec": 30, "tags": {"team": "web"}}}`, i),
			fmt.Sprintf(`{"address": "gcp/secrets/crash-key-%d", "spec": {"value": {"fromEnv": "CRASH_SECRET"}, "tags": {"team": "web"}}}`, i),
			fmt.Sprintf(`{"address": "gcp/image-registry/crash-apps-%d", "spec": {"tags": {"team": "web"}}}`, i),
			fmt.Sprintf(`{"address": "gcp/iam/crash-deployer-%d", "spec": {"policies": ["roles/storage.objectViewer"], "tags": {"team": "web"}}}`, i),
		)
	}
	rs = append(rs,
		`{"address": "gcp/postgres/crash-db", "spec": {"masterUsername": "app", "masterPasswordSecret": {"ref": "gcp/secrets/crash-key-1"}, "minCapacity": 2, "maxCapacity": 2, "tags": {"team": "web"}}}`,
		`{"address": "gcp/compute/crash-api", "spec": {"image": "`+gcpCrashRegion+`-docker.pkg.dev/`+gcpCrashProject+`/crash-apps-1/api:1", "memoryMb": 256, "env": {"JOBS": {"observed": "gcp/queues/crash-jobs-1", "attribute": "url"}}, "tags": {"team": "web"}}}`)
	return `{"apiVersion": "infra/v1", "fleet": "` + crashFleet + `", "accounts": {"gcp": "` + gcpCrashProject + `"}, "placement": {"gcp": "` + gcpCrashRegion + `"}, "resources": [` +
		strings.Join(rs, ",\n") + `]}`
}

// gcpCloud is the GCP fakes, whose REST APIs and Cloud Storage share one
// front (so that one numbering counts the requests of both).
type gcpCloud struct {
	t     *testing.T
	bin   string
	fleet string
	fakes *gcptest.Fakes
	front string // the REST APIs and Cloud Storage, unproxied
	key   string // a service-account key file of the project
}

func newGCPCrashRig(t *testing.T) *crashRig {
	t.Helper()
	fakes := gcptest.Start(t, gcpCrashProject)
	// Operations done in the answer that starts them: the binary polls at
	// Cloud SQL's pace, seconds.
	fakes.REST.SetOperationPolls("sqladmin", 0)
	fakes.REST.SetOperationPolls("run", 0)
	gcs, err := url.Parse("http://" + fakes.GCS.Host())
	must(t, err)
	rest, err := url.Parse(fakes.APIURL)
	must(t, err)
	toGCS, toREST := httputil.NewSingleHostReverseProxy(gcs), httputil.NewSingleHostReverseProxy(rest)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/storage/") || strings.HasPrefix(r.URL.Path, "/upload/storage/") {
			toGCS.ServeHTTP(w, r)
			return
		}
		toREST.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	fleet := filepath.Join(t.TempDir(), "fleet.json")
	must(t, os.WriteFile(fleet, []byte(gcpCrashDoc()), 0o644))
	return &crashRig{t: t, c: &gcpCloud{t: t, bin: testbin.Infra(t), fleet: fleet, fakes: fakes, front: front.URL,
		key: fakes.REST.ServiceAccountKey(t, gcpCrashProject, "infra@"+gcpCrashProject+".iam.gserviceaccount.com")}}
}

func (c *gcpCloud) doc() string    { return gcpCrashDoc() }
func (c *gcpCloud) direct() string { return c.front }

// reset empties every fake.
func (c *gcpCloud) reset() {
	c.fakes.REST.Reset()
	c.fakes.GCS.Reset()
	// pstest has no reset: its queues are deleted through the backend,
	// which deletes a queue's subscription with it.
	b := c.backend()
	defer b.Close()
	d, _ := b.Driver(spec.Queues)
	rs, err := d.List(context.Background(), gcpCrashRegion)
	must(c.t, err)
	for _, q := range rs {
		must(c.t, d.Delete(context.Background(), providers.Target{Name: q.Name, Region: gcpCrashRegion, Owner: q.Owner}))
	}
}

func (c *gcpCloud) infra(endpoint, stateDir string, started func(*os.Process), args ...string) (int, string) {
	cmd := exec.Command(c.bin, append(args, "--fleet", c.fleet, "--state", stateDir, "--no-color")...)
	cmd.Env = append(os.Environ(),
		"GOOGLE_APPLICATION_CREDENTIALS="+c.key, "GOOGLE_CLOUD_PROJECT="+gcpCrashProject,
		"INFRA_GCP_API_URL="+endpoint, "STORAGE_EMULATOR_HOST="+strings.TrimPrefix(endpoint, "http://"),
		"PUBSUB_EMULATOR_HOST="+c.fakes.PubSub.Addr, "CRASH_SECRET="+gcpCrashSecret)
	return run(c.t, cmd, started)
}

// backend reaches the fakes directly, for the audit.
func (c *gcpCloud) backend() *gcpprovider.Backend {
	b, err := gcpprovider.New(gcpprovider.Options{Project: gcpCrashProject, APIURL: c.fakes.APIURL,
		RESTOptions: c.fakes.RESTOptions, StorageOptions: c.fakes.StorageOptions, PubSubOptions: c.fakes.PubSubOptions})
	must(c.t, err)
	return b
}

// inventory lists every kind on the fakes; with complete, it also reads
// what a create writes in a second step: every secret's value (its first
// version), the database's master user.
func (c *gcpCloud) inventory(complete bool) (map[string]string, []string) {
	ctx := context.Background()
	b := c.backend()
	defer b.Close()
	found := map[string]string{}
	var problems []string
	for _, k := range gcpprovider.Kinds() {
		d, _ := b.Driver(k)
		rs, err := d.List(ctx, gcpCrashRegion)
		must(c.t, err)
		for _, res := range rs {
			found["gcp/"+string(k)+"/"+res.Name] = res.Owner
			if !complete {
				continue
			}
			if sr, ok := d.(providers.SecretReader); ok {
				if v, err := sr.ReadSecretValue(ctx, gcpCrashRegion, res.Name); err != nil || v.Reveal() != gcpCrashSecret {
					problems = append(problems, fmt.Sprintf("gcp/%s/%s: holds no value of its own (%v)", k, res.Name, err))
				}
			}
			if k == spec.Postgres {
				full, err := d.Read(ctx, gcpCrashRegion, res.Name)
				if err != nil || full.Fields["masterUsername"] != "app" {
					problems = append(problems, fmt.Sprintf("gcp/%s/%s: no master user app (%v, %v)", k, res.Name, full.Fields["masterUsername"], err))
				}
			}
		}
	}
	return found, problems
}

func TestGCPKillAtEveryRequestOfAnApplyConverges(t *testing.T) {
	newGCPCrashRig(t).killAtEveryRequest()
}

func TestGCPDroppedResponseAtEveryRequestOfAnApplyConverges(t *testing.T) {
	newGCPCrashRig(t).dropAtEveryRequest()
}

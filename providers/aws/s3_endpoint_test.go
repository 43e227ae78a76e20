package aws

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/s3control"
	s3controltypes "github.com/aws/aws-sdk-go-v2/service/s3control/types"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// S3 Control names the account as a subdomain of its host, and the SDK
// puts it in front of a configured endpoint too: 123456789012.127.0.0.1,
// which no resolver answers. However the endpoint is configured, the call
// reaches its own host, path-style, with the account in its header, and
// with no proxy setting.
func TestS3ControlReachesAConfiguredEndpointsOwnHost(t *testing.T) {
	var mu sync.Mutex
	var hosts, paths, accounts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts, paths, accounts = append(hosts, r.Host), append(paths, r.URL.Path), append(accounts, r.Header.Get("x-amz-account-id"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	profile := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(profile, []byte("[default]\nendpoint_url = "+srv.URL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, how := range []struct{ name, key, value string }{
		{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL", srv.URL},
		{"AWS_ENDPOINT_URL_S3_CONTROL", "AWS_ENDPOINT_URL_S3_CONTROL", srv.URL},
		{"a profile's endpoint_url", "AWS_CONFIG_FILE", profile},
	} {
		t.Run(how.name, func(t *testing.T) {
			for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3_CONTROL", "HTTP_PROXY", "HTTPS_PROXY", "AWS_PROFILE"} {
				t.Setenv(k, "")
			}
			t.Setenv("AWS_CONFIG_FILE", "/dev/null")
			t.Setenv(how.key, how.value)
			cfg, err := config.LoadDefaultConfig(t.Context(), config.WithRegion(testRegion),
				config.WithCredentialsProvider(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
					return aws.Credentials{AccessKeyID: "testing", SecretAccessKey: "testing"}, nil
				})))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			hosts, paths, accounts = nil, nil, nil
			mu.Unlock()
			_, err = newControlClient(cfg).TagResource(t.Context(), &s3control.TagResourceInput{AccountId: aws.String(moto.Account),
				ResourceArn: aws.String("arn:aws:s3:::b"), Tags: []s3controltypes.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
			if err != nil {
				t.Fatalf("TagResource at %s: %v", srv.URL, err)
			}
			want := strings.TrimPrefix(srv.URL, "http://")
			if len(hosts) != 1 || hosts[0] != want || !strings.HasPrefix(paths[0], "/v20180820/tags/") || accounts[0] != moto.Account {
				t.Errorf("requests to hosts %v, paths %v, accounts %v; want one to %s, /v20180820/tags/..., %s", hosts, paths, accounts, want, moto.Account)
			}
		})
	}
}

// stockBackend is a backend on the stock emulator, moto as a user
// installs it, wiped, with its calls counted.
func stockBackend(t *testing.T, calls *callCounter) (*Backend, *moto.Server) {
	t.Helper()
	srv := moto.FreshStock(t) // the package's other tests point the SDK at the patched one again
	b, err := New(t.Context(), Options{ConfigOptions: []func(*config.LoadOptions) error{calls.option()}})
	if err != nil {
		t.Fatal(err)
	}
	return b, srv
}

// On stock moto, which drops CreateBucket's tags and serves no bucket
// ABAC (in eu-west-3 it refuses PutBucketAbac; in us-east-1 it takes it
// for a second CreateBucket), every bucket is made, tagged with
// PutBucketTagging before anything else, and says the caveat. The first
// bucket of each region finds that out; the second is not asked again.
// Tags then change through S3 Control at the endpoint's own host, and the
// release and the delete work as on AWS.
func TestBucketsOnStockMoto(t *testing.T) {
	var calls callCounter
	b, _ := stockBackend(t, &calls)
	d, _ := b.Driver(spec.ObjectStore)
	raw := newS3Client(b.Config())
	for _, region := range []string{testRegion, "us-east-1"} {
		for _, name := range []string{"stock-a-" + region, "stock-b-" + region} {
			tg := providers.Target{Name: name, Region: region, Owner: "shop",
				Fields: map[string]any{"versioning": true, "tags": map[string]any{"team": "web"}}}
			res, err := d.Create(t.Context(), tg)
			if err != nil {
				t.Fatalf("create %s in %s on stock moto: %v", name, region, err)
			}
			if !strings.Contains(res.Caveat, "ABAC is not served") || !strings.Contains(res.Caveat, region) {
				t.Errorf("%s: caveat %q, want one saying bucket ABAC is not served in %s", name, res.Caveat, region)
			}
			got, err := d.(*buckets).tags(t.Context(), region, name)
			if want := map[string]string{"team": "web", spec.OwnershipTagKey: "shop"}; err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: tags %v, %v; want %v", name, got, err, want)
			}
		}
	}
	for op, want := range map[string]int{"CreateBucket": 4, "GetBucketTagging": 2 + 4, "PutBucketTagging": 4,
		"PutBucketAbac": 2, "GetBucketAbac": 1, "PutBucketVersioning": 4, "TagResource": 0} {
		if got := calls.count(op); got != want {
			t.Errorf("%s: %d calls, want %d (one probe of each a region)", op, got, want)
		}
	}

	name := "stock-a-" + testRegion
	tg := providers.Target{Name: name, Region: testRegion, Owner: "shop", Fields: map[string]any{"tags": map[string]any{"team": "api"}}}
	if _, err := d.Update(t.Context(), tg, []string{spec.TagsField}); err != nil {
		t.Fatalf("retag on stock moto: %v", err)
	}
	if calls.count("TagResource") != 1 {
		t.Errorf("the retag made %d TagResource calls, want 1 (S3 Control at the endpoint's host)", calls.count("TagResource"))
	}
	if err := d.(providers.Releaser).Release(t.Context(), testRegion, name, "shop"); err != nil {
		t.Fatal(err)
	}
	tags, err := raw.GetBucketTagging(t.Context(), &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Key) != "team" || aws.ToString(tags.TagSet[0].Value) != "api" {
		t.Errorf("after the retag and the release: %+v, %v; want team=api alone", tags, err)
	}
	for _, region := range []string{testRegion, "us-east-1"} {
		for _, name := range []string{"stock-a-" + region, "stock-b-" + region} {
			if err := d.Delete(t.Context(), providers.Target{Name: name, Region: region}); err != nil {
				t.Errorf("delete %s: %v", name, err)
			}
		}
	}
}

// The shared conformance suite holds on stock moto too.
func TestObjectStoreConformanceOnStockMoto(t *testing.T) {
	var calls callCounter
	b, srv := stockBackend(t, &calls)
	conformance(t, b, srv, objectStoreCase)
}

// Where the endpoint behaves as AWS does (the patched emulator keeps
// CreateBucket's tags and serves ABAC), a bucket is its three calls and
// no more: CreateBucket with its tags, PutBucketAbac, PutBucketVersioning.
// At an endpoint other than AWS's the first bucket of a region costs two
// probes more, GetBucketTagging and GetBucketAbac; at AWS's own, none.
func TestABucketIsThreeCallsWhereTheEndpointBehavesAsAWS(t *testing.T) {
	for _, atAWS := range []bool{false, true} {
		var calls callCounter // the test's own GetBucketAbac reads count too: 3
		b, _ := newTestBackend(t, calls.option())
		d := newBuckets(b.Config(), b.Account, spec.ObjectStore, false)
		if d.compatible != true {
			t.Fatal("the emulator's endpoint is not AWS's own, and the driver must know it")
		}
		d.compatible = !atAWS // as at AWS's own endpoints, which the tests cannot reach
		for _, name := range []string{"three-a", "three-b", "three-c"} {
			res, err := d.Create(t.Context(), providers.Target{Name: name, Region: testRegion, Owner: "shop",
				Fields: map[string]any{"versioning": true, "tags": map[string]any{"team": "web"}}})
			if err != nil || res.Caveat != "" {
				t.Fatalf("create %s: caveat %q, %v; want none", name, res.Caveat, err)
			}
			abac, err := d.clients.get(testRegion).GetBucketAbac(t.Context(), &s3.GetBucketAbacInput{Bucket: aws.String(name)})
			if err != nil || abac.AbacStatus.Status != s3types.BucketAbacStatusEnabled {
				t.Errorf("%s: ABAC %+v, %v; want on", name, abac, err)
			}
		}
		probes := 1
		if atAWS {
			probes = 0
		}
		for op, want := range map[string]int{"CreateBucket": 3, "PutBucketAbac": 3, "PutBucketVersioning": 3, "PutBucketTagging": 0,
			"TagResource": 0, "GetBucketTagging": probes, "GetBucketAbac": 3 + probes} {
			if got := calls.count(op); got != want {
				t.Errorf("at AWS %v: %s: %d calls, want %d", atAWS, op, got, want)
			}
		}
	}
}

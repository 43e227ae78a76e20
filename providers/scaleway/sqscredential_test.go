package scaleway

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	secret "github.com/scaleway/scaleway-sdk-go/api/secret/v1beta1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/internal/scwfake"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// TestFreshCredentialRefusalsAreRetried: right after a mint, Queues refuse
// the new credential for a while (403, or 404 for the key); those are
// retried until the credential is no longer fresh. A missing queue is not
// retried, and neither is anything once the credential has settled.
func TestFreshCredentialRefusalsAreRetried(t *testing.T) {
	client, err := scw.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(client, Options{WaitInterval: time.Millisecond})
	fresh := &sqsCredential{freshUntil: time.Now().Add(time.Minute)}
	settled := &sqsCredential{}
	failing := func(code string, times int) (func() error, *int) {
		n := 0
		return func() error {
			n++
			if n <= times {
				return &smithy.GenericAPIError{Code: code}
			}
			return nil
		}, &n
	}
	call, n := failing("InvalidClientTokenId", 3)
	if err := b.retryFresh(t.Context(), fresh, call); err != nil || *n != 4 {
		t.Errorf("a fresh credential's 403s: %v after %d calls", err, *n)
	}
	call, n = failing("QueueDoesNotExist", 3)
	if err := b.retryFresh(t.Context(), fresh, call); err == nil || *n != 1 {
		t.Errorf("a missing queue was retried: %v after %d calls", err, *n)
	}
	call, n = failing("InvalidClientTokenId", 3)
	var api smithy.APIError
	if err := b.retryFresh(t.Context(), settled, call); !errors.As(err, &api) || *n != 1 {
		t.Errorf("a settled credential's 403 was retried: %v after %d calls", err, *n)
	}
}

// TestOneCredentialPerProject: a second process (a new backend) reads the
// credential the first stored in Secret Manager rather than minting
// another, so runs do not churn credentials.
func TestOneCredentialPerProject(t *testing.T) {
	e := newEnv(t, "shop")
	for i, name := range []string{"shop-a", "shop-b"} {
		b := e.backend
		if i > 0 {
			var err error
			if b, err = New(Options{S3Endpoint: e.proxy.URL, Fleet: "shop", WaitInterval: time.Millisecond, Settle: time.Second}); err != nil {
				t.Fatal(err)
			}
		}
		d, _ := b.Driver("queues")
		tg := target("queues", name, nil)
		tg.Owner = "shop"
		if _, err := d.Create(t.Context(), tg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if n := e.fake.Count(scwfake.SQSCreds); n != 1 {
		t.Errorf("%d SQS credentials minted, want 1", n)
	}
	if n := e.fake.Count(scwfake.Secrets); n != 1 {
		t.Errorf("%d secrets hold the credential, want 1", n)
	}
}

// TestUnreadableCredentialIsNoQueueGone: the stored credential's secret
// without an enabled version (deleted or disabled in the console, or a
// secret deleted between the listing and the read) answers 404. That is
// the credential's, never a queue's: a read fails rather than reporting
// the queue absent, and a delete fails rather than counting as done.
// Once, the 404 reached the engine as the queue's, and a delete recorded
// a queue deleted that was still there.
func TestUnreadableCredentialIsNoQueueGone(t *testing.T) {
	e := newEnv(t, "shop")
	d, _ := e.backend.Driver(spec.Queues)
	tg := target(spec.Queues, "shop-jobs", nil)
	tg.Owner = "shop"
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	api := secret.NewAPI(e.backend.client)
	name := sqsCredentialSecret
	out, err := api.ListSecrets(&secret.ListSecretsRequest{Region: testRegion, ProjectID: ptr(testProject), Name: &name}, scw.WithContext(t.Context()))
	if err != nil || len(out.Secrets) != 1 {
		t.Fatalf("the stored credential: %v, %v", out, err)
	}
	if err := api.DeleteSecretVersion(&secret.DeleteSecretVersionRequest{Region: testRegion, SecretID: out.Secrets[0].ID, Revision: "1"},
		scw.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
	// A new process: nothing in memory, the stored copy is read.
	e.backend.mu.Lock()
	e.backend.sqs = map[string]*sqsCredential{}
	e.backend.mu.Unlock()
	rs, _ := providers.ResourcesOf(e.backend, spec.Queues)
	if _, found, err := rs.Read(t.Context(), testRegion, "shop-jobs"); err == nil || found {
		t.Errorf("read: found %v, %v; want an error naming the credential", found, err)
	}
	err = rs.Delete(t.Context(), tg)
	if err == nil || errorCode(err) == providers.NotFound || !strings.Contains(err.Error(), sqsCredentialSecret) {
		t.Fatalf("delete: %v (code %s), want a failure naming %s, not a queue gone", err, errorCode(err), sqsCredentialSecret)
	}
	t.Logf("the delete fails: %v", err)
}

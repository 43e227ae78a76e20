package scaleway

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/internal/scwfake"
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

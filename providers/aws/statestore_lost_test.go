package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// The S3 state store through a proxy that loses the answer of a write the
// emulator carried out: the SDK sends the PUT again and gets 412, its
// condition failing on the object its first attempt wrote. The lock is
// still taken, and the ledger still saved, by the run that wrote them; a
// release whose delete went unanswered still releases.
func TestStateWritesWhoseAnswerWasLostOnS3(t *testing.T) {
	_, srv := newTestBackend(t)
	proxy, err := faultproxy.Start(srv.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	t.Setenv("AWS_ENDPOINT_URL", proxy.URL)
	ctx := context.Background()
	b, err := New(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	client := newS3Client(b.Config())
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("infra-lost"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(b.Config().Region)}}); err != nil {
		t.Fatal(err)
	}
	blobs, prefix, err := b.OpenStateBlobs("s3://infra-lost/teams")
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.OpenBlobs(blobs, prefix, "shop")
	if err != nil {
		t.Fatal(err)
	}
	// lose makes the next call (the write) reach the emulator and go
	// unanswered.
	lose := func() { proxy.DropResponse(proxy.Calls() + 1) }

	lose()
	lock, err := st.Lock(ctx, state.LockInfo{ID: "mine", Command: "apply"})
	if err != nil {
		t.Fatalf("lock whose answer was lost: %v; want it taken", err)
	}
	l, err := st.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, drop := range []bool{true, true, false} {
		l.Put(state.Row{Provider: spec.AWS, Kind: spec.Queues, Name: string(rune('a' + i)), Region: testRegion})
		if drop {
			lose()
		}
		if err := st.SaveLedger(ctx, l); err != nil {
			t.Fatalf("save %d (answer lost: %v): %v; want it saved", i, drop, err)
		}
	}
	// Release reads the lock, then deletes it; the delete's answer is
	// lost, and its repeat finds nothing to delete, which S3 answers 204.
	proxy.DropResponse(proxy.Calls() + 2)
	if err := lock.Release(ctx); err != nil {
		t.Fatalf("release whose delete's answer was lost: %v", err)
	}
	fresh, _ := state.OpenBlobs(blobs, prefix, "shop")
	got, err := fresh.LoadLedger(ctx)
	if err != nil || len(got.Rows) != 3 {
		t.Fatalf("ledger: %+v %v", got, err)
	}
	if _, err := fresh.Lock(ctx, state.LockInfo{ID: "next"}); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if calls, _, _ := proxy.Stats(); calls < 10 {
		t.Fatalf("%d calls through the proxy: the writes did not go through it", calls)
	}
}

package aws

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// With logging off, the SDK's own log lines never reach stderr: the S3
// state store's reads used to print "SDK ... DEBUG Response has no
// supported checksum" on every run, and a machine without credentials
// "WARN falling back to IMDSv1".
func TestTheSDKSaysNothingOnStderrWithLoggingOff(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w // the SDK's default logger takes os.Stderr when the configuration loads
	defer func() { os.Stderr = stderr }()
	b, _ := newTestBackend(t)
	ctx := context.Background()
	client := s3.NewFromConfig(b.Config(), func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("quiet-state"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(b.Config().Region)}}); err != nil {
		t.Fatal(err)
	}
	blobs, prefix, err := b.OpenStateBlobs("s3://quiet-state/teams")
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.OpenBlobs(blobs, prefix, "shop")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := st.LoadLedger(ctx)
	l.Put(state.Row{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs", Region: testRegion})
	if err := st.SaveLedger(ctx, l); err != nil {
		t.Fatal(err)
	}
	again, err := state.OpenBlobs(blobs, prefix, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.LoadLedger(ctx); err != nil {
		t.Fatal(err)
	}
	os.Stderr = stderr
	w.Close()
	said, _ := io.ReadAll(r)
	if strings.Contains(string(said), "SDK") {
		t.Errorf("with logging off the SDK wrote to stderr:\n%s", said)
	}
}

package gcp

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

func bucketTarget(name string, fields map[string]any) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: fleet, Fields: fields}
}

// TestABucketWithObjectsIsAConflictUnlessForceDestroy: a delete of a
// bucket holding objects (here two generations of one, versioned) is a
// conflict naming forceDestroy; with it, every generation goes first.
func TestABucketWithObjectsIsAConflictUnlessForceDestroy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d, _ := e.backend.Driver(spec.ObjectStore)
	if _, err := d.Create(ctx, bucketTarget("full-bucket", map[string]any{"versioning": true})); err != nil {
		t.Fatal(err)
	}
	sc, _ := e.backend.storageClient(ctx)
	for _, body := range []string{"one", "two"} {
		w := sc.Bucket("full-bucket").Object("a/b.txt").NewWriter(ctx)
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	err := d.Delete(ctx, bucketTarget("full-bucket", map[string]any{"forceDestroy": false}))
	if e.backend.ErrorCode(err) != providers.Conflict || !strings.Contains(err.Error(), "forceDestroy") {
		t.Fatalf("delete without forceDestroy: %v (%v)", err, e.backend.ErrorCode(err))
	}
	if err := d.Delete(ctx, bucketTarget("full-bucket", map[string]any{"forceDestroy": true})); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(ctx, testRegion, "full-bucket"); e.backend.ErrorCode(err) != providers.NotFound {
		t.Fatalf("read after delete: %v", err)
	}
}

// TestABucketOfAnotherProjectIsNeverOurs: bucket names are global; one of
// another project, even labelled for this fleet, is refused, not read as
// ours, and a delete does not reach it.
func TestABucketOfAnotherProjectIsNeverOurs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sc, _ := e.backend.storageClient(ctx)
	e.gcs.AddProject("another-project", 999)
	if err := sc.Bucket("theirs").Create(ctx, "another-project", &storage.BucketAttrs{Location: testRegion,
		Labels: map[string]string{spec.OwnershipTagKey: fleet}}); err != nil {
		t.Fatal(err)
	}
	d, _ := e.backend.Driver(spec.ObjectStore)
	if _, err := d.Read(ctx, testRegion, "theirs"); e.backend.ErrorCode(err) != providers.PermissionDenied || !strings.Contains(err.Error(), "choose another name") {
		t.Fatalf("read: %v", err)
	}
	if err := d.Delete(ctx, bucketTarget("theirs", nil)); e.backend.ErrorCode(err) != providers.PermissionDenied {
		t.Fatalf("delete: %v", err)
	}
	if _, err := sc.Bucket("theirs").Attrs(ctx); err != nil {
		t.Fatalf("the other project's bucket is gone: %v", err)
	}
	rs, err := d.List(ctx, testRegion)
	if err != nil || len(rs) != 0 {
		t.Fatalf("the listing shows another project's bucket: %v %v", rs, err)
	}
}

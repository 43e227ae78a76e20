package aws

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// Bucket names that are legal but unusual: dots, digits first, the
// shortest and the longest.
var oddBucketNames = []string{"a.b-c.d", "1digit-first", "abc", strings.Repeat("b", 63)}

func TestObjectStoreConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.ObjectStore,
		Create:   map[string]any{"versioning": true},
		Updates:  []map[string]any{{"versioning": false}, {"versioning": true}},
		OddNames: oddBucketNames,
	})
}

func TestS3BucketConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.S3Bucket,
		Create:   map[string]any{"versioning": false, "objectLock": false},
		Updates:  []map[string]any{{"versioning": true}},
		Replaces: []map[string]any{{"objectLock": true, "versioning": true}, {"objectLock": false}},
		OddNames: oddBucketNames,
	})
}

// A non-empty bucket refuses deletion in S3's own words unless the target
// says forceDestroy; then every version and delete marker goes first.
func TestBucketDeleteNonEmpty(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.ObjectStore)
	tg := providers.Target{Name: "full", Region: testRegion, Owner: "shop", Fields: map[string]any{"versioning": true}}
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	c := d.(*buckets).clients.get(testRegion)
	for _, body := range []string{"one", "two", "three"} { // three versions of one key
		if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("full"), Key: aws.String("k"), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("full"), Key: aws.String("other"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	// A delete marker on top of "other".
	if _, err := c.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String("full"), Key: aws.String("other")}); err != nil {
		t.Fatal(err)
	}

	err := d.Delete(t.Context(), tg) // forceDestroy unset
	if b.ErrorCode(err) != providers.Conflict || !strings.Contains(err.Error(), "BucketNotEmpty") {
		t.Fatalf("delete of a non-empty bucket: %v (code %s), want S3's BucketNotEmpty as a conflict", err, b.ErrorCode(err))
	}
	if _, err := d.Read(t.Context(), testRegion, "full"); err != nil {
		t.Fatalf("the refused bucket should still be there: %v", err)
	}
	// An orphan (no fields) is never emptied either.
	if err := d.Delete(t.Context(), providers.Target{Name: "full", Region: testRegion}); b.ErrorCode(err) != providers.Conflict {
		t.Fatalf("orphan delete of a non-empty bucket: %v, want a conflict", err)
	}

	tg.Fields["forceDestroy"] = true
	if err := d.Delete(t.Context(), tg); err != nil {
		t.Fatalf("delete with forceDestroy: %v", err)
	}
	if _, err := d.Read(t.Context(), testRegion, "full"); b.ErrorCode(err) != providers.NotFound {
		t.Fatalf("read after delete: %v, want not found", err)
	}
}

// A bucket lives in one region: another region neither lists nor reads it.
func TestBucketIsRegional(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.S3Bucket)
	if _, err := d.Create(t.Context(), providers.Target{Name: "here", Region: testRegion, Owner: "shop", Fields: map[string]any{"versioning": true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(t.Context(), otherRegion, "here"); b.ErrorCode(err) != providers.NotFound {
		t.Errorf("read from %s: %v (code %s), want not found", otherRegion, err, b.ErrorCode(err))
	}
	// Both kinds are the one bucket.
	os, _ := b.Driver(spec.ObjectStore)
	rs, err := os.List(t.Context(), testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if got := drivertest.Names(rs); len(got) != 1 || got[0] != "here" {
		t.Errorf("object-store lists %v, want [here]", got)
	}
}

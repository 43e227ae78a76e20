package aws

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// Bucket names that are legal but unusual: dots, digits first, the
// shortest and the longest.
var oddBucketNames = []string{"a.b-c.d", "1digit-first", "abc", strings.Repeat("b", 63)}

var objectStoreCase = drivertest.Case{
	Kind:     spec.ObjectStore,
	Create:   map[string]any{"versioning": true},
	Updates:  []map[string]any{{"versioning": false}, {"versioning": true}},
	OddNames: oddBucketNames,
}

func TestObjectStoreConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, objectStoreCase)
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

// Every bucket infra makes has ABAC on, so that S3 applies the executor's
// tag conditions to it, and its tags go through S3 Control: the emulator,
// like S3, refuses PutBucketTagging on it.
func TestBucketsHaveABACAndTagThroughS3Control(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.ObjectStore)
	tg := providers.Target{Name: "abac", Region: testRegion, Owner: "shop",
		Fields: map[string]any{"tags": map[string]any{"team": "web", "tier": "1"}}}
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	c := d.(*buckets).clients.get(testRegion)
	abac, err := c.GetBucketAbac(t.Context(), &s3.GetBucketAbacInput{Bucket: aws.String("abac")})
	if err != nil || abac.AbacStatus == nil || abac.AbacStatus.Status != s3types.BucketAbacStatusEnabled {
		t.Fatalf("ABAC after create: %+v, %v; want Enabled", abac, err)
	}
	_, err = c.PutBucketTagging(t.Context(), &s3.PutBucketTaggingInput{Bucket: aws.String("abac"), Tagging: &s3types.Tagging{}})
	if err == nil {
		t.Fatal("the emulator took PutBucketTagging on a bucket with ABAC on; S3 refuses it")
	}
	tg.Fields["tags"] = map[string]any{"team": "api"} // one changed, one gone
	if _, err := d.Update(t.Context(), tg, []string{spec.TagsField}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Read(t.Context(), testRegion, "abac")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"team": "api", spec.OwnershipTagKey: "shop"}; !reflect.DeepEqual(spec.Canon(got.Fields[spec.TagsField]), spec.Canon(want)) || got.Owner != "shop" {
		t.Errorf("after the update: tags %v, owner %q; want %v, shop", got.Fields[spec.TagsField], got.Owner, want)
	}
	if err := d.(providers.Releaser).Release(t.Context(), testRegion, "abac", "shop"); err != nil {
		t.Fatal(err)
	}
	if got, err = d.Read(t.Context(), testRegion, "abac"); err != nil || got.Owner != "" {
		t.Errorf("after release: owner %q, %v; want none", got.Owner, err)
	}
}

// A bucket made before infra turned ABAC on shows IAM no tags, so the
// executor's role refuses it every owned change. The driver turns ABAC on
// and tries once more. IAM is played by a middleware that refuses the
// owned calls on a bucket whose ABAC is off, as the role does.
func TestAnOldBucketGetsABACWhenRefused(t *testing.T) {
	var denied []string
	var mu sync.Mutex
	var raw *s3.Client
	refuse := config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("iam", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			op := middleware.GetOperationName(ctx)
			var bucket *string
			switch p := in.Parameters.(type) {
			case *s3.PutBucketVersioningInput:
				bucket = p.Bucket
			case *s3.DeleteBucketInput:
				bucket = p.Bucket
			}
			if bucket != nil {
				abac, err := raw.GetBucketAbac(ctx, &s3.GetBucketAbacInput{Bucket: bucket})
				if err == nil && abac.AbacStatus.Status != s3types.BucketAbacStatusEnabled {
					mu.Lock()
					denied = append(denied, op)
					mu.Unlock()
					return middleware.InitializeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: "AccessDenied", Message: "no tags seen"}
				}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}})
	b, _ := newTestBackend(t, refuse)
	plain, _ := newTestBackend(t)
	raw = newS3Client(plain.Config())
	if _, err := raw.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String("old"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(testRegion)}}); err != nil {
		t.Fatal(err)
	}
	d, _ := b.Driver(spec.ObjectStore)
	tg := providers.Target{Name: "old", Region: testRegion, Owner: "shop", Fields: map[string]any{"versioning": true}}
	if _, err := d.Update(t.Context(), tg, []string{providers.S3BucketVersioning}); err != nil {
		t.Fatalf("update of a bucket without ABAC: %v", err)
	}
	if len(denied) != 1 || denied[0] != "PutBucketVersioning" {
		t.Errorf("refused calls %v, want the one PutBucketVersioning before ABAC", denied)
	}
	v, err := raw.GetBucketVersioning(t.Context(), &s3.GetBucketVersioningInput{Bucket: aws.String("old")})
	if err != nil || v.Status != s3types.BucketVersioningStatusEnabled {
		t.Errorf("versioning after the update: %v, %v", v.Status, err)
	}
	// Once on, nothing is refused: the delete goes through first time.
	if err := d.Delete(t.Context(), tg); err != nil || len(denied) != 1 {
		t.Errorf("delete: %v; refused %v", err, denied)
	}
}

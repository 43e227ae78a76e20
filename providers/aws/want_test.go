package aws

import (
	"context"
	"reflect"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// A driver reads only what the engine wants (issue 17): a bucket whose
// versioning nobody declared costs no GetBucketVersioning, a queue whose
// attributes nobody reads no GetQueueAttributes, a user's policies no
// listing; and a create or an update reports what it sent, without reading
// back what it made. Without a Want on the context, everything is read.
func TestDriversReadOnlyWhatIsWanted(t *testing.T) {
	calls := &callCounter{}
	b, _ := newTestBackend(t, calls.option())
	ctx := context.Background()
	tags := map[string]any{"team": "web"}
	nothing := providers.WithWant(ctx, providers.Want{Fields: map[string]bool{spec.TagsField: true}})
	for _, tc := range []struct {
		kind     spec.Kind
		name     string
		fields   map[string]any
		skipped  string // the call a read that wants only the tags never makes
		readback []string
		attrs    []string       // attributes a create must report
		update   map[string]any // a tags update that must not read back, when set
		// tagsRead is the read of tags an update makes before it writes,
		// for an API that sets and removes tags key by key.
		tagsRead string
	}{
		{spec.ObjectStore, "want-bucket", map[string]any{"versioning": true, "tags": tags}, "GetBucketVersioning", []string{"HeadBucket", "GetBucketVersioning", "ListTagsForResource"}, []string{"arn", "url"},
			map[string]any{"versioning": true, "tags": map[string]any{"team": "api"}}, "ListTagsForResource"},
		{spec.Queues, "want-queue", map[string]any{"visibilityTimeoutSec": 30.0, "tags": tags}, "GetQueueAttributes", []string{"GetQueueAttributes", "GetQueueUrl"}, []string{"url"},
			map[string]any{"visibilityTimeoutSec": 30.0, "tags": map[string]any{"team": "api"}}, ""},
		{spec.IAM, "want-user", map[string]any{"policies": []any{}, "tags": tags}, "ListAttachedUserPolicies", []string{"GetUser", "ListAttachedUserPolicies"}, []string{"arn", "id"}, nil, ""},
		{spec.Secrets, "want-secret", map[string]any{"value": spec.NewSensitive("s3cr3t"), "description": "d", "tags": tags}, "", []string{"DescribeSecret"}, []string{"arn", "id", "version"}, nil, ""},
		{spec.ImageRegistry, "want-repo", map[string]any{"immutableTags": true, "tags": tags}, "", []string{"DescribeRepositories", "ListTagsForResource"}, []string{"arn", "uri"}, nil, ""},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			d, _ := b.Driver(tc.kind)
			target := providers.Target{Name: tc.name, Region: testRegion, Fields: tc.fields, Owner: "shop"}
			before := snapshot(calls, tc.readback)
			made, err := d.Create(nothing, target)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Delete(ctx, providers.Target{Name: tc.name, Region: testRegion})
			for _, op := range tc.readback {
				if calls.count(op) != before[op] {
					t.Errorf("create read back with %s", op)
				}
			}
			full, err := d.Read(ctx, testRegion, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if made.Owner != "shop" || full.Owner != "shop" {
				t.Errorf("owner: made %q, read %q", made.Owner, full.Owner)
			}
			for name, v := range made.Fields {
				if want, ok := full.Fields[name]; !ok || !reflect.DeepEqual(spec.Canon(v), spec.Canon(want)) {
					t.Errorf("create reports %s = %v, a read %v", name, v, want)
				}
			}
			// What the create reports of the attributes is what a read
			// says: the ARN, the id, a secret's version, a queue's URL.
			for name, v := range made.Attributes {
				if full.Attributes[name] != v {
					t.Errorf("create reports attribute %s = %q, a read %q", name, v, full.Attributes[name])
				}
			}
			for _, name := range tc.attrs {
				if made.Attributes[name] == "" {
					t.Errorf("create reports no %s", name)
				}
			}
			if tc.update != nil {
				before := snapshot(calls, tc.readback)
				up := target
				up.Fields = tc.update
				up.Attributes = made.Attributes // what the engine observed
				updated, err := d.Update(nothing, up, []string{spec.TagsField})
				if err != nil {
					t.Fatal(err)
				}
				for _, op := range tc.readback {
					if calls.count(op) != before[op] && !(op == tc.tagsRead && calls.count(op) == before[op]+1) {
						t.Errorf("update read back with %s", op)
					}
				}
				again, err := d.Read(ctx, testRegion, tc.name)
				if err != nil {
					t.Fatal(err)
				}
				if updated.Owner != again.Owner || !reflect.DeepEqual(spec.Canon(updated.Fields[spec.TagsField]), spec.Canon(again.Fields[spec.TagsField])) {
					t.Errorf("update reports %v (%s), a read %v (%s)", updated.Fields[spec.TagsField], updated.Owner, again.Fields[spec.TagsField], again.Owner)
				}
			}
			if tc.skipped == "" {
				return
			}
			n := calls.count(tc.skipped)
			got, err := d.Read(nothing, testRegion, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if calls.count(tc.skipped) != n {
				t.Errorf("a read that wants only the tags called %s", tc.skipped)
			}
			if got.Owner != "shop" {
				t.Errorf("the mark is not read: %q", got.Owner)
			}
		})
	}
}

func snapshot(c *callCounter, ops []string) map[string]int {
	out := map[string]int{}
	for _, op := range ops {
		out[op] = c.count(op)
	}
	return out
}

// A queue something refers to reads back its ARN alone after the create:
// one GetQueueAttributes, no ListQueueTags (the tags are what was sent).
func TestQueueCreateReadsOnlyTheARNItIsAskedFor(t *testing.T) {
	calls := &callCounter{}
	b, _ := newTestBackend(t, calls.option())
	ctx := providers.WithWant(context.Background(), providers.Want{Fields: map[string]bool{}, Attributes: map[string]bool{"arn": true}})
	d, _ := b.Driver(spec.Queues)
	made, err := d.Create(ctx, providers.Target{Name: "want-arn", Region: testRegion, Fields: map[string]any{"visibilityTimeoutSec": 30.0}, Owner: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Delete(context.Background(), providers.Target{Name: "want-arn", Region: testRegion})
	if calls.count("GetQueueAttributes") != 1 || calls.count("ListQueueTags") != 0 {
		t.Errorf("GetQueueAttributes %d, ListQueueTags %d: want 1 and 0", calls.count("GetQueueAttributes"), calls.count("ListQueueTags"))
	}
	if made.Attributes["arn"] == "" || made.Attributes["url"] == "" {
		t.Errorf("attributes %v", made.Attributes)
	}
}

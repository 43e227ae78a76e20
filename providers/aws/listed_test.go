package aws

import (
	"context"
	"reflect"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// ReadListed reports what Read reports, in fewer calls, with or without
// the tag scan's tags; a resource gone since the listing is NotFound.
func TestReadListedMatchesRead(t *testing.T) {
	calls := &callCounter{}
	b, _ := newTestBackend(t, calls.option())
	ctx := context.Background()
	for _, tc := range []struct {
		kind   spec.Kind
		name   string
		fields map[string]any
	}{
		{spec.Queues, "listed-q", map[string]any{"visibilityTimeoutSec": 45.0}},
		{spec.ObjectStore, "listed-bucket", map[string]any{"versioning": true}},
		{spec.ImageRegistry, "listed-repo", map[string]any{"immutableTags": true}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			d, _ := b.Driver(tc.kind)
			tc.fields[spec.TagsField] = map[string]any{"team": "web"}
			if _, err := d.Create(ctx, providers.Target{Name: tc.name, Region: testRegion, Fields: tc.fields, Owner: "shop"}); err != nil {
				t.Fatal(err)
			}
			defer d.Delete(ctx, providers.Target{Name: tc.name, Region: testRegion})
			listed, err := d.List(ctx, testRegion)
			if err != nil {
				t.Fatal(err)
			}
			var one providers.Resource
			for _, r := range listed {
				if r.Name == tc.name {
					one = r
				}
			}
			before := calls.total()
			want, err := d.Read(ctx, testRegion, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			readCalls := calls.total() - before
			lr := d.(providers.ListedReader)
			for _, tags := range []map[string]string{nil, {"team": "web", spec.OwnershipTagKey: "shop"}} {
				before = calls.total()
				got, err := lr.ReadListed(ctx, one, tags)
				if err != nil {
					t.Fatal(err)
				}
				if n := calls.total() - before; n >= readCalls {
					t.Errorf("tags %v: ReadListed made %d calls, Read %d", tags, n, readCalls)
				}
				if !reflect.DeepEqual(got.Fields, want.Fields) || got.Owner != want.Owner || got.Attributes["arn"] != want.Attributes["arn"] {
					t.Errorf("tags %v: ReadListed gave %+v, Read %+v", tags, got, want)
				}
			}
			if err := d.Delete(ctx, providers.Target{Name: tc.name, Region: testRegion}); err != nil {
				t.Fatal(err)
			}
			if _, err := lr.ReadListed(ctx, one, nil); errorCode(err) != providers.NotFound {
				t.Errorf("after delete: %v, want not found", err)
			}
		})
	}
}

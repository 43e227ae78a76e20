package aws

import (
	"context"
	"reflect"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// ReadListed reports what Read reports, in fewer calls, with or without
// the tag scan's tags (without them, as many for the kinds untaggedAsRead
// says); a resource gone since the listing is NotFound.
// Wanting only the tags, with the scan's, it makes exactly tagsOnly calls:
// none where the listing (or the scan) answers everything but fields only
// some declare (a VPC's DNS attributes, a zone's name servers, a load
// balancer's attributes, a function's image, a lambda group's function),
// DescribeTable alone for a table (its TTL and backups are read only when
// declared).
func TestReadListedMatchesRead(t *testing.T) {
	calls := &callCounter{}
	b, srv := newTestBackend(t, calls.option())
	ctx := context.Background()
	zipPath, zipSHA := writeZip(t, t.TempDir(), "listed.zip", "def handler(e, c): return 1\n")
	for _, tc := range []struct {
		kind   spec.Kind
		name   string
		fields map[string]any
		// prepare adds the fields that need other resources first.
		prepare func(t *testing.T, fields map[string]any)
		// tagsOnly is the number of calls ReadListed makes wanting only
		// the tags, given the scan's.
		tagsOnly int
		// untaggedAsRead: without the scan's tags, wanting everything,
		// ReadListed costs what Read does rather than less: a table's
		// listing has its names only, and a function's GetFunction, its
		// one call, has the tags.
		untaggedAsRead bool
	}{
		{spec.Queues, "listed-q", map[string]any{"visibilityTimeoutSec": 45.0}, nil, 0, false},
		{spec.ObjectStore, "listed-bucket", map[string]any{"versioning": true}, nil, 0, false},
		{spec.ImageRegistry, "listed-repo", map[string]any{"immutableTags": true}, nil, 0, false},
		{spec.VPC, "listed-vpc", map[string]any{"cidr": "10.93.0.0/16", "enableDnsHostnames": true}, nil, 0, false},
		{spec.Route53Zone, "listed-zone.example.com", map[string]any{"comment": "listed"}, nil, 0, false},
		{spec.ALB, "listed-alb", map[string]any{"idleTimeoutSec": 30.0}, func(t *testing.T, fields map[string]any) {
			fields["subnets"] = makeNet(t, b, "listed", "10.94.0.0/16", "10.94.1.0/24", "10.94.2.0/24", "10.94.3.0/24").zones("ab")
		}, 0, false},
		{spec.DynamoDBTable, "listed-table", map[string]any{"hashKey": "pk", "rangeKey": "sk", "rangeKeyType": "N",
			"ttlAttribute": "expires", "pointInTimeRecovery": true}, nil, 1, true},
		{spec.LambdaFunction, "listed-fn", map[string]any{"role": fnRoleA, "zip": zipPath, "codeSha256": zipSHA,
			"runtime": "python3.13", "handler": "app.handler", "memoryMb": 256.0, "timeoutSec": 30.0, "architecture": "arm64",
			"env": map[string]any{"A": "1"}}, func(t *testing.T, _ map[string]any) { lambdaFixture(t, b, srv) }, 0, true},
		{spec.ALBTargetGroup, "listed-tg", map[string]any{"targetType": "lambda", "function": "listed-tg-fn"}, func(t *testing.T, _ map[string]any) {
			tgFunctions(t, b, srv, "listed-tg-fn")
		}, 0, false},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			d, _ := b.Driver(tc.kind)
			tc.fields[spec.TagsField] = map[string]any{"team": "web"}
			if tc.prepare != nil {
				tc.prepare(t, tc.fields)
			}
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
			if one.Name == "" {
				t.Fatalf("%s is not listed", tc.name)
			}
			before := calls.total()
			want, err := d.Read(ctx, testRegion, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			readCalls := calls.total() - before
			lr, ok := d.(providers.ListedReader)
			if !ok {
				t.Fatalf("the %s driver has no ReadListed", tc.kind)
			}
			for _, tags := range []map[string]string{nil, {"team": "web", spec.OwnershipTagKey: "shop"}} {
				before = calls.total()
				got, err := lr.ReadListed(ctx, one, tags)
				if err != nil {
					t.Fatal(err)
				}
				if n := calls.total() - before; n > readCalls || n == readCalls && (tags != nil || !tc.untaggedAsRead) {
					t.Errorf("tags %v: ReadListed made %d calls, Read %d", tags, n, readCalls)
				}
				if !reflect.DeepEqual(got.Fields, want.Fields) || got.Owner != want.Owner || !reflect.DeepEqual(got.Attributes, want.Attributes) {
					t.Errorf("tags %v: ReadListed gave %+v, Read %+v", tags, got, want)
				}
			}
			onlyTags := providers.WithWant(ctx, providers.Want{Fields: map[string]bool{spec.TagsField: true}})
			before = calls.total()
			got, err := lr.ReadListed(onlyTags, one, map[string]string{"team": "web", spec.OwnershipTagKey: "shop"})
			if err != nil {
				t.Fatal(err)
			}
			if n := calls.total() - before; n != tc.tagsOnly {
				t.Errorf("wanting only the tags, with the scan's, ReadListed made %d calls, want %d", n, tc.tagsOnly)
			}
			if got.Owner != "shop" || !reflect.DeepEqual(got.Fields[spec.TagsField], want.Fields[spec.TagsField]) {
				t.Errorf("wanting only the tags: owner %q, tags %v; Read: %v", got.Owner, got.Fields[spec.TagsField], want.Fields[spec.TagsField])
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

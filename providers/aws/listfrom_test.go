package aws

import (
	"context"
	"reflect"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// A listing that starts from another kind's (providers.ListerFrom)
// reports what its own List reports, without the calls that kind's
// listing made already; a base that reports a resource without the id
// the listing needs cannot serve (ok=false).
func TestListFromMatchesList(t *testing.T) {
	calls := &callCounter{}
	b, _ := newTestBackend(t, calls.option())
	ctx := context.Background()
	mk := func(t *testing.T, k spec.Kind, name string, fields map[string]any) {
		t.Helper()
		d, _ := b.Driver(k)
		if _, err := d.Create(ctx, providers.Target{Name: name, Region: testRegion, Owner: "shop", Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		kind    spec.Kind
		prepare func(t *testing.T)
		// spared are the calls the base's listing made, which ListFrom
		// must not make again.
		spared []string
		// idless is the attribute whose absence leaves a base unable to
		// serve.
		idless string
	}{
		{spec.Route53Record, func(t *testing.T) {
			zone := testStem() + ".example.com"
			mk(t, spec.Route53Zone, zone, nil)
			mk(t, spec.Route53Record, "www."+zone+":A", map[string]any{"zone": zone, "ttl": 300.0, "values": []any{"192.0.2.1"}})
			mk(t, spec.Route53Record, "txt."+zone+":TXT", map[string]any{"zone": zone, "ttl": 60.0, "values": []any{`"hello"`}})
		}, []string{"ListHostedZones", "ListTagsForResources"}, "zoneId"},
		{spec.ALBListener, func(t *testing.T) {
			listenerEstate(t, b)
			mk(t, spec.ALBListener, "web", map[string]any{"loadBalancer": "lis-one", "port": 80.0, "targetGroup": "lis-web"})
			mk(t, spec.ALBListener, "api", map[string]any{"loadBalancer": "lis-two", "port": 8080.0, "targetGroup": "lis-api"})
		}, []string{"DescribeLoadBalancers"}, "arn"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			tc.prepare(t)
			d, _ := b.Driver(tc.kind)
			lf := d.(providers.ListerFrom)
			bd, _ := b.Driver(lf.ListsFrom())
			base, err := bd.List(ctx, testRegion)
			if err != nil {
				t.Fatal(err)
			}
			want, err := d.List(ctx, testRegion)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 2 {
				t.Fatalf("List found %d, want the 2 made", len(want))
			}
			spared := map[string]int{}
			for _, op := range tc.spared {
				spared[op] = calls.count(op)
			}
			got, ok, err := lf.ListFrom(ctx, testRegion, base)
			if err != nil || !ok {
				t.Fatalf("ListFrom: ok %v, %v", ok, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ListFrom gave %+v, List %+v", got, want)
			}
			for op, n := range spared {
				if m := calls.count(op); m != n {
					t.Errorf("ListFrom made %d %s, which the base's listing made already", m-n, op)
				}
			}
			idless := make([]providers.Resource, len(base))
			copy(idless, base)
			idless[0].Attributes = map[string]string{}
			if _, ok, err := lf.ListFrom(ctx, testRegion, idless); ok || err != nil {
				t.Errorf("a base with a resource without its %s: ok %v, %v; want it refused", tc.idless, ok, err)
			}
		})
	}
}

// A load balancer deleted between the alb listing and the listeners'
// has no listeners, and is no failure.
func TestListenersListFromALoadBalancerGoneSinceItsListing(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	listenerEstate(t, b)
	d, _ := b.Driver(spec.ALBListener)
	if _, err := d.Create(ctx, providers.Target{Name: "web", Region: testRegion, Owner: "shop",
		Fields: map[string]any{"loadBalancer": "lis-one", "port": 80.0, "targetGroup": "lis-web"}}); err != nil {
		t.Fatal(err)
	}
	ad, _ := b.Driver(spec.ALB)
	base, err := ad.List(ctx, testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Delete(ctx, providers.Target{Name: "lis-two", Region: testRegion}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := d.(providers.ListerFrom).ListFrom(ctx, testRegion, base)
	if err != nil || !ok {
		t.Fatalf("ListFrom with a load balancer gone: ok %v, %v", ok, err)
	}
	if len(got) != 1 || got[0].Name != "web" {
		t.Errorf("ListFrom gave %+v, want the listener web", got)
	}
}

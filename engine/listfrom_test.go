package engine

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// fromBackend wraps a memory backend whose route53-record driver starts
// its listing from route53-zone's, as the AWS driver does.
type fromBackend struct {
	providers.Backend
	mu sync.Mutex
	// lists counts the records' own listings; from holds the names of
	// each base a ListFrom was given.
	lists int
	from  []string
	// serves is ListFrom's ok.
	serves bool
}

func (b *fromBackend) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	if k != spec.Route53Record || !ok {
		return d, ok
	}
	return &fromDriver{Driver: d, b: b}, true
}

type fromDriver struct {
	providers.Driver
	b *fromBackend
}

func (d *fromDriver) List(ctx context.Context, region string) ([]providers.Resource, error) {
	d.b.mu.Lock()
	d.b.lists++
	d.b.mu.Unlock()
	return d.Driver.List(ctx, region)
}

func (d *fromDriver) ListsFrom() spec.Kind { return spec.Route53Zone }

func (d *fromDriver) ListFrom(ctx context.Context, region string, base []providers.Resource) ([]providers.Resource, bool, error) {
	var names []string
	for _, r := range base {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	d.b.mu.Lock()
	d.b.from = append(d.b.from, strings.Join(names, ","))
	d.b.mu.Unlock()
	if !d.b.serves {
		return nil, false, nil
	}
	rs, err := d.Driver.List(ctx, region)
	return rs, true, err
}

// A listing that starts from another kind's (a record's from the zones)
// takes that kind's listing when the run lists it too, and lists on its
// own when the run does not, or when the listing it was given cannot
// serve.
func TestAListingStartsFromTheListingItStartsWith(t *testing.T) {
	const zone = `{"address": "aws/route53-zone/example.com", "spec": {}}`
	const record = `{"address": "aws/route53-record/www.example.com:A", "spec": {"zone": {"ref": "aws/route53-zone/example.com"}, "ttl": 300, "values": ["192.0.2.1"]}}`
	doc := func(rs ...string) string {
		return `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": [` +
			strings.Join(rs, ", ") + `]}`
	}
	for _, tc := range []struct {
		name      string
		serves    bool
		withZone  bool
		wantLists int
		wantFrom  string
	}{
		{"both listed", true, true, 0, "example.com"},
		{"the base cannot serve", false, true, 1, "example.com"},
		{"the base not listed", true, false, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.mustApply(doc(zone, record))
			b := &fromBackend{Backend: f.cloud.Backend(spec.AWS), serves: tc.serves}
			e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
			l, _ := f.store.LoadLedger(context.Background())
			d := doc(zone, record)
			if !tc.withZone {
				// Only the record's ledger row left, and nothing
				// declared: nothing lists zones.
				rows := l.Rows[:0]
				for _, r := range l.Rows {
					if r.Kind == spec.Route53Record {
						rows = append(rows, r)
					}
				}
				l.Rows = rows
				d = doc()
			}
			p, err := e.Plan(context.Background(), model(t, d), nil, l, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.withZone && len(actionsOf(p)) != 0 {
				t.Errorf("plan: %v, want nothing to do", actionsOf(p))
			}
			if got := strings.Join(b.from, ";"); b.lists != tc.wantLists || got != tc.wantFrom {
				t.Errorf("records listed %d times on their own, and from %q; want %d and %q", b.lists, got, tc.wantLists, tc.wantFrom)
			}
		})
	}
}

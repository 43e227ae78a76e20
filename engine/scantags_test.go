package engine

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// scanBackend wraps a memory backend with a tag scan that answers fixed
// tags, and drivers that take them as ListedReaders do.
type scanBackend struct {
	providers.Backend
	tags map[string]string // the scan's tags for every resource
	// scanKind is the kind whose resources the scan reports (queues
	// when unset), each as reportAs (scanKind when unset).
	scanKind, reportAs spec.Kind
	mu                 sync.Mutex
	// reads counts full reads; listed counts ReadListed with scan tags.
	reads, listed int
	// regions are the regions the full reads were made in.
	regions []string
}

var _ providers.Discoverer = (*scanBackend)(nil)

func (b *scanBackend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	k, as := b.scanKind, b.reportAs
	if k == "" {
		k = spec.Queues
	}
	if as == "" {
		as = k
	}
	d, _ := b.Backend.Driver(k)
	rs, err := d.List(ctx, region)
	if err != nil {
		return nil, err
	}
	var out []providers.Owned
	for _, r := range rs {
		out = append(out, providers.Owned{Kind: as, Name: r.Name, Region: region, Owner: b.tags[spec.OwnershipTagKey], Tags: b.tags})
	}
	return out, nil
}

func (b *scanBackend) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	return &scanDriver{Driver: d, b: b}, ok
}

type scanDriver struct {
	providers.Driver
	b *scanBackend
}

func (d *scanDriver) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	d.b.mu.Lock()
	d.b.reads++
	d.b.regions = append(d.b.regions, region)
	d.b.mu.Unlock()
	return d.Driver.Read(ctx, region, name)
}

// ReadListed reports the scan's tags instead of the resource's, as a
// driver that trusts them does.
func (d *scanDriver) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	r, err := d.Driver.Read(ctx, listed.Region, listed.Name)
	if err != nil || tags == nil {
		return r, err
	}
	d.b.mu.Lock()
	d.b.listed++
	d.b.mu.Unlock()
	r.Fields[spec.TagsField] = map[string]any{}
	for k, v := range tags {
		r.Fields[spec.TagsField].(map[string]any)[k] = v
	}
	r.Owner = tags[spec.OwnershipTagKey]
	return r, nil
}

const tagDoc = `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"},
 "resources": [{"address": "aws/queues/jobs", "spec": {"tags": {"team": "TEAM"}}}]}`

// Tags from the scan are taken when they agree with the declaration; when
// they differ, the resource is read before an update is planned, so a
// scan that lags behind an apply never proposes a change, and real drift
// still does.
func TestScannedTagsAreConfirmedBeforeAnUpdate(t *testing.T) {
	for _, tc := range []struct {
		name            string
		declared, cloud string // the team tag in the document and on the queue
		scanned         string // what the lagging scan says
		wantUpdate      bool
		wantReads       int
	}{
		{"scan agrees", "web", "web", "web", false, 0},
		{"scan lags behind", "web", "web", "old", false, 1},
		{"real drift", "web", "ops", "ops", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.mustApply(replaceAll(tagDoc, "TEAM", tc.cloud))
			b := &scanBackend{Backend: f.cloud.Backend(spec.AWS), tags: map[string]string{"team": tc.scanned, spec.OwnershipTagKey: "shop"}}
			e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
			l, _ := f.store.LoadLedger(context.Background())
			p, err := e.Plan(context.Background(), model(t, replaceAll(tagDoc, "TEAM", tc.declared)), nil, l, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Summary.Update == 1; got != tc.wantUpdate {
				t.Errorf("update planned: %v, want %v (%+v)", got, tc.wantUpdate, p.Summary)
			}
			if b.listed != 1 || b.reads != tc.wantReads {
				t.Errorf("%d reads with the scan's tags and %d full reads, want 1 and %d", b.listed, b.reads, tc.wantReads)
			}
		})
	}
}

func replaceAll(s, old, new string) string { return strings.ReplaceAll(s, old, new) }

// A tagged queue that moves region is found, with the scan's tags, in the
// region its ledger row records. That old copy is to be deleted, never
// compared: confirming its tags read the declared address at the new
// region's observation, which does not exist, so at region "" (the AWS
// SDK then retried for the whole retry budget). The move plans as a
// replace, and no read is made without a region.
func TestMovedTaggedQueueIsReplacedWithoutARegionlessRead(t *testing.T) {
	f := newFixture(t)
	f.mustApply(replaceAll(tagDoc, "TEAM", "web"))
	b := &scanBackend{Backend: f.cloud.Backend(spec.AWS), tags: map[string]string{"team": "web", spec.OwnershipTagKey: "shop"}}
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
	l, _ := f.store.LoadLedger(context.Background())
	moved := replaceAll(replaceAll(tagDoc, "TEAM", "web"), `"address": "aws/queues/jobs",`, `"address": "aws/queues/jobs", "region": "eu-west-1",`)
	p, err := e.Plan(context.Background(), model(t, moved), nil, l, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actionsOf(p), ", "); got != "replace aws/queues/jobs" {
		t.Errorf("plan: %s, want replace aws/queues/jobs", got)
	}
	for _, r := range b.regions {
		if r == "" {
			t.Errorf("a read was made without a region (reads in %q)", b.regions)
			break
		}
	}
}

// The tag scan reports a Lambda function under compute, the portable kind
// whose physical twin lambda-function is. A lambda-function read takes
// those tags all the same, by the physical resource: without them each
// function would be asked for its tags again.
func TestScannedTagsReachTheTwinKind(t *testing.T) {
	const doc = `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"},
 "resources": [{"address": "aws/lambda-function/api", "spec": {"image": "123456789012.dkr.ecr.eu-west-3.amazonaws.com/api:1", "role": {"ref": "aws/iam-role/api"}, "tags": {"team": "web"}}},
  {"address": "aws/iam-role/api", "spec": {"trust": "{\"Version\": \"2012-10-17\", \"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"Service\": \"lambda.amazonaws.com\"}, \"Action\": \"sts:AssumeRole\"}]}"}}]}`
	f := newFixture(t)
	f.mustApply(doc)
	b := &scanBackend{Backend: f.cloud.Backend(spec.AWS), tags: map[string]string{"team": "web", spec.OwnershipTagKey: "shop"},
		scanKind: spec.LambdaFunction, reportAs: spec.Compute}
	e := New(Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
	l, _ := f.store.LoadLedger(context.Background())
	p, err := e.Plan(context.Background(), model(t, doc), nil, l, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(actionsOf(p)) != 0 {
		t.Errorf("plan: %v, want nothing to do", actionsOf(p))
	}
	if b.listed != 1 || b.reads != 0 {
		t.Errorf("%d reads with the scan's tags and %d full reads, want 1 and 0", b.listed, b.reads)
	}
}

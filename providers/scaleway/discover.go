package scaleway

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

var _ providers.ListingDiscoverer = (*Backend)(nil)

// Owned lists, in region, every resource of every kind that carries an
// ownership mark: Scaleway has no tag-scan API, so it is one listing per
// kind (each scoped to the project), plus a read of each bucket, whose
// listing carries no tags. A kind whose resources are another kind's is
// left out (compute: its containers are listed as scaleway-container, their
// physical twin). Name-prefix kinds (queues, postgres) can only name this
// backend's fleet.
func (b *Backend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	owned, _, err := b.OwnedListed(ctx, region, deep)
	return owned, err
}

// OwnedListed is Owned, with the listings it made (a bucket's, the reads
// of its buckets): the engine observes the fleet's kinds in region from
// them rather than listing and reading each again. The kinds are listed
// concurrently, and the buckets read a few at a time: on a plan these are
// all the calls the Scaleway side makes.
func (b *Backend) OwnedListed(ctx context.Context, region string, deep bool) ([]providers.Owned, []providers.Listed, error) {
	var kinds []spec.Kind
	for _, k := range Kinds() {
		if !scannedAsTwin(k) {
			kinds = append(kinds, k)
		}
	}
	listed := make([]providers.Listed, len(kinds))
	g, gctx := errgroup.WithContext(ctx)
	for i, k := range kinds {
		g.Go(func() error {
			rs, err := b.scanListing(gctx, k, region)
			listed[i] = providers.Listed{Kind: k, Region: region, Resources: rs}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return providers.MarkedIn(listed, nil), listed, nil
}

// scanReadLimit bounds the reads of one kind's listed resources that a
// scan makes at once.
const scanReadLimit = 8

// scanListing lists kind k in region. Where the listing carries no owner
// (scanReads: buckets), it is what reading each listed resource found,
// each complete, so that observing it reads none of them again.
func (b *Backend) scanListing(ctx context.Context, k spec.Kind, region string) ([]providers.Resource, error) {
	d, _ := b.Driver(k)
	rs, err := d.List(ctx, region)
	if err != nil {
		return nil, fmt.Errorf("scaleway/%s: %w", k, err)
	}
	if !entries[k].scanReads {
		return rs, nil
	}
	read := make([]*providers.Resource, len(rs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(scanReadLimit)
	for i, r := range rs {
		g.Go(func() error {
			full, err := d.Read(gctx, region, r.Name)
			if errorCode(err) == providers.NotFound {
				return nil // listed, then gone
			}
			if err != nil {
				return fmt.Errorf("scaleway/%s/%s: %w", k, r.Name, err)
			}
			full.Complete = true
			read[i] = &full
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]providers.Resource, 0, len(rs))
	for _, r := range read {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, nil
}

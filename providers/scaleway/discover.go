package scaleway

import (
	"context"
	"fmt"

	"github.com/infra-iac/infra/providers"
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
// them rather than listing and reading each again.
func (b *Backend) OwnedListed(ctx context.Context, region string, deep bool) ([]providers.Owned, []providers.Listed, error) {
	var out []providers.Owned
	var listed []providers.Listed
	for _, k := range Kinds() {
		if scannedAsTwin(k) {
			continue
		}
		d, _ := b.Driver(k)
		rs, err := d.List(ctx, region)
		if err != nil {
			return nil, nil, fmt.Errorf("scaleway/%s: %w", k, err)
		}
		l := providers.Listed{Kind: k, Region: region, Resources: rs}
		if entries[k].scanReads {
			// The listing is what the reads found, each complete, so that
			// observing it reads none of them again.
			l.Resources = nil
		}
		for _, r := range rs {
			if entries[k].scanReads {
				full, err := d.Read(ctx, region, r.Name)
				if errorCode(err) == providers.NotFound {
					continue // listed, then gone
				}
				if err != nil {
					return nil, nil, fmt.Errorf("scaleway/%s/%s: %w", k, r.Name, err)
				}
				full.Complete = true
				l.Resources = append(l.Resources, full)
				r = full
			}
			if r.Owner != "" {
				out = append(out, providers.Owned{Kind: k, Name: r.Name, Region: region, Owner: r.Owner})
			}
		}
		listed = append(listed, l)
	}
	return out, listed, nil
}

package scaleway

import (
	"context"
	"fmt"

	"github.com/infra-iac/infra/providers"
)

var _ providers.Discoverer = (*Backend)(nil)

// Owned lists, in region, every resource of every kind that carries an
// ownership mark: Scaleway has no tag-scan API, so it is one listing per
// kind (each scoped to the project), plus a read of each bucket, whose
// listing carries no tags. A kind whose resources are another kind's is
// left out (compute: its containers are listed as scaleway-container, their
// physical twin). Name-prefix kinds (queues, postgres) can only name this
// backend's fleet.
func (b *Backend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	var out []providers.Owned
	for _, k := range Kinds() {
		if scannedAsTwin(k) {
			continue
		}
		d, _ := b.Driver(k)
		rs, err := d.List(ctx, region)
		if err != nil {
			return nil, fmt.Errorf("scaleway/%s: %w", k, err)
		}
		for _, r := range rs {
			owner := r.Owner
			if entries[k].scanReads {
				full, err := d.Read(ctx, region, r.Name)
				if errorCode(err) == providers.NotFound {
					continue // listed, then gone
				}
				if err != nil {
					return nil, fmt.Errorf("scaleway/%s/%s: %w", k, r.Name, err)
				}
				owner = full.Owner
			}
			if owner != "" {
				out = append(out, providers.Owned{Kind: k, Name: r.Name, Region: region, Owner: owner})
			}
		}
	}
	return out, nil
}

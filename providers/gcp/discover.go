package gcp

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

var _ providers.ListingDiscoverer = (*Backend)(nil)

// Owned lists, in region, every resource of every kind that carries an
// ownership mark: one paginated listing per kind, each scoped to the
// project. Every GCP listing carries the labels (or, for a service
// account, the description), so no resource is read on top.
//
// With Options.AssetInventory, a deep scan (discover's) asks Cloud Asset
// Inventory instead, in one search for the labelled kinds, and lists only
// the service accounts; a search the credentials may not make falls back
// to the listings. It is not the default: Google's index lags the APIs by
// minutes, and a discover that rebuilds a ledger must not miss what was
// made a minute ago (docs/providers.md has what each costs).
func (b *Backend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	owned, _, err := b.OwnedListed(ctx, region, deep)
	return owned, err
}

// OwnedListed is Owned, with the listings it made: the engine observes
// the fleet's kinds in region from them rather than listing each again.
func (b *Backend) OwnedListed(ctx context.Context, region string, deep bool) ([]providers.Owned, []providers.Listed, error) {
	if deep && b.assetSearch() {
		out, err := b.searchOwned(ctx, region)
		switch {
		case errorCode(err) == providers.PermissionDenied:
			b.mu.Lock()
			b.noAssets = true
			b.mu.Unlock()
		case err != nil:
			return nil, nil, fmt.Errorf("gcp: asset search: %w", err)
		default:
			accounts, listed, err := b.listOwned(ctx, region, []spec.Kind{spec.IAM})
			return append(out, accounts...), listed, err
		}
	}
	return b.listOwned(ctx, region, Kinds())
}

func (b *Backend) assetSearch() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opts.AssetInventory && !b.noAssets
}

// listOwned is the marked resources of kinds, by their listings, and the
// listings. The listings run concurrently: on a plan they are all the
// calls the GCP side makes, one round trip instead of one per kind.
func (b *Backend) listOwned(ctx context.Context, region string, kinds []spec.Kind) ([]providers.Owned, []providers.Listed, error) {
	listed := make([]providers.Listed, len(kinds))
	g, gctx := errgroup.WithContext(ctx)
	for i, k := range kinds {
		g.Go(func() error {
			d, _ := b.Driver(k)
			rs, err := d.List(gctx, region)
			if err != nil {
				return fmt.Errorf("gcp/%s: %w", k, err)
			}
			listed[i] = providers.Listed{Kind: k, Region: region, Resources: rs}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return providers.MarkedIn(listed, tagsOf), listed, nil
}

// tagsOf is a listed resource's tags, mark included, as the scan hands
// them to the engine.
func tagsOf(r providers.Resource) map[string]string {
	m, ok := r.Fields["tags"].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

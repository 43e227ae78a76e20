package gcp

import (
	"context"
	"fmt"

	"github.com/infra-iac/infra/providers"
)

var _ providers.Discoverer = (*Backend)(nil)

// Owned lists, in region, every resource of every kind that carries an
// ownership mark: one paginated listing per kind, each scoped to the
// project. Every GCP listing carries the labels (or, for a service
// account, the description), so no resource is read on top, and deep
// changes nothing. Cloud Asset Inventory could answer in one search, but
// only for a fleet whose credentials may read the project's assets, and
// it lags the APIs by minutes: docs/providers.md says what was measured.
func (b *Backend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	var out []providers.Owned
	for _, k := range Kinds() {
		d, _ := b.Driver(k)
		rs, err := d.List(ctx, region)
		if err != nil {
			return nil, fmt.Errorf("gcp/%s: %w", k, err)
		}
		for _, r := range rs {
			if r.Owner != "" {
				out = append(out, providers.Owned{Kind: k, Name: r.Name, Region: region, Owner: r.Owner, Tags: tagsOf(r)})
			}
		}
	}
	return out, nil
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

package gcp

import (
	"context"
	"errors"
	"strings"

	cloudasset "google.golang.org/api/cloudasset/v1"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// assetKinds are the asset types Cloud Asset Inventory names the labelled
// kinds by. A service account has no labels, so iam is not among them.
var assetKinds = map[string]spec.Kind{
	"storage.googleapis.com/Bucket":              spec.ObjectStore,
	"pubsub.googleapis.com/Topic":                spec.Queues,
	"secretmanager.googleapis.com/Secret":        spec.Secrets,
	"artifactregistry.googleapis.com/Repository": spec.ImageRegistry,
	"sqladmin.googleapis.com/Instance":           spec.Postgres,
	"run.googleapis.com/Service":                 spec.Compute,
}

// searchOwned asks Cloud Asset Inventory, in one paginated search, for
// every resource of the project that carries the mark's label. A topic's
// and a secret's location is "global" there (their region is a storage
// policy, a replica), so those are reported in every region asked, and
// the engine's read of each settles where it is.
func (b *Backend) searchOwned(ctx context.Context, region string) ([]providers.Owned, error) {
	project, err := b.scope(ctx)
	if err != nil {
		return nil, err
	}
	svc, err := b.assets.get("Cloud Asset Inventory", func() (*cloudasset.Service, error) {
		return restService(ctx, b, "cloudasset", cloudasset.NewService)
	})
	if err != nil {
		return nil, err
	}
	types := make([]string, 0, len(assetKinds))
	for t := range assetKinds {
		types = append(types, t)
	}
	var out []providers.Owned
	pages := 0
	call := svc.V1.SearchAllResources("projects/" + project).Query("labels." + spec.OwnershipTagKey + ":*").AssetTypes(types...).PageSize(500)
	err = call.Pages(ctx, func(page *cloudasset.SearchAllResourcesResponse) error {
		if pages++; pages > listPageLimit {
			return errors.New("gcp: the asset search passed the page budget; refusing to report a prefix of it")
		}
		for _, r := range page.Results {
			if o, ok := assetOwned(r, region); ok {
				out = append(out, o)
			}
		}
		return nil
	})
	return out, err
}

// assetOwned is one search result as the scan reports it, if it is in
// region (or global).
func assetOwned(r *cloudasset.ResourceSearchResult, region string) (providers.Owned, bool) {
	k, ok := assetKinds[r.AssetType]
	if !ok || (!strings.EqualFold(r.Location, region) && r.Location != "global") || r.Labels[spec.OwnershipTagKey] == "" {
		return providers.Owned{}, false
	}
	return providers.Owned{Kind: k, Name: shortName(r.Name), Region: region,
		Owner: r.Labels[spec.OwnershipTagKey], Tags: r.Labels}, true
}

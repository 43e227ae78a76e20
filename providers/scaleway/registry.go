package scaleway

import (
	"context"
	"time"

	registry "github.com/scaleway/scaleway-sdk-go/api/registry/v1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// registries is image-registry: a Container Registry namespace. The
// product has no tags, so the ownership mark and the user tags live in the
// description, written as a query string:
// "managed-by-infra=shop&team=web". Names are unique per region across
// every organization (the endpoint is rg.<region>.scw.cloud/<name>).
// Registry tags are always mutable: immutableTags true is refused.
type registries struct {
	b   *Backend
	api *registry.API
}

var (
	_ providers.Driver   = (*registries)(nil)
	_ providers.Releaser = (*registries)(nil)
)

func init() {
	register(entry{kind: spec.ImageRegistry, new: func(b *Backend) providers.Driver {
		return &registries{b: b, api: registry.NewAPI(b.client)}
	}})
}

// encodeDescription writes tags, ownership tag included, as the
// description, within its limit.
func encodeDescription(t providers.Target) (string, error) {
	s, err := providers.EncodeMarkDescription(t)
	if err != nil {
		return "", err
	}
	if limit := spec.DescriptionLimit(spec.ImageRegistry, spec.Scaleway); len(s) > limit {
		return "", providers.Errorf(providers.InvalidArgument, "image-registry on scaleway keeps its tags in the namespace description, which they overflow (%d > %d characters): use fewer or shorter tags", len(s), limit)
	}
	return s, nil
}

func (d *registries) all(ctx context.Context, region string, name *string) ([]*registry.Namespace, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := allPages(ctx, spec.ImageRegistry, region, func(page int32) ([]*registry.Namespace, uint64, error) {
		out, err := d.api.ListNamespaces(&registry.ListNamespacesRequest{Region: scw.Region(region), ProjectID: &project,
			Name: name, Page: &page, PageSize: &d.b.opts.PageSize, OrderBy: registry.ListNamespacesRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Namespaces, uint64(out.TotalCount), nil
	})
	if err != nil {
		return nil, err
	}
	var live []*registry.Namespace
	for _, n := range ns {
		if n.Status != registry.NamespaceStatusDeleting {
			live = append(live, n)
		}
	}
	return live, nil
}

func (d *registries) find(ctx context.Context, region, name string) (*registry.Namespace, error) {
	ns, err := d.all(ctx, region, &name)
	if err != nil {
		return nil, err
	}
	return byName(spec.ImageRegistry, region, name, ns, func(n *registry.Namespace) string { return n.Name })
}

func registryResource(region string, n *registry.Namespace) providers.Resource {
	fields := map[string]any{"immutableTags": false}
	tags, owner, ok := providers.DecodeMarkDescription(n.Description)
	if ok {
		fields[spec.TagsField] = tags
	}
	r := providers.Resource{Name: n.Name, Region: region, Owner: owner, Complete: true, Fields: fields,
		Attributes: map[string]string{"uri": n.Endpoint}}
	if n.CreatedAt != nil {
		r.Created = *n.CreatedAt
	}
	return r
}

func (d *registries) List(ctx context.Context, region string) ([]providers.Resource, error) {
	ns, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, n := range ns {
		out = append(out, registryResource(region, n))
	}
	return out, nil
}

func (d *registries) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return registryResource(region, n), nil
}

func immutable(t providers.Target) error {
	decl, err := providers.DecodeImageRegistry(t.Fields)
	if err != nil {
		return err
	}
	if decl.ImmutableTags {
		return providers.Errorf(providers.InvalidArgument, "image-registry on scaleway cannot use immutableTags: Container Registry tags are always mutable; remove it or set false")
	}
	return nil
}

func (d *registries) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	if err := immutable(t); err != nil {
		return providers.Resource{}, err
	}
	desc, err := encodeDescription(t)
	if err != nil {
		return providers.Resource{}, err
	}
	n, err := d.api.CreateNamespace(&registry.CreateNamespaceRequest{Region: scw.Region(t.Region), Name: t.Name,
		ProjectID: &project, Description: desc, IsPublic: false}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	timeout, interval := d.b.wait()
	n, err = d.api.WaitForNamespace(&registry.WaitForNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	return registryResource(t.Region, n), nil
}

func (d *registries) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, f := range changed {
		switch f {
		case providers.ImageRegistryImmutableTags:
			if err := immutable(t); err != nil {
				return providers.Resource{}, err
			}
		case spec.TagsField:
			desc, err := encodeDescription(t)
			if err != nil {
				return providers.Resource{}, err
			}
			if n, err = d.api.UpdateNamespace(&registry.UpdateNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID,
				Description: &desc}, scw.WithContext(ctx)); err != nil {
				return providers.Resource{}, err
			}
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "image-registry: field %q cannot be updated in place", f)
		}
	}
	return registryResource(t.Region, n), nil
}

func (d *registries) Delete(ctx context.Context, t providers.Target) error {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	if _, err := d.api.DeleteNamespace(&registry.DeleteNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID}, scw.WithContext(ctx)); err != nil {
		return err
	}
	return d.b.awaitDeletion(spec.ImageRegistry, t.Name, false, func(timeout, interval *time.Duration) error {
		_, err := d.api.WaitForNamespace(&registry.WaitForNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID,
			Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
		return err
	})
}

func (d *registries) Release(ctx context.Context, region, name, owner string) error {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	tags, have, ok := providers.DecodeMarkDescription(n.Description)
	if !ok || have != owner {
		return nil
	}
	delete(tags, spec.OwnershipTagKey)
	desc, err := encodeDescription(providers.Target{Fields: map[string]any{spec.TagsField: tags}})
	if err != nil {
		return err
	}
	_, err = d.api.UpdateNamespace(&registry.UpdateNamespaceRequest{Region: scw.Region(region), NamespaceID: n.ID, Description: &desc}, scw.WithContext(ctx))
	return err
}

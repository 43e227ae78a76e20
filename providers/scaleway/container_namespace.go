package scaleway

import (
	"context"

	container "github.com/scaleway/scaleway-sdk-go/api/container/v1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// containerNamespaces is scaleway-container-namespace: a Serverless
// Containers namespace on the v1 API, owned through its tags. The v1
// namespace has no registry endpoint, so the registryEndpoint attribute
// is not published.
type containerNamespaces struct {
	b   *Backend
	api *container.API
}

var (
	_ providers.Driver   = (*containerNamespaces)(nil)
	_ providers.Releaser = (*containerNamespaces)(nil)
)

func init() {
	register(entry{kind: spec.ScalewayContainerNS, new: func(b *Backend) providers.Driver {
		return &containerNamespaces{b: b, api: container.NewAPI(b.client)}
	}})
}

func (d *containerNamespaces) all(ctx context.Context, region string, name *string) ([]*container.Namespace, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := allPages(ctx, spec.ScalewayContainerNS, region, func(page int32) ([]*container.Namespace, uint64, error) {
		out, err := d.api.ListNamespaces(&container.ListNamespacesRequest{Region: scw.Region(region), ProjectID: &project,
			Name: name, Page: &page, PageSize: &d.b.opts.PageSize, OrderBy: container.ListNamespacesRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Namespaces, out.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	var live []*container.Namespace
	for _, n := range ns {
		if n.Status != container.NamespaceStatusDeleting {
			live = append(live, n)
		}
	}
	return live, nil
}

func (d *containerNamespaces) find(ctx context.Context, region, name string) (*container.Namespace, error) {
	ns, err := d.all(ctx, region, &name)
	if err != nil {
		return nil, err
	}
	return byName(spec.ScalewayContainerNS, region, name, ns, func(n *container.Namespace) string { return n.Name })
}

func ctNamespaceResource(region string, n *container.Namespace) providers.Resource {
	tags, owner := readTags(n.Tags)
	r := providers.Resource{Name: n.Name, Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags, "description": n.Description},
		Attributes: map[string]string{"id": n.ID}}
	if n.CreatedAt != nil {
		r.Created = *n.CreatedAt
	}
	return r
}

func (d *containerNamespaces) List(ctx context.Context, region string) ([]providers.Resource, error) {
	ns, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, n := range ns {
		out = append(out, ctNamespaceResource(region, n))
	}
	return out, nil
}

func (d *containerNamespaces) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return ctNamespaceResource(region, n), nil
}

func (d *containerNamespaces) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := tagList(t)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &container.CreateNamespaceRequest{Region: scw.Region(t.Region), Name: t.Name, ProjectID: project, Tags: tags,
		EnvironmentVariables: map[string]string{}, SecretEnvironmentVariables: map[string]string{}}
	if s, ok := providers.FieldString(t.Fields, "description"); ok {
		req.Description = &s
	}
	n, err := d.api.CreateNamespace(req, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, n.ID, t.Name)
}

func (d *containerNamespaces) waitReady(ctx context.Context, region, id, name string) (providers.Resource, error) {
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the namespace to be ready", spec.ScalewayContainerNS, name)
	n, err := d.api.WaitForNamespace(&container.WaitForNamespaceRequest{Region: scw.Region(region), NamespaceID: id,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if n.Status != container.NamespaceStatusReady {
		return providers.Resource{}, providers.Errorf(providers.Conflict, "scaleway/%s/%s: namespace is %s: %s", spec.ScalewayContainerNS, name, n.Status, deref(n.ErrorMessage))
	}
	d.b.progress("scaleway/%s/%s: ready", spec.ScalewayContainerNS, name)
	return ctNamespaceResource(region, n), nil
}

func (d *containerNamespaces) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &container.UpdateNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID}
	for _, f := range changed {
		switch f {
		case "description":
			s, _ := providers.FieldString(t.Fields, f)
			req.Description = &s
		case spec.TagsField:
			tags, err := tagList(t)
			if err != nil {
				return providers.Resource{}, err
			}
			req.Tags = &tags
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "scaleway-container-namespace: field %q cannot be updated in place", f)
		}
	}
	if _, err := d.api.UpdateNamespace(req, scw.WithContext(ctx)); err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, n.ID, t.Name)
}

// Delete removes the namespace. Scaleway deletes the containers in it
// too, so a namespace still holding a container this fleet does not own
// is refused rather than taking it along (a predecessor's namespace delete
// cascaded into an unmanaged sibling).
func (d *containerNamespaces) Delete(ctx context.Context, t providers.Target) error {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return err
	}
	inside, err := allPages(ctx, spec.ScalewayContainer, t.Region, func(page int32) ([]*container.Container, uint64, error) {
		out, err := d.api.ListContainers(&container.ListContainersRequest{Region: scw.Region(t.Region), ProjectID: &project,
			NamespaceID: &n.ID, Page: &page, PageSize: &d.b.opts.PageSize}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Containers, out.TotalCount, nil
	})
	if err != nil {
		return err
	}
	for _, c := range inside {
		if _, owner := readTags(c.Tags); c.Status != container.ContainerStatusDeleting && (owner == "" || owner != t.Owner) {
			return providers.Errorf(providers.Conflict, "scaleway/%s/%s still holds container %s, which this fleet does not own; deleting the namespace would delete it too",
				spec.ScalewayContainerNS, t.Name, c.Name)
		}
	}
	if _, err := d.api.DeleteNamespace(&container.DeleteNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID}, scw.WithContext(ctx)); err != nil {
		return err
	}
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the deletion", spec.ScalewayContainerNS, t.Name)
	_, err = d.api.WaitForNamespace(&container.WaitForNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err == nil || gone(err, false) {
		return nil
	}
	return err
}

func (d *containerNamespaces) Release(ctx context.Context, region, name, owner string) error {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	tags, found := withoutOwner(n.Tags, owner)
	if !found {
		return nil
	}
	_, err = d.api.UpdateNamespace(&container.UpdateNamespaceRequest{Region: scw.Region(region), NamespaceID: n.ID, Tags: &tags}, scw.WithContext(ctx))
	return err
}

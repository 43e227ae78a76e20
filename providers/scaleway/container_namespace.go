package scaleway

import (
	"context"
	"time"

	container "github.com/scaleway/scaleway-sdk-go/api/container/v1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// containerNamespaces is scaleway-container-namespace's product: a
// Serverless Containers namespace on the v1 API, run by the namespaces
// driver. The v1 namespace has no registry endpoint, so the
// registryEndpoint attribute is not published.
type containerNamespaces struct {
	api *container.API
}

var _ namespaceProduct = containerNamespaces{}

func init() {
	register(entry{kind: spec.ScalewayContainerNS, new: func(b *Backend) providers.Driver {
		return newContainerNamespaces(b, container.NewAPI(b.client))
	}})
}

func newContainerNamespaces(b *Backend, api *container.API) *namespaces {
	return &namespaces{b: b, kind: spec.ScalewayContainerNS, product: containerNamespaces{api: api}}
}

func ctNamespace(n *container.Namespace) namespace {
	return namespace{id: n.ID, name: n.Name, description: n.Description, tags: n.Tags, status: string(n.Status),
		errorMessage: deref(n.ErrorMessage), ready: n.Status == container.NamespaceStatusReady,
		deleting: n.Status == container.NamespaceStatusDeleting, created: n.CreatedAt}
}

func (containerNamespaces) holds() (spec.Kind, string) { return spec.ScalewayContainer, "container" }

func (p containerNamespaces) list(ctx context.Context, region, project string, name *string, page int32, size uint32) ([]namespace, uint64, error) {
	out, err := p.api.ListNamespaces(&container.ListNamespacesRequest{Region: scw.Region(region), ProjectID: &project,
		Name: name, Page: &page, PageSize: &size, OrderBy: container.ListNamespacesRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	ns := make([]namespace, 0, len(out.Namespaces))
	for _, n := range out.Namespaces {
		ns = append(ns, ctNamespace(n))
	}
	return ns, out.TotalCount, nil
}

func (p containerNamespaces) create(ctx context.Context, region, project, name string, tags []string, description *string) (string, error) {
	n, err := p.api.CreateNamespace(&container.CreateNamespaceRequest{Region: scw.Region(region), Name: name, ProjectID: project,
		Tags: tags, Description: description, EnvironmentVariables: map[string]string{},
		SecretEnvironmentVariables: map[string]string{}}, scw.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return n.ID, nil
}

func (p containerNamespaces) update(ctx context.Context, region, id string, description *string, tags *[]string) error {
	_, err := p.api.UpdateNamespace(&container.UpdateNamespaceRequest{Region: scw.Region(region), NamespaceID: id,
		Description: description, Tags: tags}, scw.WithContext(ctx))
	return err
}

func (p containerNamespaces) delete(ctx context.Context, region, id string) error {
	_, err := p.api.DeleteNamespace(&container.DeleteNamespaceRequest{Region: scw.Region(region), NamespaceID: id}, scw.WithContext(ctx))
	return err
}

func (p containerNamespaces) wait(ctx context.Context, region, id string, timeout, interval *time.Duration) (namespace, error) {
	n, err := p.api.WaitForNamespace(&container.WaitForNamespaceRequest{Region: scw.Region(region), NamespaceID: id,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return namespace{}, err
	}
	return ctNamespace(n), nil
}

func (p containerNamespaces) members(ctx context.Context, region, project, id string, page int32, size uint32) ([]member, uint64, error) {
	out, err := p.api.ListContainers(&container.ListContainersRequest{Region: scw.Region(region), ProjectID: &project,
		NamespaceID: &id, Page: &page, PageSize: &size}, scw.WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	ms := make([]member, 0, len(out.Containers))
	for _, c := range out.Containers {
		ms = append(ms, member{name: c.Name, tags: c.Tags, deleting: c.Status == container.ContainerStatusDeleting})
	}
	return ms, out.TotalCount, nil
}

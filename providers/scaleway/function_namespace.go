package scaleway

import (
	"context"
	"time"

	function "github.com/scaleway/scaleway-sdk-go/api/function/v1beta1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// functionNamespaces is scaleway-function-namespace's product: a Functions
// namespace (v1beta1), run by the namespaces driver.
type functionNamespaces struct {
	api *function.API
}

var _ namespaceProduct = functionNamespaces{}

func init() {
	register(entry{kind: spec.ScalewayFunctionNamespace, new: func(b *Backend) providers.Driver {
		return newFunctionNamespaces(b, function.NewAPI(b.client))
	}})
}

func newFunctionNamespaces(b *Backend, api *function.API) *namespaces {
	return &namespaces{b: b, kind: spec.ScalewayFunctionNamespace, product: functionNamespaces{api: api}}
}

func fnNamespace(n *function.Namespace) namespace {
	return namespace{id: n.ID, name: n.Name, description: deref(n.Description), tags: n.Tags, status: string(n.Status),
		errorMessage: deref(n.ErrorMessage), ready: n.Status == function.NamespaceStatusReady,
		deleting: n.Status == function.NamespaceStatusDeleting, created: n.CreatedAt}
}

func (functionNamespaces) holds() (spec.Kind, string) { return spec.ScalewayFunction, "function" }

func (p functionNamespaces) list(ctx context.Context, region, project string, name *string, page int32, size uint32) ([]namespace, uint64, error) {
	out, err := p.api.ListNamespaces(&function.ListNamespacesRequest{Region: scw.Region(region), ProjectID: &project,
		Name: name, Page: &page, PageSize: &size, OrderBy: function.ListNamespacesRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	ns := make([]namespace, 0, len(out.Namespaces))
	for _, n := range out.Namespaces {
		ns = append(ns, fnNamespace(n))
	}
	return ns, uint64(out.TotalCount), nil
}

func (p functionNamespaces) create(ctx context.Context, region, project, name string, tags []string, description *string) (string, error) {
	n, err := p.api.CreateNamespace(&function.CreateNamespaceRequest{Region: scw.Region(region), Name: name, ProjectID: project,
		Tags: tags, Description: description, SecretEnvironmentVariables: []*function.Secret{}}, scw.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return n.ID, nil
}

func (p functionNamespaces) update(ctx context.Context, region, id string, description *string, tags *[]string) error {
	_, err := p.api.UpdateNamespace(&function.UpdateNamespaceRequest{Region: scw.Region(region), NamespaceID: id,
		Description: description, Tags: tags}, scw.WithContext(ctx))
	return err
}

func (p functionNamespaces) delete(ctx context.Context, region, id string) error {
	_, err := p.api.DeleteNamespace(&function.DeleteNamespaceRequest{Region: scw.Region(region), NamespaceID: id}, scw.WithContext(ctx))
	return err
}

func (p functionNamespaces) wait(ctx context.Context, region, id string, timeout, interval *time.Duration) (namespace, error) {
	n, err := p.api.WaitForNamespace(&function.WaitForNamespaceRequest{Region: scw.Region(region), NamespaceID: id,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return namespace{}, err
	}
	return fnNamespace(n), nil
}

func (p functionNamespaces) members(ctx context.Context, region, project, id string, page int32, size uint32) ([]member, uint64, error) {
	out, err := p.api.ListFunctions(&function.ListFunctionsRequest{Region: scw.Region(region), NamespaceID: id,
		ProjectID: &project, Page: &page, PageSize: &size}, scw.WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	ms := make([]member, 0, len(out.Functions))
	for _, f := range out.Functions {
		ms = append(ms, member{name: f.Name, tags: f.Tags, deleting: f.Status == function.FunctionStatusDeleting})
	}
	return ms, uint64(out.TotalCount), nil
}

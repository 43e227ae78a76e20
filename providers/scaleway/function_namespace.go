package scaleway

import (
	"context"

	function "github.com/scaleway/scaleway-sdk-go/api/function/v1beta1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// functionNamespaces is scaleway-function-namespace: a Functions namespace
// (v1beta1), owned through its tags.
type functionNamespaces struct {
	b   *Backend
	api *function.API
}

var (
	_ providers.Driver   = (*functionNamespaces)(nil)
	_ providers.Releaser = (*functionNamespaces)(nil)
)

func init() {
	register(entry{kind: spec.ScalewayFunctionNamespace, new: func(b *Backend) providers.Driver {
		return &functionNamespaces{b: b, api: function.NewAPI(b.client)}
	}})
}

func (d *functionNamespaces) all(ctx context.Context, region string, name *string) ([]*function.Namespace, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	return allPages(ctx, spec.ScalewayFunctionNamespace, region, func(page int32) ([]*function.Namespace, uint64, error) {
		out, err := d.api.ListNamespaces(&function.ListNamespacesRequest{Region: scw.Region(region), ProjectID: &project,
			Name: name, Page: &page, PageSize: &d.b.opts.PageSize, OrderBy: function.ListNamespacesRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Namespaces, uint64(out.TotalCount), nil
	})
}

// live drops namespaces on their way out: a deleting namespace is gone for
// the engine.
func liveFn(ns []*function.Namespace) []*function.Namespace {
	var out []*function.Namespace
	for _, n := range ns {
		if n.Status != function.NamespaceStatusDeleting {
			out = append(out, n)
		}
	}
	return out
}

func (d *functionNamespaces) find(ctx context.Context, region, name string) (*function.Namespace, error) {
	ns, err := d.all(ctx, region, &name)
	if err != nil {
		return nil, err
	}
	return byName(spec.ScalewayFunctionNamespace, region, name, liveFn(ns), func(n *function.Namespace) string { return n.Name })
}

func (d *functionNamespaces) List(ctx context.Context, region string) ([]providers.Resource, error) {
	ns, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, n := range liveFn(ns) {
		out = append(out, fnNamespaceResource(region, n))
	}
	return out, nil
}

func fnNamespaceResource(region string, n *function.Namespace) providers.Resource {
	tags, owner := readTags(n.Tags)
	r := providers.Resource{Name: n.Name, Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags, "description": deref(n.Description)},
		Attributes: map[string]string{"id": n.ID}}
	if n.CreatedAt != nil {
		r.Created = *n.CreatedAt
	}
	return r
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (d *functionNamespaces) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return fnNamespaceResource(region, n), nil
}

func (d *functionNamespaces) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := tagList(t)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &function.CreateNamespaceRequest{Region: scw.Region(t.Region), Name: t.Name, ProjectID: project, Tags: tags,
		SecretEnvironmentVariables: []*function.Secret{}}
	if s, ok := providers.FieldString(t.Fields, "description"); ok {
		req.Description = &s
	}
	n, err := d.api.CreateNamespace(req, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, n.ID, t.Name)
}

func (d *functionNamespaces) waitReady(ctx context.Context, region, id, name string) (providers.Resource, error) {
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the namespace to be ready", spec.ScalewayFunctionNamespace, name)
	n, err := d.api.WaitForNamespace(&function.WaitForNamespaceRequest{Region: scw.Region(region), NamespaceID: id,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if n.Status != function.NamespaceStatusReady {
		return providers.Resource{}, providers.Errorf(providers.Conflict, "scaleway/%s/%s: namespace is %s: %s", spec.ScalewayFunctionNamespace, name, n.Status, deref(n.ErrorMessage))
	}
	d.b.progress("scaleway/%s/%s: ready", spec.ScalewayFunctionNamespace, name)
	return fnNamespaceResource(region, n), nil
}

func (d *functionNamespaces) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &function.UpdateNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID}
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
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "scaleway-function-namespace: field %q cannot be updated in place", f)
		}
	}
	if _, err := d.api.UpdateNamespace(req, scw.WithContext(ctx)); err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, n.ID, t.Name)
}

// Delete removes the namespace. Scaleway deletes its functions with it,
// so a namespace still holding a function this fleet does not own is
// refused rather than taking it along.
func (d *functionNamespaces) Delete(ctx context.Context, t providers.Target) error {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return err
	}
	inside, err := allPages(ctx, spec.ScalewayFunction, t.Region, func(page int32) ([]*function.Function, uint64, error) {
		out, err := d.api.ListFunctions(&function.ListFunctionsRequest{Region: scw.Region(t.Region), NamespaceID: n.ID,
			ProjectID: &project, Page: &page, PageSize: &d.b.opts.PageSize}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Functions, uint64(out.TotalCount), nil
	})
	if err != nil {
		return err
	}
	for _, f := range inside {
		if _, owner := readTags(f.Tags); f.Status != function.FunctionStatusDeleting && (owner == "" || owner != t.Owner) {
			return providers.Errorf(providers.Conflict, "scaleway/%s/%s still holds function %s, which this fleet does not own; deleting the namespace would delete it too",
				spec.ScalewayFunctionNamespace, t.Name, f.Name)
		}
	}
	if _, err := d.api.DeleteNamespace(&function.DeleteNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID}, scw.WithContext(ctx)); err != nil {
		return err
	}
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the deletion", spec.ScalewayFunctionNamespace, t.Name)
	_, err = d.api.WaitForNamespace(&function.WaitForNamespaceRequest{Region: scw.Region(t.Region), NamespaceID: n.ID,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err == nil || gone(err, false) {
		// The waiter returns the final 404 (untyped here) as an error:
		// for a deletion it is success.
		return nil
	}
	return err
}

func (d *functionNamespaces) Release(ctx context.Context, region, name, owner string) error {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	tags, found := withoutOwner(n.Tags, owner)
	if !found {
		return nil
	}
	_, err = d.api.UpdateNamespace(&function.UpdateNamespaceRequest{Region: scw.Region(region), NamespaceID: n.ID, Tags: &tags}, scw.WithContext(ctx))
	return err
}

package scaleway

import (
	"context"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// namespaces is a Serverless namespace, owned through its tags. Containers
// (v1) and Functions (v1beta1) namespaces are the same resource behind two
// SDK packages, so one driver serves both kinds over a small product
// interface; only the calls differ.
type namespaces struct {
	b       *Backend
	kind    spec.Kind
	product namespaceProduct
}

var (
	_ providers.Driver   = (*namespaces)(nil)
	_ providers.Releaser = (*namespaces)(nil)
)

// namespace is what the driver reads of either product's namespace.
type namespace struct {
	id, name, description string
	tags                  []string
	status, errorMessage  string
	ready, deleting       bool
	created               *time.Time
}

// member is a resource a namespace holds: a container or a function.
type member struct {
	name     string
	tags     []string
	deleting bool
}

// namespaceProduct is one product's namespace API. Its calls return the
// SDK's errors unchanged.
type namespaceProduct interface {
	// holds names what a namespace holds: its kind and its noun.
	holds() (spec.Kind, string)
	list(ctx context.Context, region, project string, name *string, page int32, size uint32) ([]namespace, uint64, error)
	create(ctx context.Context, region, project, name string, tags []string, description *string) (string, error)
	update(ctx context.Context, region, id string, description *string, tags *[]string) error
	delete(ctx context.Context, region, id string) error
	wait(ctx context.Context, region, id string, timeout, interval *time.Duration) (namespace, error)
	members(ctx context.Context, region, project, id string, page int32, size uint32) ([]member, uint64, error)
}

// all lists the project's namespaces in region; a deleting namespace is
// gone for the engine.
func (d *namespaces) all(ctx context.Context, region string, name *string) ([]namespace, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := allPages(ctx, d.kind, region, func(page int32) ([]namespace, uint64, error) {
		return d.product.list(ctx, region, project, name, page, d.b.opts.PageSize)
	})
	if err != nil {
		return nil, err
	}
	var live []namespace
	for _, n := range ns {
		if !n.deleting {
			live = append(live, n)
		}
	}
	return live, nil
}

func (d *namespaces) find(ctx context.Context, region, name string) (namespace, error) {
	ns, err := d.all(ctx, region, &name)
	if err != nil {
		return namespace{}, err
	}
	return byName(d.kind, region, name, ns, func(n namespace) string { return n.name })
}

func namespaceResource(region string, n namespace) providers.Resource {
	tags, owner := readTags(n.tags)
	r := providers.Resource{Name: n.name, Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags, "description": n.description},
		Attributes: map[string]string{"id": n.id}}
	if n.created != nil {
		r.Created = *n.created
	}
	return r
}

func (d *namespaces) List(ctx context.Context, region string) ([]providers.Resource, error) {
	ns, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, n := range ns {
		out = append(out, namespaceResource(region, n))
	}
	return out, nil
}

// description is the target's description and whether it set one. The
// two namespace kinds share this driver and have the same fields; each is
// decoded as its own kind.
func (d *namespaces) description(t providers.Target) (*string, bool, error) {
	if d.kind == spec.ScalewayFunctionNamespace {
		decl, err := providers.DecodeScalewayFunctionNamespace(t.Fields)
		return &decl.Description, decl.HasDescription(), err
	}
	decl, err := providers.DecodeScalewayContainerNamespace(t.Fields)
	return &decl.Description, decl.HasDescription(), err
}

func (d *namespaces) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return namespaceResource(region, n), nil
}

func (d *namespaces) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := tagList(t)
	if err != nil {
		return providers.Resource{}, err
	}
	description, set, err := d.description(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if !set {
		description = nil
	}
	id, err := d.product.create(ctx, t.Region, project, t.Name, tags, description)
	if err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, id, t.Name)
}

func (d *namespaces) waitReady(ctx context.Context, region, id, name string) (providers.Resource, error) {
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the namespace to be ready", d.kind, name)
	n, err := d.product.wait(ctx, region, id, timeout, interval)
	if err != nil {
		return providers.Resource{}, err
	}
	if !n.ready {
		return providers.Resource{}, providers.Errorf(providers.Conflict, "scaleway/%s/%s: namespace is %s: %s", d.kind, name, n.status, n.errorMessage)
	}
	d.b.progress("scaleway/%s/%s: ready", d.kind, name)
	return namespaceResource(region, n), nil
}

func (d *namespaces) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	var description *string
	var tags *[]string
	for _, f := range changed {
		switch f {
		case providers.ScalewayContainerNamespaceDescription: // the function namespace's too
			s, _, err := d.description(t)
			if err != nil {
				return providers.Resource{}, err
			}
			description = s
		case spec.TagsField:
			list, err := tagList(t)
			if err != nil {
				return providers.Resource{}, err
			}
			tags = &list
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "%s: field %q cannot be updated in place", d.kind, f)
		}
	}
	if err := d.product.update(ctx, t.Region, n.id, description, tags); err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, n.id, t.Name)
}

// Delete removes the namespace. Scaleway deletes what it holds too, so a
// namespace still holding a container or function this fleet does not own
// is refused rather than taking it along (a predecessor's namespace delete
// cascaded into an unmanaged sibling).
func (d *namespaces) Delete(ctx context.Context, t providers.Target) error {
	n, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	if err := d.refuseForeignMembers(ctx, t, n.id); err != nil {
		return err
	}
	if err := d.product.delete(ctx, t.Region, n.id); err != nil {
		return err
	}
	return d.b.awaitDeletion(d.kind, t.Name, false, func(timeout, interval *time.Duration) error {
		_, err := d.product.wait(ctx, t.Region, n.id, timeout, interval)
		return err
	})
}

func (d *namespaces) refuseForeignMembers(ctx context.Context, t providers.Target, id string) error {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return err
	}
	kind, noun := d.product.holds()
	inside, err := allPages(ctx, kind, t.Region, func(page int32) ([]member, uint64, error) {
		return d.product.members(ctx, t.Region, project, id, page, d.b.opts.PageSize)
	})
	if err != nil {
		return err
	}
	for _, m := range inside {
		if _, owner := readTags(m.tags); !m.deleting && (owner == "" || owner != t.Owner) {
			return providers.Errorf(providers.Conflict, "scaleway/%s/%s still holds %s %s, which this fleet does not own; deleting the namespace would delete it too",
				d.kind, t.Name, noun, m.name)
		}
	}
	return nil
}

func (d *namespaces) Release(ctx context.Context, region, name, owner string) error {
	n, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	tags, found := withoutOwner(n.tags, owner)
	if !found {
		return nil
	}
	return d.product.update(ctx, region, n.id, nil, &tags)
}

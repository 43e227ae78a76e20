package scaleway

import (
	"context"
	"fmt"
	"time"

	container "github.com/scaleway/scaleway-sdk-go/api/container/v1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// containers is scaleway-container and, with portable set, compute: a
// Serverless Containers container on the v1 API, owned through its tags.
// Both kinds see the same containers; compute reports only its fields.
// Memory is in MB of 10^6 bytes, as the API counts; the namespace is
// reported by name.
type containers struct {
	b        *Backend
	api      *container.API
	ns       *namespaces
	kind     spec.Kind
	portable bool
}

var (
	_ providers.Driver   = (*containers)(nil)
	_ providers.Releaser = (*containers)(nil)
)

func init() {
	register(entry{kind: spec.ScalewayContainer, new: func(b *Backend) providers.Driver {
		api := container.NewAPI(b.client)
		return &containers{b: b, api: api, ns: newContainerNamespaces(b, api), kind: spec.ScalewayContainer}
	}})
	register(entry{kind: spec.Compute, new: func(b *Backend) providers.Driver {
		api := container.NewAPI(b.client)
		return &containers{b: b, api: api, ns: newContainerNamespaces(b, api), kind: spec.Compute, portable: true}
	}})
}

const megabyte = 1000 * 1000

func (d *containers) all(ctx context.Context, region string, name *string) ([]*container.Container, map[string]string, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, nil, err
	}
	nss, err := d.ns.all(ctx, region, nil)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]string{}
	for _, n := range nss {
		names[n.id] = n.name
	}
	cs, err := allPages(ctx, d.kind, region, func(page int32) ([]*container.Container, uint64, error) {
		out, err := d.api.ListContainers(&container.ListContainersRequest{Region: scw.Region(region), ProjectID: &project,
			Name: name, Page: &page, PageSize: &d.b.opts.PageSize, OrderBy: container.ListContainersRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Containers, out.TotalCount, nil
	})
	if err != nil {
		return nil, nil, err
	}
	var live []*container.Container
	for _, c := range cs {
		if c.Status != container.ContainerStatusDeleting {
			live = append(live, c)
		}
	}
	return live, names, nil
}

func (d *containers) find(ctx context.Context, region, name string) (*container.Container, map[string]string, error) {
	cs, names, err := d.all(ctx, region, &name)
	if err != nil {
		return nil, nil, err
	}
	c, err := byName(d.kind, region, name, cs, func(c *container.Container) string { return c.Name })
	return c, names, err
}

func (d *containers) resource(region string, c *container.Container, namespaces map[string]string) providers.Resource {
	tags, owner := readTags(c.Tags)
	fields := map[string]any{spec.TagsField: tags, "image": c.Image, "memoryMb": float64(uint64(c.MemoryLimitBytes) / megabyte),
		"env": envAny(c.EnvironmentVariables)}
	if c.Timeout != nil {
		if td := c.Timeout.ToTimeDuration(); td != nil {
			fields["timeoutSec"] = float64(*td / time.Second)
		}
	}
	if ns, ok := namespaces[c.NamespaceID]; ok {
		fields["namespace"] = ns
	}
	if !d.portable {
		fields["port"] = float64(c.Port)
		fields["minScale"] = float64(c.MinScale)
		fields["maxScale"] = float64(c.MaxScale)
		fields["cpuLimit"] = float64(c.MvcpuLimit)
	}
	r := providers.Resource{Name: c.Name, Region: region, Owner: owner, Complete: true, Fields: fields,
		Attributes: map[string]string{"id": c.ID}}
	if c.PublicEndpoint != "" {
		r.Attributes["url"] = c.PublicEndpoint
	}
	if c.CreatedAt != nil {
		r.Created = *c.CreatedAt
	}
	return r
}

func (d *containers) List(ctx context.Context, region string) ([]providers.Resource, error) {
	cs, names, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	out := make([]providers.Resource, 0, len(cs))
	for _, c := range cs {
		out = append(out, d.resource(region, c, names))
	}
	return out, nil
}

func (d *containers) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, names, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return d.resource(region, c, names), nil
}

// settings reads the target's numeric settings into a request's fields.
type containerSettings struct {
	minScale, maxScale, port, cpu *uint32
	memory                        *scw.Size
	timeout                       *scw.Duration
}

// decode reads a compute or a scaleway-container target, which share this
// driver. scaleway-container's fields are compute's Scaleway fields and its
// own settings, so its decoder reads either; role is whether the target
// sets compute's executionRole, which Scaleway cannot express.
func (d *containers) decode(t providers.Target) (decl providers.ScalewayContainerInput, role bool, err error) {
	if decl, err = providers.DecodeScalewayContainer(t.Fields); err != nil {
		return decl, false, err
	}
	compute, err := providers.DecodeCompute(t.Fields)
	return decl, compute.HasExecutionRole(), err
}

func (d *containers) settings(decl providers.ScalewayContainerInput, only map[string]bool) (containerSettings, error) {
	var s containerSettings
	want := func(f string) bool { return only == nil || only[f] }
	num := func(f string, v float64, set bool) (*uint32, error) {
		if !want(f) {
			return nil, nil
		}
		v32, ok, err := targetUint(f, v, set)
		if err != nil || !ok {
			return nil, err
		}
		return &v32, nil
	}
	var err error
	if mb, e := num(providers.ScalewayContainerMemoryMB, decl.MemoryMB, decl.HasMemoryMB()); e != nil {
		return s, e
	} else if mb != nil {
		s.memory = ptr(scw.Size(uint64(*mb) * megabyte))
	}
	if sec, e := num(providers.ScalewayContainerTimeoutSec, decl.TimeoutSec, decl.HasTimeoutSec()); e != nil {
		return s, e
	} else if sec != nil {
		s.timeout = scw.NewDurationFromTimeDuration(time.Duration(*sec) * time.Second)
	}
	if d.portable {
		return s, nil
	}
	if s.minScale, err = num(providers.ScalewayContainerMinScale, decl.MinScale, decl.HasMinScale()); err != nil {
		return s, err
	}
	if s.maxScale, err = num(providers.ScalewayContainerMaxScale, decl.MaxScale, decl.HasMaxScale()); err != nil {
		return s, err
	}
	if s.port, err = num(providers.ScalewayContainerPort, decl.Port, decl.HasPort()); err != nil {
		return s, err
	}
	if s.cpu, err = num(providers.ScalewayContainerCPULimit, decl.CPULimit, decl.HasCPULimit()); err != nil {
		return s, err
	}
	return s, nil
}

func (d *containers) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	decl, role, err := d.decode(t)
	if err != nil {
		return providers.Resource{}, err
	}
	nsName, image := decl.Namespace, decl.Image
	if nsName == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "%s on scaleway needs namespace (a scaleway-container-namespace)", d.kind)
	}
	if role {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "compute on scaleway cannot use executionRole: Scaleway containers have no execution role")
	}
	ns, err := d.ns.find(ctx, t.Region, nsName)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("namespace %s: %w", nsName, err)
	}
	tags, err := tagList(t)
	if err != nil {
		return providers.Resource{}, err
	}
	env, secretEnv := decl.Env, decl.SecretEnv
	s, err := d.settings(decl, nil)
	if err != nil {
		return providers.Resource{}, err
	}
	// Every enum is set: unset, the SDK sends "unknown_…".
	req := &container.CreateContainerRequest{Region: scw.Region(t.Region), NamespaceID: ns.id, Name: t.Name, Image: image,
		EnvironmentVariables: env, SecretEnvironmentVariables: secretEnv, Tags: tags,
		Privacy: container.ContainerPrivacyPublic, Protocol: container.ContainerProtocolHTTP1, Sandbox: container.ContainerSandboxV2,
		MinScale: s.minScale, MaxScale: s.maxScale, Port: s.port, MvcpuLimit: s.cpu, MemoryLimitBytes: s.memory, Timeout: s.timeout,
		Command: []string{}, Args: []string{}}
	c, err := d.api.CreateContainer(req, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, c.ID, t.Name, map[string]string{ns.id: ns.name})
}

func (d *containers) waitReady(ctx context.Context, region, id, name string, names map[string]string) (providers.Resource, error) {
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the container to be ready", d.kind, name)
	c, err := d.api.WaitForContainer(&container.WaitForContainerRequest{Region: scw.Region(region), ContainerID: id,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if c.Status == container.ContainerStatusError {
		// The container exists (and is ours); the image does not serve.
		return providers.Resource{}, providers.Errorf(providers.Conflict, "scaleway/%s/%s: container is in error: %s", d.kind, name, deref(c.ErrorMessage))
	}
	d.b.progress("scaleway/%s/%s: %s", d.kind, name, c.Status)
	return d.resource(region, c, names), nil
}

func (d *containers) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, names, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	only := map[string]bool{}
	for _, f := range changed {
		only[f] = true
	}
	decl, _, err := d.decode(t)
	if err != nil {
		return providers.Resource{}, err
	}
	s, err := d.settings(decl, only)
	if err != nil {
		return providers.Resource{}, err
	}
	// The enums go back as they are; unset, they would be "unknown_…".
	req := &container.UpdateContainerRequest{Region: scw.Region(t.Region), ContainerID: c.ID, Privacy: c.Privacy,
		Protocol: c.Protocol, Sandbox: c.Sandbox, MinScale: s.minScale, MaxScale: s.maxScale, Port: s.port,
		MvcpuLimit: s.cpu, MemoryLimitBytes: s.memory, Timeout: s.timeout}
	for _, f := range changed {
		switch f {
		case providers.ScalewayContainerMemoryMB, providers.ScalewayContainerTimeoutSec, providers.ScalewayContainerMinScale, providers.ScalewayContainerMaxScale, providers.ScalewayContainerPort, providers.ScalewayContainerCPULimit:
		case providers.ScalewayContainerImage:
			req.Image = &decl.Image
		case providers.ScalewayContainerEnv:
			req.EnvironmentVariables = &decl.Env
		case providers.ScalewayContainerSecretEnv:
			req.SecretEnvironmentVariables = &decl.SecretEnv
		case spec.TagsField:
			tags, err := tagList(t)
			if err != nil {
				return providers.Resource{}, err
			}
			req.Tags = &tags
		case providers.ComputeExecutionRole:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "compute on scaleway cannot use executionRole: Scaleway containers have no execution role")
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "%s: field %q cannot be updated in place", d.kind, f)
		}
	}
	if _, err := d.api.UpdateContainer(req, scw.WithContext(ctx)); err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, c.ID, t.Name, names)
}

func (d *containers) Delete(ctx context.Context, t providers.Target) error {
	c, _, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	if _, err := d.api.DeleteContainer(&container.DeleteContainerRequest{Region: scw.Region(t.Region), ContainerID: c.ID}, scw.WithContext(ctx)); err != nil {
		return err
	}
	return d.b.awaitDeletion(d.kind, t.Name, false, func(timeout, interval *time.Duration) error {
		_, err := d.api.WaitForContainer(&container.WaitForContainerRequest{Region: scw.Region(t.Region), ContainerID: c.ID,
			Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
		return err
	})
}

func (d *containers) Release(ctx context.Context, region, name, owner string) error {
	c, _, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	tags, found := withoutOwner(c.Tags, owner)
	if !found {
		return nil
	}
	_, err = d.api.UpdateContainer(&container.UpdateContainerRequest{Region: scw.Region(region), ContainerID: c.ID,
		Privacy: c.Privacy, Protocol: c.Protocol, Sandbox: c.Sandbox, Tags: &tags}, scw.WithContext(ctx))
	return err
}

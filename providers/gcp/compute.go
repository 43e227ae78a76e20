package gcp

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	run "cloud.google.com/go/run/apiv2"
	"cloud.google.com/go/run/apiv2/runpb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// compute is compute: a Cloud Run service (Admin API v2) in the region,
// projects/<p>/locations/<region>/services/<name>, of one container:
// image is its image, memoryMb its memory limit (<N>Mi), env its literal
// environment variables, timeoutSec the revision's request timeout; the
// mark and the user tags are the service's labels, in the create request.
// Ingress is all traffic; infra changes no IAM binding, so invoking the
// service needs roles/run.invoker granted apart. executionRole (AWS) and
// namespace (Scaleway) are not GCP fields; check keeps them off.
//
// Create, update and delete are long-running operations, waited for with
// the client's op.Wait. An update sends the whole service as read just
// before, changed, with its etag (no update mask): what the declaration
// does not hold (scaling, probes, other containers, env from secrets) is
// sent back as it was, and a change made in between fails rather than
// being overwritten.
type compute struct {
	b *Backend
	c lazy[*run.ServicesClient]
}

var (
	_ providers.Driver   = (*compute)(nil)
	_ providers.Releaser = (*compute)(nil)
)

func init() {
	register(entry{kind: spec.Compute, new: func(b *Backend) providers.Driver { return &compute{b: b} }})
}

// client is the Cloud Run services client (REST), made once, and the
// project.
func (d *compute) client(ctx context.Context) (*run.ServicesClient, string, error) {
	project, err := d.b.scope(ctx)
	if err != nil {
		return nil, "", err
	}
	c, err := d.c.get("Cloud Run", func() (*run.ServicesClient, error) {
		return gapicClient(ctx, d.b, "run", run.NewServicesRESTClient)
	})
	return c, project, err
}

func (d *compute) close() error { return d.c.close() }

func runParent(project, region string) string { return "projects/" + project + "/locations/" + region }

func runServiceName(project, region, name string) string {
	return runParent(project, region) + "/services/" + name
}

var memoryRE = regexp.MustCompile(`^([0-9]+)(Mi|Gi)$`)

// memoryMb reads a memory limit written in Mi or Gi.
func memoryMb(limit string) (float64, bool) {
	m := memoryRE.FindStringSubmatch(limit)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "Gi" {
		n *= 1024
	}
	return n, true
}

func serviceResource(region string, s *runpb.Service) providers.Resource {
	tags, owner := reported(s.Labels)
	r := providers.Resource{Name: shortName(s.Name), Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags},
		Attributes: map[string]string{"arn": s.Name, "url": s.Uri}}
	tmpl := s.GetTemplate()
	if t := tmpl.GetTimeout(); t != nil {
		r.Fields[providers.ComputeTimeoutSec] = t.AsDuration().Seconds()
	}
	if cs := tmpl.GetContainers(); len(cs) > 0 {
		reportContainer(&r, cs[0])
		if len(cs) > 1 {
			r.Unmodelled = append(r.Unmodelled, fmt.Sprintf("Containers=%d", len(cs)))
		}
	}
	if c := s.GetTerminalCondition(); c != nil && c.State != runpb.Condition_CONDITION_SUCCEEDED {
		r.Unmodelled = append(r.Unmodelled, "Ready="+c.State.String())
	}
	if s.Ingress != runpb.IngressTraffic_INGRESS_TRAFFIC_ALL {
		r.Unmodelled = append(r.Unmodelled, "Ingress="+s.Ingress.String())
	}
	if s.CreateTime != nil {
		r.Created = s.CreateTime.AsTime()
	}
	return r
}

// reportContainer reports the first container: image, memory and the
// literal env (a variable from a secret is named in Unmodelled).
func reportContainer(r *providers.Resource, ct *runpb.Container) {
	r.Fields[providers.ComputeImage] = ct.Image
	if mb, ok := memoryMb(ct.GetResources().GetLimits()["memory"]); ok {
		r.Fields[providers.ComputeMemoryMB] = mb
	}
	env := map[string]any{}
	for _, e := range ct.Env {
		if e.GetValueSource() != nil {
			r.Unmodelled = append(r.Unmodelled, "EnvFromSecret="+e.Name)
			continue
		}
		env[e.Name] = e.GetValue()
	}
	r.Fields[providers.ComputeEnv] = env
}

func (d *compute) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	it := c.ListServices(ctx, &runpb.ListServicesRequest{Parent: runParent(project, region), PageSize: int32(d.b.opts.PageSize)})
	err = drain(it.Next, func(s *runpb.Service) { out = append(out, serviceResource(region, s)) })
	return out, err
}

func (d *compute) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	s, err := c.GetService(ctx, &runpb.GetServiceRequest{Name: runServiceName(project, region, name)})
	if err != nil {
		return providers.Resource{}, err
	}
	return serviceResource(region, s), nil
}

func (d *compute) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeCompute(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	if decl.Image == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "gcp/compute/%s: image is required", t.Name)
	}
	for _, f := range []string{providers.ComputeExecutionRole, providers.ComputeNamespace} {
		if _, set := t.Fields[f]; set {
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "gcp/compute/%s: %s is not a field of a Cloud Run service", t.Name, f)
		}
	}
	l, err := labels(t)
	if err != nil {
		return providers.Resource{}, err
	}
	svc := &runpb.Service{Labels: l, Ingress: runpb.IngressTraffic_INGRESS_TRAFFIC_ALL, Template: &runpb.RevisionTemplate{}}
	for _, f := range []string{providers.ComputeImage, providers.ComputeMemoryMB, providers.ComputeTimeoutSec, providers.ComputeEnv} {
		if _, set := t.Fields[f]; set {
			if err := setTemplate(t.Name, svc.Template, decl, f); err != nil {
				return providers.Resource{}, err
			}
		}
	}
	op, err := c.CreateService(ctx, &runpb.CreateServiceRequest{Parent: runParent(project, t.Region), ServiceId: t.Name, Service: svc})
	if err != nil {
		return providers.Resource{}, err
	}
	// A service whose revision failed stays, under the mark, with its
	// Ready condition failed: the next plan finds it, an update retries.
	s, err := op.Wait(ctx)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("gcp/compute/%s: create: %w", t.Name, err)
	}
	return serviceResource(t.Region, s), nil
}

// setTemplate writes one declared field into the template's first
// container (made if there is none).
func setTemplate(name string, tmpl *runpb.RevisionTemplate, decl providers.ComputeInput, field string) error {
	if len(tmpl.Containers) == 0 {
		tmpl.Containers = []*runpb.Container{{}}
	}
	ct := tmpl.Containers[0]
	switch field {
	case providers.ComputeImage:
		ct.Image = decl.Image
	case providers.ComputeMemoryMB:
		if decl.MemoryMB < 1 || decl.MemoryMB != float64(int64(decl.MemoryMB)) {
			return providers.Errorf(providers.InvalidArgument, "gcp/compute/%s: memoryMb must be a whole number of MiB, not %v", name, decl.MemoryMB)
		}
		if ct.Resources == nil {
			ct.Resources = &runpb.ResourceRequirements{}
		}
		if ct.Resources.Limits == nil {
			ct.Resources.Limits = map[string]string{}
		}
		ct.Resources.Limits["memory"] = strconv.FormatInt(int64(decl.MemoryMB), 10) + "Mi"
	case providers.ComputeTimeoutSec:
		if decl.TimeoutSec < 1 || decl.TimeoutSec != float64(int64(decl.TimeoutSec)) {
			return providers.Errorf(providers.InvalidArgument, "gcp/compute/%s: timeoutSec must be a whole number of seconds, not %v", name, decl.TimeoutSec)
		}
		tmpl.Timeout = durationpb.New(time.Duration(decl.TimeoutSec) * time.Second)
	case providers.ComputeEnv:
		ct.Env = envVars(decl.Env, ct.Env)
	}
	return nil
}

// envVars is the declared env, by name, after the variables that come
// from secrets, which no field holds and an update keeps.
func envVars(declared map[string]string, cur []*runpb.EnvVar) []*runpb.EnvVar {
	var out []*runpb.EnvVar
	for _, e := range cur {
		if _, redeclared := declared[e.Name]; e.GetValueSource() != nil && !redeclared {
			out = append(out, e)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(declared)) {
		out = append(out, &runpb.EnvVar{Name: k, Values: &runpb.EnvVar_Value{Value: declared[k]}})
	}
	return out
}

func (d *compute) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeCompute(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	s, err := c.GetService(ctx, &runpb.GetServiceRequest{Name: runServiceName(project, t.Region, t.Name)})
	if err != nil {
		return providers.Resource{}, err
	}
	if s.Template == nil {
		s.Template = &runpb.RevisionTemplate{}
	}
	for _, f := range changed {
		switch f {
		case providers.ComputeImage, providers.ComputeMemoryMB, providers.ComputeTimeoutSec, providers.ComputeEnv:
			err = setTemplate(t.Name, s.Template, decl, f)
		case spec.TagsField:
			s.Labels, err = labels(t)
		case providers.ComputeExecutionRole, providers.ComputeNamespace:
			err = providers.Errorf(providers.InvalidArgument, "gcp/compute/%s: %s is not a field of a Cloud Run service", t.Name, f)
		default:
			err = providers.Errorf(providers.InvalidArgument, "gcp/compute/%s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	if s, err = d.replace(ctx, c, t.Name, "update", s); err != nil {
		return providers.Resource{}, err
	}
	return serviceResource(t.Region, s), nil
}

// replace sends the whole service, with the etag it was read with, and
// waits for Cloud Run to roll it out. A revision name is left to Cloud
// Run: a new template needs a new one.
func (d *compute) replace(ctx context.Context, c *run.ServicesClient, name, what string, s *runpb.Service) (*runpb.Service, error) {
	s.Template.Revision = ""
	op, err := c.UpdateService(ctx, &runpb.UpdateServiceRequest{Service: s})
	if err != nil {
		// A 409 here is a stale etag: the service changed since it was read.
		return nil, busy(spec.Compute, name, err)
	}
	out, err := op.Wait(ctx)
	if err != nil {
		return nil, fmt.Errorf("gcp/compute/%s: %s: %w", name, what, err)
	}
	return out, nil
}

func (d *compute) Delete(ctx context.Context, t providers.Target) error {
	c, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	op, err := c.DeleteService(ctx, &runpb.DeleteServiceRequest{Name: runServiceName(project, t.Region, t.Name)})
	if err != nil {
		return err
	}
	if _, err := op.Wait(ctx); err != nil {
		return fmt.Errorf("gcp/compute/%s: delete: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's mark and keeps every other label.
func (d *compute) Release(ctx context.Context, region, name, owner string) error {
	c, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	s, err := c.GetService(ctx, &runpb.GetServiceRequest{Name: runServiceName(project, region, name)})
	if err != nil {
		return err
	}
	if s.Labels[spec.OwnershipTagKey] != owner {
		return nil
	}
	delete(s.Labels, spec.OwnershipTagKey)
	if s.Template == nil {
		s.Template = &runpb.RevisionTemplate{}
	}
	_, err = d.replace(ctx, c, name, "release", s)
	return err
}

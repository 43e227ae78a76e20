package scaleway

import (
	"context"
	"sort"
	"strings"

	iam "github.com/scaleway/scaleway-sdk-go/api/iam/v1alpha1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// identities is the iam kind: an IAM application, owned through its tags,
// with one policy of the same name whose rules grant the permission sets
// in "policies", scoped to the fleet's project. Applications are
// organization-level: listings carry the organization (IAM has no
// project filter), and the policy rules carry the project, so what the
// application may do stays within it.
type identities struct {
	b   *Backend
	api *iam.API
}

var (
	_ providers.Driver   = (*identities)(nil)
	_ providers.Releaser = (*identities)(nil)
)

func init() {
	register(entry{kind: spec.IAM, new: func(b *Backend) providers.Driver { return &identities{b: b, api: iam.NewAPI(b.client)} }})
}

func (d *identities) all(ctx context.Context, name *string) ([]*iam.Application, error) {
	_, org, err := d.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	return allPages(ctx, spec.IAM, "global", func(page int32) ([]*iam.Application, uint64, error) {
		out, err := d.api.ListApplications(&iam.ListApplicationsRequest{OrganizationID: org, Name: name, Page: &page,
			PageSize: &d.b.opts.PageSize, OrderBy: iam.ListApplicationsRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Applications, uint64(out.TotalCount), nil
	})
}

func (d *identities) find(ctx context.Context, name string) (*iam.Application, error) {
	apps, err := d.all(ctx, &name)
	if err != nil {
		return nil, err
	}
	return byName(spec.IAM, "the organization", name, apps, func(a *iam.Application) string { return a.Name })
}

// policy returns the application's policy (the one of its name), or nil.
func (d *identities) policy(ctx context.Context, app *iam.Application) (*iam.Policy, error) {
	ps, err := allPages(ctx, spec.IAM, "global", func(page int32) ([]*iam.Policy, uint64, error) {
		out, err := d.api.ListPolicies(&iam.ListPoliciesRequest{OrganizationID: app.OrganizationID, ApplicationIDs: []string{app.ID},
			Page: &page, PageSize: &d.b.opts.PageSize}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Policies, uint64(out.TotalCount), nil
	})
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Name == app.Name {
			return p, nil
		}
	}
	return nil, nil
}

// permissionSets reads the names the policy's rules grant, sorted.
func (d *identities) permissionSets(ctx context.Context, p *iam.Policy) ([]any, error) {
	out := []any{}
	if p == nil {
		return out, nil
	}
	rules, err := allPages(ctx, spec.IAM, "global", func(page int32) ([]*iam.Rule, uint64, error) {
		res, err := d.api.ListRules(&iam.ListRulesRequest{PolicyID: p.ID, Page: &page, PageSize: &d.b.opts.PageSize}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return res.Rules, uint64(res.TotalCount), nil
	})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range rules {
		if r.PermissionSetNames != nil {
			names = append(names, *r.PermissionSetNames...)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, n)
	}
	return out, nil
}

func (d *identities) resource(ctx context.Context, region string, app *iam.Application, withPolicies bool) (providers.Resource, error) {
	tags, owner := readTags(app.Tags)
	r := providers.Resource{Name: app.Name, Region: region, Owner: owner, Fields: map[string]any{spec.TagsField: tags},
		Attributes: map[string]string{"id": app.ID}}
	if app.CreatedAt != nil {
		r.Created = *app.CreatedAt
	}
	if withPolicies {
		p, err := d.policy(ctx, app)
		if err != nil {
			return providers.Resource{}, err
		}
		sets, err := d.permissionSets(ctx, p)
		if err != nil {
			return providers.Resource{}, err
		}
		r.Fields[providers.IAMPolicies] = sets
		r.Complete = true
	}
	return r, nil
}

// List reports applications without their policies (a read gives those),
// so a listing of the organization costs one call a page.
func (d *identities) List(ctx context.Context, region string) ([]providers.Resource, error) {
	apps, err := d.all(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, a := range apps {
		r, err := d.resource(ctx, region, a, false)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (d *identities) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	app, err := d.find(ctx, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return d.resource(ctx, region, app, true)
}

// rules grants the permission sets on the fleet's project only.
func (d *identities) rules(t providers.Target, project string) ([]*iam.RuleSpecs, error) {
	decl, err := providers.DecodeIAM(t.Fields)
	if err != nil {
		return nil, err
	}
	names := decl.Policies // the decoder's own copy, so sorting it is ours
	for _, n := range names {
		if strings.HasPrefix(n, "arn:") {
			return nil, providers.Errorf(providers.InvalidArgument,
				"iam on scaleway cannot use AWS policy ARNs (%s): policies on Scaleway are permission-set names such as ObjectStorageReadOnly", n)
		}
	}
	if len(names) == 0 {
		return []*iam.RuleSpecs{}, nil
	}
	sort.Strings(names)
	return []*iam.RuleSpecs{{PermissionSetNames: &names, ProjectIDs: &[]string{project}}}, nil
}

func (d *identities) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	project, org, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := tagList(t)
	if err != nil {
		return providers.Resource{}, err
	}
	rules, err := d.rules(t, project)
	if err != nil {
		return providers.Resource{}, err
	}
	app, err := d.api.CreateApplication(&iam.CreateApplicationRequest{Name: t.Name, OrganizationID: org,
		Description: "managed by infra for project " + project, Tags: tags}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if _, err := d.api.CreatePolicy(&iam.CreatePolicyRequest{Name: t.Name, OrganizationID: org, ApplicationID: &app.ID,
		Description: "permissions of " + t.Name + ", managed by infra", Rules: rules, Tags: tags}, scw.WithContext(ctx)); err != nil {
		// An application without its policy is incomplete: take it back,
		// so that the retry creates both.
		_ = d.api.DeleteApplication(&iam.DeleteApplicationRequest{ApplicationID: app.ID}, scw.WithContext(ctx))
		return providers.Resource{}, err
	}
	return d.resource(ctx, t.Region, app, true)
}

func (d *identities) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	project, org, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	app, err := d.find(ctx, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	p, err := d.policy(ctx, app)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, f := range changed {
		switch f {
		case providers.IAMPolicies:
			rules, err := d.rules(t, project)
			if err != nil {
				return providers.Resource{}, err
			}
			if p == nil {
				tags, _ := tagList(t)
				p, err = d.api.CreatePolicy(&iam.CreatePolicyRequest{Name: t.Name, OrganizationID: org, ApplicationID: &app.ID,
					Description: "permissions of " + t.Name + ", managed by infra", Rules: rules, Tags: tags}, scw.WithContext(ctx))
			} else {
				// SetRules replaces every rule: the policy is infra's own.
				_, err = d.api.SetRules(&iam.SetRulesRequest{PolicyID: p.ID, Rules: rules}, scw.WithContext(ctx))
			}
			if err != nil {
				return providers.Resource{}, err
			}
		case spec.TagsField:
			tags, err := tagList(t)
			if err != nil {
				return providers.Resource{}, err
			}
			if app, err = d.api.UpdateApplication(&iam.UpdateApplicationRequest{ApplicationID: app.ID, Tags: &tags}, scw.WithContext(ctx)); err != nil {
				return providers.Resource{}, err
			}
			if p != nil {
				if _, err := d.api.UpdatePolicy(&iam.UpdatePolicyRequest{PolicyID: p.ID, Tags: &tags}, scw.WithContext(ctx)); err != nil {
					return providers.Resource{}, err
				}
			}
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "iam: field %q cannot be updated in place", f)
		}
	}
	return d.resource(ctx, t.Region, app, true)
}

func (d *identities) Delete(ctx context.Context, t providers.Target) error {
	app, err := d.find(ctx, t.Name)
	if err != nil {
		return err
	}
	p, err := d.policy(ctx, app)
	if err != nil {
		return err
	}
	if p != nil {
		if err := d.api.DeletePolicy(&iam.DeletePolicyRequest{PolicyID: p.ID}, scw.WithContext(ctx)); err != nil && !gone(err, false) {
			return err
		}
	}
	return d.api.DeleteApplication(&iam.DeleteApplicationRequest{ApplicationID: app.ID}, scw.WithContext(ctx))
}

func (d *identities) Release(ctx context.Context, region, name, owner string) error {
	app, err := d.find(ctx, name)
	if err != nil {
		return err
	}
	tags, found := withoutOwner(app.Tags, owner)
	if !found {
		return nil
	}
	_, err = d.api.UpdateApplication(&iam.UpdateApplicationRequest{ApplicationID: app.ID, Tags: &tags}, scw.WithContext(ctx))
	return err
}

package gcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	iam "google.golang.org/api/iam/v1"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// serviceAccounts is iam: a service account of the project, whose account
// id is the name (email <name>@<project>.iam.gserviceaccount.com), and
// the roles bound to it on the project's IAM policy. A service account is
// global, so every region lists the same ones.
//
// A service account has no labels: the ownership mark and the user tags
// live in its description, as a query string
// ("managed-by-infra=shop&team=web", at most 256 characters). A
// description of free text is unmarked.
//
// policies are the roles the project's policy binds, without a
// condition, to serviceAccount:<email>. Every change to them is a
// read-modify-write of the whole policy (getIamPolicy, then setIamPolicy
// with its etag, at version 3 so that conditional bindings survive),
// touching that member alone; a concurrent change (409 ABORTED) is read
// again and retried. Bindings with a condition are reported in
// Unmodelled and left alone, except by Delete.
//
// Deleting a service account does not remove its bindings (GCP keeps
// them as deleted:serviceAccount:<email>?uid=…), so Delete removes the
// member from every binding first. Create grants after the account
// exists; should that fail, the account is deleted again.
type serviceAccounts struct {
	b       *Backend
	iam     lazy[*iam.Service]
	crm     lazy[*crm.Service]
	editing sync.Mutex // one read-modify-write of the policy at a time in this process
}

var (
	_ providers.Driver   = (*serviceAccounts)(nil)
	_ providers.Releaser = (*serviceAccounts)(nil)
)

const (
	// policyAttempts bounds the read-modify-writes of the policy that one
	// change makes when others keep changing it.
	policyAttempts = 8
)

func init() {
	register(entry{kind: spec.IAM, new: func(b *Backend) providers.Driver { return &serviceAccounts{b: b} }})
}

// clients are the IAM and Resource Manager clients, made once, and the
// project.
func (d *serviceAccounts) clients(ctx context.Context) (*iam.Service, *crm.Service, string, error) {
	project, err := d.b.scope(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	ic, err := d.iam.get("IAM", func() (*iam.Service, error) { return restService(ctx, d.b, "iam", iam.NewService) })
	if err != nil {
		return nil, nil, "", err
	}
	cc, err := d.crm.get("Resource Manager", func() (*crm.Service, error) {
		return restService(ctx, d.b, "cloudresourcemanager", crm.NewService)
	})
	return ic, cc, project, err
}

func accountEmail(project, name string) string {
	return name + "@" + project + ".iam.gserviceaccount.com"
}

func accountName(project, name string) string {
	return "projects/" + project + "/serviceAccounts/" + accountEmail(project, name)
}

func accountMember(email string) string { return "serviceAccount:" + email }

// encodeAccountDescription writes the user tags and the ownership mark as
// the description, within its limit.
func encodeAccountDescription(t providers.Target) (string, error) {
	s, err := providers.EncodeMarkDescription(t)
	if err != nil {
		return "", err
	}
	if limit := spec.DescriptionLimit(spec.IAM, spec.GCP); len(s) > limit {
		return "", providers.Errorf(providers.InvalidArgument, "gcp/iam/%s: iam on gcp keeps its tags and the ownership mark in the service account's description, which they overflow (%d > %d characters): use fewer or shorter tags", t.Name, len(s), limit)
	}
	return s, nil
}

// accountResource reports an account and the roles the policy binds to
// it.
func accountResource(region string, sa *iam.ServiceAccount, p *crm.Policy) providers.Resource {
	roles, conditional := memberRoles(p, accountMember(sa.Email))
	policies := make([]any, len(roles))
	for i, r := range roles {
		policies[i] = r
	}
	name, _, _ := strings.Cut(sa.Email, "@")
	res := providers.Resource{Name: name, Region: region, Complete: true,
		Fields:     map[string]any{providers.IAMPolicies: policies},
		Attributes: map[string]string{"arn": sa.Name, "id": sa.Email}}
	if tags, owner, ok := providers.DecodeMarkDescription(sa.Description); ok {
		res.Fields[spec.TagsField], res.Owner = tags, owner
	}
	for _, r := range conditional {
		res.Unmodelled = append(res.Unmodelled, "ConditionalRole="+r)
	}
	if sa.Disabled {
		res.Unmodelled = append(res.Unmodelled, "Disabled=true")
	}
	if sa.DisplayName != "" {
		res.Unmodelled = append(res.Unmodelled, "DisplayName="+sa.DisplayName)
	}
	return res
}

// memberRoles are the roles bound to member without a condition, and
// those bound with one, each sorted.
func memberRoles(p *crm.Policy, member string) (roles, conditional []string) {
	for _, b := range p.Bindings {
		if !slices.Contains(b.Members, member) {
			continue
		}
		if b.Condition != nil {
			conditional = append(conditional, b.Role)
		} else {
			roles = append(roles, b.Role)
		}
	}
	sort.Strings(roles)
	sort.Strings(conditional)
	return slices.Compact(roles), slices.Compact(conditional)
}

func (d *serviceAccounts) policy(ctx context.Context, c *crm.Service, project string) (*crm.Policy, error) {
	return c.Projects.GetIamPolicy("projects/"+project, &crm.GetIamPolicyRequest{
		Options: &crm.GetPolicyOptions{RequestedPolicyVersion: 3}}).Context(ctx).Do()
}

// List returns every service account of the project whose email is an
// account id's (not Google's default accounts), whatever the region.
func (d *serviceAccounts) List(ctx context.Context, region string) ([]providers.Resource, error) {
	ic, cc, project, err := d.clients(ctx)
	if err != nil {
		return nil, err
	}
	var accounts []*iam.ServiceAccount
	pages := 0
	err = ic.Projects.ServiceAccounts.List("projects/"+project).PageSize(int64(d.b.opts.PageSize)).Context(ctx).
		Pages(ctx, func(r *iam.ListServiceAccountsResponse) error {
			if pages++; pages > listPageLimit {
				return errors.New("gcp/iam: listing passed the page budget; refusing to report a prefix of it")
			}
			for _, sa := range r.Accounts {
				if name, _, _ := strings.Cut(sa.Email, "@"); sa.Email == accountEmail(project, name) {
					accounts = append(accounts, sa)
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	p, err := d.policy(ctx, cc, project)
	if err != nil {
		return nil, err
	}
	out := make([]providers.Resource, 0, len(accounts))
	for _, sa := range accounts {
		out = append(out, accountResource(region, sa, p))
	}
	return out, nil
}

func (d *serviceAccounts) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	ic, cc, project, err := d.clients(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	sa, err := ic.Projects.ServiceAccounts.Get(accountName(project, name)).Context(ctx).Do()
	if err != nil {
		return providers.Resource{}, err
	}
	p, err := d.policy(ctx, cc, project)
	if err != nil {
		return providers.Resource{}, err
	}
	return accountResource(region, sa, p), nil
}

func (d *serviceAccounts) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	ic, cc, project, err := d.clients(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeIAM(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	desc, err := encodeAccountDescription(t)
	if err != nil {
		return providers.Resource{}, err
	}
	sa, err := ic.Projects.ServiceAccounts.Create("projects/"+project, &iam.CreateServiceAccountRequest{
		AccountId: t.Name, ServiceAccount: &iam.ServiceAccount{Description: desc}}).Context(ctx).Do()
	if err != nil {
		return providers.Resource{}, err
	}
	if len(decl.Policies) > 0 {
		if err := d.editPolicy(ctx, cc, project, setMemberRoles(accountMember(sa.Email), decl.Policies), true); err != nil {
			// An account without its roles is not what was declared:
			// take it back, so that a retry creates it whole.
			undo := context.WithoutCancel(ctx)
			_ = d.editPolicy(undo, cc, project, dropMember(sa.Email), false)
			_, _ = ic.Projects.ServiceAccounts.Delete(sa.Name).Context(undo).Do()
			return providers.Resource{}, fmt.Errorf("gcp/iam/%s: granting %s (the service account was deleted again): %w", t.Name, strings.Join(decl.Policies, ", "), err)
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *serviceAccounts) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	ic, cc, project, err := d.clients(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeIAM(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	// An account that is gone is not found at once, rather than after
	// the policy refused to bind it.
	if _, err := ic.Projects.ServiceAccounts.Get(accountName(project, t.Name)).Context(ctx).Do(); err != nil {
		return providers.Resource{}, err
	}
	for _, f := range changed {
		switch f {
		case providers.IAMPolicies:
			if err := d.editPolicy(ctx, cc, project, setMemberRoles(accountMember(accountEmail(project, t.Name)), decl.Policies), false); err != nil {
				return providers.Resource{}, fmt.Errorf("gcp/iam/%s: setting the roles: %w", t.Name, err)
			}
		case spec.TagsField:
			desc, err := encodeAccountDescription(t)
			if err != nil {
				return providers.Resource{}, err
			}
			if err := d.describe(ctx, ic, project, t.Name, desc); err != nil {
				return providers.Resource{}, err
			}
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "iam: field %q cannot be updated in place", f)
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// describe sets the description. A service account's etag is
// deprecated, so the patch is not conditional.
func (d *serviceAccounts) describe(ctx context.Context, ic *iam.Service, project, name, desc string) error {
	_, err := ic.Projects.ServiceAccounts.Patch(accountName(project, name), &iam.PatchServiceAccountRequest{
		ServiceAccount: &iam.ServiceAccount{Description: desc}, UpdateMask: "description"}).Context(ctx).Do()
	return err
}

// Delete removes the member from every binding of the project's policy,
// then the account: GCP would keep the bindings otherwise.
func (d *serviceAccounts) Delete(ctx context.Context, t providers.Target) error {
	ic, cc, project, err := d.clients(ctx)
	if err != nil {
		return err
	}
	if err := d.editPolicy(ctx, cc, project, dropMember(accountEmail(project, t.Name)), false); err != nil {
		return fmt.Errorf("gcp/iam/%s: removing its role bindings: %w", t.Name, err)
	}
	_, err = ic.Projects.ServiceAccounts.Delete(accountName(project, t.Name)).Context(ctx).Do()
	return err
}

// Release removes the ownership mark from the description and keeps the
// user tags. A description that is free text carries no mark.
func (d *serviceAccounts) Release(ctx context.Context, region, name, owner string) error {
	ic, _, project, err := d.clients(ctx)
	if err != nil {
		return err
	}
	sa, err := ic.Projects.ServiceAccounts.Get(accountName(project, name)).Context(ctx).Do()
	if err != nil {
		return err
	}
	tags, have, ok := providers.DecodeMarkDescription(sa.Description)
	if !ok || have != owner {
		return nil
	}
	delete(tags, spec.OwnershipTagKey)
	desc, err := encodeAccountDescription(providers.Target{Name: name, Fields: map[string]any{spec.TagsField: tags}})
	if err != nil {
		return err
	}
	return d.describe(ctx, ic, project, name, desc)
}

// policyEdit changes a policy in place and reports whether it changed
// anything.
type policyEdit func(p *crm.Policy) bool

// editPolicy applies edit to the project's policy: read, edit, write
// with the etag read, at version 3. A write that lost to a concurrent
// one (409 ABORTED) is made again from a fresh read, a bounded number of
// times; with fresh (the account was just made), so is one that named an
// account the policy service does not know yet, as a new account takes
// a moment to reach it.
func (d *serviceAccounts) editPolicy(ctx context.Context, c *crm.Service, project string, edit policyEdit, fresh bool) error {
	d.editing.Lock()
	defer d.editing.Unlock()
	delay := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		p, err := d.policy(ctx, c, project)
		if err != nil {
			return err
		}
		if !edit(p) {
			return nil
		}
		p.Version = 3
		_, err = c.Projects.SetIamPolicy("projects/"+project, &crm.SetIamPolicyRequest{Policy: p}).Context(ctx).Do()
		if err == nil || !policyRetryable(err, fresh) {
			return err
		}
		if attempt == policyAttempts {
			// 409 would read as AlreadyExists; it is a conflict that a
			// later run may not meet.
			return fmt.Errorf("%w: %w", providers.Errorf(providers.Conflict, "the project's IAM policy changed under each of %d attempts", policyAttempts), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay/2 + rand.N(delay/2+1)):
		}
		delay = min(2*delay, providers.MaxRetryDelay)
	}
}

func policyRetryable(err error, fresh bool) bool {
	var g *googleapi.Error
	if !errors.As(err, &g) {
		return false
	}
	return g.Code == http.StatusConflict || (fresh && g.Code == http.StatusBadRequest && strings.Contains(g.Message, "does not exist"))
}

// setMemberRoles makes member's unconditional roles exactly roles,
// leaving every other member and every conditional binding as it is.
func setMemberRoles(member string, roles []string) policyEdit {
	return func(p *crm.Policy) bool {
		want := map[string]bool{}
		for _, r := range roles {
			want[r] = true
		}
		changed := false
		placed := map[string]bool{}
		for _, b := range p.Bindings {
			if b.Condition != nil {
				continue
			}
			has := slices.Contains(b.Members, member)
			switch {
			case want[b.Role] && !has && !placed[b.Role]:
				b.Members, changed = append(b.Members, member), true
			case !want[b.Role] && has:
				b.Members, changed = slices.DeleteFunc(b.Members, func(m string) bool { return m == member }), true
			}
			placed[b.Role] = placed[b.Role] || want[b.Role]
		}
		for _, r := range sortedRoles(want) {
			if !placed[r] {
				p.Bindings, changed = append(p.Bindings, &crm.Binding{Role: r, Members: []string{member}}), true
			}
		}
		p.Bindings = slices.DeleteFunc(p.Bindings, func(b *crm.Binding) bool { return len(b.Members) == 0 })
		return changed
	}
}

func sortedRoles(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// dropMember removes the account from every binding, conditional ones
// too, as a member and as the deleted:… member an earlier deletion of
// an account of that email left.
func dropMember(email string) policyEdit {
	member := accountMember(email)
	return func(p *crm.Policy) bool {
		changed := false
		for _, b := range p.Bindings {
			kept := slices.DeleteFunc(slices.Clone(b.Members), func(m string) bool {
				return m == member || strings.HasPrefix(m, "deleted:"+member+"?uid=")
			})
			if len(kept) != len(b.Members) {
				b.Members, changed = kept, true
			}
		}
		p.Bindings = slices.DeleteFunc(p.Bindings, func(b *crm.Binding) bool { return len(b.Members) == 0 })
		return changed
	}
}

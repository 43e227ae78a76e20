package aws

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// roles is the iam-role kind: an IAM role at the path /, named by its role
// name, with its trust policy and attached managed policies. IAM is global:
// a listing in any region shows every role of the account, reported in the
// region asked.
type roles struct {
	clients  *regional[*iam.Client]
	pageSize int32 // ListRoles' MaxItems; 0 for the service's default
	// exists bounds the wait after CreateRole for GetRole to see the role.
	exists time.Duration
}

var (
	_ providers.Driver   = (*roles)(nil)
	_ providers.Releaser = (*roles)(nil)
)

// roleSessionMin and roleSessionMax bound MaxSessionDuration, in seconds
// (CreateRole's and UpdateRole's doc: from 1 hour to 12 hours).
const (
	roleSessionMin = 3600
	roleSessionMax = 43200
)

// rolePath is where infra makes roles: the default path, so the ARN is
// role/NAME. A role infra made always carries the ownership tag, which is
// what lets the executor pass it to Lambda (ScopePassRole); /infra/ would
// let it pass a role a fleet has released too.
const rolePath = "/"

func init() {
	register(entry{
		kind: spec.IAMRole, service: "iam",
		// Whoever may attach a policy to a role, or change whom it trusts,
		// may grant anything to whoever assumes it. Leave the kind out of
		// the executor (--kinds) unless the fleet really manages roles, and
		// restrict iam:AttachRolePolicy with the condition iam:PolicyARN.
		actions: []string{"iam:ListRoles", "iam:GetRole", "iam:ListAttachedRolePolicies", "iam:ListRolePolicies",
			"iam:ListInstanceProfilesForRole", "iam:CreateRole", "iam:TagRole", "iam:UntagRole", "iam:UpdateRole",
			"iam:UpdateAssumeRolePolicy", "iam:AttachRolePolicy", "iam:DetachRolePolicy", "iam:DeleteRolePolicy", "iam:DeleteRole"},
		scopes: map[string][]ActionScope{
			"iam:ListRoles":                   {{Scope: ScopeAny}},
			"iam:GetRole":                     {{Scope: ScopeAny}},
			"iam:ListAttachedRolePolicies":    {{Scope: ScopeAny}},
			"iam:ListRolePolicies":            {{Scope: ScopeAny}},
			"iam:ListInstanceProfilesForRole": {{Scope: ScopeAny}},
			"iam:CreateRole":                  {{Scope: ScopeCreate}},
			"iam:TagRole":                     {{Scope: ScopeTagging}},
			"iam:UntagRole":                   {{Scope: ScopeOwned}},
			"iam:UpdateRole":                  {{Scope: ScopeOwned}},
			"iam:UpdateAssumeRolePolicy":      {{Scope: ScopeOwned}},
			"iam:AttachRolePolicy":            {{Scope: ScopeOwned}},
			"iam:DetachRolePolicy":            {{Scope: ScopeOwned}},
			"iam:DeleteRolePolicy":            {{Scope: ScopeOwned}},
			"iam:DeleteRole":                  {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:iam::{account}:role/{name}",
		deepScan:  true, // IAM is global: the regional Tagging API never returns roles
		errors:    iamErrors,
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &roles{clients: newRegional(cfg, func(c aws.Config) *iam.Client { return iam.NewFromConfig(c) }), exists: 2 * time.Minute}
		},
	})
}

// target decodes and checks a target before any call: the trust is a JSON
// document, the session bound is within IAM's, every policy is a policy
// ARN.
func (d *roles) target(t providers.Target) (providers.IAMRoleInput, error) {
	in, err := providers.DecodeIAMRole(t.Fields)
	if err != nil {
		return in, providers.Errorf(providers.InvalidArgument, "aws/iam-role: %s: %v", t.Name, err)
	}
	if in.HasTrust() {
		if err := checkDocument(spec.IAMRole, t.Name, providers.IAMRoleTrust, in.Trust); err != nil {
			return in, err
		}
	}
	if n := in.MaxSessionDurationSec; in.HasMaxSessionDurationSec() && (n != float64(int(n)) || n < roleSessionMin || n > roleSessionMax) {
		return in, providers.Errorf(providers.InvalidArgument, "aws/iam-role: %s: maxSessionDurationSec %v is not a whole number of seconds from %d to %d",
			t.Name, n, roleSessionMin, roleSessionMax)
	}
	for _, p := range in.Policies {
		if !strings.HasPrefix(p, "arn:") || !strings.Contains(p, ":policy/") {
			return in, providers.Errorf(providers.InvalidArgument, "aws/iam-role: %s: policies: %q is not a managed policy ARN (arn:aws:iam::ACCOUNT:policy/NAME)", t.Name, p)
		}
	}
	return in, nil
}

// List is not complete: ListRoles carries neither tags nor policies.
// Service-linked roles are left out: they are their service's, and IAM
// lets no one else change them.
func (d *roles) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &iam.ListRolesInput{}
	if d.pageSize > 0 {
		in.MaxItems = aws.Int32(d.pageSize)
	}
	var out []providers.Resource
	err := eachPage(ctx, iam.NewListRolesPaginator(d.clients.get(region), in), spec.IAMRole, region, func(page *iam.ListRolesOutput) error {
		for _, r := range page.Roles {
			if strings.HasPrefix(aws.ToString(r.Path), "/aws-service-role/") {
				continue
			}
			out = append(out, providers.Resource{Name: aws.ToString(r.RoleName), Region: region, Created: aws.ToTime(r.CreateDate),
				Attributes: roleAttributes(&r)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/iam-role: ListRoles: %w", err)
	}
	return out, nil
}

func roleAttributes(r *iamtypes.Role) map[string]string {
	return map[string]string{"arn": aws.ToString(r.Arn), "roleId": aws.ToString(r.RoleId)}
}

func (d *roles) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	out, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/iam-role: %s: GetRole: %w", name, err)
	}
	res := roleResource(region, out.Role)
	if providers.WantsField(ctx, providers.IAMRolePolicies) {
		policies, err := attachedRolePolicies(ctx, c, region, name)
		if err != nil {
			return providers.Resource{}, err
		}
		res.Fields[providers.IAMRolePolicies] = reportedPolicies(policies)
	}
	return res, nil
}

// roleResource is a role as GetRole describes it (GetRole carries the tags;
// the attached policies are another call).
func roleResource(region string, r *iamtypes.Role) providers.Resource {
	tags := iamTagMap(r.Tags)
	res := providers.Resource{Name: aws.ToString(r.RoleName), Region: region, Created: aws.ToTime(r.CreateDate),
		Owner: tags[spec.OwnershipTagKey], Attributes: roleAttributes(r),
		Fields: map[string]any{
			providers.IAMRoleTrust:       iamDocument(r.AssumeRolePolicyDocument),
			providers.IAMRoleDescription: aws.ToString(r.Description),
			spec.TagsField:               reportedTags(tags),
		}}
	if r.MaxSessionDuration != nil {
		res.Fields[providers.IAMRoleMaxSessionDurationSec] = float64(*r.MaxSessionDuration)
	}
	if p := aws.ToString(r.Path); p != rolePath {
		res.Unmodelled = append(res.Unmodelled, "Path="+p)
	}
	if r.PermissionsBoundary != nil {
		res.Unmodelled = append(res.Unmodelled, "PermissionsBoundary="+aws.ToString(r.PermissionsBoundary.PermissionsBoundaryArn))
	}
	return res
}

// attachedRolePolicies returns the ARNs of the role's attached managed
// policies, sorted.
func attachedRolePolicies(ctx context.Context, c *iam.Client, region, name string) ([]string, error) {
	var arns []string
	p := iam.NewListAttachedRolePoliciesPaginator(c, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
	err := eachPage(ctx, p, spec.IAMRole, region, func(page *iam.ListAttachedRolePoliciesOutput) error {
		for _, a := range page.AttachedPolicies {
			arns = append(arns, aws.ToString(a.PolicyArn))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/iam-role: %s: ListAttachedRolePolicies: %w", name, err)
	}
	sort.Strings(arns)
	return arns, nil
}

func (d *roles) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	req := &iam.CreateRoleInput{RoleName: aws.String(t.Name), Path: aws.String(rolePath),
		AssumeRolePolicyDocument: aws.String(in.Trust), Tags: iamTags(tags)}
	if in.HasDescription() {
		req.Description = aws.String(in.Description)
	}
	if in.HasMaxSessionDurationSec() {
		req.MaxSessionDuration = aws.Int32(int32(in.MaxSessionDurationSec))
	}
	// Tags go with the create: the role never exists without its ownership
	// tag. A failed attach below leaves a role this fleet owns, which the
	// next apply finishes.
	if _, err := c.CreateRole(ctx, req); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/iam-role: %s: CreateRole: %w", t.Name, err)
	}
	// IAM is eventually consistent: a role just made may not be found for
	// a moment, and may not be assumable or passable for some seconds more
	// (the compute driver retries Lambda's "cannot be assumed"). The SDK's
	// waiter polls GetRole until IAM's own reads see the role, which the
	// attachments below need; its answer is the role as read back.
	got, err := iam.NewRoleExistsWaiter(c).WaitForOutput(ctx, &iam.GetRoleInput{RoleName: aws.String(t.Name)}, d.exists)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/iam-role: %s: waiting for GetRole to see the new role: %w", t.Name, err)
	}
	// A new role has no policy attached: nothing to list first.
	if err := d.attach(ctx, c, t.Name, nil, in.Policies); err != nil {
		return providers.Resource{}, err
	}
	res := roleResource(t.Region, got.Role)
	want := append([]string(nil), in.Policies...)
	sort.Strings(want)
	res.Fields[providers.IAMRolePolicies] = reportedPolicies(want)
	return res, nil
}

// attach detaches what the role has and should not, and attaches what it
// should and has not.
func (d *roles) attach(ctx context.Context, c *iam.Client, name string, have, want []string) error {
	return syncPolicies(have, want, func(p string) error {
		// Detached already is done: the policy's own delete detaches it
		// from the fleet's roles, and may run beside this. Returned, the
		// NoSuchEntity would read as this role being gone.
		if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(name), PolicyArn: aws.String(p)}); err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("aws/iam-role: %s: DetachRolePolicy %s: %w", name, p, err)
		}
		return nil
	}, func(p string) error {
		if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(name), PolicyArn: aws.String(p)}); err != nil {
			return fmt.Errorf("aws/iam-role: %s: AttachRolePolicy %s: %w", name, p, err)
		}
		return nil
	})
}

func (d *roles) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	settings := false // description and maxSessionDurationSec: one UpdateRole
	for _, f := range changed {
		switch f {
		case providers.IAMRoleTrust:
			if _, err = c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(t.Name),
				PolicyDocument: aws.String(in.Trust)}); err != nil {
				err = fmt.Errorf("aws/iam-role: %s: UpdateAssumeRolePolicy: %w", t.Name, err)
			}
		case providers.IAMRoleDescription, providers.IAMRoleMaxSessionDurationSec:
			settings = true
		case providers.IAMRolePolicies:
			var have []string
			if have, err = attachedRolePolicies(ctx, c, t.Region, t.Name); err == nil {
				err = d.attach(ctx, c, t.Name, have, in.Policies)
			}
		case providers.IAMRoleTags:
			err = d.retag(ctx, c, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/iam-role: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	if settings {
		if err := d.updateSettings(ctx, c, t.Name, in); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// updateSettings sets the description and the session bound with one
// UpdateRole. UpdateRole's doc says a call without MaxSessionDuration sets
// the default hour, so both are always sent: the target's where it sets
// them, else what the role has.
func (d *roles) updateSettings(ctx context.Context, c *iam.Client, name string, in providers.IAMRoleInput) error {
	req := &iam.UpdateRoleInput{RoleName: aws.String(name), Description: aws.String(in.Description),
		MaxSessionDuration: aws.Int32(int32(in.MaxSessionDurationSec))}
	if !in.HasDescription() || !in.HasMaxSessionDurationSec() {
		cur, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("aws/iam-role: %s: GetRole: %w", name, err)
		}
		if !in.HasDescription() {
			req.Description = cur.Role.Description
		}
		if !in.HasMaxSessionDurationSec() {
			req.MaxSessionDuration = cur.Role.MaxSessionDuration
		}
	}
	if _, err := c.UpdateRole(ctx, req); err != nil {
		return fmt.Errorf("aws/iam-role: %s: UpdateRole: %w", name, err)
	}
	return nil
}

func (d *roles) retag(ctx context.Context, c *iam.Client, t providers.Target) error {
	r, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(t.Name)})
	if err != nil {
		return fmt.Errorf("aws/iam-role: %s: GetRole: %w", t.Name, err)
	}
	name := aws.String(t.Name)
	return retagIAM(t, iamTagMap(r.Role.Tags), func(set []iamtypes.Tag) error {
		if _, err := c.TagRole(ctx, &iam.TagRoleInput{RoleName: name, Tags: set}); err != nil {
			return fmt.Errorf("aws/iam-role: %s: TagRole: %w", t.Name, err)
		}
		return nil
	}, func(keys []string) error { return d.untag(ctx, c, t.Name, keys) })
}

func (d *roles) untag(ctx context.Context, c *iam.Client, name string, keys []string) error {
	if _, err := c.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String(name), TagKeys: keys}); err != nil {
		return fmt.Errorf("aws/iam-role: %s: UntagRole: %w", name, err)
	}
	return nil
}

// Delete tries DeleteRole first, so a role with nothing attached costs one
// call. When IAM refuses (DeleteConflict), it detaches the managed policies
// and deletes the inline ones, then deletes the role again. A role in an
// instance profile is refused instead, naming the profiles: infra manages
// no instance profile, and taking the role out of one takes the
// credentials from the instances that run with it.
func (d *roles) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	_, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(t.Name)})
	if !isCode(err, "DeleteConflict") {
		if err != nil {
			return fmt.Errorf("aws/iam-role: %s: DeleteRole: %w", t.Name, err)
		}
		return nil
	}
	if err := d.refuseInProfiles(ctx, c, t); err != nil {
		return err
	}
	have, err := attachedRolePolicies(ctx, c, t.Region, t.Name)
	if err != nil {
		return err
	}
	if err := d.attach(ctx, c, t.Name, have, nil); err != nil {
		return err
	}
	var inline []string
	err = eachPage(ctx, iam.NewListRolePoliciesPaginator(c, &iam.ListRolePoliciesInput{RoleName: aws.String(t.Name)}), spec.IAMRole, t.Region,
		func(page *iam.ListRolePoliciesOutput) error { inline = append(inline, page.PolicyNames...); return nil })
	if err != nil {
		return fmt.Errorf("aws/iam-role: %s: ListRolePolicies: %w", t.Name, err)
	}
	for _, p := range inline {
		// Gone already is done: a retry whose answer was lost finds it gone.
		if _, err := c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(t.Name), PolicyName: aws.String(p)}); err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("aws/iam-role: %s: DeleteRolePolicy %s: %w", t.Name, p, err)
		}
	}
	if _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(t.Name)}); err != nil {
		return fmt.Errorf("aws/iam-role: %s: DeleteRole: %w", t.Name, err)
	}
	return nil
}

// refuseInProfiles is a Conflict naming the instance profiles that hold
// the role, if any do.
func (d *roles) refuseInProfiles(ctx context.Context, c *iam.Client, t providers.Target) error {
	var profiles []string
	p := iam.NewListInstanceProfilesForRolePaginator(c, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String(t.Name)})
	err := eachPage(ctx, p, spec.IAMRole, t.Region, func(page *iam.ListInstanceProfilesForRoleOutput) error {
		for _, ip := range page.InstanceProfiles {
			profiles = append(profiles, aws.ToString(ip.InstanceProfileName))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("aws/iam-role: %s: ListInstanceProfilesForRole: %w", t.Name, err)
	}
	if len(profiles) > 0 {
		sort.Strings(profiles)
		return providers.Errorf(providers.Conflict, "aws/iam-role: %s: the role is in the instance profiles %s, which infra does not manage: "+
			"remove it from them (iam remove-role-from-instance-profile) once no instance runs with it, then delete again",
			t.Name, strings.Join(profiles, ", "))
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *roles) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	r, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("aws/iam-role: %s: GetRole: %w", name, err)
	}
	return releaseIAM(r.Role.Tags, owner, func(keys []string) error { return d.untag(ctx, c, name, keys) })
}

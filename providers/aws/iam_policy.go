package aws

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// managedPolicies is the iam-policy kind: a customer managed policy at the
// path /, named by its policy name. IAM is global: a listing in any region
// shows every policy of the account, reported in the region asked.
type managedPolicies struct {
	clients  *regional[*iam.Client]
	account  accountOf
	pageSize int32 // the listings' MaxItems; 0 for the service's default
}

var (
	_ providers.Driver   = (*managedPolicies)(nil)
	_ providers.Releaser = (*managedPolicies)(nil)
)

// policyVersionLimit is how many versions IAM keeps of a managed policy
// (CreatePolicyVersion's doc: up to five; delete one before a sixth).
const policyVersionLimit = 5

// policyPath is where infra makes policies: the default path, so the ARN
// is policy/NAME and a read needs nothing but the name.
const policyPath = "/"

func init() {
	register(entry{
		kind: spec.IAMPolicy, service: "iam",
		actions: []string{"iam:ListPolicies", "iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyVersions",
			"iam:ListEntitiesForPolicy", "iam:GetRole", "iam:GetUser", "iam:CreatePolicy", "iam:CreatePolicyVersion",
			"iam:DeletePolicyVersion", "iam:TagPolicy", "iam:UntagPolicy", "iam:DetachRolePolicy", "iam:DetachUserPolicy",
			"iam:DeletePolicy"},
		// GetRole, GetUser, DetachRolePolicy and DetachUserPolicy keep the
		// scopes the iam-role and iam kinds give them.
		scopes: map[string][]ActionScope{
			"iam:ListPolicies":          {{Scope: ScopeAny}},
			"iam:GetPolicy":             {{Scope: ScopeAny}},
			"iam:GetPolicyVersion":      {{Scope: ScopeAny}},
			"iam:ListPolicyVersions":    {{Scope: ScopeAny}},
			"iam:ListEntitiesForPolicy": {{Scope: ScopeAny}},
			"iam:CreatePolicy":          {{Scope: ScopeCreate}},
			"iam:CreatePolicyVersion":   {{Scope: ScopeOwned}},
			"iam:DeletePolicyVersion":   {{Scope: ScopeOwned}},
			"iam:TagPolicy":             {{Scope: ScopeTagging}},
			"iam:UntagPolicy":           {{Scope: ScopeOwned}},
			"iam:DeletePolicy":          {{Scope: ScopeOwned}},
		},
		// The delete reads and detaches the roles and users it is attached
		// to: those calls act on them, not on the policy.
		elsewhere: map[string]spec.Kind{"iam:GetRole": spec.IAMRole, "iam:DetachRolePolicy": spec.IAMRole,
			"iam:GetUser": spec.IAM, "iam:DetachUserPolicy": spec.IAM},
		arnFormat: "arn:{partition}:iam::{account}:policy/{name}",
		deepScan:  true, // IAM is global: the regional Tagging API never returns policies
		errors:    iamErrors,
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return &managedPolicies{clients: newRegional(cfg, func(c aws.Config) *iam.Client { return iam.NewFromConfig(c) }), account: account}
		},
	})
}

// target decodes and checks a target before any call: the document is a
// JSON document.
func (d *managedPolicies) target(t providers.Target) (providers.IAMPolicyInput, error) {
	in, err := providers.DecodeIAMPolicy(t.Fields)
	if err != nil {
		return in, providers.Errorf(providers.InvalidArgument, "aws/iam-policy: %s: %v", t.Name, err)
	}
	if in.HasDocument() {
		if err := checkDocument(spec.IAMPolicy, t.Name, providers.IAMPolicyDocument, in.Document); err != nil {
			return in, err
		}
	}
	return in, nil
}

// arnOf is the ARN of the policy named name at infra's path: a policy is
// read by its ARN, which holds the account.
func (d *managedPolicies) arnOf(ctx context.Context, region, name string) (string, error) {
	if region == "" {
		// The partition is the region's, and the account would be asked
		// for before the regional client refuses the call.
		return "", fmt.Errorf("aws/iam-policy: %s: %w", name, ErrNoRegion)
	}
	account, err := d.account(ctx)
	if err != nil {
		return "", fmt.Errorf("aws/iam-policy: %s: %w", name, err)
	}
	return "arn:" + Partition(region) + ":iam::" + account + ":policy/" + name, nil
}

// List is not complete: ListPolicies carries neither tags nor documents.
// It lists the account's own policies (Scope Local) at infra's path: one
// elsewhere has its path in its ARN, which no address can say.
func (d *managedPolicies) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &iam.ListPoliciesInput{Scope: iamtypes.PolicyScopeTypeLocal}
	if d.pageSize > 0 {
		in.MaxItems = aws.Int32(d.pageSize)
	}
	var out []providers.Resource
	err := eachPage(ctx, iam.NewListPoliciesPaginator(d.clients.get(region), in), spec.IAMPolicy, region, func(page *iam.ListPoliciesOutput) error {
		for _, p := range page.Policies {
			if aws.ToString(p.Path) != policyPath {
				continue
			}
			out = append(out, providers.Resource{Name: aws.ToString(p.PolicyName), Region: region, Created: aws.ToTime(p.CreateDate),
				Attributes: map[string]string{"arn": aws.ToString(p.Arn)}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/iam-policy: ListPolicies: %w", err)
	}
	return out, nil
}

// get is GetPolicy by name.
func (d *managedPolicies) get(ctx context.Context, c *iam.Client, region, name string) (*iamtypes.Policy, error) {
	arn, err := d.arnOf(ctx, region, name)
	if err != nil {
		return nil, err
	}
	out, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("aws/iam-policy: %s: GetPolicy: %w", name, err)
	}
	return out.Policy, nil
}

func (d *managedPolicies) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	p, err := d.get(ctx, c, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	// GetPolicy carries the tags and the description; the document is the
	// default version's.
	res := policyResource(region, p, iamTagMap(p.Tags), aws.ToString(p.Description))
	if providers.WantsField(ctx, providers.IAMPolicyDocument) {
		v, err := c.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: p.Arn, VersionId: p.DefaultVersionId})
		if err != nil {
			return providers.Resource{}, fmt.Errorf("aws/iam-policy: %s: GetPolicyVersion %s: %w", name, aws.ToString(p.DefaultVersionId), err)
		}
		res.Fields[providers.IAMPolicyDocument] = iamDocument(v.PolicyVersion.Document)
	}
	return res, nil
}

// policyResource is a policy with its tags and description; the document
// is another call.
func policyResource(region string, p *iamtypes.Policy, tags map[string]string, description string) providers.Resource {
	return providers.Resource{Name: aws.ToString(p.PolicyName), Region: region, Created: aws.ToTime(p.CreateDate),
		Owner: tags[spec.OwnershipTagKey], Attributes: map[string]string{"arn": aws.ToString(p.Arn)},
		Fields: map[string]any{providers.IAMPolicyDescription: description, spec.TagsField: reportedTags(tags)}}
}

func (d *managedPolicies) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &iam.CreatePolicyInput{PolicyName: aws.String(t.Name), Path: aws.String(policyPath),
		PolicyDocument: aws.String(in.Document), Tags: iamTags(tags)}
	if in.HasDescription() {
		req.Description = aws.String(in.Description)
	}
	// Tags go with the create: the policy never exists without its
	// ownership tag.
	out, err := d.clients.get(t.Region).CreatePolicy(ctx, req)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/iam-policy: %s: CreatePolicy: %w", t.Name, err)
	}
	// CreatePolicy's answer leaves the description out (the Policy type's
	// doc: only GetPolicy carries it); the document is version v1, the one
	// sent.
	res := policyResource(t.Region, out.Policy, tags, in.Description)
	res.Fields[providers.IAMPolicyDocument] = in.Document
	return res, nil
}

func (d *managedPolicies) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	for _, f := range changed {
		switch f {
		case providers.IAMPolicyDocument:
			err = d.newVersion(ctx, c, t, in.Document)
		case providers.IAMPolicyTags:
			err = d.retag(ctx, c, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/iam-policy: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// versions lists the policy's versions.
func (d *managedPolicies) versions(ctx context.Context, c *iam.Client, region, name, arn string) ([]iamtypes.PolicyVersion, error) {
	var out []iamtypes.PolicyVersion
	in := &iam.ListPolicyVersionsInput{PolicyArn: aws.String(arn)}
	if d.pageSize > 0 {
		in.MaxItems = aws.Int32(d.pageSize)
	}
	err := eachPage(ctx, iam.NewListPolicyVersionsPaginator(c, in), spec.IAMPolicy, region, func(page *iam.ListPolicyVersionsOutput) error {
		out = append(out, page.Versions...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/iam-policy: %s: ListPolicyVersions: %w", name, err)
	}
	return out, nil
}

// newVersion makes doc the policy's default version. IAM keeps five
// versions; when it has them, the oldest that is not the default goes
// first.
func (d *managedPolicies) newVersion(ctx context.Context, c *iam.Client, t providers.Target, doc string) error {
	arn, err := d.arnOf(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	vs, err := d.versions(ctx, c, t.Region, t.Name, arn)
	if err != nil {
		return err
	}
	if len(vs) >= policyVersionLimit {
		old := make([]iamtypes.PolicyVersion, 0, len(vs))
		for _, v := range vs {
			if !v.IsDefaultVersion {
				old = append(old, v)
			}
		}
		sort.SliceStable(old, func(i, j int) bool { return aws.ToTime(old[i].CreateDate).Before(aws.ToTime(old[j].CreateDate)) })
		if len(old) > 0 {
			if err := d.deleteVersion(ctx, c, t.Name, arn, old[0].VersionId); err != nil {
				return err
			}
		}
	}
	// IAM does not dedupe CreatePolicyVersion: a resend of one whose answer
	// was lost makes another version, and spends one of the five.
	_, err = c.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: aws.String(arn), PolicyDocument: aws.String(doc),
		SetAsDefault: true}, iamNoBlindResend)
	if err != nil && mayHaveActed(err) {
		if made, ferr := d.defaultIs(ctx, c, arn, doc); ferr == nil && made {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("aws/iam-policy: %s: CreatePolicyVersion: %w", t.Name, err)
	}
	return nil
}

// defaultIs says whether the policy's default version is doc, by IAM's
// reading of a document.
func (d *managedPolicies) defaultIs(ctx context.Context, c *iam.Client, arn, doc string) (bool, error) {
	p, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if err != nil {
		return false, err
	}
	v, err := c.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: p.Policy.DefaultVersionId})
	if err != nil {
		return false, err
	}
	info, _ := spec.Lookup(spec.IAMPolicy)
	f, _ := info.Field(providers.IAMPolicyDocument)
	return spec.Equal(f, doc, iamDocument(v.PolicyVersion.Document)), nil
}

func (d *managedPolicies) deleteVersion(ctx context.Context, c *iam.Client, name, arn string, id *string) error {
	// Gone already is done: a retry whose answer was lost finds it gone.
	if _, err := c.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: aws.String(arn), VersionId: id}); err != nil && !isCode(err, "NoSuchEntity") {
		return fmt.Errorf("aws/iam-policy: %s: DeletePolicyVersion %s: %w", name, aws.ToString(id), err)
	}
	return nil
}

func (d *managedPolicies) retag(ctx context.Context, c *iam.Client, t providers.Target) error {
	p, err := d.get(ctx, c, t.Region, t.Name)
	if err != nil {
		return err
	}
	return retagIAM(t, iamTagMap(p.Tags), func(set []iamtypes.Tag) error {
		if _, err := c.TagPolicy(ctx, &iam.TagPolicyInput{PolicyArn: p.Arn, Tags: set}); err != nil {
			return fmt.Errorf("aws/iam-policy: %s: TagPolicy: %w", t.Name, err)
		}
		return nil
	}, func(keys []string) error { return d.untag(ctx, c, t.Name, p.Arn, keys) })
}

func (d *managedPolicies) untag(ctx context.Context, c *iam.Client, name string, arn *string, keys []string) error {
	if _, err := c.UntagPolicy(ctx, &iam.UntagPolicyInput{PolicyArn: arn, TagKeys: keys}); err != nil {
		return fmt.Errorf("aws/iam-policy: %s: UntagPolicy: %w", name, err)
	}
	return nil
}

// Delete detaches the policy from the roles and users it is attached to,
// when every one of them is this fleet's; an entity of anyone else (a
// group is never the fleet's: groups take no tags) refuses the delete as
// a Conflict naming them all, before anything is detached. Then it deletes
// the versions that are not the default, then the policy, as DeletePolicy's
// doc asks.
func (d *managedPolicies) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	arn, err := d.arnOf(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	roles, users, err := d.detachable(ctx, c, t, arn)
	if err != nil {
		return err
	}
	for _, r := range roles {
		if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(r), PolicyArn: aws.String(arn)}); err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("aws/iam-policy: %s: DetachRolePolicy %s: %w", t.Name, r, err)
		}
	}
	for _, u := range users {
		if _, err := c.DetachUserPolicy(ctx, &iam.DetachUserPolicyInput{UserName: aws.String(u), PolicyArn: aws.String(arn)}); err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("aws/iam-policy: %s: DetachUserPolicy %s: %w", t.Name, u, err)
		}
	}
	vs, err := d.versions(ctx, c, t.Region, t.Name, arn)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if !v.IsDefaultVersion {
			if err := d.deleteVersion(ctx, c, t.Name, arn, v.VersionId); err != nil {
				return err
			}
		}
	}
	if _, err := c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: aws.String(arn)}); err != nil {
		return fmt.Errorf("aws/iam-policy: %s: DeletePolicy: %w", t.Name, err)
	}
	return nil
}

// detachable lists the roles and users the policy is attached to, all of
// them carrying t's fleet's ownership tag; any other attachment is a
// Conflict naming every one.
func (d *managedPolicies) detachable(ctx context.Context, c *iam.Client, t providers.Target, arn string) (roles, users []string, err error) {
	var foreign []string
	// place puts name among ours or the foreign, by the tags of the
	// entity read reads.
	place := func(what, name string, ours *[]string, read func() ([]iamtypes.Tag, error)) error {
		tags, err := read()
		if isCode(err, "NoSuchEntity") {
			// Gone since the listing (its own delete, running beside
			// this, detached the policy first): it holds the policy no
			// more. Returned, the NoSuchEntity would read as this policy
			// being gone.
			return nil
		}
		if err != nil {
			return err
		}
		if t.Owner != "" && iamTagMap(tags)[spec.OwnershipTagKey] == t.Owner {
			*ours = append(*ours, name)
		} else {
			foreign = append(foreign, what+" "+name)
		}
		return nil
	}
	p := iam.NewListEntitiesForPolicyPaginator(c, &iam.ListEntitiesForPolicyInput{PolicyArn: aws.String(arn)})
	err = eachPage(ctx, p, spec.IAMPolicy, t.Region, func(page *iam.ListEntitiesForPolicyOutput) error {
		for _, g := range page.PolicyGroups {
			foreign = append(foreign, "group "+aws.ToString(g.GroupName))
		}
		for _, r := range page.PolicyRoles {
			name := aws.String(aws.ToString(r.RoleName))
			if err := place("role", *name, &roles, func() ([]iamtypes.Tag, error) {
				got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: name})
				if err != nil {
					return nil, fmt.Errorf("GetRole %s: %w", *name, err)
				}
				return got.Role.Tags, nil
			}); err != nil {
				return err
			}
		}
		for _, u := range page.PolicyUsers {
			name := aws.String(aws.ToString(u.UserName))
			if err := place("user", *name, &users, func() ([]iamtypes.Tag, error) {
				got, err := c.GetUser(ctx, &iam.GetUserInput{UserName: name})
				if err != nil {
					return nil, fmt.Errorf("GetUser %s: %w", *name, err)
				}
				return got.User.Tags, nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("aws/iam-policy: %s: ListEntitiesForPolicy: %w", t.Name, err)
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		return nil, nil, providers.Errorf(providers.Conflict, "aws/iam-policy: %s: attached to %s, which fleet %q does not own: "+
			"detach it from them, or declare them in the fleet, then delete again", t.Name, strings.Join(foreign, ", "), t.Owner)
	}
	return roles, users, nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *managedPolicies) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	p, err := d.get(ctx, c, region, name)
	if err != nil {
		return err
	}
	return releaseIAM(p.Tags, owner, func(keys []string) error { return d.untag(ctx, c, name, p.Arn, keys) })
}

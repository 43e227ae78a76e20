package executordeploy

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/infra-iac/infra/providers"
)

// policyPath is where deploy makes the execution role's managed policies:
// apart from the fleets' (the iam-policy kind makes its own at /), and
// listed by it alone when a shorter list leaves some behind.
const policyPath = "/infra/"

// inlinePolicy is the one inline policy deploy set on the execution role
// before its permissions outgrew IAM's 10,240 characters for a role's
// inline policies; a deploy deletes it once the managed policies replace
// it.
const inlinePolicy = "infra-executor"

// policyVersionLimit is how many versions IAM keeps of a managed policy:
// a sixth needs one deleted first.
const policyVersionLimit = 5

// policyName is the name of the role's i-th managed policy (from 0):
// <function>-1, <function>-2, …
func (d *deployer) policyName(i int) string { return d.s.Function + "-" + strconv.Itoa(i+1) }

func (d *deployer) policyARN(name string) string {
	return "arn:" + d.partition + ":iam::" + d.account + ":policy" + policyPath + name
}

// managedPolicies makes docs the role's managed policies, in order: each
// is created, or given a new default version when its document differs by
// meaning, and attached. Only then is the old inline policy deleted, so
// that the role is never without its permissions, and then the policies
// beyond the count (a deploy of fewer kinds).
func (d *deployer) managedPolicies(ctx context.Context, c *iam.Client, role string, docs []policyDocument) error {
	attached := map[string]bool{}
	pages := iam.NewListAttachedRolePoliciesPaginator(c, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(role)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("role %s: list its attached policies: %w", role, err)
		}
		for _, p := range page.AttachedPolicies {
			attached[aws.ToString(p.PolicyArn)] = true
		}
	}
	d.out.PolicyARNs = []string{}
	for i, doc := range docs {
		name := d.policyName(i)
		arn, err := d.ensurePolicy(ctx, c, name, i, doc.String())
		if err != nil {
			return err
		}
		d.out.PolicyARNs = append(d.out.PolicyARNs, arn)
		if attached[arn] {
			continue
		}
		if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(arn)}); err != nil {
			return fmt.Errorf("role %s: attach policy %s: %w", role, name, err)
		}
		d.changed("attached policy %s to role %s", name, role)
	}
	if err := d.dropInlinePolicy(ctx, c, role); err != nil {
		return err
	}
	return d.dropSurplusPolicies(ctx, c, role, len(docs), attached)
}

// ensurePolicy creates the managed policy name holding doc, or makes doc
// its default version when the default says something else; it returns
// the policy's ARN. A policy of that name that is not this executor's is
// refused, not taken over.
func (d *deployer) ensurePolicy(ctx context.Context, c *iam.Client, name string, i int, doc string) (string, error) {
	arn := d.policyARN(name)
	got, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if d.b.ErrorCode(err) == providers.NotFound {
		if _, err := c.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String(name), Path: aws.String(policyPath),
			PolicyDocument: aws.String(doc), Tags: d.tags(),
			// Never updated: it names no count, which a later deploy may change.
			Description: aws.String(fmt.Sprintf("infra executor %s: its permissions, part %d (docs/executor.md)", d.s.Function, i+1))}); err != nil {
			return "", fmt.Errorf("create policy %s: %w", name, err)
		}
		d.changed("created policy %s%s", policyPath, name)
		return arn, nil
	}
	if err != nil {
		return "", fmt.Errorf("policy %s: %w", name, err)
	}
	if !d.ours(got.Policy.Tags) {
		return "", fmt.Errorf("policy %s%s is not this executor's (it lacks the tag %s=%s): delete or rename it", policyPath, name, executorTagKey, d.s.Function)
	}
	cur, err := c.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: got.Policy.DefaultVersionId})
	if err != nil {
		return "", fmt.Errorf("policy %s: read its version %s: %w", name, aws.ToString(got.Policy.DefaultVersionId), err)
	}
	if sameJSON(decodePolicy(aws.ToString(cur.PolicyVersion.Document)), doc) {
		return arn, nil
	}
	return arn, d.newPolicyVersion(ctx, c, name, arn, doc)
}

// newPolicyVersion makes doc the policy's default version. IAM keeps five
// versions: when it has them, the oldest that is not the default goes
// first.
func (d *deployer) newPolicyVersion(ctx context.Context, c *iam.Client, name, arn, doc string) error {
	old, err := d.oldPolicyVersions(ctx, c, name, arn)
	if err != nil {
		return err
	}
	if len(old)+1 >= policyVersionLimit {
		// By date, then by number: versions made within a second share one.
		sort.Slice(old, func(i, j int) bool {
			a, b := aws.ToTime(old[i].CreateDate), aws.ToTime(old[j].CreateDate)
			if !a.Equal(b) {
				return a.Before(b)
			}
			return versionNumber(old[i]) < versionNumber(old[j])
		})
		if err := d.deletePolicyVersion(ctx, c, name, arn, old[0]); err != nil {
			return err
		}
		d.changed("deleted version %s of policy %s, its oldest: IAM keeps %d", aws.ToString(old[0].VersionId), name, policyVersionLimit)
	}
	out, err := c.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: aws.String(arn), PolicyDocument: aws.String(doc), SetAsDefault: true})
	if err != nil {
		return fmt.Errorf("policy %s: create a version: %w", name, err)
	}
	d.changed("updated policy %s (version %s)", name, aws.ToString(out.PolicyVersion.VersionId))
	return nil
}

// oldPolicyVersions are the policy's versions but the default.
func (d *deployer) oldPolicyVersions(ctx context.Context, c *iam.Client, name, arn string) ([]iamtypes.PolicyVersion, error) {
	var out []iamtypes.PolicyVersion
	pages := iam.NewListPolicyVersionsPaginator(c, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(arn)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("policy %s: list its versions: %w", name, err)
		}
		for _, v := range page.Versions {
			if !v.IsDefaultVersion {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// versionNumber is 3 for version v3.
func versionNumber(v iamtypes.PolicyVersion) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(aws.ToString(v.VersionId), "v"))
	return n
}

func (d *deployer) deletePolicyVersion(ctx context.Context, c *iam.Client, name, arn string, v iamtypes.PolicyVersion) error {
	if _, err := c.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: aws.String(arn), VersionId: v.VersionId}); err != nil {
		return fmt.Errorf("policy %s: delete its version %s: %w", name, aws.ToString(v.VersionId), err)
	}
	return nil
}

// dropInlinePolicy deletes the role's old inline policy, if it has it.
func (d *deployer) dropInlinePolicy(ctx context.Context, c *iam.Client, role string) error {
	_, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(inlinePolicy)})
	if d.b.ErrorCode(err) == providers.NotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("role %s: read its inline policy %s: %w", role, inlinePolicy, err)
	}
	if _, err := c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(inlinePolicy)}); err != nil {
		return fmt.Errorf("role %s: delete its inline policy %s: %w", role, inlinePolicy, err)
	}
	d.changed("deleted the inline policy %s of role %s: the managed policies replace it", inlinePolicy, role)
	return nil
}

// dropSurplusPolicies deletes this executor's managed policies numbered
// beyond count, which a deploy of more kinds made: each is detached from
// the role, its other versions deleted, then itself, as DeletePolicy asks.
// A policy named so that is not this executor's is left alone.
func (d *deployer) dropSurplusPolicies(ctx context.Context, c *iam.Client, role string, count int, attached map[string]bool) error {
	var surplus []int
	pages := iam.NewListPoliciesPaginator(c, &iam.ListPoliciesInput{Scope: iamtypes.PolicyScopeTypeLocal, PathPrefix: aws.String(policyPath)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list the policies under %s: %w", policyPath, err)
		}
		for _, p := range page.Policies {
			if aws.ToString(p.Path) != policyPath {
				continue
			}
			n, ok := strings.CutPrefix(aws.ToString(p.PolicyName), d.s.Function+"-")
			if i, err := strconv.Atoi(n); ok && err == nil && i > count && strconv.Itoa(i) == n {
				surplus = append(surplus, i-1)
			}
		}
	}
	slices.Sort(surplus)
	for _, i := range surplus {
		name := d.policyName(i)
		arn := d.policyARN(name)
		got, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
		if err != nil {
			return fmt.Errorf("policy %s: %w", name, err)
		}
		if !d.ours(got.Policy.Tags) {
			continue
		}
		if attached[arn] {
			if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(arn)}); err != nil {
				return fmt.Errorf("role %s: detach policy %s: %w", role, name, err)
			}
			d.changed("detached policy %s from role %s", name, role)
		}
		old, err := d.oldPolicyVersions(ctx, c, name, arn)
		if err != nil {
			return err
		}
		for _, v := range old {
			if err := d.deletePolicyVersion(ctx, c, name, arn, v); err != nil {
				return err
			}
		}
		if _, err := c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: aws.String(arn)}); err != nil {
			return fmt.Errorf("delete policy %s: %w", name, err)
		}
		d.changed("deleted policy %s: the permissions fit in %d now", name, count)
	}
	return nil
}

// ours says whether tags mark something as this executor's.
func (d *deployer) ours(tags []iamtypes.Tag) bool {
	for _, t := range tags {
		if aws.ToString(t.Key) == executorTagKey && aws.ToString(t.Value) == d.s.Function {
			return true
		}
	}
	return false
}

package lifecycle

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// iamDoc is a fleet of a policy and a role that attaches it by the arn the
// policy publishes, besides an AWS managed policy.
func iamDoc(description, action string) string {
	policy, _ := json.Marshal(map[string]any{"address": "aws/iam-policy/lc-logs", "spec": map[string]any{
		"description": description,
		"document":    `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["` + action + `"], "Resource": "*"}]}`}})
	role, _ := json.Marshal(map[string]any{"address": "aws/iam-role/lc-fn", "spec": map[string]any{
		"trust": `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": ["lambda.amazonaws.com"]}, "Action": "sts:AssumeRole"}]}`,
		"policies": []any{"arn:aws:iam::aws:policy/ReadOnlyAccess",
			map[string]any{"observed": "aws/iam-policy/lc-logs", "attribute": "arn"}}}})
	return ownDoc("", string(policy), string(role))
}

// attached returns the ARNs attached to the role, sorted.
func (f *ownFixture) attached(role string) []string {
	f.t.Helper()
	out, err := iam.NewFromConfig(f.b.Config()).ListAttachedRolePolicies(f.ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(role)})
	if err != nil {
		f.t.Fatal(err)
	}
	var arns []string
	for _, p := range out.AttachedPolicies {
		arns = append(arns, aws.ToString(p.PolicyArn))
	}
	slices.Sort(arns)
	return arns
}

// A role attaching a policy of the fleet: the policy is made first, the
// documents IAM hands back compare equal to the ones written, a replaced
// policy (its description) is detached from the role and attached again,
// a new document is a new version, and a teardown leaves nothing.
func TestIAMRoleAttachesThePolicyOfTheFleet(t *testing.T) {
	f := newOwnFixture(t)
	want := []string{"arn:aws:iam::123456789012:policy/lc-logs", "arn:aws:iam::aws:policy/ReadOnlyAccess"}

	step := func(doc, wantPlan string, force bool) {
		t.Helper()
		apply := f.apply
		if force {
			apply = f.forceApply // a replace deletes first
		}
		p := apply(doc)
		if got := strings.Join(actionNames(p), ", "); got != wantPlan {
			t.Fatalf("plan: %s, want %s\n%s", got, wantPlan, Render(p))
		}
		if got := f.attached("lc-fn"); !slices.Equal(got, want) {
			t.Errorf("after %s: attached %v, want %v", wantPlan, got, want)
		}
		f.planIsEmpty(doc)
	}
	step(iamDoc("writes logs", "logs:PutLogEvents"), "create aws/iam-policy/lc-logs, create aws/iam-role/lc-fn", false)
	step(iamDoc("writes the logs", "logs:PutLogEvents"), "replace aws/iam-policy/lc-logs, update aws/iam-role/lc-fn", true)
	step(iamDoc("writes the logs", "logs:CreateLogStream"), "update aws/iam-policy/lc-logs", false)

	// Whichever goes first, the policy's delete detaches it from the
	// fleet's own role.
	p := f.forceApply(ownDoc(""))
	if got := strings.Join(slices.Sorted(slices.Values(actionNames(p))), ", "); got != "delete aws/iam-policy/lc-logs, delete aws/iam-role/lc-fn" {
		t.Errorf("teardown: %s\n%s", got, Render(p))
	}
	roles, err := iam.NewFromConfig(f.b.Config()).ListRoles(f.ctx, &iam.ListRolesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range roles.Roles {
		if strings.HasPrefix(aws.ToString(r.RoleName), "lc-") {
			t.Errorf("left behind: role %s", aws.ToString(r.RoleName))
		}
	}
	policies, err := iam.NewFromConfig(f.b.Config()).ListPolicies(f.ctx, &iam.ListPoliciesInput{Scope: "Local"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range policies.Policies {
		t.Errorf("left behind: policy %s", aws.ToString(p.PolicyName))
	}
}

package aws

// The function of a lambda target group: the statement of the function's
// policy that lets Elastic Load Balancing invoke it, and its registration.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

const (
	// elbPrincipal is Elastic Load Balancing's service principal.
	elbPrincipal = "elasticloadbalancing.amazonaws.com"
	invokeAction = "lambda:InvokeFunction"
)

// invokeStatementID is the id of the statement that lets Elastic Load
// Balancing invoke a function for the target group called group: derived
// from the name (unique in a region, as the function's policy is), so that
// a retry, an update and a delete find it again. A group's name is at most
// 32 characters; a statement id may have 100.
func invokeStatementID(group string) string { return "infra-alb-target-group-" + group }

// functionARN is the ARN of the function called name in the target's
// region and account: the identity this run observed, where
// lambda-function has one, else the registered ARN format's.
func (d *albTargetGroups) functionARN(ctx context.Context, t providers.Target, name string) (string, error) {
	if id := identity(t, spec.LambdaFunction, name); strings.HasPrefix(id, "arn:") {
		return id, nil
	}
	account, err := d.account(ctx)
	if err != nil {
		return "", fmt.Errorf("aws/alb-target-group: %s: the account, for function %s's ARN: %w", t.Name, name, err)
	}
	arn, _ := ResourceARN(spec.LambdaFunction, Partition(t.Region), t.Region, account, name)
	return arn, nil
}

// functionReported is what a registered function's ARN compares as with a
// reference to a lambda-function, which resolves to its name: the name of
// an unqualified function of this region and account. Any other ARN (a
// version, an alias, another account's) is reported as it is, which no
// name equals.
func (d *albTargetGroups) functionReported(ctx context.Context, region, arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 7 || parts[2] != "lambda" || parts[3] != region || parts[5] != "function" {
		return arn, nil
	}
	return nameInAccount(ctx, d.account, arn, parts[4], parts[6])
}

// registeredFunctions are the ARNs of the Lambda functions registered with
// the target group (DescribeTargetHealth), sorted; a target being
// deregistered (draining) is not.
func registeredFunctions(ctx context.Context, c *elbv2.Client, groupARN string) ([]string, error) {
	out, err := c.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(groupARN)})
	if err != nil {
		return nil, err
	}
	var arns []string
	for _, h := range out.TargetHealthDescriptions {
		if h.Target == nil {
			continue
		}
		id := aws.ToString(h.Target.Id)
		if parts := strings.Split(id, ":"); len(parts) < 3 || parts[0] != "arn" || parts[2] != "lambda" {
			continue
		}
		if h.TargetHealth != nil && h.TargetHealth.State == elbtypes.TargetHealthStateEnumDraining {
			continue
		}
		arns = append(arns, id)
	}
	slices.Sort(arns)
	return slices.Compact(arns), nil
}

// reportFunction adds to a lambda group's fields the function registered
// with it: empty when none is, so that a declared one not registered yet
// (a create that stopped between the group and its registration) is drift.
func (d *albTargetGroups) reportFunction(ctx context.Context, c *elbv2.Client, r *providers.Resource) error {
	arns, err := registeredFunctions(ctx, c, r.Attributes["arn"])
	if err != nil {
		return fmt.Errorf("aws/alb-target-group: %s: DescribeTargetHealth: %w", r.Name, err)
	}
	names := make([]string, 0, len(arns))
	for _, a := range arns {
		n, err := d.functionReported(ctx, r.Region, a)
		if err != nil {
			return fmt.Errorf("aws/alb-target-group: %s: the account, for function %s: %w", r.Name, a, err)
		}
		names = append(names, n)
	}
	// Elastic Load Balancing registers one function a group; two (which
	// only an emulator allows) are reported as a list no name equals.
	r.Fields[providers.ALBTargetGroupFunction] = strings.Join(names, ",")
	return nil
}

// setFunction makes fn (an ARN; empty for none) the group's one function:
// the invoke permission first, since Elastic Load Balancing refuses to
// register a function it may not invoke; then the other functions
// deregistered, since a group takes one; then fn registered; then the
// others' permissions removed.
func (d *albTargetGroups) setFunction(ctx context.Context, c *elbv2.Client, t providers.Target, groupARN, fn string) error {
	registered, err := registeredFunctions(ctx, c, groupARN)
	if err != nil {
		return fmt.Errorf("aws/alb-target-group: %s: DescribeTargetHealth: %w", t.Name, err)
	}
	if fn != "" {
		if err := d.allowInvoke(ctx, t, groupARN, fn); err != nil {
			return err
		}
	}
	var old []elbtypes.TargetDescription
	for _, r := range registered {
		if r != fn {
			old = append(old, elbtypes.TargetDescription{Id: aws.String(r)})
		}
	}
	if len(old) > 0 {
		if _, err := c.DeregisterTargets(ctx, &elbv2.DeregisterTargetsInput{TargetGroupArn: aws.String(groupARN), Targets: old}); err != nil {
			return fmt.Errorf("aws/alb-target-group: %s: DeregisterTargets: %w", t.Name, err)
		}
	}
	if fn != "" && !slices.Contains(registered, fn) {
		if _, err := c.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(groupARN),
			Targets: []elbtypes.TargetDescription{{Id: aws.String(fn)}}}); err != nil {
			return fmt.Errorf("aws/alb-target-group: %s: RegisterTargets %s: %w", t.Name, fn, err)
		}
	}
	for _, o := range old {
		if err := d.revokeInvoke(ctx, t.Region, t.Name, aws.ToString(o.Id)); err != nil {
			return err
		}
	}
	return nil
}

// allowInvoke adds the statement that lets Elastic Load Balancing invoke
// fn for the group. Lambda refuses a statement id its policy holds already
// (ResourceConflictException): one that is this grant (a retry whose first
// answer was lost) is done; one that is not (left by a deleted group of
// the name, whose ARN had another id) is replaced.
func (d *albTargetGroups) allowInvoke(ctx context.Context, t providers.Target, groupARN, fn string) error {
	c := d.lambda.get(t.Region)
	sid := invokeStatementID(t.Name)
	add := func() error {
		_, err := c.AddPermission(ctx, &lambda.AddPermissionInput{FunctionName: aws.String(fn), StatementId: aws.String(sid),
			Action: aws.String(invokeAction), Principal: aws.String(elbPrincipal), SourceArn: aws.String(groupARN)})
		return err
	}
	fail := func(op string, err error) error {
		if errorCode(err) == providers.NotFound {
			// The function, not the group: never the group's NotFound.
			return providers.Errorf(providers.InvalidArgument, "aws/alb-target-group: %s: %s on %s: no such function: %v", t.Name, op, fn, err)
		}
		return fmt.Errorf("aws/alb-target-group: %s: %s on %s: %w", t.Name, op, fn, err)
	}
	err := add()
	if err == nil {
		return nil
	}
	if !isCode(err, "ResourceConflictException") {
		return fail("AddPermission", err)
	}
	grant, found, perr := invokeGrantOf(ctx, c, fn, sid)
	switch {
	case perr != nil:
		return fail("GetPolicy", perr)
	case !found:
		// Another change of the function in progress: a conflict the
		// engine retries.
		return fail("AddPermission", err)
	case grant.grants(groupARN):
		return nil
	}
	if _, err := c.RemovePermission(ctx, &lambda.RemovePermissionInput{FunctionName: aws.String(fn), StatementId: aws.String(sid)}); err != nil {
		return fail("RemovePermission (a stale "+sid+")", err)
	}
	if err := add(); err != nil {
		return fail("AddPermission", err)
	}
	return nil
}

// revokeInvoke removes the group's statement from fn's policy. A statement
// or a function already gone is done: the function may be deleted beside
// the group.
func (d *albTargetGroups) revokeInvoke(ctx context.Context, region, group, fn string) error {
	_, err := d.lambda.get(region).RemovePermission(ctx, &lambda.RemovePermissionInput{FunctionName: aws.String(fn),
		StatementId: aws.String(invokeStatementID(group))})
	if err != nil && errorCode(err) != providers.NotFound {
		return fmt.Errorf("aws/alb-target-group: %s: RemovePermission on %s: %w", group, fn, err)
	}
	return nil
}

// invokeGrant is one statement of a function's policy, as GetPolicy
// answers it.
type invokeGrant struct {
	Sid       string
	Effect    string
	Principal struct{ Service string }
	Action    string
	Condition map[string]map[string]string
}

// grants reports whether the statement is the one allowInvoke adds for
// the group of groupARN.
func (g invokeGrant) grants(groupARN string) bool {
	if g.Effect != "Allow" || g.Principal.Service != elbPrincipal || g.Action != invokeAction {
		return false
	}
	for _, keys := range g.Condition {
		for k, v := range keys {
			if strings.EqualFold(k, "aws:SourceArn") && v == groupARN {
				return true
			}
		}
	}
	return false
}

// invokeGrantOf finds the statement sid in fn's policy.
func invokeGrantOf(ctx context.Context, c *lambda.Client, fn, sid string) (invokeGrant, bool, error) {
	out, err := c.GetPolicy(ctx, &lambda.GetPolicyInput{FunctionName: aws.String(fn)})
	if err != nil {
		if errorCode(err) == providers.NotFound {
			return invokeGrant{}, false, nil
		}
		return invokeGrant{}, false, err
	}
	var policy struct{ Statement []json.RawMessage }
	if err := json.Unmarshal([]byte(aws.ToString(out.Policy)), &policy); err != nil {
		return invokeGrant{}, false, fmt.Errorf("the policy is not JSON: %w", err)
	}
	for _, raw := range policy.Statement {
		var id struct{ Sid string }
		if json.Unmarshal(raw, &id) != nil || id.Sid != sid {
			continue
		}
		// A statement of the id in another shape (a list of actions) is
		// not the grant: found, and replaced.
		var g invokeGrant
		_ = json.Unmarshal(raw, &g)
		return g, true, nil
	}
	return invokeGrant{}, false, nil
}

package executordeploy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/internal/iamsim"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

const evalAccount = "123456789012"

var tagKey = spec.OwnershipTagKey

func owned(fleet string) map[string]any { return map[string]any{"aws:ResourceTag/" + tagKey: fleet} }

func requested(fleet string) map[string]any {
	return map[string]any{"aws:RequestTag/" + tagKey: fleet, "aws:TagKeys": []string{tagKey}}
}

func both(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// sampleARN is a resource an action of kind k acts on, for the evaluator:
// of the action's resource type when the scope names one.
func sampleARN(k spec.Kind, s awsprovider.ActionScope) string {
	service, action, _ := strings.Cut(s.Action, ":")
	regional := fmt.Sprintf("arn:aws:%s:eu-west-3:%s:", service, evalAccount)
	if s.Resource != "" {
		if strings.HasPrefix(s.Resource, "image/") {
			regional = "arn:aws:ec2:eu-west-3::"
		}
		return regional + strings.Replace(s.Resource, "*", "x1", 1)
	}
	if action == "GetChange" {
		return "arn:aws:route53:::change/C1"
	}
	if arn, ok := registeredARN(evaluatedAs(k, s.Action), service, "app"); ok {
		return arn
	}
	switch service {
	case "sqs":
		return regional + "jobs"
	case "s3":
		if strings.HasPrefix(action, "DeleteObject") {
			return "arn:aws:s3:::assets/key"
		}
		return "arn:aws:s3:::assets"
	case "secretsmanager":
		return regional + "secret:db-AbCdEf"
	case "ec2":
		if k == spec.AWSInstance {
			return regional + "instance/i-1"
		}
		return regional + "security-group/sg-1"
	case "ecr":
		return regional + "repository/web"
	case "iam":
		if action == "PassRole" {
			return "arn:aws:iam::" + evalAccount + ":role/app"
		}
		return "arn:aws:iam::" + evalAccount + ":user/deployer"
	case "lambda":
		return regional + "function:web"
	case "rds":
		if action == "DescribeDBInstances" {
			return regional + "db:db1"
		}
		return regional + "cluster:db1"
	}
	return "*"
}

// evalCase is one request and the decision the policy must give it.
type evalCase struct {
	what string
	req  iamsim.Request
	want string
}

// scopeCases derives, from every action of every kind, the requests that
// show its scope holds: allowed where the scope allows, denied on an
// untagged resource, another fleet's, or a create without the tag.
func scopeCases(t *testing.T) []evalCase {
	var out []evalCase
	add := func(what string, s awsprovider.ActionScope, arn string, ctx map[string]any, want string) {
		// Every bucket infra makes has ABAC on; abacOff's cases show one without.
		out = append(out, evalCase{what: s.Action + " " + what, want: want,
			req: iamsim.Request{Action: s.Action, Resource: arn, Context: ctx, BucketABAC: strings.HasPrefix(arn, "arn:aws:s3:::")}})
	}
	for _, k := range awsprovider.Kinds() {
		scopes, _, err := awsprovider.ExecutorScopes(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scopes {
			arn := sampleARN(k, s)
			switch s.Scope {
			case awsprovider.ScopeAny, awsprovider.ScopeUntaggable:
				add("on an untagged resource", s, arn, nil, iamsim.Allowed)
			case awsprovider.ScopeCreate:
				add("with the tag for shop", s, arn, requested("shop"), iamsim.Allowed)
				add("with the tag for another fleet", s, arn, requested("payroll"), iamsim.ImplicitlyDenied)
				add("without the tag", s, arn, nil, iamsim.ImplicitlyDenied)
			case awsprovider.ScopeOwned, awsprovider.ScopeSecretValue:
				add("on shop's", s, arn, owned("shop"), iamsim.Allowed)
				add("on another fleet's", s, arn, owned("payroll"), iamsim.ImplicitlyDenied)
				add("on an untagged resource", s, arn, nil, iamsim.ImplicitlyDenied)
			case awsprovider.ScopeTagging:
				add("on shop's, for billing", s, arn, both(owned("shop"), requested("billing")), iamsim.Allowed)
				add("on shop's, handing it to another fleet", s, arn, both(owned("shop"), requested("payroll")), iamsim.ImplicitlyDenied)
				add("on another fleet's", s, arn, both(owned("payroll"), requested("shop")), iamsim.ImplicitlyDenied)
				add("adopting an untagged resource for shop", s, arn, requested("shop"), iamsim.Allowed)
				add("on an untagged resource, without the tag", s, arn, map[string]any{"aws:TagKeys": []string{"team"}}, iamsim.ImplicitlyDenied)
			case awsprovider.ScopePassRole:
				lambda := map[string]any{"iam:PassedToService": "lambda.amazonaws.com"}
				add("of a role tagged for shop, to Lambda", s, arn, both(owned("shop"), lambda), iamsim.Allowed)
				add("of a role tagged for shop, to EC2", s, arn, both(owned("shop"), map[string]any{"iam:PassedToService": "ec2.amazonaws.com"}), iamsim.ImplicitlyDenied)
				add("of an untagged role, to Lambda", s, arn, lambda, iamsim.ImplicitlyDenied)
				add("of an untagged role under /infra/, to Lambda", s, "arn:aws:iam::"+evalAccount+":role/infra/app", lambda, iamsim.Allowed)
			case awsprovider.ScopeServiceLinkedRole:
				elb := "arn:aws:iam::" + evalAccount + ":role/aws-service-role/elasticloadbalancing.amazonaws.com/AWSServiceRoleForElasticLoadBalancing"
				rds := "arn:aws:iam::" + evalAccount + ":role/aws-service-role/rds.amazonaws.com/AWSServiceRoleForRDS"
				service := func(name string) map[string]any { return map[string]any{"iam:AWSServiceName": name} }
				add("for Elastic Load Balancing", s, elb, service("elasticloadbalancing.amazonaws.com"), iamsim.Allowed)
				add("for RDS, on ELB's path", s, elb, service("rds.amazonaws.com"), iamsim.ImplicitlyDenied)
				add("for RDS, on its own path", s, rds, service("rds.amazonaws.com"), iamsim.ImplicitlyDenied)
				add("naming no service, on ELB's path", s, elb, nil, iamsim.ImplicitlyDenied)
			}
		}
	}
	return out
}

// abacOff is a bucket whose ABAC is off (made before infra turned it on
// at create, or by another tool): S3 shows IAM none of its tags, so every
// change the ownership tag guards is refused, tagged or not, and turning
// ABAC on is allowed, which the driver does before trying again. Tagging it
// is an adoption, as for any untagged resource (docs/executor.md).
var abacOff = []evalCase{
	{"a bucket tagged for shop, ABAC off, deleted", iamsim.Request{Action: "s3:DeleteBucket", Resource: "arn:aws:s3:::assets", Context: owned("shop")}, iamsim.ImplicitlyDenied},
	{"a bucket tagged for shop, ABAC off, versioned", iamsim.Request{Action: "s3:PutBucketVersioning", Resource: "arn:aws:s3:::assets", Context: owned("shop")}, iamsim.ImplicitlyDenied},
	{"an object of a bucket tagged for shop, ABAC off, deleted", iamsim.Request{Action: "s3:DeleteObject", Resource: "arn:aws:s3:::assets/key", Context: owned("shop")}, iamsim.ImplicitlyDenied},
	{"a bucket's ABAC turned on", iamsim.Request{Action: "s3:PutBucketAbac", Resource: "arn:aws:s3:::assets"}, iamsim.Allowed},
	{"a bucket, ABAC off, tagged for shop (adoption)", iamsim.Request{Action: "s3:TagResource", Resource: "arn:aws:s3:::assets", Context: requested("shop")}, iamsim.Allowed},
	{"a bucket, ABAC off, tagged without the ownership tag", iamsim.Request{Action: "s3:TagResource", Resource: "arn:aws:s3:::assets",
		Context: map[string]any{"aws:TagKeys": []string{"team"}}}, iamsim.ImplicitlyDenied},
}

// The generated policy, run through a real evaluator: every action of
// every kind is allowed where its scope says and denied on what no fleet
// of the executor owns; the state, the credentials secret and the
// executor itself are as docs/executor.md says.
func TestExecutorPolicyUnderAnEvaluator(t *testing.T) {
	in := policyInput{Region: "eu-west-3", Account: evalAccount, Function: "infra-executor",
		Bucket: "acme-infra-state", Prefix: "fleets", CredentialsSecret: "infra/executor", Fleets: []string{"shop", "billing"}}
	policy, err := executorPolicy(in)
	if err != nil {
		t.Fatal(err)
	}
	cases := append(scopeCases(t), abacOff...)
	cases = append(cases,
		evalCase{"the credentials secret, untagged", iamsim.Request{Action: "secretsmanager:GetSecretValue",
			Resource: "arn:aws:secretsmanager:eu-west-3:" + evalAccount + ":secret:infra/executor-AbCdEf"}, iamsim.Allowed},
		evalCase{"another untagged secret's value", iamsim.Request{Action: "secretsmanager:GetSecretValue",
			Resource: "arn:aws:secretsmanager:eu-west-3:" + evalAccount + ":secret:prod/db-AbCdEf"}, iamsim.ImplicitlyDenied},
		evalCase{"the ledger written", iamsim.Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::acme-infra-state/fleets/shop/ledger.json"}, iamsim.Allowed},
		evalCase{"an object outside the state prefix written", iamsim.Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::acme-infra-state/other/x"}, iamsim.ImplicitlyDenied},
		evalCase{"the state bucket deleted", iamsim.Request{Action: "s3:DeleteBucket", Resource: "arn:aws:s3:::acme-infra-state"}, iamsim.ExplicitlyDenied},
		evalCase{"the state bucket's versioning changed", iamsim.Request{Action: "s3:PutBucketVersioning", Resource: "arn:aws:s3:::acme-infra-state"}, iamsim.ExplicitlyDenied},
		evalCase{"the state bucket deleted, tagged for shop", iamsim.Request{Action: "s3:DeleteBucket", Resource: "arn:aws:s3:::acme-infra-state",
			Context: owned("shop")}, iamsim.ExplicitlyDenied},
		evalCase{"the state bucket given ABAC", iamsim.Request{Action: "s3:PutBucketAbac", Resource: "arn:aws:s3:::acme-infra-state"}, iamsim.ExplicitlyDenied},
		evalCase{"the state bucket tagged for shop", iamsim.Request{Action: "s3:TagResource", Resource: "arn:aws:s3:::acme-infra-state",
			Context: requested("shop")}, iamsim.ExplicitlyDenied},
		evalCase{"an old ledger version deleted", iamsim.Request{Action: "s3:DeleteObjectVersion", Resource: "arn:aws:s3:::acme-infra-state/fleets/shop/ledger.json"}, iamsim.ExplicitlyDenied},
		evalCase{"the lock released", iamsim.Request{Action: "s3:DeleteObject", Resource: "arn:aws:s3:::acme-infra-state/fleets/shop/lock.json"}, iamsim.Allowed},
		evalCase{"the executor function deleted (tagged infra-executor only)", iamsim.Request{Action: "lambda:DeleteFunction",
			Resource: "arn:aws:lambda:eu-west-3:" + evalAccount + ":function:infra-executor", Context: map[string]any{"aws:ResourceTag/infra-executor": "infra-executor"}}, iamsim.ImplicitlyDenied},
		evalCase{"its own role's policy changed", iamsim.Request{Action: "iam:PutRolePolicy", Resource: "arn:aws:iam::" + evalAccount + ":role/infra-executor-role"}, iamsim.ImplicitlyDenied},
	)
	evaluate(t, policy, cases)
	t.Logf("%d requests evaluated", len(cases))
}

// evaluate runs the cases through the evaluator under the managed
// policies deploy writes for policy, together.
func evaluate(t *testing.T, policy policyDocument, cases []evalCase) {
	t.Helper()
	reqs := make([]iamsim.Request, len(cases))
	for i, c := range cases {
		reqs[i] = c.req
	}
	docs := managedDocuments(t, policy)
	t.Logf("under %d managed policies", len(docs))
	got := iamsim.Evaluate(t, evalAccount, union(t, docs), reqs)
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s on %s: %s, want %s", c.what, c.req.Resource, got[i], c.want)
		}
	}
}

// union is one document holding every statement of docs, as written. A
// role's identity policies are decided together (any Deny refuses, else
// any Allow allows), which is how one document decides its statements;
// iamsim takes one document.
func union(t *testing.T, docs []string) string {
	t.Helper()
	all := policyDocument{Version: "2012-10-17"}
	for _, d := range docs {
		var doc policyDocument
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			t.Fatal(err)
		}
		all.Statement = append(all.Statement, doc.Statement...)
	}
	return all.String()
}

// Without --fleets, whatever carries the ownership tag is the executor's,
// and nothing else is.
func TestExecutorPolicyWithoutFleetsUnderAnEvaluator(t *testing.T) {
	policy, err := executorPolicy(policyInput{Region: "eu-west-3", Account: evalAccount, Function: "infra-executor",
		Bucket: "acme-infra-state", Kinds: []spec.Kind{spec.Queues}})
	if err != nil {
		t.Fatal(err)
	}
	queue := "arn:aws:sqs:eu-west-3:" + evalAccount + ":jobs"
	cases := []evalCase{
		{"a queue tagged for any fleet deleted", iamsim.Request{Action: "sqs:DeleteQueue", Resource: queue, Context: owned("payroll")}, iamsim.Allowed},
		{"an untagged queue deleted", iamsim.Request{Action: "sqs:DeleteQueue", Resource: queue}, iamsim.ImplicitlyDenied},
		{"a queue tagged with an empty value deleted", iamsim.Request{Action: "sqs:DeleteQueue", Resource: queue, Context: owned("")}, iamsim.ImplicitlyDenied},
		{"a queue made with the tag", iamsim.Request{Action: "sqs:CreateQueue", Resource: queue, Context: requested("payroll")}, iamsim.Allowed},
		{"a queue made without it", iamsim.Request{Action: "sqs:CreateQueue", Resource: queue}, iamsim.ImplicitlyDenied},
	}
	evaluate(t, policy, cases)
}

// The sweep's role, through the evaluator: it deletes what is named with
// the prefix, untagged too, and nothing else; it makes nothing and reads
// no secret value.
func TestSweepPolicyUnderAnEvaluator(t *testing.T) {
	policy, err := sweepPolicy(policyInput{Region: "eu-west-3", Account: evalAccount, Function: "infra-sweeper"}, "ci-tests-")
	if err != nil {
		t.Fatal(err)
	}
	var cases []evalCase
	for _, k := range awsprovider.Kinds() {
		target, deletes, ok := awsprovider.SweepTargets(k)
		if !ok {
			t.Fatalf("kind %s has no sweep target", k)
		}
		for _, a := range deletes {
			s := awsprovider.ActionScope{Action: a}
			debris, kept := sweepSample(k, s, "ci-tests-x1"), sweepSample(k, s, "prod-x1")
			unguarded := target.NameTag == "" && !strings.Contains(strings.Join(target.ARNs, " "), "{prefix}")
			switch {
			case unguarded:
				// IAM cannot hold these to the prefix: the sweep's own
				// rules do, and the target must say why.
				if target.Why == "" {
					t.Errorf("%s: the sweep may %s whatever the name, and its target does not say why", k, a)
				}
				cases = append(cases,
					evalCase{a + " of debris", iamsim.Request{Action: a, Resource: debris}, iamsim.Allowed},
					evalCase{a + " of a name without the prefix (" + target.Why + ")", iamsim.Request{Action: a, Resource: kept}, iamsim.Allowed})
				for op, keys := range target.Only {
					for key, v := range keys {
						if op == "ForAllValues:StringEquals" {
							cases = append(cases, evalCase{a + " with a " + key + " other than " + fmt.Sprint(v), iamsim.Request{Action: a, Resource: debris,
								Context: map[string]any{key: []string{"CREATE"}}}, iamsim.ImplicitlyDenied})
						}
					}
				}
			case target.NameTag == "":
				cases = append(cases,
					evalCase{a + " of untagged debris", iamsim.Request{Action: a, Resource: debris}, iamsim.Allowed},
					evalCase{a + " of a name without the prefix", iamsim.Request{Action: a, Resource: kept}, iamsim.ImplicitlyDenied})
			default:
				cases = append(cases,
					evalCase{a + " of debris by its " + target.NameTag + " tag", iamsim.Request{Action: a, Resource: debris,
						Context: map[string]any{"aws:ResourceTag/" + target.NameTag: "ci-tests-x1"}}, iamsim.Allowed},
					evalCase{a + " of one whose " + target.NameTag + " tag lacks the prefix", iamsim.Request{Action: a, Resource: debris,
						Context: map[string]any{"aws:ResourceTag/" + target.NameTag: "shop"}}, iamsim.ImplicitlyDenied},
					evalCase{a + " of one without the tag", iamsim.Request{Action: a, Resource: debris}, iamsim.ImplicitlyDenied})
			}
		}
	}
	queue := "arn:aws:sqs:eu-west-3:" + evalAccount + ":ci-tests-q"
	cases = append(cases,
		evalCase{"a listing", iamsim.Request{Action: "sqs:ListQueues", Resource: "*"}, iamsim.Allowed},
		evalCase{"the tag scan", iamsim.Request{Action: "tag:GetResources", Resource: "*"}, iamsim.Allowed},
		evalCase{"a queue made", iamsim.Request{Action: "sqs:CreateQueue", Resource: queue, Context: requested("ci-tests-fleet")}, iamsim.ImplicitlyDenied},
		evalCase{"a queue changed", iamsim.Request{Action: "sqs:SetQueueAttributes", Resource: queue}, iamsim.ImplicitlyDenied},
		evalCase{"a debris secret's value", iamsim.Request{Action: "secretsmanager:GetSecretValue",
			Resource: "arn:aws:secretsmanager:eu-west-3:" + evalAccount + ":secret:ci-tests-db-AbCdEf"}, iamsim.ImplicitlyDenied},
		evalCase{"a role passed", iamsim.Request{Action: "iam:PassRole", Resource: "arn:aws:iam::" + evalAccount + ":role/ci-tests-r",
			Context: map[string]any{"iam:PassedToService": "lambda.amazonaws.com"}}, iamsim.ImplicitlyDenied},
	)
	evaluate(t, policy, cases)
	t.Logf("%d requests evaluated", len(cases))
}

// registeredARN is kind k's resource named name from the ARN format its
// driver registers, when the action is of that ARN's service (a function's
// iam:PassRole is not). The conformance suite holds the format to the ARNs
// the cloud reports, so these samples are the cloud's, not the policy's.
// evaluatedAs is the kind whose ARN IAM authorizes kind k's action on:
// the kind the registry says it acts on, or where the IAM service
// reference says more. A subscription's calls are authorized on its
// topic; the key reads of an alias on the key it names. And ELBv2's
// AddTags and RemoveTags, which IAM authorizes on listeners and target
// groups too, are in the evaluator's data (iam-data, as of the pinned
// iam-simulate) for load balancers only: they are asked on the load
// balancer, whose condition keys are the same (aws:ResourceTag/...).
func evaluatedAs(k spec.Kind, action string) spec.Kind {
	k = awsprovider.ActsOn(k, action)
	_, name, _ := strings.Cut(action, ":")
	switch {
	case k == spec.SNSSubscription && strings.HasPrefix(action, "sns:"):
		return spec.SNSTopic
	case k == spec.KMSAlias && strings.HasPrefix(action, "kms:") && !strings.Contains(name, "Alias"):
		return spec.KMSKey
	case (k == spec.ALBListener || k == spec.ALBTargetGroup) && (name == "AddTags" || name == "RemoveTags"):
		return spec.ALB
	}
	return k
}

func registeredARN(k spec.Kind, service, name string) (string, bool) {
	arn, ok := awsprovider.ResourceARN(k, "aws", "eu-west-3", evalAccount, name)
	if !ok || strings.Split(arn, ":")[2] != service {
		return "", false
	}
	return arn, true
}

// sweepSample is kind k's resource named name, for the action's service.
func sweepSample(k spec.Kind, s awsprovider.ActionScope, name string) string {
	service, action, _ := strings.Cut(s.Action, ":")
	if arn, ok := registeredARN(evaluatedAs(k, s.Action), service, name); ok {
		return arn
	}
	regional := fmt.Sprintf("arn:aws:%s:eu-west-3:%s:", service, evalAccount)
	switch service {
	case "sqs":
		return regional + name
	case "s3":
		if strings.HasPrefix(action, "DeleteObject") {
			return "arn:aws:s3:::" + name + "/key"
		}
		return "arn:aws:s3:::" + name
	case "secretsmanager":
		return regional + "secret:" + name + "-AbCdEf"
	case "ecr":
		return regional + "repository/" + name
	case "iam":
		return "arn:aws:iam::" + evalAccount + ":user/" + name
	case "lambda":
		return regional + "function:" + name
	case "rds":
		switch action {
		case "DeleteDBInstance":
			return regional + "db:" + name
		case "DeleteDBClusterSnapshot":
			return regional + "cluster-snapshot:" + name
		}
		return regional + "cluster:" + name
	case "ec2":
		if k == spec.AWSInstance {
			return regional + "instance/i-1"
		}
		return regional + "security-group/sg-1"
	}
	return "*"
}

package executordeploy

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// policyInput names what the executor's role is for.
type policyInput struct {
	Partition, Region, Account string
	Function                   string
	// Bucket and Prefix hold the state: the role may read and write only
	// under the prefix.
	Bucket, Prefix string
	// CredentialsSecret is the name or ARN of the credentials secret; the
	// role may read that one secret (besides what the kinds need).
	CredentialsSecret string
	// Kinds are the kinds the executor manages; empty means every kind
	// with a driver.
	Kinds []spec.Kind
	// Fleets are the ownership tag values the executor may act on: the
	// fleets it applies. Empty is any value: whatever infra owns.
	Fleets []string
}

type policyDocument struct {
	Version   string            `json:"Version"`
	Statement []policyStatement `json:"Statement"`
}

// conditions are a statement's condition operators, each with its keys'
// values (a string, or a list of them).
type conditions map[string]map[string]any

type policyStatement struct {
	Sid       string            `json:"Sid,omitempty"`
	Effect    string            `json:"Effect"`
	Principal map[string]string `json:"Principal,omitempty"`
	Action    []string          `json:"Action"`
	Resource  []string          `json:"Resource,omitempty"`
	Condition conditions        `json:"Condition,omitempty"`
}

func (p policyDocument) String() string {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		// Only strings, lists and maps of them: it cannot fail.
		return "{}"
	}
	return string(b)
}

// executorPolicy is the execution role's permissions: its own logs, its
// state under the prefix, its credentials secret, and for the fleet's
// resources exactly the actions the drivers of its kinds call, each under
// the condition of its scope (awsprovider.ExecutorScopes): a create must
// carry the ownership tag, a change or a delete needs the resource to
// carry it, with one of the fleets' values. It is one document; deploy
// writes it cut into managed policies (splitPolicy).
func executorPolicy(in policyInput) (policyDocument, error) {
	in, byKind, err := in.scopes()
	if err != nil {
		return policyDocument{}, fmt.Errorf("executor policy: %w", err)
	}
	scopes := []awsprovider.ActionScope{{Action: "tag:GetResources", Scope: awsprovider.ScopeAny}}
	for _, k := range in.Kinds {
		scopes = append(scopes, byKind[k]...)
	}
	prefix := strings.Trim(in.Prefix, "/")
	objects := fmt.Sprintf("arn:%s:s3:::%s/*", in.Partition, in.Bucket)
	if prefix != "" {
		objects = fmt.Sprintf("arn:%s:s3:::%s/%s/*", in.Partition, in.Bucket, prefix)
	}
	doc := policyDocument{Version: "2012-10-17", Statement: []policyStatement{
		in.logs(),
		// ListBucket makes a missing state object a 404 rather than a 403,
		// which is how the store tells "no ledger yet" from "denied".
		{Sid: "StateList", Effect: "Allow", Action: []string{"s3:ListBucket"},
			Resource: []string{fmt.Sprintf("arn:%s:s3:::%s", in.Partition, in.Bucket)}},
		{Sid: "State", Effect: "Allow", Action: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}, Resource: []string{objects}},
	}}
	doc.Statement = append(doc.Statement, in.fleetStatements(scopes)...)
	doc.Statement = append(doc.Statement, in.keepTheState(scopes)...)
	doc.Statement = append(doc.Statement, in.credentials()...)
	return doc, nil
}

// scopes fills in the defaults (the aws partition, every kind with a
// driver) and returns the scope of every action each kind's driver calls,
// and nothing else: a kind cannot ship without deciding them.
func (in policyInput) scopes() (policyInput, map[spec.Kind][]awsprovider.ActionScope, error) {
	if in.Partition == "" {
		in.Partition = "aws"
	}
	if len(in.Kinds) == 0 {
		in.Kinds = awsprovider.Kinds()
	}
	out := map[spec.Kind][]awsprovider.ActionScope{}
	for _, k := range in.Kinds {
		s, ok, err := awsprovider.ExecutorScopes(k)
		if err != nil {
			return in, nil, err
		}
		if !ok {
			return in, nil, fmt.Errorf("kind %s has no AWS driver", k)
		}
		out[k] = s
	}
	return in, out, nil
}

// logs lets the function write its own log group.
func (in policyInput) logs() policyStatement {
	return policyStatement{Sid: "Logs", Effect: "Allow", Action: []string{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"},
		Resource: []string{fmt.Sprintf("arn:%s:logs:%s:%s:log-group:/aws/lambda/%s:*", in.Partition, in.Region, in.Account, in.Function)}}
}

// credentials lets the role read its credentials secret, if it has one.
func (in policyInput) credentials() []policyStatement {
	if in.CredentialsSecret == "" {
		return nil
	}
	arn := in.CredentialsSecret
	if !strings.HasPrefix(arn, "arn:") {
		// Secrets Manager appends six random characters to the name.
		arn = fmt.Sprintf("arn:%s:secretsmanager:%s:%s:secret:%s-??????", in.Partition, in.Region, in.Account, in.CredentialsSecret)
	}
	return []policyStatement{{Sid: "Credentials", Effect: "Allow", Action: []string{"secretsmanager:GetSecretValue"}, Resource: []string{arn}}}
}

// scopeGroup is the actions of one scope on one resource type: a statement.
// unconditioned marks the changes a service offers no condition for
// (Route 53's), which are granted on any resource as reads are, but in a
// statement of their own, so that no reader takes them for reads.
type scopeGroup struct {
	scope         awsprovider.Scope
	resource      string
	unconditioned bool
}

// fleetStatements turns the scopes into statements, one per scope and
// resource type, in a fixed order.
func (in policyInput) fleetStatements(scopes []awsprovider.ActionScope) []policyStatement {
	actions := map[scopeGroup][]string{}
	var order []scopeGroup
	for _, s := range scopes {
		g := scopeGroup{s.Scope, s.Resource, s.Scope == awsprovider.ScopeAny && s.Resource == "" && awsprovider.Changes(s.Action)}
		if _, seen := actions[g]; !seen {
			order = append(order, g)
		}
		actions[g] = append(actions[g], s.Action)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].scope != order[j].scope {
			return scopeOrder[order[i].scope] < scopeOrder[order[j].scope]
		}
		if order[i].unconditioned != order[j].unconditioned {
			return !order[i].unconditioned
		}
		return order[i].resource < order[j].resource
	})
	var out []policyStatement
	for _, g := range order {
		out = append(out, in.statements(g, uniqueSorted(actions[g]))...)
	}
	return out
}

var scopeOrder = map[awsprovider.Scope]int{awsprovider.ScopeAny: 0, awsprovider.ScopeCreate: 1, awsprovider.ScopeOwned: 2,
	awsprovider.ScopeTagging: 3, awsprovider.ScopeSecretValue: 4, awsprovider.ScopePassRole: 5, awsprovider.ScopeUntaggable: 6,
	awsprovider.ScopeServiceLinkedRole: 7}

// statements are the statements of one scope group.
func (in policyInput) statements(g scopeGroup, actions []string) []policyStatement {
	resources := []string{"*"}
	if g.resource != "" {
		resources = in.resourceARNs(actions, g.resource)
	}
	sid := sidOf(g)
	allow := func(sid string, c conditions) policyStatement {
		return policyStatement{Sid: sid, Effect: "Allow", Action: actions, Resource: resources, Condition: c}
	}
	owned := in.fleetIs("aws:ResourceTag/"+spec.OwnershipTagKey, false)
	requested := in.fleetIs("aws:RequestTag/"+spec.OwnershipTagKey, false)
	switch g.scope {
	case awsprovider.ScopeCreate:
		return []policyStatement{allow(sid, merge(requested, conditions{"ForAnyValue:StringEquals": {"aws:TagKeys": spec.OwnershipTagKey}}))}
	case awsprovider.ScopeOwned, awsprovider.ScopeSecretValue:
		return []policyStatement{allow(sid, owned)}
	case awsprovider.ScopeTagging:
		return []policyStatement{
			allow("TagOwned", merge(owned, in.fleetIs("aws:RequestTag/"+spec.OwnershipTagKey, true))),
			allow("TagToAdopt", merge(conditions{"Null": {"aws:ResourceTag/" + spec.OwnershipTagKey: "true"}}, requested)),
		}
	case awsprovider.ScopePassRole:
		toLambda := conditions{"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}
		tagged := allow("PassTaggedRoleToLambda", merge(owned, toLambda))
		tagged.Resource = []string{fmt.Sprintf("arn:%s:iam::%s:role/*", in.Partition, in.Account)}
		pathed := allow("PassInfraRoleToLambda", toLambda)
		pathed.Resource = []string{fmt.Sprintf("arn:%s:iam::%s:role/infra/*", in.Partition, in.Account)}
		return []policyStatement{tagged, pathed}
	case awsprovider.ScopeUntaggable:
		return in.untaggable(actions)
	case awsprovider.ScopeServiceLinkedRole:
		return []policyStatement{in.serviceLinkedRole(actions)}
	}
	return []policyStatement{allow(sid, nil)}
}

// untaggable grants the bucket actions S3 cannot condition on tags on every
// bucket; keepTheState denies them on the state bucket.
func (in policyInput) untaggable(actions []string) []policyStatement {
	buckets := []string{fmt.Sprintf("arn:%s:s3:::*", in.Partition)}
	return []policyStatement{{Sid: "BucketsByName", Effect: "Allow", Action: actions, Resource: buckets}}
}

// serviceLinkedRole lets ELB create its service-linked role, which it does
// with the executor's rights at the account's first load balancer: that
// one role, on its path and for its service name, as AWS documents for
// allowing one service-linked role. Other services' roles stay refused.
func (in policyInput) serviceLinkedRole(actions []string) policyStatement {
	service := awsprovider.ServiceLinkedRoleService
	name, _, _ := strings.Cut(service, ".")
	return policyStatement{Sid: "CreateServiceLinkedRoleFor" + camel(name), Effect: "Allow", Action: actions,
		Resource:  []string{fmt.Sprintf("arn:%s:iam::%s:role/aws-service-role/%s/*", in.Partition, in.Account, service)},
		Condition: conditions{"StringEquals": {"iam:AWSServiceName": service}}}
}

// keepTheState denies on the state bucket every bucket change the kinds
// make, whatever the bucket's tags say, but the deletion of an object:
// the store deletes its lock.
func (in policyInput) keepTheState(scopes []awsprovider.ActionScope) []policyStatement {
	var actions []string
	for _, s := range scopes {
		if strings.HasPrefix(s.Action, "s3:") && s.Scope != awsprovider.ScopeAny && s.Action != "s3:DeleteObject" {
			actions = append(actions, s.Action)
		}
	}
	if len(actions) == 0 {
		return nil
	}
	state := []string{fmt.Sprintf("arn:%s:s3:::%s", in.Partition, in.Bucket), fmt.Sprintf("arn:%s:s3:::%s/*", in.Partition, in.Bucket)}
	return []policyStatement{{Sid: "KeepTheState", Effect: "Deny", Action: uniqueSorted(actions), Resource: state}}
}

// resourceARNs is the ARN pattern of resource (after the account) for the
// actions' service, in every region of the account.
func (in policyInput) resourceARNs(actions []string, resource string) []string {
	service, _, _ := strings.Cut(actions[0], ":")
	account := in.Account
	if service == "ec2" && strings.HasPrefix(resource, "image/") {
		account = "" // an image's ARN names no account: public images are anyone's
	}
	return []string{fmt.Sprintf("arn:%s:%s:*:%s:%s", in.Partition, service, account, resource)}
}

// fleetIs is the condition that key holds one of the fleets (any value
// when none are named), or is absent too with ifExists.
func (in policyInput) fleetIs(key string, ifExists bool) conditions {
	op, value := "StringLike", any("?*")
	if len(in.Fleets) > 0 {
		op, value = "StringEquals", uniqueSorted(in.Fleets)
		if len(in.Fleets) == 1 {
			value = in.Fleets[0]
		}
	}
	if ifExists {
		op += "IfExists"
	}
	return conditions{op: {key: value}}
}

func merge(cs ...conditions) conditions {
	out := conditions{}
	for _, c := range cs {
		for op, keys := range c {
			if out[op] == nil {
				out[op] = map[string]any{}
			}
			for k, v := range keys {
				out[op][k] = v
			}
		}
	}
	return out
}

// sidOf names a scope group's statement: "Owned", "CreateTaggedInstance",
// "UseSubnet".
func sidOf(g scopeGroup) string {
	if g.unconditioned {
		return "ChangeWithoutTagConditions"
	}
	base := map[awsprovider.Scope]string{awsprovider.ScopeAny: "Read", awsprovider.ScopeCreate: "CreateTagged",
		awsprovider.ScopeOwned: "Owned", awsprovider.ScopeSecretValue: "OwnedSecretValues"}[g.scope]
	if g.resource == "" {
		return base
	}
	if g.scope == awsprovider.ScopeAny {
		base = "Use"
	}
	return base + camel(strings.TrimSuffix(strings.TrimSuffix(g.resource, "/*"), ":*"))
}

// lambdaTrustPolicy lets Lambda, and nothing else, assume the executor's
// role.
func lambdaTrustPolicy() string {
	return policyDocument{Version: "2012-10-17", Statement: []policyStatement{{Effect: "Allow",
		Principal: map[string]string{"Service": "lambda.amazonaws.com"}, Action: []string{"sts:AssumeRole"}}}}.String()
}

// gitHubOIDCHost is the issuer of GitHub Actions' OIDC tokens.
const gitHubOIDCHost = "token.actions.githubusercontent.com"

// gitHubTrustPolicy lets GitHub Actions workflows of repo whose token
// subject matches subject (such as "ref:refs/heads/main" or
// "environment:production") assume the invoker role, through the
// account's GitHub OIDC provider.
func gitHubTrustPolicy(partition, account, repo, subject string) string {
	if partition == "" {
		partition = "aws"
	}
	return policyDocument{Version: "2012-10-17", Statement: []policyStatement{{Effect: "Allow",
		Principal: map[string]string{"Federated": fmt.Sprintf("arn:%s:iam::%s:oidc-provider/%s", partition, account, gitHubOIDCHost)},
		Action:    []string{"sts:AssumeRoleWithWebIdentity"},
		Condition: conditions{"StringEquals": {
			gitHubOIDCHost + ":aud": "sts.amazonaws.com",
			gitHubOIDCHost + ":sub": "repo:" + repo + ":" + subject,
		}}}}}.String()
}

// invokerPolicy may invoke the one function and do nothing else.
func invokerPolicy(functionARN string) string {
	return policyDocument{Version: "2012-10-17", Statement: []policyStatement{{Sid: "InvokeTheExecutor", Effect: "Allow",
		Action: []string{"lambda:InvokeFunction"}, Resource: []string{functionARN}}}}.String()
}

func uniqueSorted(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// sweepPolicy is the sweep role's permissions: its own logs, the
// credentials secret (for Scaleway), reading and listing what its kinds'
// drivers read, and their deletes only on names starting with prefix. It
// can make nothing, change nothing but by deleting, and read no secret
// value. Debris is often untagged (a run that died before tagging), which
// the executor's tag conditions rightly refuse: so the sweep has a role of
// its own, for test accounts.
func sweepPolicy(in policyInput, prefix string) (policyDocument, error) {
	in, byKind, err := in.scopes()
	if err != nil {
		return policyDocument{}, fmt.Errorf("sweep policy: %w", err)
	}
	reads := []string{"tag:GetResources"}
	doc := policyDocument{Version: "2012-10-17", Statement: []policyStatement{
		in.logs(),
	}}
	var deletes []policyStatement
	fill := strings.NewReplacer("{partition}", in.Partition, "{account}", in.Account, "{prefix}", prefix)
	for _, k := range in.Kinds {
		target, acts, known := awsprovider.SweepTargets(k)
		if !known {
			return policyDocument{}, fmt.Errorf("sweep policy: kind %s has no sweep target", k)
		}
		for _, s := range byKind[k] {
			// A change no condition can hold (Route 53's) is scoped any
			// too, but it is no read.
			if s.Scope == awsprovider.ScopeAny && s.Resource == "" && !awsprovider.Changes(s.Action) {
				reads = append(reads, s.Action)
			}
		}
		st := policyStatement{Sid: "Sweep" + camel(string(k)), Effect: "Allow", Action: uniqueSorted(acts)}
		if target.NameTag != "" {
			st.Resource = []string{"*"}
			st.Condition = conditions{"StringLike": {"aws:ResourceTag/" + target.NameTag: prefix + "*"}}
		}
		for _, arn := range target.ARNs {
			st.Resource = append(st.Resource, fill.Replace(arn))
		}
		if target.Only != nil {
			st.Condition = merge(st.Condition, target.Only)
		}
		deletes = append(deletes, st)
	}
	doc.Statement = append(doc.Statement, policyStatement{Sid: "Read", Effect: "Allow", Action: uniqueSorted(reads), Resource: []string{"*"}})
	doc.Statement = append(doc.Statement, deletes...)
	doc.Statement = append(doc.Statement, in.credentials()...)
	return doc, nil
}

// camel writes a kind or a resource type as a Sid's part, which takes
// letters and digits only: object-store → ObjectStore, loadbalancer/app/*
// → LoadbalancerApp.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '/' || r == '*' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// IAM's limits on what the executor's role holds (IAM's quotas): a role's
// inline policies together may not pass 10,240 characters, which the
// policy for every kind nearly fills, so deploy writes managed policies of
// at most 6,144 each, white space aside. A role takes 10 of them unless
// the account's quota was raised (to 20 at most); deploy plans for 10.
const (
	managedPolicyChars     = 6144
	managedPoliciesPerRole = 10
)

// splitPolicy cuts doc into managed policies' documents: its statements
// whole and in their order, each document filled before the next is
// begun, so the same policy always gives the same documents. A statement
// too long for a document of its own, or more documents than a role
// takes, is an error naming the limit.
func splitPolicy(doc policyDocument) ([]policyDocument, error) {
	var out []policyDocument
	for _, st := range doc.Statement {
		if n := len(out); n > 0 {
			// Clipped: the document kept when st does not fit keeps its statements.
			grown := policyDocument{Version: doc.Version, Statement: append(slices.Clip(out[n-1].Statement), st)}
			if compactSize(grown) <= managedPolicyChars {
				out[n-1] = grown
				continue
			}
		}
		alone := policyDocument{Version: doc.Version, Statement: []policyStatement{st}}
		if size := compactSize(alone); size > managedPolicyChars {
			return nil, fmt.Errorf("statement %s is %d characters in a document of its own, over IAM's %d for a managed policy", st.Sid, size, managedPolicyChars)
		}
		out = append(out, alone)
	}
	if len(out) > managedPoliciesPerRole {
		return nil, fmt.Errorf("the permissions need %d managed policies of at most %d characters, and IAM attaches %d to a role (its default quota of managed policies per role): deploy executors of fewer kinds each (--kinds)",
			len(out), managedPolicyChars, managedPoliciesPerRole)
	}
	return out, nil
}

// compactSize is doc's length as IAM counts it: without white space.
func compactSize(doc policyDocument) int {
	b, err := json.Marshal(doc)
	if err != nil {
		// Only strings, lists and maps of them: it cannot fail.
		return 0
	}
	return len(b)
}

package aws

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// Scope is what the executor's role may do with one IAM action, and so the
// condition its statement carries (providers/aws/executordeploy; the table
// in docs/executor.md). The ownership tag is the proof of membership: the
// cloud checks it too, so not even the executor can cross it.
type Scope string

const (
	// ScopeAny is every resource: listing, reading what holds no secret
	// (a plan must see what is not ours to refuse it), or using a resource
	// in passing (the subnet an instance starts in).
	ScopeAny Scope = "any"
	// ScopeCreate needs the ownership tag, with a fleet's value, in the
	// request: what is made is never untagged.
	ScopeCreate Scope = "create"
	// ScopeOwned needs the resource to carry the ownership tag with a
	// fleet's value. Removing tags is owned too: that is the release path
	// (forget) on a resource the fleet owns.
	ScopeOwned Scope = "owned"
	// ScopeTagging is owned, with any ownership tag in the request set to a
	// fleet's value; or an untagged resource being given a fleet's tag,
	// which is an adoption (import, or a create whose tags the cloud did
	// not take at once).
	ScopeTagging Scope = "tagging"
	// ScopeSecretValue reads a secret's value only from a secret that
	// carries a fleet's ownership tag (a composed secret's sources and a
	// database's master password are the fleet's own secrets); the
	// credentials secret has a statement of its own.
	ScopeSecretValue Scope = "secret-value"
	// ScopePassRole passes to Lambda only a role tagged for a fleet or
	// under the /infra/ path.
	ScopePassRole Scope = "pass-role"
	// ScopeUntaggable is an S3 bucket action that cannot be conditioned on
	// the ownership tag: every bucket by name, with Why, and the state
	// bucket denied.
	ScopeUntaggable Scope = "untaggable"
	// ScopeServiceLinkedRole creates one service-linked role only:
	// Elastic Load Balancing's, under its path and for its service name
	// (iam:AWSServiceName is ServiceLinkedRoleService). ELB creates it at
	// an account's first load balancer or target group, with the caller's
	// permissions; no driver calls the action itself. A scope is an
	// action's, whatever kind lists it, so a second service's role (RDS's)
	// would be granted to every such kind: none is.
	ScopeServiceLinkedRole Scope = "service-linked-role"
)

// ServiceLinkedRoleService is the one service whose service-linked role
// ScopeServiceLinkedRole may create.
const ServiceLinkedRoleService = "elasticloadbalancing.amazonaws.com"

// ActionScope is one row of the executor's permissions: an action, on one
// resource type when the action touches several, and its scope.
type ActionScope struct {
	Action string
	// Resource is the resource type's ARN pattern after the account (such
	// as "instance/*"), for an action that touches several types, each in
	// its own way: RunInstances makes an instance/* and only uses a
	// subnet/*. Empty is every resource the action touches.
	Resource string
	Scope    Scope
	// Why says why an action that changes something is not conditioned on
	// the ownership tag; empty when it is, or when it changes nothing.
	Why string
}

const (
	whyUsed       = "uses it, changes nothing of it"
	whyBucketABAC = "S3 applies tag conditions to a bucket only once its ABAC is on, so turning it on cannot depend on them; " +
		"it grants nothing: a tag condition on a bucket without ABAC never holds"
)

// executorScopes is the scope of every action a driver calls, by action.
// A kind cannot ship an action without one (ExecutorScopes fails).
var executorScopes = map[string][]ActionScope{
	"tag:GetResources": {{Scope: ScopeAny}},

	"sqs:ListQueues":         {{Scope: ScopeAny}},
	"sqs:GetQueueUrl":        {{Scope: ScopeAny}},
	"sqs:GetQueueAttributes": {{Scope: ScopeAny}},
	"sqs:ListQueueTags":      {{Scope: ScopeAny}},
	"sqs:CreateQueue":        {{Scope: ScopeCreate}},
	"sqs:SetQueueAttributes": {{Scope: ScopeOwned}},
	"sqs:TagQueue":           {{Scope: ScopeTagging}},
	"sqs:UntagQueue":         {{Scope: ScopeOwned}},
	"sqs:DeleteQueue":        {{Scope: ScopeOwned}},

	"s3:ListAllMyBuckets":                 {{Scope: ScopeAny}},
	"s3:ListBucket":                       {{Scope: ScopeAny}},
	"s3:GetBucketLocation":                {{Scope: ScopeAny}},
	"s3:GetBucketTagging":                 {{Scope: ScopeAny}},
	"s3:GetBucketVersioning":              {{Scope: ScopeAny}},
	"s3:GetBucketObjectLockConfiguration": {{Scope: ScopeAny}},
	"s3:ListBucketVersions":               {{Scope: ScopeAny}},
	"s3:CreateBucket":                     {{Scope: ScopeCreate}},
	"s3:PutBucketAbac":                    {{Scope: ScopeUntaggable, Why: whyBucketABAC}},
	"s3:TagResource":                      {{Scope: ScopeTagging}},
	"s3:UntagResource":                    {{Scope: ScopeOwned}},
	"s3:PutBucketVersioning":              {{Scope: ScopeOwned}},
	"s3:PutBucketObjectLockConfiguration": {{Scope: ScopeOwned}},
	"s3:DeleteBucket":                     {{Scope: ScopeOwned}},
	"s3:DeleteObject":                     {{Scope: ScopeOwned}},
	"s3:DeleteObjectVersion":              {{Scope: ScopeOwned}},

	"secretsmanager:ListSecrets":    {{Scope: ScopeAny}},
	"secretsmanager:DescribeSecret": {{Scope: ScopeAny}},
	"secretsmanager:GetSecretValue": {{Scope: ScopeSecretValue}},
	"secretsmanager:CreateSecret":   {{Scope: ScopeCreate}},
	"secretsmanager:PutSecretValue": {{Scope: ScopeOwned}},
	"secretsmanager:UpdateSecret":   {{Scope: ScopeOwned}},
	"secretsmanager:TagResource":    {{Scope: ScopeTagging}},
	"secretsmanager:UntagResource":  {{Scope: ScopeOwned}},
	"secretsmanager:DeleteSecret":   {{Scope: ScopeOwned}},

	"ec2:DescribeVpcs":           {{Scope: ScopeAny}},
	"ec2:DescribeSecurityGroups": {{Scope: ScopeAny}},
	"ec2:DescribeInstances":      {{Scope: ScopeAny}},
	"ec2:DescribeInstanceTypes":  {{Scope: ScopeAny}},
	"ec2:DescribeImages":         {{Scope: ScopeAny}},
	"ec2:DescribeSubnets":        {{Scope: ScopeAny}},
	"ec2:CreateSecurityGroup": {
		{Resource: "security-group/*", Scope: ScopeCreate},
		{Resource: "vpc/*", Scope: ScopeAny, Why: whyUsed},
	},
	"ec2:AuthorizeSecurityGroupIngress": {
		{Resource: "security-group/*", Scope: ScopeOwned},
		{Resource: "security-group-rule/*", Scope: ScopeAny, Why: "a rule is made inside the group, which must be owned"},
	},
	"ec2:RevokeSecurityGroupIngress": {{Resource: "security-group/*", Scope: ScopeOwned}},
	"ec2:DeleteSecurityGroup":        {{Resource: "security-group/*", Scope: ScopeOwned}},
	"ec2:RunInstances": {
		{Resource: "instance/*", Scope: ScopeCreate},
		{Resource: "volume/*", Scope: ScopeAny, Why: "made with the instance, deleted with it"},
		{Resource: "network-interface/*", Scope: ScopeAny, Why: "made with the instance, deleted with it"},
		{Resource: "subnet/*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "security-group/*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "image/*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "key-pair/*", Scope: ScopeAny, Why: whyUsed},
	},
	"ec2:ModifyInstanceAttribute": {
		{Resource: "instance/*", Scope: ScopeOwned},
		{Resource: "security-group/*", Scope: ScopeAny, Why: whyUsed},
	},
	"ec2:TerminateInstances": {{Resource: "instance/*", Scope: ScopeOwned}},
	"ec2:CreateTags":         {{Scope: ScopeTagging}},
	"ec2:DeleteTags":         {{Scope: ScopeOwned}},

	"ecr:DescribeRepositories":   {{Scope: ScopeAny}},
	"ecr:ListTagsForResource":    {{Scope: ScopeAny}},
	"ecr:BatchGetImage":          {{Scope: ScopeAny}},
	"ecr:GetDownloadUrlForLayer": {{Scope: ScopeAny}},
	"ecr:CreateRepository":       {{Scope: ScopeCreate}},
	"ecr:PutImageTagMutability":  {{Scope: ScopeOwned}},
	"ecr:TagResource":            {{Scope: ScopeTagging}},
	"ecr:UntagResource":          {{Scope: ScopeOwned}},
	"ecr:DeleteRepository":       {{Scope: ScopeOwned}},

	"iam:ListUsers":                {{Scope: ScopeAny}},
	"iam:GetUser":                  {{Scope: ScopeAny}},
	"iam:ListAttachedUserPolicies": {{Scope: ScopeAny}},
	"iam:ListUserPolicies":         {{Scope: ScopeAny}},
	"iam:ListAccessKeys":           {{Scope: ScopeAny}},
	"iam:CreateUser":               {{Scope: ScopeCreate}},
	"iam:TagUser":                  {{Scope: ScopeTagging}},
	"iam:UntagUser":                {{Scope: ScopeOwned}},
	"iam:AttachUserPolicy":         {{Scope: ScopeOwned}},
	"iam:DetachUserPolicy":         {{Scope: ScopeOwned}},
	"iam:DeleteUserPolicy":         {{Scope: ScopeOwned}},
	"iam:DeleteAccessKey":          {{Scope: ScopeOwned}},
	"iam:DeleteLoginProfile":       {{Scope: ScopeOwned}},
	"iam:DeleteUser":               {{Scope: ScopeOwned}},
	"iam:PassRole":                 {{Scope: ScopePassRole}},
	"iam:CreateServiceLinkedRole":  {{Scope: ScopeServiceLinkedRole}},

	"lambda:ListFunctions":               {{Scope: ScopeAny}},
	"lambda:GetFunction":                 {{Scope: ScopeAny}},
	"lambda:GetFunctionConfiguration":    {{Scope: ScopeAny}},
	"lambda:GetFunctionUrlConfig":        {{Scope: ScopeAny}},
	"lambda:ListTags":                    {{Scope: ScopeAny}},
	"lambda:CreateFunction":              {{Scope: ScopeCreate}},
	"lambda:CreateFunctionUrlConfig":     {{Scope: ScopeOwned}},
	"lambda:UpdateFunctionCode":          {{Scope: ScopeOwned}},
	"lambda:UpdateFunctionConfiguration": {{Scope: ScopeOwned}},
	"lambda:TagResource":                 {{Scope: ScopeTagging}},
	"lambda:UntagResource":               {{Scope: ScopeOwned}},
	"lambda:DeleteFunction":              {{Scope: ScopeOwned}},

	"rds:DescribeDBClusters":         {{Scope: ScopeAny}},
	"rds:DescribeDBInstances":        {{Scope: ScopeAny}},
	"rds:DescribeDBClusterSnapshots": {{Scope: ScopeAny}},
	"rds:CreateDBCluster": {
		{Resource: "cluster:*", Scope: ScopeCreate},
		{Resource: "cluster-pg:*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "og:*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "subgrp:*", Scope: ScopeAny, Why: whyUsed},
	},
	"rds:CreateDBInstance": {
		{Resource: "db:*", Scope: ScopeCreate},
		{Resource: "cluster:*", Scope: ScopeOwned},
		{Resource: "og:*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "pg:*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "subgrp:*", Scope: ScopeAny, Why: whyUsed},
	},
	"rds:ModifyDBCluster": {
		{Resource: "cluster:*", Scope: ScopeOwned},
		{Resource: "cluster-pg:*", Scope: ScopeAny, Why: whyUsed},
		{Resource: "og:*", Scope: ScopeAny, Why: whyUsed},
	},
	"rds:AddTagsToResource":      {{Scope: ScopeTagging}},
	"rds:RemoveTagsFromResource": {{Scope: ScopeOwned}},
	"rds:DeleteDBInstance":       {{Resource: "db:*", Scope: ScopeOwned}},
	"rds:DeleteDBCluster": {
		{Resource: "cluster:*", Scope: ScopeOwned},
		{Resource: "cluster-snapshot:*", Scope: ScopeOwned},
	},
	// Snapshots copy the cluster's tags (CopyTagsToSnapshot).
	"rds:DeleteDBClusterSnapshot": {{Resource: "cluster-snapshot:*", Scope: ScopeOwned}},
}

// ExecutorScopes returns the scope of every action kind k's driver calls,
// in the order of its registry entry; false when no driver is registered.
// It fails when an action has no scope: a kind cannot ship one undecided.
func ExecutorScopes(k spec.Kind) ([]ActionScope, bool, error) {
	e, ok := registry[k]
	if !ok {
		return nil, false, nil
	}
	var out []ActionScope
	for _, a := range e.actions {
		scopes, ok := executorScopes[a]
		if !ok {
			return nil, true, fmt.Errorf("aws: kind %s calls %s, which has no executor scope: add it to executorScopes", k, a)
		}
		for _, s := range scopes {
			s.Action = a
			out = append(out, s)
		}
	}
	return out, true, nil
}

// Changes says whether an action changes something, by the verbs IAM's
// own names use: what the executor's conditions must cover.
func Changes(action string) bool {
	_, name, _ := strings.Cut(action, ":")
	return slices.ContainsFunc([]string{"Create", "Delete", "Put", "Update", "Modify", "Set", "Tag", "Untag", "Change", "Attach",
		"Detach", "Authorize", "Revoke", "Run", "Terminate", "Add", "Remove", "Pass", "Subscribe", "Unsubscribe",
		"Enable", "Disable", "Schedule", "Cancel", "Allocate", "Release", "Replace", "Associate", "Disassociate", "Register", "Deregister"},
		func(verb string) bool { return strings.HasPrefix(name, verb) })
}

// SweepTarget is how the sweep's role may reach kind k's debris by name,
// for its deletes: the ARN patterns of names starting with the prefix
// ({partition}, {account} and {prefix} filled in), or, where the ARN holds
// an id rather than the name, the tag that carries the name, with Why.
type SweepTarget struct {
	ARNs []string
	// NameTag is the tag whose value is the name, when the ARN has none:
	// the delete is allowed where it starts with the prefix.
	NameTag string
	// Why says why the ARNs or the tag cannot hold the sweep to the
	// prefix, where they cannot (a Route 53 zone's ARN holds its id, and
	// Route 53 has no condition key on a name or a tag).
	Why string
	// Deletes are the actions of the kind's delete where their names do
	// not say so (a record set is deleted by a DELETE change of
	// route53:ChangeResourceRecordSets); empty: every Delete, Detach and
	// Terminate the driver calls.
	Deletes []string
	// Only is a condition the sweep's delete statement carries, operator
	// to key to value, where an action that deletes can do more
	// (ChangeResourceRecordSets with DELETE changes only).
	Only map[string]map[string]any
}

// sweepTargets are the sweep's name patterns, by kind.
var sweepTargets = map[spec.Kind]SweepTarget{
	spec.Queues:        {ARNs: []string{"arn:{partition}:sqs:*:{account}:{prefix}*"}},
	spec.ObjectStore:   {ARNs: []string{"arn:{partition}:s3:::{prefix}*", "arn:{partition}:s3:::{prefix}*/*"}},
	spec.S3Bucket:      {ARNs: []string{"arn:{partition}:s3:::{prefix}*", "arn:{partition}:s3:::{prefix}*/*"}},
	spec.Secrets:       {ARNs: []string{"arn:{partition}:secretsmanager:*:{account}:secret:{prefix}*"}},
	spec.ImageRegistry: {ARNs: []string{"arn:{partition}:ecr:*:{account}:repository/{prefix}*"}},
	spec.IAM:           {ARNs: []string{"arn:{partition}:iam::{account}:user/{prefix}*"}},
	spec.Compute:       {ARNs: []string{"arn:{partition}:lambda:*:{account}:function:{prefix}*"}},
	spec.Postgres: {ARNs: []string{"arn:{partition}:rds:*:{account}:cluster:{prefix}*", "arn:{partition}:rds:*:{account}:db:{prefix}*",
		"arn:{partition}:rds:*:{account}:cluster-snapshot:{prefix}*"}},
	spec.AWSInstance: {NameTag: "Name", Why: "an instance's ARN holds its id; its name is its Name tag"},
	spec.SecurityGroup: {NameTag: spec.OwnershipTagKey, Why: "a group's ARN holds its id, and IAM has no condition key for its name: " +
		"the sweep deletes only groups tagged for a fleet whose name starts with the prefix (a test fleet), never an untagged one"},
}

// SweepTargets returns how the sweep's role reaches kind k's debris, and
// the actions of k's delete (every Delete, Detach and Terminate its driver
// calls on k's own resources, SNS's Unsubscribe, and ScheduleKeyDeletion,
// which is how a KMS key is deleted). False when the kind has no driver or
// no sweep target.
func SweepTargets(k spec.Kind) (SweepTarget, []string, bool) {
	e, ok := registry[k]
	target, known := sweepTargets[k]
	if !ok || !known {
		return SweepTarget{}, nil, false
	}
	if len(target.Deletes) > 0 {
		return target, target.Deletes, true
	}
	var deletes []string
	for _, a := range e.actions {
		if _, other := e.elsewhere[a]; other {
			continue
		}
		_, name, _ := strings.Cut(a, ":")
		if strings.HasPrefix(name, "Delete") || strings.HasPrefix(name, "Detach") || strings.HasPrefix(name, "Terminate") ||
			name == "Unsubscribe" || name == "ScheduleKeyDeletion" {
			deletes = append(deletes, a)
		}
	}
	return target, deletes, true
}

// ResourceARN is kind k's registered ARN format filled in with name (the
// id, where the ARN holds one); false when the kind registers none.
func ResourceARN(k spec.Kind, partition, region, account, name string) (string, bool) {
	e, ok := registry[k]
	if !ok || e.arnFormat == "" {
		return "", false
	}
	return strings.NewReplacer("{partition}", partition, "{region}", region, "{account}", account,
		"{name}", name, "{id}", name).Replace(e.arnFormat), true
}

// arnFormatPattern matches the ARNs of format whose name is name; {id}
// matches any id.
func arnFormatPattern(format, name string) *regexp.Regexp {
	q := regexp.QuoteMeta(format)
	q = strings.NewReplacer(regexp.QuoteMeta("{partition}"), `aws(-[a-z]+)*`, regexp.QuoteMeta("{region}"), `[a-z]{2}(-[a-z]+)+-[0-9]`,
		regexp.QuoteMeta("{account}"), `[0-9]{12}`, regexp.QuoteMeta("{name}"), regexp.QuoteMeta(name), regexp.QuoteMeta("{id}"), `[^:/]+`).Replace(q)
	return regexp.MustCompile("^" + q + "$")
}

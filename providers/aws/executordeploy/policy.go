package executordeploy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// executorKindActions are the IAM actions each kind's driver calls, and
// nothing else: the executor's role is granted those of the kinds it
// manages. A test checks that every kind with a driver has an entry, so a
// new kind cannot ship without deciding its permissions.
var executorKindActions = map[spec.Kind][]string{
	spec.ObjectStore: s3BucketActions,
	spec.S3Bucket:    append(append([]string{}, s3BucketActions...), "s3:GetBucketObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration"),
	spec.Queues: {"sqs:ListQueues", "sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ListQueueTags", "sqs:CreateQueue",
		"sqs:SetQueueAttributes", "sqs:TagQueue", "sqs:UntagQueue", "sqs:DeleteQueue"},
	spec.Secrets: {"secretsmanager:ListSecrets", "secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue",
		"secretsmanager:CreateSecret", "secretsmanager:PutSecretValue", "secretsmanager:UpdateSecret",
		"secretsmanager:TagResource", "secretsmanager:UntagResource", "secretsmanager:DeleteSecret"},
	// A function's image is pulled with the caller's rights, and its
	// execution role is passed (iam:PassRole, limited to Lambda below).
	spec.Compute: {"lambda:ListFunctions", "lambda:GetFunction", "lambda:GetFunctionConfiguration", "lambda:GetFunctionUrlConfig",
		"lambda:ListTags", "lambda:CreateFunction", "lambda:CreateFunctionUrlConfig", "lambda:UpdateFunctionCode",
		"lambda:UpdateFunctionConfiguration", "lambda:TagResource", "lambda:UntagResource", "lambda:DeleteFunction",
		"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "iam:PassRole"},
	spec.ImageRegistry: {"ecr:DescribeRepositories", "ecr:ListTagsForResource", "ecr:CreateRepository",
		"ecr:PutImageTagMutability", "ecr:TagResource", "ecr:UntagResource", "ecr:DeleteRepository"},
	// The iam kind is an IAM user with managed policies: whoever may
	// attach a policy to a user may grant that user anything. Leave the
	// kind out (--kinds) unless the fleet really manages users.
	spec.IAM: {"iam:ListUsers", "iam:GetUser", "iam:ListAttachedUserPolicies", "iam:ListUserPolicies", "iam:ListAccessKeys",
		"iam:CreateUser", "iam:TagUser", "iam:UntagUser", "iam:AttachUserPolicy", "iam:DetachUserPolicy",
		"iam:DeleteUserPolicy", "iam:DeleteAccessKey", "iam:DeleteLoginProfile", "iam:DeleteUser"},
	spec.Postgres: {"rds:DescribeDBClusters", "rds:DescribeDBInstances", "rds:DescribeDBClusterSnapshots", "rds:CreateDBCluster",
		"rds:CreateDBInstance", "rds:ModifyDBCluster", "rds:AddTagsToResource", "rds:RemoveTagsFromResource",
		"rds:DeleteDBInstance", "rds:DeleteDBCluster", "rds:DeleteDBClusterSnapshot",
		"secretsmanager:GetSecretValue"},
	spec.SecurityGroup: {"ec2:DescribeVpcs", "ec2:DescribeSecurityGroups", "ec2:CreateSecurityGroup",
		"ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:CreateTags", "ec2:DeleteTags",
		"ec2:DeleteSecurityGroup"},
	spec.AWSInstance: {"ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeImages", "ec2:DescribeSubnets",
		"ec2:DescribeVpcs", "ec2:DescribeSecurityGroups", "ec2:RunInstances", "ec2:ModifyInstanceAttribute",
		"ec2:CreateTags", "ec2:DeleteTags", "ec2:TerminateInstances"},
}

var s3BucketActions = []string{"s3:ListAllMyBuckets", "s3:ListBucket", "s3:GetBucketLocation", "s3:CreateBucket",
	"s3:GetBucketTagging", "s3:PutBucketTagging", "s3:GetBucketVersioning", "s3:PutBucketVersioning",
	"s3:ListBucketVersions", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:DeleteBucket"}

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
}

type policyDocument struct {
	Version   string            `json:"Version"`
	Statement []policyStatement `json:"Statement"`
}

type policyStatement struct {
	Sid       string                       `json:"Sid,omitempty"`
	Effect    string                       `json:"Effect"`
	Principal map[string]string            `json:"Principal,omitempty"`
	Action    []string                     `json:"Action"`
	Resource  []string                     `json:"Resource,omitempty"`
	Condition map[string]map[string]string `json:"Condition,omitempty"`
}

func (p policyDocument) String() string {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		// Only strings and maps of strings: it cannot fail.
		return "{}"
	}
	return string(b)
}

// executorPolicy is the execution role's permissions: its own logs, its
// state under the prefix, its credentials secret, the tag scan, and for the
// fleet's resources exactly the actions the drivers of its kinds call. The
// fleet's resources have names the fleet chooses, so those actions cannot
// be narrowed to ARNs here; iam:PassRole is narrowed to Lambda.
func executorPolicy(in policyInput) (string, error) {
	if in.Partition == "" {
		in.Partition = "aws"
	}
	kinds := in.Kinds
	if len(kinds) == 0 {
		kinds = awsprovider.Kinds()
	}
	var fleet []string
	passRole := false
	for _, k := range kinds {
		acts, ok := executorKindActions[k]
		if !ok {
			return "", fmt.Errorf("executor policy: kind %s has no AWS driver", k)
		}
		for _, a := range acts {
			if a == "iam:PassRole" {
				passRole = true
				continue
			}
			fleet = append(fleet, a)
		}
	}
	fleet = append(fleet, "tag:GetResources")
	prefix := strings.Trim(in.Prefix, "/")
	objects := fmt.Sprintf("arn:%s:s3:::%s/*", in.Partition, in.Bucket)
	if prefix != "" {
		objects = fmt.Sprintf("arn:%s:s3:::%s/%s/*", in.Partition, in.Bucket, prefix)
	}
	doc := policyDocument{Version: "2012-10-17", Statement: []policyStatement{
		{Sid: "Logs", Effect: "Allow", Action: []string{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"},
			Resource: []string{fmt.Sprintf("arn:%s:logs:%s:%s:log-group:/aws/lambda/%s:*", in.Partition, in.Region, in.Account, in.Function)}},
		// ListBucket makes a missing state object a 404 rather than a 403,
		// which is how the store tells "no ledger yet" from "denied".
		{Sid: "StateList", Effect: "Allow", Action: []string{"s3:ListBucket"},
			Resource: []string{fmt.Sprintf("arn:%s:s3:::%s", in.Partition, in.Bucket)}},
		{Sid: "State", Effect: "Allow", Action: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}, Resource: []string{objects}},
		{Sid: "Fleet", Effect: "Allow", Action: uniqueSorted(fleet), Resource: []string{"*"}},
	}}
	if in.CredentialsSecret != "" {
		arn := in.CredentialsSecret
		if !strings.HasPrefix(arn, "arn:") {
			// Secrets Manager appends six random characters to the name.
			arn = fmt.Sprintf("arn:%s:secretsmanager:%s:%s:secret:%s-??????", in.Partition, in.Region, in.Account, in.CredentialsSecret)
		}
		doc.Statement = append(doc.Statement, policyStatement{Sid: "Credentials", Effect: "Allow",
			Action: []string{"secretsmanager:GetSecretValue"}, Resource: []string{arn}})
	}
	if passRole {
		doc.Statement = append(doc.Statement, policyStatement{Sid: "PassRoleToLambda", Effect: "Allow",
			Action: []string{"iam:PassRole"}, Resource: []string{"*"},
			Condition: map[string]map[string]string{"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}})
	}
	return doc.String(), nil
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
		Condition: map[string]map[string]string{"StringEquals": {
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

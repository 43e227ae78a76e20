package executordeploy

import (
	"encoding/json"
	"fmt"
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
		// The actions each kind's driver calls, and nothing else, from the
		// kind's registry entry: a kind cannot ship without deciding them.
		acts, ok := awsprovider.ExecutorActions(k)
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

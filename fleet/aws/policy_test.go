package aws_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/internal/show"
	"github.com/infra-iac/infra/spec"
)

// A role that a function assumes, a policy letting it send to the fleet's
// queue, and the attachment: the synthesized document holds the trust as
// a literal JSON document, the policy's as a composed value that writes
// the queue's ARN in at apply, and the role's policies as the policy's
// ARN; check accepts it, and the role is ordered after the policy, the
// policy after the queue.
func TestRolePolicyAndAttachmentSynthesize(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	jobs := cloud.Queues("jobs", fleet.QueuesSpec{})
	send := cloud.IAMPolicy("send-jobs", aws.PolicyDocument{Statements: []aws.Statement{{
		Sid:        "Send",
		Effect:     aws.Allow,
		Actions:    []string{"sqs:SendMessage", "sqs:GetQueueUrl"},
		Resources:  fleet.Outputs{aws.ARNOf(jobs)},
		Conditions: []aws.Condition{{Operator: "Bool", Key: "aws:SecureTransport", Values: fleet.Outputs{fleet.Lit("true")}}},
	}, {
		Effect:    aws.Deny,
		Actions:   []string{"sqs:DeleteQueue"},
		Resources: fleet.Outputs{fleet.Lit("*")},
	}}}.JSON(), aws.IAMPolicySpec{Description: fleet.Set("lets the api send jobs")})
	role := cloud.IAMRole("api", aws.AssumedBy("lambda.amazonaws.com").JSON(), aws.IAMRoleSpec{
		Policies: fleet.Outputs{aws.ARNOf(send), fleet.Lit("arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")},
	})
	cloud.Compute("api", fleet.Lit("123456789012.dkr.ecr.eu-west-3.amazonaws.com/api:1"), aws.ARNOf(role), fleet.ComputeSpec{})

	doc, diags := f.Synth()
	for _, d := range diags {
		t.Errorf("row: %s %s: %s", d.Severity, d.Subject, d.Message)
	}
	specs := map[string]map[string]any{}
	for _, r := range doc.Resources {
		specs[r.Address] = r.Spec
	}

	trust, _ := specs["aws/iam-role/api"]["trust"].(string)
	wantTrust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["lambda.amazonaws.com"]},"Action":["sts:AssumeRole"]}]}`
	if trust != wantTrust {
		t.Errorf("trust:\n got %s\nwant %s", trust, wantTrust)
	}

	// The policy's document is known after apply: the queue's ARN goes in
	// where the format says. Filled with a sample ARN, it is the JSON meant.
	composed, _ := specs["aws/iam-policy/send-jobs"]["document"].(map[string]any)["composed"].(map[string]any)
	if composed == nil {
		t.Fatalf("document: %#v, want a composed value", specs["aws/iam-policy/send-jobs"]["document"])
	}
	args, _ := composed["args"].([]any)
	if want := []any{map[string]any{"observed": "aws/queues/jobs", "attribute": "arn"}}; !reflect.DeepEqual(args, want) {
		t.Errorf("args %v, want %v", args, want)
	}
	filled, err := spec.Format(composed["format"].(string), []string{"arn:aws:sqs:eu-west-3:123456789012:jobs"})
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal([]byte(filled), &got); err != nil {
		t.Fatalf("the filled document is not JSON: %v\n%s", err, filled)
	}
	_ = json.Unmarshal([]byte(`{"Version": "2012-10-17", "Statement": [
		{"Sid": "Send", "Effect": "Allow", "Action": ["sqs:SendMessage", "sqs:GetQueueUrl"], "Resource": ["arn:aws:sqs:eu-west-3:123456789012:jobs"],
		 "Condition": {"Bool": {"aws:SecureTransport": ["true"]}}},
		{"Effect": "Deny", "Action": ["sqs:DeleteQueue"], "Resource": ["*"]}]}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("document:\n got %s\nwant %v", filled, want)
	}

	policies, _ := specs["aws/iam-role/api"]["policies"].([]any)
	if want := []any{map[string]any{"observed": "aws/iam-policy/send-jobs", "attribute": "arn"},
		"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}; !reflect.DeepEqual(policies, want) {
		t.Errorf("policies %v, want %v", policies, want)
	}

	m, rows := spec.Compile(doc)
	if len(rows) != 0 {
		t.Fatalf("rows: %v", rows)
	}
	for addr, want := range map[string][]string{
		"aws/iam-role/api":         {"aws/iam-policy/send-jobs"},
		"aws/iam-policy/send-jobs": {"aws/queues/jobs"},
		"aws/compute/api":          {"aws/iam-role/api"},
	} {
		a, _ := spec.ParseAddress(addr)
		d, _ := m.Lookup(a)
		var deps []string
		for _, x := range d.Deps() {
			deps = append(deps, x.String())
		}
		if !reflect.DeepEqual(deps, want) {
			t.Errorf("%s depends on %v, want %v", addr, deps, want)
		}
	}
}

// A document whose every value is known now is a literal, with another
// resource's ARN given as one.
func ExamplePolicyDocument_JSON() {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	cloud.IAMPolicy("read-table", aws.PolicyDocument{Statements: []aws.Statement{{
		Effect:    aws.Allow,
		Actions:   []string{"dynamodb:GetItem"},
		Resources: fleet.Outputs{fleet.Lit("arn:aws:dynamodb:eu-west-3:123456789012:table/orders")},
	}}}.JSON(), aws.IAMPolicySpec{})
	show.Fleet(f)
	// Output:
	// aws/iam-policy/read-table {"document":"{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Action\":[\"dynamodb:GetItem\"],\"Resource\":[\"arn:aws:dynamodb:eu-west-3:123456789012:table/orders\"]}]}"}
}

// A statement without an effect or actions, and an unset value, are
// mistakes reported at the resource that holds the document.
func TestPolicyDocumentMistakesAreRows(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, "123456789012", aws.Paris)
	var unset fleet.Output[string]
	cloud.IAMPolicy("broken", aws.PolicyDocument{Statements: []aws.Statement{
		{Resources: fleet.Outputs{fleet.Lit("*")}},
		{Effect: aws.Allow, Actions: []string{"s3:GetObject"}, Resources: fleet.Outputs{unset}},
		{Effect: aws.Allow, Actions: []string{"sts:AssumeRole"}, Principals: []aws.Principal{{}}},
	}}.JSON(), aws.IAMPolicySpec{})
	cloud.IAMPolicy("empty", aws.PolicyDocument{}.JSON(), aws.IAMPolicySpec{})
	_, diags := f.Synth()
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Subject+": "+d.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"aws/iam-policy/broken", "statement 0 has no Effect: give aws.Allow or aws.Deny", "statement 0 has no Actions",
		"an unset fleet.Output", "statement 2: a zero aws.Principal",
		"aws/iam-policy/empty", "the policy document has no statement",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no row says %q; rows:\n%s", want, all)
		}
	}
}

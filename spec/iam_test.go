package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A policy document is compared as IAM reads it. The pairs are what a user
// writes and what IAM may hand back (its own re-serialisation, URL-decoded):
// key order, whitespace and a one-element list differ, the meaning does not.
func TestComparePolicyReadsPolicyDocumentsAsIAMDoes(t *testing.T) {
	doc := Field{Name: "document", Type: TypeString, Compare: ComparePolicy}
	const written = `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::b/*"}]}`
	for _, c := range []struct {
		name string
		a, b any
		want bool
	}{
		{"the same text", written, written, true},
		{"keys reordered, whitespace gone",
			written, `{"Statement":[{"Resource":"arn:aws:s3:::b/*","Action":["s3:GetObject"],"Effect":"Allow"}],"Version":"2012-10-17"}`, true},
		{"a single action as a string", written,
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":["arn:aws:s3:::b/*"]}]}`, true},
		{"a single statement as an object", written,
			`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}}`, true},
		{"actions in another order",
			`{"Statement":[{"Effect":"Allow","Action":["sqs:SendMessage","sqs:ReceiveMessage"],"Resource":"*"}]}`,
			`{"Statement":[{"Effect":"Allow","Action":["sqs:ReceiveMessage","sqs:SendMessage"],"Resource":"*"}]}`, true},
		{"statements in another order",
			`{"Statement":[{"Effect":"Allow","Action":"a:A","Resource":"*"},{"Effect":"Deny","Action":"b:B","Resource":"*"}]}`,
			`{"Statement":[{"Effect":"Deny","Action":"b:B","Resource":"*"},{"Effect":"Allow","Action":"a:A","Resource":"*"}]}`, true},
		{"a principal and a condition value as one-element lists",
			`{"Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole","Condition":{"StringEquals":{"aws:SourceAccount":"123456789012"}}}]}`,
			`{"Statement":[{"Effect":"Allow","Principal":{"Service":["lambda.amazonaws.com"]},"Action":["sts:AssumeRole"],"Condition":{"StringEquals":{"aws:SourceAccount":["123456789012"]}}}]}`, true},
		{"a boolean condition value and its text",
			`{"Statement":[{"Effect":"Deny","Action":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":false}}}]}`,
			`{"Statement":[{"Effect":"Deny","Action":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`, true},
		{"another action", written,
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*"}]}`, false},
		{"another effect", written,
			`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`, false},
		{"one action more", written,
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::b/*"}]}`, false},
		{"no Version is the 2008 language, not the 2012 one", written,
			`{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`, false},
		{"not JSON compares exactly", `{"Statement": [`, `{"Statement": [`, true},
		{"not JSON against JSON", `{"Statement": [`, written, false},
		{"two documents in one value", written + written, written, false},
	} {
		if got := Equal(doc, c.a, c.b); got != c.want {
			t.Errorf("%s: Equal = %v, want %v", c.name, got, c.want)
		}
		if got := Equal(doc, c.b, c.a); got != c.want {
			t.Errorf("%s (reversed): Equal = %v, want %v", c.name, got, c.want)
		}
	}
	// The same pair under the exact rule differs: the mode is what makes
	// them equal.
	if Equal(Field{Name: "document", Type: TypeString}, written, strings.ReplaceAll(written, " ", "")) {
		t.Error("an exact field compares documents by meaning")
	}
}

// A role's policies hold ARNs or the arn a policy of the fleet publishes;
// the observed one orders the policy before the role, and check holds it to
// what exists and what it publishes.
func TestRolePoliciesHoldObservedARNs(t *testing.T) {
	policy := `{"address": "aws/iam-policy/read", "spec": {"document": "{}"}}`
	role := func(policies string) string {
		return `{"address": "aws/iam-role/api", "spec": {"trust": "{}", "policies": ` + policies + `}}`
	}
	d, err := DecodeDocument([]byte(docJSON(nil, policy,
		role(`["arn:aws:iam::aws:policy/ReadOnlyAccess", {"observed": "aws/iam-policy/read", "attribute": "arn"}]`))))
	if err != nil {
		t.Fatal(err)
	}
	m, diags := Compile(d)
	checkRows(t, diags)
	api, _ := m.Lookup(mustAddress("aws/iam-role/api"))
	if got, want := api.Deps(), []Address{mustAddress("aws/iam-policy/read")}; !reflect.DeepEqual(got, want) {
		t.Errorf("deps: got %v, want %v", got, want)
	}
	want := List{Lit{"arn:aws:iam::aws:policy/ReadOnlyAccess"}, Observed{Of: mustAddress("aws/iam-policy/read"), Attribute: "arn"}}
	if got := api.Fields["policies"]; !reflect.DeepEqual(got, want) {
		t.Errorf("policies: got %#v", got)
	}

	checkRows(t, validateJSON(t, docJSON(nil, policy, role(`[{"observed": "aws/iam-policy/gone", "attribute": "arn"}]`))),
		row{"aws/iam-role/api", `field "policies" reads aws/iam-policy/gone, which is not in the document`})
	checkRows(t, validateJSON(t, docJSON(nil, policy, role(`[{"observed": "aws/iam-policy/read", "attribute": "id"}]`))),
		row{"aws/iam-role/api", `field "policies" reads attribute "id", which aws/iam-policy/read does not publish`})
	// A list whose field takes no expression still refuses one: the iam
	// kind's policies are ARNs only.
	user := `{"address": "aws/iam/ci", "spec": {"policies": [{"observed": "aws/iam-policy/read", "attribute": "arn"}]}}`
	if rows := validateJSON(t, docJSON(nil, policy, user)); len(rows) != 1 || !strings.Contains(rows[0].Message, "item 0: want a string, got an object") {
		t.Errorf("an expression in the iam kind's policies: %v", rows)
	}
}

// Each IAM kind's Example is a valid resource as a document holds it, and
// the role's names the policy's example.
func TestIAMExamplesCheck(t *testing.T) {
	var resources []string
	for _, k := range []Kind{IAMPolicy, IAMRole} {
		info, _ := Lookup(k)
		if info.Example == nil {
			t.Fatalf("%s has no Example", k)
		}
		b, err := json.Marshal(map[string]any{"address": "aws/" + string(k) + "/example", "spec": info.Example})
		if err != nil {
			t.Fatal(err)
		}
		resources = append(resources, string(b))
	}
	checkRows(t, validateJSON(t, docJSON(nil, resources...)))
}

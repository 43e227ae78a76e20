package aws

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/internal/sdk"
)

// PolicyVersion is the version of IAM's policy language a PolicyDocument
// is written in when its Version is empty.
const PolicyVersion = "2012-10-17"

// Effect is what a statement does with what it names: Allow or Deny. It is
// not a string, so a misspelled effect does not compile; the zero Effect
// is reported as a mistake.
type Effect struct{ name string }

// The two effects of IAM's policy language.
var (
	Allow = Effect{"Allow"}
	Deny  = Effect{"Deny"}
)

// PolicyDocument is an IAM policy, for a policy's document (IAMPolicy) or a
// role's trust (IAMRole), as typed Go. Its JSON method gives the field's
// value:
//
//	doc := aws.PolicyDocument{Statements: []aws.Statement{{
//		Effect:    aws.Allow,
//		Actions:   []string{"sqs:SendMessage"},
//		Resources: fleet.Outputs{aws.ARNOf(jobs)},
//	}}}
//	cloud.IAMPolicy("send-jobs", doc.JSON(), aws.IAMPolicySpec{})
type PolicyDocument struct {
	// Version is the policy language's version; empty is PolicyVersion.
	Version string
	// Statements are the policy's statements, at least one.
	Statements []Statement
}

// Statement is one statement of a policy.
type Statement struct {
	// Sid names the statement, optionally.
	Sid string
	// Effect is aws.Allow or aws.Deny.
	Effect Effect
	// Actions are what it allows or denies, such as "dynamodb:GetItem".
	Actions []string
	// Resources are the ARNs it applies to: literals (fleet.Lit("*")) or
	// another resource's ARN known after apply (aws.ARNOf(table)). A trust
	// policy has none.
	Resources fleet.Outputs
	// Principals are whom it applies to, in a trust or a resource policy:
	// ServicePrincipal, AWSPrincipal, FederatedPrincipal, AnyPrincipal.
	Principals []Principal
	// Conditions must all hold for it to apply.
	Conditions []Condition
}

// Principal is whom a statement applies to. Make one with
// ServicePrincipal, AWSPrincipal, FederatedPrincipal or AnyPrincipal.
type Principal struct {
	kind string // "AWS", "Service", "Federated"; "*" for anyone
	id   fleet.Output[string]
}

// ServicePrincipal is an AWS service, such as "lambda.amazonaws.com".
func ServicePrincipal(service string) Principal {
	return Principal{kind: "Service", id: fleet.Lit(service)}
}

// AWSPrincipal is an account, a role or a user, by its ARN: a literal, or
// one known after apply (aws.ARNOf(role)).
func AWSPrincipal(arn fleet.Output[string]) Principal { return Principal{kind: "AWS", id: arn} }

// FederatedPrincipal is an identity provider, such as
// "cognito-identity.amazonaws.com" or an OIDC provider's ARN.
func FederatedPrincipal(provider string) Principal {
	return Principal{kind: "Federated", id: fleet.Lit(provider)}
}

// AnyPrincipal is everyone ("Principal": "*"): give it with Conditions that
// narrow it.
func AnyPrincipal() Principal { return Principal{kind: "*"} }

// Condition is one test of a statement's condition block: Operator (such
// as "StringEquals", "ArnLike", "Bool") applied to the context Key (such
// as "aws:SourceArn") against any of Values.
type Condition struct {
	// Operator is the condition operator, such as "StringEquals".
	Operator string
	// Key is the context key tested, such as "aws:SourceArn".
	Key string
	// Values are what the key is tested against; any one may match.
	Values fleet.Outputs
}

// AssumedBy is a trust policy letting the AWS services named assume the
// role, for IAMRole's trust: aws.AssumedBy("lambda.amazonaws.com").JSON().
func AssumedBy(services ...string) PolicyDocument {
	principals := make([]Principal, len(services))
	for i, s := range services {
		principals[i] = ServicePrincipal(s)
	}
	return PolicyDocument{Statements: []Statement{{Effect: Allow, Principals: principals, Actions: []string{"sts:AssumeRole"}}}}
}

// JSON is the document as a field takes it: a literal when every value in
// it is known now, else a value the apply composes, with each value known
// after apply (an ARN) written in as it is. Mistakes (a statement without
// an effect or actions, an unset value) are reported at the resource whose
// field holds it.
func (d PolicyDocument) JSON() fleet.Output[string] {
	w := &docWriter{}
	tree := d.tree(w)
	b, err := json.Marshal(tree)
	if err != nil {
		w.problems = append(w.problems, err.Error())
	}
	var out fleet.Output[string]
	if len(w.args) == 0 {
		out = fleet.Lit(string(b))
	} else {
		// The JSON's own braces are literal in a format; each value known
		// after apply is a marker in the JSON, replaced by its placeholder.
		format := strings.NewReplacer("{", "{{", "}", "}}").Replace(string(b))
		for i := range w.args {
			format = strings.Replace(format, w.marker(i), "{"+strconv.Itoa(i)+"}", 1)
		}
		args := make([]fleet.Arg, len(w.args))
		for i, a := range w.args {
			args[i] = a
		}
		out = fleet.Format(format, args...)
	}
	if len(w.problems) > 0 {
		sdk.Refuse(&out, w.problems)
	}
	return out
}

// docWriter collects what writing a document finds: the values known only
// after apply, each standing in the JSON as its marker, and the mistakes.
type docWriter struct {
	args     []fleet.Output[string]
	problems []string
}

// marker is what value i reads as in the marshalled JSON: NULs are written
// \u0000, which no value known now writes unescaped in its place.
func (w *docWriter) marker(i int) string { return `\u0000` + strconv.Itoa(i) + `\u0000` }

// value is o in the JSON: its literal, or a marker for the value known
// after apply.
func (w *docWriter) value(o fleet.Output[string]) string {
	if s, ok := sdk.LiteralOf(&o); ok {
		return s
	}
	w.args = append(w.args, o)
	return "\x00" + strconv.Itoa(len(w.args)-1) + "\x00"
}

func (w *docWriter) values(os fleet.Outputs) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = w.value(o)
	}
	return out
}

// statementJSON is a statement in IAM's grammar, its keys in the order
// IAM's documentation writes them.
type statementJSON struct {
	Sid       string                         `json:"Sid,omitempty"`
	Effect    string                         `json:"Effect"`
	Principal any                            `json:"Principal,omitempty"`
	Action    []string                       `json:"Action,omitempty"`
	Resource  []string                       `json:"Resource,omitempty"`
	Condition map[string]map[string][]string `json:"Condition,omitempty"`
}

type documentJSON struct {
	Version   string          `json:"Version"`
	Statement []statementJSON `json:"Statement"`
}

func (d PolicyDocument) tree(w *docWriter) documentJSON {
	out := documentJSON{Version: d.Version, Statement: []statementJSON{}}
	if out.Version == "" {
		out.Version = PolicyVersion
	}
	if len(d.Statements) == 0 {
		w.problems = append(w.problems, "the policy document has no statement")
	}
	for i, s := range d.Statements {
		where := fmt.Sprintf("statement %d", i)
		if s.Sid != "" {
			where += " (" + s.Sid + ")"
		}
		st := statementJSON{Sid: s.Sid, Effect: s.Effect.name, Action: s.Actions, Resource: w.values(s.Resources)}
		if s.Effect.name == "" {
			w.problems = append(w.problems, where+" has no Effect: give aws.Allow or aws.Deny")
		}
		if len(s.Actions) == 0 {
			w.problems = append(w.problems, where+" has no Actions")
		}
		st.Principal = w.principals(where, s.Principals)
		for _, c := range s.Conditions {
			if c.Operator == "" || c.Key == "" || len(c.Values) == 0 {
				w.problems = append(w.problems, where+": a condition needs an Operator, a Key and Values")
				continue
			}
			if st.Condition == nil {
				st.Condition = map[string]map[string][]string{}
			}
			if st.Condition[c.Operator] == nil {
				st.Condition[c.Operator] = map[string][]string{}
			}
			st.Condition[c.Operator][c.Key] = append(st.Condition[c.Operator][c.Key], w.values(c.Values)...)
		}
		out.Statement = append(out.Statement, st)
	}
	return out
}

// principals groups a statement's principals by type; AnyPrincipal alone
// is "*".
func (w *docWriter) principals(where string, ps []Principal) any {
	if len(ps) == 0 {
		return nil
	}
	byKind := map[string][]string{}
	for _, p := range ps {
		switch p.kind {
		case "":
			w.problems = append(w.problems, where+": a zero aws.Principal: make one with ServicePrincipal, AWSPrincipal, FederatedPrincipal or AnyPrincipal")
		case "*":
			if len(ps) > 1 {
				w.problems = append(w.problems, where+": AnyPrincipal stands alone: it is everyone already")
			}
			return "*"
		default:
			byKind[p.kind] = append(byKind[p.kind], w.value(p.id))
		}
	}
	return byKind
}

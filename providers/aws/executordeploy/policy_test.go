package executordeploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/infra-iac/infra/internal/golden"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// Every action of every kind that changes something is conditioned on the
// ownership tag, or says why it cannot be (the documented exceptions).
func TestEveryChangeIsConditionedOrExplained(t *testing.T) {
	for _, k := range awsprovider.Kinds() {
		scopes, _, err := awsprovider.ExecutorScopes(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scopes {
			free := s.Scope == awsprovider.ScopeAny || s.Scope == awsprovider.ScopeUntaggable
			if awsprovider.Changes(s.Action) && free && s.Why == "" {
				t.Errorf("%s: %s on %q changes something, is not conditioned on %s, and says not why", k, s.Action, s.Resource, spec.OwnershipTagKey)
			}
			if s.Scope == awsprovider.ScopeUntaggable && !strings.HasPrefix(s.Action, "s3:") {
				t.Errorf("%s: %s is untaggable, but the policy grants untaggable actions on buckets by name alone", k, s.Action)
			}
			if s.Scope == awsprovider.ScopeServiceLinkedRole && s.Action != "iam:CreateServiceLinkedRole" {
				t.Errorf("%s: %s is scoped %s, but the policy grants that scope as the creation of ELB's service-linked role alone", k, s.Action, s.Scope)
			}
			if !awsprovider.Changes(s.Action) && s.Scope != awsprovider.ScopeAny && s.Scope != awsprovider.ScopeSecretValue {
				t.Errorf("%s: %s reads, yet is scoped %s: a plan must read what is not ours to refuse it", k, s.Action, s.Scope)
			}
		}
	}
}

// The policies deploy writes, for every kind, with and without named
// fleets, and the sweeper's, are the golden ones in testdata, one file per
// managed policy (INFRA_UPDATE_GOLDEN=1 writes them). Each is within IAM's
// 6,144 characters for a managed policy, white space aside, there are no
// more than a role takes, and their statements are the policy's, whole,
// in order, each Sid once.
func TestExecutorPolicyGolden(t *testing.T) {
	base := policyInput{Region: "eu-west-3", Account: "123456789012", Function: "infra-executor",
		Bucket: "acme-infra-state", Prefix: "fleets", CredentialsSecret: "infra/executor"}
	withFleets := base
	withFleets.Fleets = []string{"shop", "billing"}
	sweeper := base
	sweeper.Function = "infra-sweeper"
	policies := map[string]func() (policyDocument, error){
		"policy-every-kind":        func() (policyDocument, error) { return executorPolicy(base) },
		"policy-every-kind-fleets": func() (policyDocument, error) { return executorPolicy(withFleets) },
		"policy-sweep-every-kind":  func() (policyDocument, error) { return sweepPolicy(sweeper, "ci-tests-") },
	}
	for name, policy := range policies {
		whole, err := policy()
		if err != nil {
			t.Fatal(err)
		}
		docs := managedDocuments(t, whole)
		var sizes []string
		var statements []policyStatement
		sids := map[string]bool{}
		for i, p := range docs {
			file := fmt.Sprintf("%s-%d.json", name, i+1)
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(p)); err != nil {
				t.Fatal(err)
			}
			if compact.Len() > 6144 {
				t.Errorf("%s: %d characters, over IAM's 6,144 for a managed policy", file, compact.Len())
			}
			sizes = append(sizes, strconv.Itoa(compact.Len()))
			var doc policyDocument
			if err := json.Unmarshal([]byte(p), &doc); err != nil {
				t.Fatal(err)
			}
			for _, s := range doc.Statement {
				if sids[s.Sid] {
					t.Errorf("%s: two statements are %s", file, s.Sid)
				}
				sids[s.Sid] = true
			}
			statements = append(statements, doc.Statement...)
			golden.Check(t, file, p+"\n")
		}
		if len(docs) > 10 {
			t.Errorf("%s: %d managed policies, over the 10 IAM attaches to a role by default", name, len(docs))
		}
		if joined := (policyDocument{Version: whole.Version, Statement: statements}); !sameJSON(joined.String(), whole.String()) {
			t.Errorf("%s: the managed policies' statements are not the policy's, whole and in order", name)
		}
		// No golden file of a policy the code no longer makes.
		extra := filepath.Join("testdata", fmt.Sprintf("%s-%d.json", name, len(docs)+1))
		if os.Getenv("INFRA_UPDATE_GOLDEN") != "" {
			os.Remove(extra)
		} else if _, err := os.Stat(extra); err == nil {
			t.Errorf("%s is a policy the code no longer makes (INFRA_UPDATE_GOLDEN=1 deletes it)", extra)
		}
		t.Logf("%s: %d characters in one document, %d managed policies of %s", name, compactSize(whole), len(docs), strings.Join(sizes, ", "))
	}
}

// managedDocuments are the managed policies' documents deploy writes for
// doc.
func managedDocuments(t *testing.T, doc policyDocument) []string {
	t.Helper()
	docs, err := splitPolicy(doc)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.String()
	}
	return out
}

// The cut is IAM's limits: documents filled in order, a statement never
// cut, a statement too long for any document and more documents than a
// role takes refused with the numbers.
func TestSplitPolicy(t *testing.T) {
	// A statement of n actions of 10 characters: about 13n characters.
	statement := func(sid string, n int) policyStatement {
		st := policyStatement{Sid: sid, Effect: "Allow", Resource: []string{"*"}}
		for i := range n {
			st.Action = append(st.Action, fmt.Sprintf("sqs:A%05d", i))
		}
		return st
	}
	sids := func(docs []policyDocument) string {
		var parts []string
		for _, d := range docs {
			var names []string
			for _, s := range d.Statement {
				names = append(names, s.Sid)
			}
			parts = append(parts, strings.Join(names, ","))
		}
		return strings.Join(parts, " | ")
	}
	doc := policyDocument{Version: "2012-10-17", Statement: []policyStatement{
		statement("A", 200), statement("B", 200), statement("C", 100), statement("D", 300), statement("E", 10)}}
	docs, err := splitPolicy(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got := sids(docs); got != "A,B | C,D,E" {
		t.Errorf("cut as %s", got)
	}
	for i, d := range docs {
		if n := compactSize(d); n > managedPolicyChars {
			t.Errorf("document %d: %d characters", i+1, n)
		}
	}
	again, _ := splitPolicy(doc)
	if !reflect.DeepEqual(docs, again) {
		t.Error("the same policy cut twice gave two cuts")
	}
	if _, err := splitPolicy(policyDocument{Version: "2012-10-17", Statement: []policyStatement{statement("Huge", 500)}}); err == nil ||
		!strings.Contains(err.Error(), "statement Huge is") || !strings.Contains(err.Error(), "over IAM's 6144 for a managed policy") {
		t.Errorf("a statement longer than a managed policy: %v", err)
	}
	var many policyDocument
	for i := range 11 {
		many.Statement = append(many.Statement, statement(fmt.Sprintf("S%d", i), 400))
	}
	if _, err := splitPolicy(many); err == nil || !strings.Contains(err.Error(), "need 11 managed policies") ||
		!strings.Contains(err.Error(), "IAM attaches 10 to a role") {
		t.Errorf("eleven documents: %v", err)
	}
}

// TestExecutorDocsTableIsTheCode keeps the table of kind × action ×
// condition in docs/executor.md equal to ExecutorScopes
// (INFRA_UPDATE_DOCS=1 rewrites it).
func TestExecutorDocsTableIsTheCode(t *testing.T) {
	const path = "../../../docs/executor.md"
	const begin, end = "<!-- executor scopes: begin (generated from providers/aws/executor_scope.go) -->\n", "<!-- executor scopes: end -->\n"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/executor.md lacks the markers %q and %q", begin, end)
	}
	table := scopeTable(t)
	if os.Getenv("INFRA_UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+table+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := doc[i+len(begin) : j]; got != table {
		t.Errorf("docs/executor.md's table is not the code's (INFRA_UPDATE_DOCS=1 rewrites it):\n%s", golden.FirstDifference(got, table))
	}
}

func scopeTable(t *testing.T) string {
	words := map[awsprovider.Scope]string{
		awsprovider.ScopeCreate:      "the request tags it for a fleet",
		awsprovider.ScopeOwned:       "it is tagged for a fleet",
		awsprovider.ScopeTagging:     "it is tagged for a fleet and the request tags only for a fleet, or it is untagged and the request tags it for a fleet (adoption)",
		awsprovider.ScopeSecretValue: "the secret is tagged for a fleet",
		awsprovider.ScopePassRole:    "the role is tagged for a fleet or under `/infra/`, and is passed to Lambda",
		awsprovider.ScopeServiceLinkedRole: "`iam:AWSServiceName` is `" + awsprovider.ServiceLinkedRoleService + "`: Elastic Load Balancing's own role, " +
			"which ELB makes with the caller's rights at the first load balancer (no driver calls it)",
	}
	var b strings.Builder
	b.WriteString("| kind | action | on | allowed when |\n|---|---|---|---|\n")
	for _, k := range awsprovider.Kinds() {
		scopes, _, err := awsprovider.ExecutorScopes(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scopes {
			cond := words[s.Scope]
			switch s.Scope {
			case awsprovider.ScopeAny:
				cond = "always: it reads or lists"
				if s.Why != "" {
					cond = "always: " + s.Why
				}
			case awsprovider.ScopeUntaggable:
				cond = "always, on every bucket but the state bucket: " + s.Why
			default:
				if s.Why != "" {
					cond += " (" + s.Why + ")"
				}
			}
			if cond == "" {
				t.Errorf("%s: %s is scoped %s, which the table has no words for", k, s.Action, s.Scope)
			}
			on := "any"
			if s.Resource != "" {
				on = "`" + s.Resource + "`"
			}
			if s.Scope == awsprovider.ScopeServiceLinkedRole {
				on = "`role/aws-service-role/" + awsprovider.ServiceLinkedRoleService + "/*`"
			}
			b.WriteString("| " + string(k) + " | `" + s.Action + "` | " + on + " | " + cond + " |\n")
		}
	}
	return b.String()
}

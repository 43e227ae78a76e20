package executordeploy

import (
	"bytes"
	"encoding/json"
	"os"
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
			if !awsprovider.Changes(s.Action) && s.Scope != awsprovider.ScopeAny && s.Scope != awsprovider.ScopeSecretValue {
				t.Errorf("%s: %s reads, yet is scoped %s: a plan must read what is not ours to refuse it", k, s.Action, s.Scope)
			}
		}
	}
}

// The policies deploy writes, for every kind, with and without named
// fleets, and the sweeper's, are the golden ones in testdata (INFRA_UPDATE_GOLDEN=1 writes
// them). IAM limits a role's inline policies to 10,240 characters, white
// space aside.
func TestExecutorPolicyGolden(t *testing.T) {
	base := policyInput{Region: "eu-west-3", Account: "123456789012", Function: "infra-executor",
		Bucket: "acme-infra-state", Prefix: "fleets", CredentialsSecret: "infra/executor"}
	withFleets := base
	withFleets.Fleets = []string{"shop", "billing"}
	sweeper := base
	sweeper.Function = "infra-sweeper"
	policies := map[string]func() (string, error){
		"policy-every-kind.json":        func() (string, error) { return executorPolicy(base) },
		"policy-every-kind-fleets.json": func() (string, error) { return executorPolicy(withFleets) },
		"policy-sweep-every-kind.json":  func() (string, error) { return sweepPolicy(sweeper, "ci-tests-") },
	}
	for name, policy := range policies {
		p, err := policy()
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(p)); err != nil {
			t.Fatal(err)
		}
		if compact.Len() > 10240 {
			t.Errorf("%s: %d characters, over IAM's 10,240 for a role's inline policies", name, compact.Len())
		}
		var doc policyDocument
		if err := json.Unmarshal([]byte(p), &doc); err != nil {
			t.Fatal(err)
		}
		sids := map[string]bool{}
		for _, s := range doc.Statement {
			if sids[s.Sid] {
				t.Errorf("%s: two statements are %s", name, s.Sid)
			}
			sids[s.Sid] = true
		}
		golden.Check(t, name, p+"\n")
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
			on := "any"
			if s.Resource != "" {
				on = "`" + s.Resource + "`"
			}
			b.WriteString("| " + string(k) + " | `" + s.Action + "` | " + on + " | " + cond + " |\n")
		}
	}
	return b.String()
}

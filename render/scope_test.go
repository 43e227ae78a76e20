package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// A partial plan says so in the text plan and the comment, names its
// forced replaces, and its comment carries the scope back to the merge.
func TestPartialPlanSaysSoAndItsCommentCarriesTheScope(t *testing.T) {
	q := spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs"}
	g := spec.Address{Provider: spec.AWS, Kind: spec.SecurityGroup, Name: "web"}
	p := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop", ID: "sha256:" + strings.Repeat("a", 64),
		Targets: []spec.Address{g, q}, Replace: []spec.Address{g},
		Actions: []engine.Action{{Address: g, Action: engine.Replace, Cause: engine.ForcedCause}}}
	p.Summarize()
	var text strings.Builder
	if err := Text(&text, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Partial plan: only aws/security-group/web, aws/queues/jobs and what they depend on (--target)", "Forced replace (--replace): aws/security-group/web."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	md := Markdown(p, MarkdownOptions{})
	if !strings.Contains(md, "> Partial plan: only `aws/security-group/web`, `aws/queues/jobs`") || !strings.Contains(md, "> Forced replace (--replace): `aws/security-group/web`.") {
		t.Errorf("comment lacks the scope lines:\n%s", md)
	}
	sc, err := ReadMarkdownScope(md)
	if err != nil || fmt.Sprint(sc.Targets) != fmt.Sprint(p.Targets) || fmt.Sprint(sc.Replace) != fmt.Sprint(p.Replace) {
		t.Errorf("scope read back %+v, %v", sc, err)
	}
	p.Targets, p.Replace = nil, nil
	whole := Markdown(p, MarkdownOptions{})
	if strings.Contains(whole, "Partial") || strings.Contains(whole, "plan-scope") {
		t.Errorf("a whole plan's comment speaks of a scope:\n%s", whole)
	}
	if sc, err := ReadMarkdownScope(whole); err != nil || sc.Targets != nil || sc.Replace != nil {
		t.Errorf("whole plan's scope %+v, %v", sc, err)
	}
	if _, err := ReadMarkdownScope(`<!-- infra:plan-scope {"targets":["nope"]} -->`); err == nil {
		t.Errorf("a scope line that does not parse was read as the whole fleet")
	}
}

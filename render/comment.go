package render

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// The hidden lines of a comment. The Action finds a fleet's comments by
// their marker and reads back the reviewed plan's id from the id line;
// plan --markdown writes the same body as the pull-request comment.

// PlanMarker is the hidden first line of a fleet's plan comment.
func PlanMarker(fleet string) string { return Marker("plan", fleet) }

// Marker is the hidden line that finds a fleet's comment of a kind again.
// A valid fleet name is written as it is; anything else is escaped, so that
// a name from a broken document can neither end the HTML comment nor span
// lines.
func Marker(kind, fleet string) string {
	return "<!-- infra:" + kind + " fleet=" + htmlEscape(fleet) + " -->"
}

var idLine = regexp.MustCompile(`<!-- infra:plan-id (sha256:[0-9a-f]{64}) head=([0-9a-zA-Z]*) -->`)

// ReadMarkdownPlanID reads back the plan id and head commit that
// Markdown wrote into a comment: what a merge applies is the plan a
// reviewer saw, so it is read from the comment, not recomputed.
func ReadMarkdownPlanID(body string) (id, head string, ok bool) {
	m := idLine.FindStringSubmatch(body)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

var prAppliedLine = regexp.MustCompile(`<!-- infra:pr-applied plan-id=(sha256:[0-9a-f]{64}) head=([0-9a-zA-Z]+) -->`)

// PRAppliedLine is the hidden line of an apply result that says plan id
// was applied from the pull request at its head commit, before the merge:
// the merge reads it back to know that the reviewed plan is applied
// already and that its empty fresh plan is no change after review.
func PRAppliedLine(id, head string) string {
	return "<!-- infra:pr-applied plan-id=" + htmlEscape(id) + " head=" + htmlEscape(head) + " -->\n"
}

// ReadPRApplied reads back the plan id and head PRAppliedLine wrote.
func ReadPRApplied(body string) (id, head string, ok bool) {
	m := prAppliedLine.FindStringSubmatch(body)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Scope is a plan's targets and forced replaces, as its comment carries
// them for the merge that applies it.
type Scope struct {
	Targets []spec.Address `json:"targets,omitempty"`
	Replace []spec.Address `json:"replace,omitempty"`
}

// scopeLine is the hidden line that carries a narrowed plan's scope, so
// that the merge plans it again with the same scope (else the ids differ
// and the apply refuses); none for a plan of the whole fleet.
func scopeLine(p *engine.Plan) string {
	if len(p.Targets)+len(p.Replace) == 0 {
		return ""
	}
	b, _ := json.Marshal(Scope{Targets: p.Targets, Replace: p.Replace})
	return "<!-- infra:plan-scope " + htmlEscape(string(b)) + " -->\n"
}

var scopeLineRE = regexp.MustCompile(`<!-- infra:plan-scope (\{[^\n]*?\}) -->`)

// ReadMarkdownScope reads back the scope scopeLine wrote: the zero Scope
// from a comment of a whole-fleet plan, and an error from a scope line
// that does not parse, which must not be read as the whole fleet.
func ReadMarkdownScope(body string) (Scope, error) {
	var sc Scope
	m := scopeLineRE.FindStringSubmatch(body)
	if m == nil {
		return sc, nil
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &sc); err != nil {
		return Scope{}, fmt.Errorf("the plan comment's scope line: %w", err)
	}
	return sc, nil
}

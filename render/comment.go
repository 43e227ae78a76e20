package render

import "regexp"

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

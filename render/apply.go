package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/infra-iac/infra/engine"
)

// Apply is how an apply ended, whoever ran it, as ApplyMarkdown shows it.
type Apply struct {
	Fleet string
	// Commit is the merge commit applied, or the pull request's head when
	// By is set.
	Commit string
	// By, when set, is who commented /infra apply on the pull request: the
	// apply was made from the pull request, before its merge. A done one
	// carries the hidden line PRAppliedLine, which the merge reads.
	By string
	// Verdict is one word: applied, failed, incomplete or refused.
	Verdict string
	// Plan is the plan applied; nil when none was made.
	Plan    *engine.Plan
	Applied []engine.Applied
	// Count is the line that counts what was done (AppliedLine).
	Count string
	// Message says what went wrong; shown unless the apply succeeded.
	Message string
	Elapsed time.Duration
	// Where says who applied: "in the runner", or the executor and its
	// invocations.
	Where string
	// Note, when set, is shown first, and the plan applied is shown in
	// full after the table (it was not the one reviewed).
	Note string
	// Marker is the hidden first line; Elsewhere names where the uncut
	// result is.
	Marker, Elsewhere string
}

// resultRows bounds the table of a result; the job summary has the same
// table, and the log every line.
const resultRows = 40_000

// ApplyMarkdown is an apply's result as a comment shows it: what was done,
// how long it took, and the plan when it is not the reviewed one.
func ApplyMarkdown(r Apply) string {
	var b strings.Builder
	if r.Marker != "" {
		b.WriteString(r.Marker + "\n")
	}
	fmt.Fprintf(&b, "### infra apply for fleet %s: %s\n\n", code(r.Fleet), r.Verdict)
	id := "(none)"
	if r.Plan != nil {
		id = "`" + r.Plan.ID + "`"
	}
	if r.By != "" {
		if r.Verdict == "applied" && r.Plan != nil {
			b.WriteString(PRAppliedLine(r.Plan.ID, r.Commit))
		}
		fmt.Fprintf(&b, "Applied from the pull request at head %s on `/infra apply` by @%s: plan %s, applied %s in **%s**.\n\n",
			code(r.Commit), cell(r.By), id, r.Where, Seconds(r.Elapsed))
	} else {
		fmt.Fprintf(&b, "Merge commit `%s`, plan %s, applied %s in **%s**.\n\n", r.Commit, id, r.Where, Seconds(r.Elapsed))
	}
	if r.Note != "" {
		b.WriteString("> [!NOTE]\n> " + r.Note + "\n\n")
	}
	b.WriteString("**" + r.Count + "**\n\n")
	if r.Verdict != "applied" && r.Message != "" {
		lines := strings.Split(r.Message, "\n")
		for i, l := range lines {
			lines[i] = cell(l)
		}
		b.WriteString("> [!CAUTION]\n> " + strings.Join(lines, "\n> ") + "\n\n")
	}
	appliedTable(&b, r)
	if r.Note != "" && r.Plan != nil {
		b.WriteString("\n" + Markdown(r.Plan, MarkdownOptions{HeadSHA: r.Commit, Limit: CommentLimit - b.Len() - 100,
			Marker: "<!-- infra:applied-plan -->", Title: "The plan that was applied", Elsewhere: r.Elsewhere}))
	}
	return b.String()
}

func appliedTable(b *strings.Builder, r Apply) {
	if len(r.Applied) == 0 {
		return
	}
	b.WriteString("| | resource | action | status | time | error |\n| --- | --- | --- | --- | --- | --- |\n")
	start := b.Len()
	for i, a := range r.Applied {
		row := fmt.Sprintf("| `%s` | %s | %s | %s | %s | %s |\n", symbolOf(a.Action), code(a.Address.String()), a.Action, a.Status,
			Seconds(time.Duration(a.ElapsedMs)*time.Millisecond), TableText(a.Error))
		if b.Len()-start+len(row) > resultRows {
			fmt.Fprintf(b, "\n_%d more row(s) are in %s._\n", len(r.Applied)-i, r.Elsewhere)
			return
		}
		b.WriteString(row)
	}
}

func symbolOf(k engine.ActionKind) string {
	return strings.TrimSpace(actionStyle[k].symbol)
}

// TableText keeps an error message or a cloud's tag inside its table
// cell, as inert text, cut at 300 bytes.
func TableText(s string) string {
	s = cell(s)
	if len(s) <= 300 {
		return s
	}
	cut := 300
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Seconds is a duration as results show it: milliseconds under a second,
// tenths above.
func Seconds(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

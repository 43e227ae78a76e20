package render

import (
	"github.com/infra-iac/infra/engine"

	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/infra-iac/infra/spec"
)

// CommentLimit is the size every markdown rendering stays under unless told
// otherwise. GitHub refuses comments over 65,536 characters; the margin
// leaves room for what a caller wraps around the plan.
const CommentLimit = 60000

// maxValue bounds one side of one change in the markdown: a policy
// document of 20 KB would otherwise crowd every other resource out.
const maxValue = 600

// MarkdownOptions shape the pull-request rendering.
type MarkdownOptions struct {
	// HeadSHA is the commit the plan was made from; it goes into the footer
	// and the hidden id line.
	HeadSHA string
	// Limit is the most bytes the rendering may take; CommentLimit when
	// zero. Bytes bound characters, so a byte limit is also a character
	// limit.
	Limit int
	// Elsewhere names where the uncut plan is, for the note that says
	// details were cut: markdown such as "the [job summary](URL)".
	Elsewhere string
	// Marker is the first line, which finds the comment again; PlanMarker
	// of the plan's fleet when empty.
	Marker string
	// Title replaces the default heading.
	Title string
	// Banner is markdown placed under the title: why this plan is shown.
	Banner string
	// Now dates a plan from the cache; time.Now when zero.
	Now time.Time
	// Footer is the sentence after the plan id. Empty: the pull request's
	// (merging applies exactly this plan), which is untrue anywhere else,
	// such as an issue about drift.
	Footer string
	// Reads are the capabilities of other fleets the plan's fleet reads,
	// and Consumers the fleets that read its own: each a section under
	// the counts, omitted when empty. A consumer-protected error of the
	// plan is shown there too, as blocking.
	Reads     []Read
	Consumers []Consumer
}

// MarkdownText makes a string from a document or a cloud inert text in a
// comment, a table cell included: see cell.
func MarkdownText(s string) string { return cell(s) }

// MarkdownCode renders a string from a document or a cloud as a code span:
// see code.
func MarkdownCode(s string) string { return code(s) }

// Markdown renders the plan for a pull request: the marker, the
// header (accounts and regions), the counts, the destroys and replaces in
// a warning block, the actions grouped by class (replace, delete, the
// deletes of cut members, update in place, create, adopt, forget), each a
// collapsible section or a line, then the contracts, the diagnostics
// table, the graph of the changes (PlanGraph, as Mermaid, collapsed; a
// note instead above commentGraphNodes nodes) and the plan id with the
// head commit. It draws from
// the same engine.Plan as Text and RenderJSON, so they never disagree, and
// it never shows a secret: a sensitive change reads (sensitive).
//
// The result stays under opts.Limit at any plan size. The header, counts
// and footer always fit; the warning block, the diagnostics and the
// details share the rest, in that order of importance, and whatever is cut
// is counted in a note pointing to opts.Elsewhere. The graph is drawn only
// when nothing else is cut and it fits beside the rest; otherwise a note
// says how to draw it.
func Markdown(p *engine.Plan, opts MarkdownOptions) string {
	limit := opts.Limit
	if limit <= 0 {
		limit = CommentLimit
	}
	elsewhere := opts.Elsewhere
	if elsewhere == "" {
		elsewhere = "the job summary"
	}
	head, foot := markdownHead(p, opts), markdownFoot(p, opts)

	// Everything below shares what the header and footer leave, with room
	// kept for the notes of what was cut.
	const noteRoom = 600
	left := max(limit-len(head)-len(foot)-3*noteRoom, 0)
	errs, warns := spec.CountDiagnostics(p.Diagnostics)
	destructive, _ := splitDestructive(p.Actions)
	warning, wcut := warningBlock(destructive, min(left, limit/3))
	left -= len(warning)
	diags, dcut := diagnosticsTable(p.Diagnostics, errs, warns, min(left, limit/4))
	left -= len(diags)
	details, xcut := detailsSections(classGroups(p.Actions), p.Contracts, left)

	write := func(graph string) string {
		var b strings.Builder
		// part writes a section and, if some of it was cut, its note.
		part := func(text string, cut int, note string) {
			if text != "" {
				b.WriteString("\n" + text)
				if cut > 0 {
					b.WriteString(note)
				}
			}
		}
		b.WriteString(head)
		part(warning, wcut, fmt.Sprintf("> …and %d more destroyed or replaced, listed in %s.\n", wcut, elsewhere))
		if details != "" {
			b.WriteString("\n" + details)
		}
		if xcut > 0 {
			fmt.Fprintf(&b, "\n_%d more resource(s) are not detailed here, to keep this comment under %d characters: %s has the whole plan._\n",
				xcut, limit, elsewhere)
		}
		part(diags, dcut, fmt.Sprintf("\n_%d more diagnostic(s) are in %s._\n", dcut, elsewhere))
		part(graph, 0, "")
		b.WriteString(foot)
		return b.String()
	}
	// The graph is the first thing to go: it is drawn only when
	// everything else is whole and it fits beside it. The note that
	// replaces it fits in the room kept for notes.
	graph := graphSection(p)
	if out := write(graph); graph == "" || (wcut+dcut+xcut == 0 && len(out) <= limit) {
		return out
	}
	return write(fmt.Sprintf("_The graph of the changes is left out to keep this comment under %d characters: `infra graph --plan FILE` draws it from the plan saved with `infra plan --out FILE`._\n", limit))
}

// commentGraphNodes bounds the graph a comment draws: a picture of more
// boxes than this is no longer read at a glance.
const commentGraphNodes = 40

// graphSection is the plan's graph (PlanGraph) in a collapsed section,
// or, for a graph of more than commentGraphNodes nodes, a note saying how
// many it would have and how to draw it; nothing for a plan with no
// actions.
func graphSection(p *engine.Plan) string {
	if len(p.Actions) == 0 {
		return ""
	}
	g := PlanGraph(p)
	if n := len(g.Nodes); n > commentGraphNodes {
		return fmt.Sprintf("_The graph of the changes would have %d nodes, more than the %d a comment draws: `infra graph --plan FILE` draws it from the plan saved with `infra plan --out FILE`._\n", n, commentGraphNodes)
	}
	return fmt.Sprintf("<details><summary>Graph of the changes (%d node(s))</summary>\n\n```mermaid\n%s```\n\n</details>\n", len(g.Nodes), Mermaid(g))
}

// markdownHead is what always fits: the hidden lines, the title, the
// accounts, the errors' warning and the counts.
func markdownHead(p *engine.Plan, opts MarkdownOptions) string {
	marker := opts.Marker
	if marker == "" {
		marker = PlanMarker(p.Fleet)
	}
	var head strings.Builder
	head.WriteString(marker + "\n")
	fmt.Fprintf(&head, "<!-- infra:plan-id %s head=%s -->\n", p.ID, opts.HeadSHA)
	head.WriteString(scopeLine(p))
	title := opts.Title
	if title == "" {
		title = "infra plan for fleet " + code(p.Fleet)
		if p.Destroy {
			title = "infra destroy plan for fleet " + code(p.Fleet)
		}
	}
	head.WriteString("### " + title + "\n\n")
	if line := CacheLine(p, opts.Now); line != "" {
		head.WriteString("> [!NOTE]\n> **" + line + "** " + strings.Replace(cacheNote, "--refresh=false", "`--refresh=false`", 1) + "\n\n")
	}
	if opts.Banner != "" {
		head.WriteString(opts.Banner + "\n\n")
	}
	if len(p.Accounts) > 0 {
		head.WriteString("| cloud | account | regions |\n| --- | --- | --- |\n")
		for _, a := range p.Accounts {
			account := code(a.Account)
			if a.Unverified {
				account = cell(accountText(a))
				if a.Account != "" {
					account = code(a.Account)
				}
				account += " " + accountNote(a)
			}
			fmt.Fprintf(&head, "| %s | %s | %s |\n", cell(string(a.Provider)), account, cell(regionList(a.Regions)))
		}
		head.WriteString("\n")
	}
	if errs, _ := spec.CountDiagnostics(p.Diagnostics); errs > 0 {
		fmt.Fprintf(&head, "**The fleet has %d error(s): apply will refuse until they are fixed.** They are listed below.\n\n", errs)
	}
	for _, line := range scopeLines(p, code) {
		head.WriteString("> " + line + "\n\n")
	}
	head.WriteString("**" + SummaryLine(p) + "**\n")
	if w := wiringSection(p, opts); w != "" {
		head.WriteString("\n" + w)
	}
	return head.String()
}

// markdownFoot names the plan and the commit, and what merging does.
func markdownFoot(p *engine.Plan, opts MarkdownOptions) string {
	foot := fmt.Sprintf("\n---\nPlan `%s`", p.ID)
	if opts.HeadSHA != "" {
		foot += fmt.Sprintf(" for commit `%s`", opts.HeadSHA)
	}
	footer := opts.Footer
	switch {
	case p.FromCache != nil:
		// Whoever shows it, merging never applies a plan from the cache.
		footer = "Made from the cache: no apply accepts this plan."
	case footer == "":
		footer = "Merging applies exactly this plan; if the cloud or the fleet changes first, the apply refuses and posts the new plan."
	}
	return foot + ". " + footer + "\n"
}

// splitDestructive keeps the plan's order within each part.
func splitDestructive(as []engine.Action) (destructive, rest []engine.Action) {
	for _, a := range as {
		if a.Action.Destructive() {
			destructive = append(destructive, a)
		} else {
			rest = append(rest, a)
		}
	}
	return destructive, rest
}

// warningBlock lists every delete and replace, one line each, in a GitHub
// alert so that a reviewer cannot miss them. It returns how many lines did
// not fit in budget.
func warningBlock(as []engine.Action, budget int) (string, int) {
	if len(as) == 0 {
		return "", 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, "> [!WARNING]\n> **This plan destroys or replaces %d resource(s).** Replacing deletes the resource and creates it anew: its data and identity are lost.\n>\n", len(as))
	for i, a := range as {
		line := fmt.Sprintf("> - `%s` **%s** %s", strings.TrimSpace(actionStyle[a.Action].symbol), a.Action, code(a.Address.String())+markdownMember(a.Component, a.Member))
		if d := actionDetail(a); d != "" {
			line += " " + cell(clip(d))
		}
		line += "\n"
		if b.Len()+len(line) > budget {
			return b.String(), len(as) - i
		}
		b.WriteString(line)
	}
	return b.String(), 0
}

// diagnosticsTable is one row per diagnostic, errors first as check sorts
// them.
func diagnosticsTable(ds []spec.Diagnostic, errs, warns, budget int) (string, int) {
	if len(ds) == 0 {
		return "", 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#### Diagnostics: %d error(s), %d warning(s)\n\n| severity | subject | message | resolution | id |\n| --- | --- | --- | --- | --- |\n", errs, warns)
	for i, d := range ds {
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |\n", cell(string(d.Severity)), subjectCell(d), cell(clip(d.Message)), cell(clip(d.Resolution)), code(string(d.ID)))
		if b.Len()+len(row) > budget {
			if i == 0 {
				return "", len(ds)
			}
			return b.String(), len(ds) - i
		}
		b.WriteString(row)
	}
	return b.String(), 0
}

// group is one heading of the details and the actions under it.
type group struct {
	title   string
	actions []engine.Action
}

// classTitles head the classes in the details.
var classTitles = map[engine.ActionClass]string{
	engine.ClassReplace: "Replace", engine.ClassDelete: "Delete", engine.ClassUpdateInPlace: "Update in place",
	engine.ClassCreate: "Create", engine.ClassAdopt: "Adopt", engine.ClassForget: "Forget",
}

// classGroups groups the actions by class, in engine.Classes' order, the
// deletes of cut members apart after the other deletes; within a group
// the actions of one component stand together.
func classGroups(as []engine.Action) []group {
	var gs []group
	for _, c := range engine.Classes {
		var in, cut []engine.Action
		for _, a := range as {
			switch {
			case a.Classified() != c:
			case a.Cut != "":
				cut = append(cut, a)
			default:
				in = append(in, a)
			}
		}
		if len(in) > 0 {
			gs = append(gs, group{classTitles[c], byComponent(in, func(a engine.Action) string { return a.Component })})
		}
		if len(cut) > 0 {
			gs = append(gs, group{CutHeading, byComponent(cut, func(a engine.Action) string { return a.Component })})
		}
	}
	return gs
}

// byComponent moves the entries of each component up to the first of
// them, keeping the order otherwise; entries of no component stay put.
func byComponent[T any](xs []T, component func(T) string) []T {
	out := make([]T, 0, len(xs))
	done := map[string]bool{}
	for _, x := range xs {
		c := component(x)
		if c == "" {
			out = append(out, x)
			continue
		}
		if done[c] {
			continue
		}
		done[c] = true
		for _, y := range xs {
			if component(y) == c {
				out = append(out, y)
			}
		}
	}
	return out
}

// detailsSections gives each group a heading, each action with field
// changes a collapsible section holding its field diff and each other
// action one line, then the contracts one line each. It returns how many
// actions and contracts did not fit in budget.
func detailsSections(gs []group, contracts []engine.Contract, budget int) (string, int) {
	var entries []string
	for _, g := range gs {
		heading := fmt.Sprintf("##### %s (%d)\n\n", g.title, len(g.actions))
		for i, a := range g.actions {
			if i == 0 {
				entries = append(entries, heading+detailsOf(a))
				continue
			}
			entries = append(entries, detailsOf(a))
		}
	}
	for i, c := range contracts {
		line := contractLine(c)
		if i == 0 {
			line = "#### " + ContractsHeading + "\n\n" + line
		}
		entries = append(entries, line)
	}
	if len(entries) == 0 {
		return "", 0
	}
	var b strings.Builder
	const heading = "#### Resources\n\n"
	if budget < len(heading) {
		return "", len(entries)
	}
	if len(gs) > 0 {
		b.WriteString(heading)
	}
	for i, s := range entries {
		if b.Len()+len(s) > budget {
			return b.String(), len(entries) - i
		}
		b.WriteString(s)
	}
	return b.String(), 0
}

// contractLine names the resource, its component, the field and the
// cause. The blank line after the list ends it before what follows.
func contractLine(c engine.Contract) string {
	return fmt.Sprintf("- %s%s %s: %s\n\n", code(c.Address.String()), markdownMember(c.Component, c.Member), code(c.Field), cell(clip(c.Cause)))
}

// markdownMember is " (shop-a.db)" for a component's resource.
func markdownMember(component, member string) string {
	if l := memberLabel(component, member); l != "" {
		return " (" + cell(l) + ")"
	}
	return ""
}

func detailsOf(a engine.Action) string {
	symbol := strings.TrimSpace(actionStyle[a.Action].symbol)
	member := markdownMember(a.Component, a.Member)
	if len(a.Changes) == 0 {
		line := fmt.Sprintf("- %s%s %s", code(symbol+" "+a.Address.String()), member, a.Action)
		if a.Region != "" {
			line += " in " + cell(a.Region)
		}
		// The cause is the reason, but for a cut member's delete.
		if why := cmp.Or(a.Cause, a.Reason); why != "" {
			line += ": " + cell(clip(why))
		}
		// The blank line ends the list item, so that a <details> after it
		// starts an HTML block instead of continuing the item.
		return line + "\n\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary><code>%s %s</code>%s %s", symbol, htmlEscape(a.Address.String()), member, a.Action)
	if a.Region != "" {
		b.WriteString(" in " + htmlEscape(a.Region))
	}
	fmt.Fprintf(&b, ", %d field(s)</summary>\n\n", len(a.Changes))
	if a.Cause != "" {
		b.WriteString("Cause: " + cell(clip(a.Cause)) + "\n\n")
	}
	if a.Reason != "" {
		b.WriteString(cell(clip(a.Reason)) + "\n\n")
	}
	b.WriteString(fieldTable(a))
	// An HTML block runs to the next blank line: without this one, what
	// follows </details> would be swallowed as raw HTML.
	b.WriteString("\n</details>\n\n")
	return b.String()
}

// fieldTable is an action's changes, before and after.
func fieldTable(a engine.Action) string {
	var b strings.Builder
	// A create has no before: the column would only repeat "(unset)".
	if a.Action == engine.Create {
		b.WriteString("| field | value |\n| --- | --- |\n")
	} else {
		b.WriteString("| field | before | after |\n| --- | --- | --- |\n")
	}
	for _, c := range a.Changes {
		after := code(clip(FormatValue(c, false)))
		if c.ForcesReplacement {
			after += " **forces replacement**"
		}
		if a.Action == engine.Create {
			fmt.Fprintf(&b, "| %s | %s |\n", code(c.Field), after)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", code(c.Field), code(clip(FormatValue(c, true))), after)
	}
	return b.String()
}

// clip bounds one value; the job summary and the plan JSON keep it whole.
func clip(s string) string {
	if len(s) <= maxValue {
		return s
	}
	cut := maxValue
	// Never split a UTF-8 sequence.
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// cell makes text safe inside a table cell and outside code: a pipe would
// end the cell, a newline the row, raw HTML could close the comment's own
// <details>, and brackets, backticks and emphasis marks would turn a
// string from a document into a link, code or formatting. Control and
// bidirectional characters are escaped (htmlEscape).
func cell(s string) string { return markdownText.Replace(htmlEscape(s)) }

var markdownText = strings.NewReplacer("|", `\|`, `\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "~", `\~`)

// code renders a value as a code span, inside a table cell or not. GitHub
// still splits cells on a pipe inside a code span unless it is escaped, a
// backtick in the value needs a longer fence, and control and
// bidirectional characters are escaped (a newline among them, which would
// end the row).
func code(s string) string {
	s = strings.ReplaceAll(spec.Printable(s), "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// htmlEscape makes s inert text in HTML, control and bidirectional
// characters escaped too (a newline among them, which would end a row or a
// list item).
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(spec.Printable(s))
}

// regionList names an account's regions, as the engine's account event
// does.
func regionList(rs []string) string {
	if len(rs) == 0 {
		return "(no region)"
	}
	return strings.Join(rs, ", ")
}

// subjectCell is a row's subject, with its component member beside it.
func subjectCell(d spec.Diagnostic) string {
	if d.Member == "" {
		return code(d.Subject)
	}
	return code(d.Subject) + " (" + cell(d.Member) + ")"
}

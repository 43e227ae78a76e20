package render

import (
	"github.com/infra-iac/infra/engine"
	"slices"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/infra-iac/infra/spec"
)

// TextOptions shape the terminal rendering.
type TextOptions struct {
	// Color adds ANSI colours; the CLI sets it only on a TTY without
	// NO_COLOR. Without it the text is identical minus the escapes.
	Color bool
	// Now dates a plan from the cache ("41 minutes ago"); time.Now when
	// zero.
	Now time.Time
}

const (
	ansiReset   = "\x1b[0m"
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiBlue    = "\x1b[34m"
	ansiMagenta = "\x1b[35m"
	ansiDim     = "\x1b[2m"
)

var actionStyle = map[engine.ActionKind]struct{ symbol, color string }{
	engine.Create:  {"  +", ansiGreen},
	engine.Update:  {"  ~", ansiYellow},
	engine.Replace: {"-/+", ansiMagenta},
	engine.Delete:  {"  -", ansiRed},
	engine.Adopt:   {"  =", ansiBlue},
	engine.Forget:  {"  #", ansiBlue},
}

// Text writes the plan as the terminal shows it: the account lines, one
// line per action in dependency order with its class and cause on the
// line under it, the deletes of cut members under their own heading, the
// contracts, then the count line.
func Text(w io.Writer, p *engine.Plan, opts TextOptions) error {
	paint := func(color, s string) string {
		if !opts.Color || color == "" {
			return s
		}
		return color + s + ansiReset
	}
	// Accounts, addresses, values and reasons quote the document and the
	// cloud: escaped, so that only infra's own colour reaches a terminal.
	var b strings.Builder
	if line := CacheLine(p, opts.Now); line != "" {
		b.WriteString(line + "\n" + cacheNote + "\n")
	}
	for _, a := range p.Accounts {
		fmt.Fprintf(&b, "%s: %s in %s %s\n", spec.Printable(string(a.Provider)), spec.Printable(accountText(a)), spec.Printable(regionList(a.Regions)), accountNote(a))
	}
	for _, line := range scopeLines(p, spec.Printable) {
		b.WriteString(line + "\n")
	}
	width := 36
	for _, a := range p.Actions {
		width = max(width, len(spec.Printable(a.Address.String())))
	}
	for _, c := range p.Contracts {
		width = max(width, len(spec.Printable(c.Address.String())))
	}
	cut, rest := splitCut(p.Actions)
	for _, a := range rest {
		b.WriteString(textAction(a, width, paint))
	}
	if len(cut) > 0 {
		b.WriteString(CutHeading + ":\n")
		for _, a := range cut {
			b.WriteString(textAction(a, width, paint))
		}
	}
	if len(p.Contracts) > 0 {
		b.WriteString(ContractsHeading + ":\n")
		for _, c := range p.Contracts {
			line := fmt.Sprintf("  > %-*s contract %s", width, spec.Printable(c.Address.String()), spec.Printable(c.Field+": "+c.Cause))
			if l := memberLabel(c.Component, c.Member); l != "" {
				line += spec.Printable(" [" + l + "]")
			}
			b.WriteString(line + "\n")
		}
	}
	b.WriteString(SummaryLine(p) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// CutHeading and ContractsHeading head, in every rendering, the deletes
// whose cause is a component member's cut and the contracts.
const (
	CutHeading       = "Deleted because a component member was cut"
	ContractsHeading = "Contracts: resolved at run time, no resource changes"
)

// textAction is an action's line, and under it its class, its component
// and its cause.
func textAction(a engine.Action, width int, paint func(color, s string) string) string {
	st := actionStyle[a.Action]
	detail := spec.Printable(joinNonEmpty(actionDetail(a), readsDetail(a), " "))
	line := fmt.Sprintf("%s %-*s %-7s", st.symbol, width, spec.Printable(a.Address.String()), a.Action)
	if detail == "" {
		line = strings.TrimRight(line, " ")
	}
	line = paint(st.color, line)
	if detail != "" {
		line += " " + paint(ansiDim, detail)
	}
	why := "[" + string(a.Classified()) + "]"
	sep := " "
	if l := memberLabel(a.Component, a.Member); l != "" {
		why, sep = why+" "+l, ": "
	}
	// A delete's, an adopt's or a forget's cause is the reason its line
	// shows already.
	if a.Cause != "" && a.Cause != a.Reason {
		why += sep + a.Cause
	}
	return line + "\n" + paint(ansiDim, "      "+spec.Printable(why)) + "\n"
}

// splitCut keeps the plan's order within each part.
func splitCut(as []engine.Action) (cut, rest []engine.Action) {
	for _, a := range as {
		if a.Cut != "" {
			cut = append(cut, a)
		} else {
			rest = append(rest, a)
		}
	}
	return cut, rest
}

// memberLabel is "shop-a.db", what every rendering shows next to the
// address of a component's resource; empty for a resource of none.
func memberLabel(component, member string) string { return joinNonEmpty(component, member, ".") }

// SummaryLine is the count line. It claims that the cloud matches the
// fleet only when nothing needs attention either.
func SummaryLine(p *engine.Plan) string {
	s := p.Summary
	attention := ""
	if n := len(p.Attention); n == 1 {
		attention = " 1 resource needs attention: infra leaves it alone (see the warnings)."
	} else if n > 1 {
		attention = fmt.Sprintf(" %d resources need attention: infra leaves them alone (see the warnings).", n)
	}
	if len(p.Actions) == 0 {
		if attention != "" {
			return "No changes to make, but the cloud does not match the fleet:" + attention
		}
		if p.FromCache != nil {
			return "No changes. The cloud, as last observed, matches the fleet."
		}
		return "No changes. The cloud matches the fleet."
	}
	line := fmt.Sprintf("Plan: %d to create, %d to update, %d to replace, %d to delete", s.Create, s.Update, s.Replace, s.Delete)
	if s.Adopt > 0 {
		line += fmt.Sprintf(", %d to adopt", s.Adopt)
	}
	if s.Forget > 0 {
		line += fmt.Sprintf(", %d to forget", s.Forget)
	}
	line += "."
	if n := len(p.Contracts); n > 0 {
		line += fmt.Sprintf(" %d contract(s): resolved at run time, no resource changes.", n)
	}
	return line + attention
}

// readsDetail names the values from other fleets an action's changes read,
// where the changes do not show them already (a pending value does).
func readsDetail(a engine.Action) string {
	var refs, pending []string
	for _, c := range a.Changes {
		if c.KnownAfterApply && !c.Sensitive && a.Action != engine.Create {
			continue // "(known after apply: pending on …)" names them
		}
		for _, r := range c.From {
			if !slices.Contains(refs, r) {
				refs = append(refs, r)
			}
		}
		for _, r := range c.Pending {
			if !slices.Contains(pending, r) {
				pending = append(pending, r)
			}
		}
	}
	if len(refs) == 0 {
		return ""
	}
	slices.Sort(refs)
	out := "(reads " + strings.Join(refs, ", ")
	if len(pending) > 0 {
		slices.Sort(pending)
		out += "; pending, not published yet: " + strings.Join(pending, ", ")
	}
	return spec.Printable(out + ")")
}

// joinNonEmpty joins a and b with sep, or is the one that is not empty.
func joinNonEmpty(a, b, sep string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + sep + b
}

// actionDetail is what an action's line says after its address, with the
// kind's delete note (spec's DeleteNote) after a delete or a replace, which
// deletes too.
func actionDetail(a engine.Action) string {
	detail := changeDetail(a)
	if info, ok := spec.Lookup(a.Address.Kind); ok && info.DeleteNote != "" && (a.Action == engine.Delete || a.Action == engine.Replace) {
		detail = joinNonEmpty(detail, "["+info.DeleteNote+"]", " ")
	}
	return detail
}

func changeDetail(a engine.Action) string {
	kind := a.Action
	if kind == engine.Adopt && len(a.Changes) > 0 {
		kind = engine.Update // it writes the tags, with the mark: show them
	}
	switch kind {
	case engine.Update, engine.Replace:
		var parts []string
		for _, c := range a.Changes {
			if a.Action == engine.Replace && !c.ForcesReplacement {
				continue
			}
			part := c.Field + ": " + FormatValue(c, true) + " -> " + FormatValue(c, false)
			if c.ForcesReplacement && a.Reason == "" {
				// A replace's reason names what forces it.
				part += " (forces replacement)"
			}
			parts = append(parts, part)
		}
		detail := strings.Join(parts, ", ")
		if a.Reason != "" {
			// Why: a cause ("aws/security-group/web is replaced") or the
			// order a replace runs in.
			detail += " (" + a.Reason + ")"
		}
		return strings.TrimSpace(detail)
	case engine.Delete, engine.Adopt, engine.Forget:
		if a.Cut != "" {
			return "(" + a.Cause + ")"
		}
		if a.Reason != "" {
			return "(" + a.Reason + ")"
		}
	}
	return ""
}

// FormatValue renders one side of a change for people: JSON for values,
// and the words every renderer uses for what must not or cannot be shown.
func FormatValue(c engine.Change, before bool) string {
	if c.Sensitive {
		return spec.Redacted
	}
	v := c.After
	if before {
		v = c.Before
	} else if c.KnownAfterApply && len(c.From) > 0 {
		return "(known after apply: pending on " + spec.Printable(strings.Join(c.From, ", ")) + ")"
	} else if c.KnownAfterApply {
		return "(known after apply)"
	}
	if v == nil {
		return "(unset)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// JSON writes v as indented JSON, as every JSON output of infra is
// written: a string from a document or a cloud that carries a C1 control
// or a bidirectional mark, which encoding/json leaves raw, is escaped
// (spec.PrintableJSON), so JSON on a terminal acts on nothing either.
func JSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(spec.PrintableJSON(b.Bytes()))
	return err
}

// AppliedLine counts what an apply did: the line `infra apply` prints, the
// executor logs and the action posts.
func AppliedLine(applied []engine.Applied) string {
	if len(applied) == 0 {
		return "Nothing to apply: the cloud already matches the fleet."
	}
	done := map[engine.ActionKind]int{}
	failed, notRun := 0, 0
	for _, a := range applied {
		switch a.Status {
		case engine.StatusDone:
			done[a.Action]++
		case engine.StatusFailed:
			failed++
		default:
			notRun++
		}
	}
	line := fmt.Sprintf("Applied: %d created, %d updated, %d replaced, %d deleted",
		done[engine.Create], done[engine.Update], done[engine.Replace], done[engine.Delete])
	if n := done[engine.Adopt]; n > 0 {
		line += fmt.Sprintf(", %d adopted", n)
	}
	if n := done[engine.Forget]; n > 0 {
		line += fmt.Sprintf(", %d forgotten", n)
	}
	if failed > 0 {
		line += fmt.Sprintf(", %d failed", failed)
	}
	if notRun > 0 {
		line += fmt.Sprintf(", %d not run", notRun)
	}
	return line + "."
}

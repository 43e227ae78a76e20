package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// TextOptions shape the terminal rendering.
type TextOptions struct {
	// Color adds ANSI colours; the CLI sets it only on a TTY without
	// NO_COLOR. Without it the text is identical minus the escapes.
	Color bool
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

var actionStyle = map[ActionKind]struct{ symbol, color string }{
	Create:  {"  +", ansiGreen},
	Update:  {"  ~", ansiYellow},
	Replace: {"-/+", ansiMagenta},
	Delete:  {"  -", ansiRed},
	Adopt:   {"  =", ansiBlue},
	Forget:  {"  #", ansiBlue},
}

// RenderText writes the plan as the terminal shows it: the account lines,
// one line per action in dependency order, then the count line.
func RenderText(w io.Writer, p *Plan, opts TextOptions) error {
	paint := func(color, s string) string {
		if !opts.Color || color == "" {
			return s
		}
		return color + s + ansiReset
	}
	// Accounts, addresses, values and reasons quote the document and the
	// cloud: escaped, so that only infra's own colour reaches a terminal.
	var b strings.Builder
	for _, a := range p.Accounts {
		fmt.Fprintf(&b, "%s: %s in %s ok\n", spec.Printable(string(a.Provider)), spec.Printable(a.Account), spec.Printable(joinRegions(a.Regions)))
	}
	width := 36
	for _, a := range p.Actions {
		if n := len(spec.Printable(a.Address.String())); n > width {
			width = n
		}
	}
	for _, a := range p.Actions {
		st := actionStyle[a.Action]
		detail := spec.Printable(actionDetail(a))
		line := fmt.Sprintf("%s %-*s %-7s", st.symbol, width, spec.Printable(a.Address.String()), a.Action)
		if detail == "" {
			line = strings.TrimRight(line, " ")
		}
		line = paint(st.color, line)
		if detail != "" {
			line += " " + paint(ansiDim, detail)
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(SummaryLine(p) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// SummaryLine is the count line. It claims that the cloud matches the
// fleet only when nothing needs attention either.
func SummaryLine(p *Plan) string {
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
		return "No changes. The cloud matches the fleet."
	}
	line := fmt.Sprintf("Plan: %d to create, %d to update, %d to replace, %d to delete", s.Create, s.Update, s.Replace, s.Delete)
	if s.Adopt > 0 {
		line += fmt.Sprintf(", %d to adopt", s.Adopt)
	}
	if s.Forget > 0 {
		line += fmt.Sprintf(", %d to forget", s.Forget)
	}
	return line + "." + attention
}

func actionDetail(a Action) string {
	switch a.Action {
	case Update, Replace:
		var parts []string
		for _, c := range a.Changes {
			if a.Action == Replace && !c.ForcesReplacement {
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
	case Delete, Adopt, Forget:
		if a.Reason != "" {
			return "(" + a.Reason + ")"
		}
	}
	return ""
}

// FormatValue renders one side of a change for people: JSON for values,
// and the words every renderer uses for what must not or cannot be shown.
func FormatValue(c Change, before bool) string {
	if c.Sensitive {
		return spec.Redacted
	}
	v := c.After
	if before {
		v = c.Before
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

// RenderJSON writes the plan JSON.
func RenderJSON(w io.Writer, p *Plan) error { return WriteJSON(w, p) }

// WriteJSON writes v as indented JSON, as every JSON output of infra is
// written: a string from a document or a cloud that carries a C1 control
// or a bidirectional mark, which encoding/json leaves raw, is escaped
// (spec.PrintableJSON), so JSON on a terminal acts on nothing either.
func WriteJSON(w io.Writer, v any) error {
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

// DecodePlan reads plan JSON written by RenderJSON.
func DecodePlan(data []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("not a plan file infra wrote: %w", err)
	}
	if p.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("plan format version %d, but this build understands %d; plan again with this build", p.FormatVersion, FormatVersion)
	}
	if !strings.HasPrefix(p.ID, "sha256:") {
		return nil, fmt.Errorf("not a plan file infra wrote: no id")
	}
	return &p, nil
}

// AppliedLine counts what an apply did: the line `infra apply` prints, the
// executor logs and the action posts.
func AppliedLine(applied []Applied) string {
	if len(applied) == 0 {
		return "Nothing to apply: the cloud already matches the fleet."
	}
	done := map[ActionKind]int{}
	failed, notRun := 0, 0
	for _, a := range applied {
		switch a.Status {
		case StatusDone:
			done[a.Action]++
		case StatusFailed:
			failed++
		default:
			notRun++
		}
	}
	line := fmt.Sprintf("Applied: %d created, %d updated, %d replaced, %d deleted",
		done[Create], done[Update], done[Replace], done[Delete])
	if n := done[Adopt]; n > 0 {
		line += fmt.Sprintf(", %d adopted", n)
	}
	if n := done[Forget]; n > 0 {
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

package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// DriftText writes infra drift's text: the accounts, each resource that
// changed out of band with its fields (as the last apply saw them, and
// now), the resources with no baseline, and a closing line.
func DriftText(w io.Writer, d *engine.Drift) error {
	var b strings.Builder
	for _, a := range d.Accounts {
		fmt.Fprintf(&b, "%s: %s in %s ok\n", spec.Printable(string(a.Provider)), spec.Printable(a.Account), spec.Printable(regionList(a.Regions)))
	}
	for _, x := range d.Resources {
		b.WriteString(driftHead(x) + "\n")
		for _, line := range driftLines(x) {
			b.WriteString("      " + line + "\n")
		}
	}
	if len(d.Unknown) > 0 {
		names := make([]string, len(d.Unknown))
		for i, a := range d.Unknown {
			names[i] = spec.Printable(a.String())
		}
		fmt.Fprintf(&b, "Not compared, no record of the last apply (infra refresh records one): %s\n", strings.Join(names, ", "))
	}
	b.WriteString(DriftSummary(d) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// DriftSummary is the closing line of a drift report.
func DriftSummary(d *engine.Drift) string {
	since := ""
	if !d.Since.IsZero() {
		since = " since " + d.Since.UTC().Format("2006-01-02 15:04 UTC")
	}
	if !d.HasDrift() {
		return fmt.Sprintf("No drift: the %d managed resource(s) compared are as the last apply left them%s.", d.Checked, since)
	}
	return fmt.Sprintf("Drift: %d of %d managed resource(s) changed out of band%s. infra plan shows what an apply would do about it.", len(d.Resources), d.Checked, since)
}

// driftHead is a drifted resource's line: a symbol, its address and its
// member.
func driftHead(x engine.Drifted) string {
	sym := "~"
	if x.Gone {
		sym = "-"
	}
	head := "  " + sym + " " + spec.Printable(x.Address.String())
	if x.Member != "" {
		head += " (" + spec.Printable(x.Member) + ")"
	}
	return head
}

// driftLines says what changed: gone, the ownership tag, each field.
func driftLines(x engine.Drifted) []string {
	var out []string
	if x.Gone {
		out = append(out, "deleted out of band (in "+spec.Printable(x.Region)+")")
	}
	if len(x.Owner) == 2 {
		out = append(out, fmt.Sprintf("ownership tag %s: %s -> %s", spec.OwnershipTagKey, tagValue(x.Owner[0]), tagValue(x.Owner[1])))
	}
	for _, c := range x.Changes {
		out = append(out, spec.Printable(c.Field)+": "+spec.Printable(FormatValue(c, true))+" -> "+spec.Printable(FormatValue(c, false)))
	}
	return out
}

func tagValue(o string) string {
	if o == "" {
		return "(none)"
	}
	return spec.Printable(o)
}

// DriftMarkdown is a drift report for an issue: a heading, the closing
// line, and a table of what changed.
func DriftMarkdown(d *engine.Drift) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### infra drift: fleet %s\n\n%s\n\n", code(d.Fleet), cell(DriftSummary(d)))
	if d.HasDrift() {
		b.WriteString("| resource | what changed | at the last apply | now |\n|---|---|---|---|\n")
		for _, x := range d.Resources {
			res := code(x.Address.String())
			if x.Member != "" {
				res += " (" + cell(x.Member) + ")"
			}
			if x.Gone {
				fmt.Fprintf(&b, "| %s | deleted | exists in %s | gone |\n", res, code(x.Region))
			}
			if len(x.Owner) == 2 {
				fmt.Fprintf(&b, "| %s | ownership tag | %s | %s |\n", res, code(x.Owner[0]), code(x.Owner[1]))
			}
			for _, c := range x.Changes {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", res, code(c.Field), code(clip(FormatValue(c, true))), code(clip(FormatValue(c, false))))
			}
		}
		b.WriteString("\n")
	}
	if len(d.Unknown) > 0 {
		fmt.Fprintf(&b, "Not compared, no record of the last apply: %d resource(s).\n", len(d.Unknown))
	}
	return b.String()
}

package render

import (
	"github.com/infra-iac/infra/sweep"

	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// SweepCleanLine is the last line of a sweep that found nothing to do.
const SweepCleanLine = "nothing to sweep — the account is clean"

// SweepText writes the report as people read it: the clouds, the table of
// candidates (address, region, age, owner), the count line, what was kept
// and why, what is left with the provider's words, and what could not be
// listed. The CLI, the executor and the workflow's job summary all print
// this, so they never disagree.
func SweepText(w io.Writer, r *sweep.Report) error {
	var b bytes.Buffer
	for _, c := range r.Clouds {
		if c.Skipped != "" {
			fmt.Fprintf(&b, "%s: not swept: %s\n", c.Provider, c.Skipped)
			continue
		}
		fmt.Fprintf(&b, "%s: %s in %s\n", c.Provider, c.Account, strings.Join(c.Regions, ", "))
	}
	floor := "no age floor"
	if r.OlderThan != "0" {
		floor = "older than " + r.OlderThan
	}
	fmt.Fprintf(&b, "prefix %s, %s\n\n", r.Prefix, floor)

	if len(r.Candidates) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		head := "ADDRESS\tREGION\tAGE\tOWNER"
		if r.Delete {
			head += "\tRESULT"
		}
		fmt.Fprintln(tw, head)
		for _, e := range r.Candidates {
			line := fmt.Sprintf("%s\t%s\t%s\t%s", e.Address, e.Region, ageText(r, e), ownerText(e))
			if r.Delete {
				line += "\t" + string(e.Status)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
		b.WriteString("\n")
	}

	if len(r.Kept) > 0 {
		fmt.Fprintf(&b, "kept %d:\n", len(r.Kept))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, e := range r.Kept {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Address, e.Region, e.Why)
		}
		tw.Flush()
		b.WriteString("\n")
	}

	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(&b, "could not list or read %d:\n", len(r.Errors))
		for _, e := range r.Errors {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	if len(r.Survivors) > 0 {
		fmt.Fprintf(&b, "left %d:\n", len(r.Survivors))
		for _, e := range r.Survivors {
			fmt.Fprintf(&b, "  %s (%s): %s\n", e.Address, e.Region, e.Error)
		}
	}
	b.WriteString(countLine(r) + "\n")
	_, err := w.Write(b.Bytes())
	return err
}

// countLine is the report's last line: what a script or a job summary
// quotes.
func countLine(r *sweep.Report) string {
	n := len(r.Candidates)
	switch {
	case n == 0 && len(r.Errors) == 0:
		return SweepCleanLine
	case n == 0:
		return fmt.Sprintf("nothing found to sweep, but the sweep is incomplete: %d listing(s) or read(s) failed", len(r.Errors))
	case !r.Delete:
		line := fmt.Sprintf("would delete %d", n)
		if len(r.Errors) > 0 {
			line += fmt.Sprintf("; the sweep is incomplete: %d listing(s) or read(s) failed", len(r.Errors))
		}
		return line
	}
	line := fmt.Sprintf("deleted %d of %d in %d round(s)", r.Deleted, n, r.Rounds)
	if k := len(r.Survivors); k > 0 {
		line += fmt.Sprintf("; %d left", k)
	}
	if len(r.Errors) > 0 {
		line += fmt.Sprintf("; the sweep is incomplete: %d listing(s) or read(s) failed", len(r.Errors))
	}
	return line
}

func ageText(r *sweep.Report, e sweep.Entry) string {
	if d, ok := e.Age(r.At); ok {
		return sweep.FormatAge(d)
	}
	return "unknown"
}

func ownerText(e sweep.Entry) string {
	switch {
	case e.OwnerUnknown:
		return "unreadable"
	case e.Owner == "":
		return "-"
	}
	return e.Owner
}

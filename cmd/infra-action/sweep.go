package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
)

// sweep runs `infra sweep` (a dry run unless sweep-delete) and puts its
// table in the job summary.
func (a *action) sweep(ctx context.Context) error {
	if a.in.sweepPrefix == "" {
		return errors.New("command: sweep needs the input sweep-prefix (for example ci-tests-): a sweep without a prefix would be a nuke")
	}
	verb := "dry run"
	if a.in.sweepDelete {
		verb = "deletion"
	}
	// A fleet named explicitly decides the regions (its placement) and
	// the exclusions; without one, each cloud's configured region is swept.
	var f *fleetDoc
	if a.in.fleets[0] != "" {
		var err error
		if f, err = a.synth(ctx, a.in.fleets[0]); err != nil {
			return err
		}
	}
	out, err := a.runner.Sweep(ctx, f, sweepOptions{prefix: a.in.sweepPrefix, olderThan: a.in.sweepAge, delete: a.in.sweepDelete})
	fmt.Fprint(a.log, out)
	md := fmt.Sprintf("### infra sweep %s: %s\n\n", render.MarkdownCode(a.in.sweepPrefix), verb)
	if out != "" {
		md += "```\n" + clipSummary(out) + "\n```\n"
	}
	if err != nil {
		md += "\n**" + render.MarkdownText(err.Error()) + "**\n"
	}
	if serr := a.summary(md); serr != nil {
		return serr
	}
	if oerr := a.setOutput("summary", lastLine(out)); oerr != nil {
		return oerr
	}
	return err
}

// discover rebuilds each fleet's ledger from the ownership tags, read-only,
// and puts the differences in the job summary.
func (a *action) discover(ctx context.Context) error {
	var lines []string
	fleets, failures := a.synthAll(ctx)
	for _, f := range fleets {
		dx, err := a.runner.Discover(ctx, f)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		md, line := renderDiscovery(f.Name, dx)
		fmt.Fprintln(a.log, line)
		lines = append(lines, line)
		if err := a.summary(md); err != nil {
			return err
		}
	}
	if err := a.setOutput("summary", strings.Join(lines, "\n")); err != nil {
		return err
	}
	return errors.Join(failures...)
}

// renderDiscovery is the discovery as a table, and its count line.
func renderDiscovery(fleet string, dx *operations.Discovery) (string, string) {
	var b strings.Builder
	fmt.Fprintf(&b, "### infra discover for fleet %s\n\n", render.MarkdownCode(fleet))
	managed := 0
	if dx.Ledger != nil {
		managed = len(dx.Ledger.Rows)
	}
	line := fmt.Sprintf("Discovered for fleet %s: %d managed; %d added, %d removed, %d moved; %d owned by other fleets.",
		fleet, managed, len(dx.Added), len(dx.Removed), len(dx.Moved), len(dx.Foreign))
	b.WriteString("**" + render.MarkdownText(line) + "**\n\n")
	rows := 0
	var t strings.Builder
	for _, r := range dx.Added {
		fmt.Fprintf(&t, "| + | %s | %s | tagged for this fleet, not in the ledger |\n", render.MarkdownCode(r.Address().String()), render.TableText(r.Region))
		rows++
	}
	for _, r := range dx.Removed {
		fmt.Fprintf(&t, "| - | %s | %s | in the ledger, not found carrying this fleet's tag |\n", render.MarkdownCode(r.Address().String()), render.TableText(r.Region))
		rows++
	}
	for _, m := range dx.Moved {
		fmt.Fprintf(&t, "| ~ | %s | %s | moved from %s |\n", render.MarkdownCode(m.Row.Address().String()), render.TableText(m.Row.Region), render.TableText(m.From))
		rows++
	}
	for _, f := range dx.Foreign {
		fmt.Fprintf(&t, "| ! | %s | %s | owned by fleet %s: left alone |\n", render.MarkdownCode(f.Address.String()), render.TableText(f.Region), render.TableText(f.Owner))
		rows++
	}
	if rows > 0 {
		b.WriteString("| | resource | region | why |\n| --- | --- | --- | --- |\n")
		b.WriteString(clipSummary(t.String()))
		b.WriteString("\nThe ledger was not changed: run `infra discover --write` to save it.\n")
	}
	return b.String(), line
}

// clipSummary keeps a text under what one step may write to the summary.
func clipSummary(s string) string {
	if len(s) <= summaryLimit {
		return s
	}
	cut := summaryLimit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "\n… (cut: the step log has it all)"
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

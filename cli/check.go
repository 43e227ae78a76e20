package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

type checkOptions struct {
	json bool
}

func newCheck(g *globals) *cobra.Command {
	opts := &checkOptions{}
	c := &cobra.Command{
		Use:   "check",
		Short: "Check the fleet offline: every problem at once, no credentials needed",
		RunE: func(c *cobra.Command, args []string) error {
			return runCheck(c, g, opts)
		},
	}
	c.Flags().BoolVar(&opts.json, "json", false, "print the diagnostics as JSON")
	return c
}

func runCheck(c *cobra.Command, g *globals, opts *checkOptions) error {
	doc, err := g.loadDocument(c.Context())
	if err != nil {
		return err
	}
	// The document's rows, and a warning for each fromEnv variable this
	// environment lacks (a create will need it).
	diags := operations.Check(doc, g.f.Getenv)
	out := g.io().Out
	if opts.json {
		if diags == nil {
			diags = []spec.Diagnostic{}
		}
		if err := render.JSON(out, struct {
			Diagnostics []spec.Diagnostic          `json:"diagnostics"`
			Components  []render.ComponentInstance `json:"components,omitempty"`
		}{diags, render.Components(doc)}); err != nil {
			return err
		}
	} else {
		printDiagnostics(out, diags, g.io().ColorEnabled())
		for _, c := range render.Components(doc) {
			fmt.Fprintln(out, render.ComponentLine(c))
		}
		errs, warns := spec.CountDiagnostics(diags)
		if errs+warns == 0 {
			fmt.Fprintf(out, "ok: fleet %s, %d resource(s), no problems\n", doc.Fleet, len(doc.Resources))
		} else {
			fmt.Fprintf(out, "%d error(s), %d warning(s)\n", errs, warns)
		}
	}
	if spec.HasErrors(diags) {
		return exitError{code: ExitError}
	}
	return nil
}

// printDiagnostics writes one row per diagnostic: severity, subject,
// message, the resolution that says how to fix it, and the rule's id in
// brackets. What the row quotes from the document is escaped; color is for
// the stream w is (stdout or stderr's own decision).
func printDiagnostics(w io.Writer, ds []spec.Diagnostic, color bool) {
	for _, d := range ds {
		sev := string(d.Severity)
		if color {
			if d.Severity == spec.Error {
				sev = ansiRed + sev + ansiReset
			} else {
				sev = ansiYellow + sev + ansiReset
			}
		}
		line := fmt.Sprintf("%s: %s: %s", sev, d.Where(), spec.Printable(d.Message))
		if d.Resolution != "" {
			line += " (hint: " + spec.Printable(d.Resolution) + ")"
		}
		fmt.Fprintln(w, line+" ["+spec.Printable(string(d.ID))+"]")
	}
}

package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
)

type driftOptions struct {
	json             bool
	markdown         string
	detailedExitcode bool
}

func newDrift(g *globals) *cobra.Command {
	opts := &driftOptions{}
	c := &cobra.Command{
		Use:   "drift",
		Short: "Report what changed in the cloud out of band since the last apply; changes nothing",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runDrift(c, g, opts) },
	}
	f := c.Flags()
	f.BoolVar(&opts.json, "json", false, "print the drift report as JSON")
	f.StringVar(&opts.markdown, "markdown", "", "also write the report as markdown to FILE, for an issue")
	f.BoolVar(&opts.detailedExitcode, "detailed-exitcode", false, "exit 0 with no drift, 2 with drift, 1 on error")
	return c
}

func runDrift(c *cobra.Command, g *globals, opts *driftOptions) error {
	ops, doc, err := g.operations(c.Context())
	if err != nil {
		return err
	}
	d, err := ops.Drift(c.Context(), operations.DriftRequest{Document: doc})
	if err != nil {
		return g.remedy(err)
	}
	out := g.io().Out
	if opts.json {
		err = render.JSON(out, d)
	} else {
		err = render.DriftText(out, d)
	}
	if err != nil {
		return err
	}
	if opts.markdown != "" {
		if err := os.WriteFile(opts.markdown, []byte(render.DriftMarkdown(d)), 0o644); err != nil {
			return fmt.Errorf("--markdown: %w", err)
		}
	}
	if opts.detailedExitcode && d.HasDrift() {
		return exitError{code: ExitChanges}
	}
	return nil
}

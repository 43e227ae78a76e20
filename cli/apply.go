package cli

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

type applyOptions struct {
	destroy  bool
	yes      bool
	force    bool
	planFile string
}

// newApply makes apply, or destroy: the same pipeline against a target that
// declares nothing, not a second mechanism.
func newApply(g *globals, destroy bool) *cobra.Command {
	opts := &applyOptions{destroy: destroy}
	c := &cobra.Command{
		Use:   "apply",
		Short: "Make the cloud match the fleet",
		RunE: func(c *cobra.Command, args []string) error {
			return runApply(c, g, opts)
		},
	}
	if destroy {
		c.Use, c.Short = "destroy", "Delete everything the fleet manages"
	}
	f := c.Flags()
	f.BoolVar(&opts.yes, "yes", false, "apply without asking")
	f.BoolVar(&opts.force, "force", false, "override the brake that refuses to destroy most of the fleet")
	if !destroy {
		f.StringVar(&opts.planFile, "plan", "", "apply only if the fresh plan is exactly this saved plan (from plan --out)")
	}
	return c
}

func runApply(c *cobra.Command, g *globals, opts *applyOptions) error {
	verb := "apply"
	if opts.destroy {
		verb = "destroy"
	}
	var reviewed *engine.Plan
	if opts.planFile != "" {
		data, err := os.ReadFile(opts.planFile)
		if err != nil {
			return fmt.Errorf("--plan: %w", err)
		}
		if reviewed, err = engine.DecodePlan(data); err != nil {
			return fmt.Errorf("--plan %s: %w", opts.planFile, err)
		}
		// A reviewed `plan --destroy` is applied as the teardown it is.
		if reviewed.Destroy {
			opts.destroy, verb = true, "destroy"
		}
	}
	s, err := g.open(c.Context(), verb, true)
	if err != nil {
		return err
	}
	defer s.close()
	p, err := s.engine.Plan(c.Context(), s.model, s.diags, s.ledger, engine.PlanOptions{Destroy: opts.destroy})
	if err != nil {
		return err
	}
	if err := s.render(p, false); err != nil {
		return err
	}
	if spec.HasErrors(p.Diagnostics) {
		return fmt.Errorf("refusing to %s: the fleet has errors; fix them (infra check lists them all)", verb)
	}
	if reviewed != nil && reviewed.ID != p.ID {
		return fmt.Errorf("refusing to apply: the saved plan %s is %s, but the fleet and the cloud now give %s; something changed since it was reviewed. Plan again",
			opts.planFile, reviewed.ID, p.ID)
	}
	if !p.HasChanges() {
		return nil
	}
	if reviewed == nil && !opts.yes {
		io := g.io()
		if !io.CanPrompt() {
			if opts.destroy {
				// destroy has no --plan: a reviewed teardown is a saved
				// plan --destroy, which apply --plan carries out.
				return fmt.Errorf("refusing to destroy without a terminal to ask: pass --yes, or review the teardown with infra plan --destroy --out FILE and apply that with infra apply --plan FILE")
			}
			return fmt.Errorf("refusing to apply without a terminal to ask: pass --yes, or --plan FILE with a reviewed plan")
		}
		fmt.Fprintf(io.ErrOut, "Do you want to %s these changes to fleet %s? Only 'yes' is accepted: ", verb, p.Fleet)
		answer, _ := bufio.NewReader(io.In).ReadString('\n')
		if strings.TrimSpace(answer) != "yes" {
			return exitError{code: ExitError, err: fmt.Errorf("%s cancelled", verb)}
		}
	}
	report, err := s.engine.Apply(c.Context(), p, engine.ApplyOptions{Store: s.store, Force: opts.force})
	if report != nil {
		fmt.Fprintln(g.io().Out, resultLine(report))
		if err == nil && report.Incomplete {
			// Interrupted: what finished is recorded; the rest never
			// started. Success would be a lie.
			err = fmt.Errorf("%s stopped before finishing (interrupted); everything done so far is recorded: run %s again to finish", verb, verb)
		}
	}
	return err
}

// resultLine counts what was done.
func resultLine(r *engine.Report) string { return engine.AppliedLine(r.Applied) }

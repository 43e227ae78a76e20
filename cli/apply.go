package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
)

type applyOptions struct {
	destroy  bool
	yes      bool
	force    bool
	planFile string
	refresh  bool
	json     bool
	scope    scopeFlags
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
	// Only to refuse --refresh=false in words: apply always reads the cloud.
	f.BoolVar(&opts.refresh, "refresh", true, "always true: "+c.Name()+" reads the cloud, whatever a plan was made from")
	f.BoolVar(&opts.json, "json", false, "print the plan JSON with the outcome of each action under \"apply\", and nothing else on stdout")
	if !destroy {
		f.StringVar(&opts.planFile, "plan", "", "apply only if the fresh plan is exactly this saved plan (from plan --out), with its targets and forced replaces")
		opts.scope.add(f)
	}
	return c
}

func runApply(c *cobra.Command, g *globals, opts *applyOptions) error {
	req := operations.ApplyRequest{Destroy: opts.destroy, Force: opts.force}
	if !opts.refresh {
		return usageError{fmt.Errorf("--refresh=false: %s always refreshes, reading the cloud under the lock; only plan can be made from the cache", c.Name())}
	}
	var err error
	if req.Scope, err = opts.scope.scope(); err != nil {
		return err
	}
	if opts.planFile != "" {
		if err := expectReviewed(&req, opts.planFile); err != nil {
			return err
		}
	}
	verb := "apply"
	if req.Destroy {
		verb = "destroy"
	}
	ops, doc, err := g.operations(c.Context())
	if err != nil {
		return err
	}
	req.Document = doc
	req.Planned = func(p *operations.Plan) error {
		if opts.json {
			// The plan goes out once, with the outcome; its rows are
			// said on stderr, as warnings are.
			g.io().errDiagnostics(p.Diagnostics)
			return nil
		}
		return g.render(p, false)
	}
	// refused is set when the run stops before anything started because
	// the plan was not accepted.
	refused := false
	if req.Expect == "" {
		req.Confirm = func(p *operations.Plan) error {
			err := g.confirm(verb, p, opts.yes, opts.json)
			refused = err != nil
			return err
		}
	}
	res, err := ops.Apply(c.Context(), req)
	g.progress(g.io()).finish()
	var changed *operations.PlanChangedError
	var diags *operations.DiagnosticsError
	var brake *operations.BrakeError
	var pending *operations.PendingError
	refused = refused || errors.As(err, &changed) || errors.As(err, &diags) || errors.As(err, &brake) || errors.As(err, &pending)
	switch {
	case errors.As(err, &diags):
		// Printed with the plan.
		err = fmt.Errorf("refusing to %s: %w", verb, hasErrors(diags))
	case errors.As(err, &changed):
		err = fmt.Errorf("refusing to apply: the saved plan %s is %s, but the fleet and the cloud now give %s; something changed since it was reviewed. Plan again",
			opts.planFile, changed.Reviewed, changed.Fresh)
	default:
		err = g.remedy(sayApplied(g, res, err, verb, opts.json))
	}
	if opts.json && res != nil && res.Plan != nil {
		out := render.AppliedPlan{Plan: res.Plan, Apply: render.NewApplyOutcome(verb, res.Plan, res.Report, errorText(err), refused)}
		if jerr := render.JSON(g.io().Out, out); jerr != nil && err == nil {
			err = jerr
		}
	}
	return err
}

// sayApplied prints the count of what the apply did; an interrupted apply
// is an error.
func sayApplied(g *globals, res *operations.ApplyResult, err error, verb string, json bool) error {
	var report *operations.Report
	if res != nil {
		report = res.Report
	}
	if report == nil {
		if err == nil && json {
			fmt.Fprintln(g.io().ErrOut, render.AppliedLine(nil))
		}
		return err
	}
	count := render.AppliedLine(report.Applied)
	if json {
		// Data is the JSON alone; the count is for the log.
		fmt.Fprintln(g.io().ErrOut, count)
	} else {
		fmt.Fprintln(g.io().Out, count)
	}
	if err == nil && report.Incomplete {
		// Interrupted: what finished is recorded; the rest never started.
		// Success would be a lie.
		err = fmt.Errorf("%s stopped before finishing (interrupted); everything done so far is recorded: run %s again to finish", verb, verb)
	}
	return err
}

// expectReviewed makes req apply the saved plan in file, and nothing else.
func expectReviewed(req *operations.ApplyRequest, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("--plan: %w", err)
	}
	reviewed, err := operations.DecodePlan(data)
	if err != nil {
		return fmt.Errorf("--plan %s: %w", file, err)
	}
	if reviewed.FromCache != nil {
		return fmt.Errorf("refusing to apply --plan %s: %w", file, operations.ErrFromCache)
	}
	// A reviewed `plan --destroy` is applied as the teardown it is, and
	// a partial plan with the scope it was made with.
	req.Expect, req.Destroy = reviewed.ID, req.Destroy || reviewed.Destroy
	req.Scope, err = reviewedScope(file, req.Scope, reviewed)
	return err
}

// errorText is err as its line on stderr says it: a coded exit's own
// error rather than its code.
func errorText(err error) error {
	var code exitError
	if errors.As(err, &code) && code.err != nil {
		return code.err
	}
	return err
}

// confirm asks whoever is at the terminal to accept a fresh plan, unless
// --yes already has.
// With --json the plan asked about is shown on stderr, stdout being
// the JSON's.
func (g *globals) confirm(verb string, p *operations.Plan, yes, asJSON bool) error {
	if yes {
		return nil
	}
	io := g.io()
	if asJSON && io.CanPrompt() {
		if err := render.Text(io.errRaw, p, render.TextOptions{Color: io.ErrColorEnabled()}); err != nil {
			return err
		}
	}
	if !io.CanPrompt() {
		if verb == "destroy" {
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
	return nil
}

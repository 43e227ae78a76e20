package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

type planOptions struct {
	json             bool
	out              string
	markdown         string
	destroy          bool
	detailedExitcode bool
	refresh          bool
	upstream         []string
	scope            scopeFlags
}

func newPlan(g *globals) *cobra.Command {
	opts := &planOptions{}
	c := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would do (reads the cloud, changes nothing)",
		RunE: func(c *cobra.Command, args []string) error {
			return runPlan(c, g, opts)
		},
	}
	f := c.Flags()
	f.BoolVar(&opts.json, "json", false, "print the plan as JSON")
	f.StringVar(&opts.out, "out", "", "also save the plan JSON to FILE, for apply --plan FILE")
	f.StringVar(&opts.markdown, "markdown", "", "also write the plan as markdown to FILE, as a pull-request comment shows it (for an issue, a job summary)")
	f.BoolVar(&opts.destroy, "destroy", false, "plan the teardown of everything the fleet manages")
	f.BoolVar(&opts.detailedExitcode, "detailed-exitcode", false, "exit 0 with no changes, 2 with changes, 1 on error")
	f.BoolVar(&opts.refresh, "refresh", true, "read the cloud; --refresh=false plans from the cache (what the last apply or refresh saw) with no call and no credentials, for review only: no apply accepts it")
	opts.scope.add(f)
	f.StringSliceVar(&opts.upstream, "upstream", nil, "plan beside a provider's plan (saved with plan --out FILE): read what its apply will publish instead of its record (repeatable)")
	return c
}

// upstream reads the providers' saved plans: what each will publish.
func upstream(files []string) (map[string]*spec.Published, error) {
	if len(files) == 0 {
		return nil, nil
	}
	out := map[string]*spec.Published{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, usageError{fmt.Errorf("--upstream: %w", err)}
		}
		p, err := operations.DecodePlan(data)
		if err != nil {
			return nil, usageError{fmt.Errorf("--upstream %s: %w", file, err)}
		}
		if p.Publishes == nil {
			return nil, usageError{fmt.Errorf("--upstream %s: the plan of fleet %s publishes nothing (it provides no capability, or its plan has errors)", file, spec.Printable(p.Fleet))}
		}
		out[p.Fleet] = p.Publishes
	}
	return out, nil
}

func runPlan(c *cobra.Command, g *globals, opts *planOptions) error {
	ops, doc, err := g.operations(c.Context())
	if err != nil {
		return err
	}
	up, err := upstream(opts.upstream)
	if err != nil {
		return err
	}
	scope, err := opts.scope.scope()
	if err != nil {
		return err
	}
	p, err := ops.Plan(c.Context(), operations.PlanRequest{Document: doc, Destroy: opts.destroy, Upstream: up, Scope: scope,
		NoRefresh: !opts.refresh})
	var diags *operations.DiagnosticsError
	if err != nil && !errors.As(err, &diags) {
		return g.remedy(err)
	}
	if err := g.render(p, opts.json); err != nil {
		return err
	}
	if opts.out != "" {
		var buf bytes.Buffer
		if err := render.JSON(&buf, p); err != nil {
			return err
		}
		if err := os.WriteFile(opts.out, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if opts.markdown != "" {
		md := render.Markdown(p, render.MarkdownOptions{
			Elsewhere: "the text plan (`infra plan`)",
			// Not a pull request's plan: nothing applies it on merge.
			Footer: "Made by `infra plan`, which changes nothing.",
		})
		if err := os.WriteFile(opts.markdown, []byte(md), 0o644); err != nil {
			return fmt.Errorf("--markdown: %w", err)
		}
	}
	if diags != nil {
		return exitError{code: ExitError, err: hasErrors(diags)}
	}
	if opts.detailedExitcode && p.HasChanges() {
		return exitError{code: ExitChanges}
	}
	return nil
}

// render writes the plan to stdout (text or JSON) and its diagnostics to
// stderr.
func (g *globals) render(p *operations.Plan, asJSON bool) error {
	io := g.io()
	if asJSON {
		return render.JSON(io.Out, p)
	}
	io.errDiagnostics(p.Diagnostics)
	if spec.HasErrors(p.Diagnostics) {
		// No cloud was read: "No changes" would be a claim about a cloud
		// nobody looked at.
		return nil
	}
	return render.Text(io.Out, p, render.TextOptions{Color: io.ColorEnabled()})
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

type graphOptions struct {
	format   string
	planFile string
	fleets   bool
}

func newGraph(g *globals) *cobra.Command {
	opts := &graphOptions{}
	c := &cobra.Command{
		Use:   "graph",
		Short: "Draw the fleet's dependency graph, a saved plan or the fleet's wires (Mermaid or DOT)",
		Long: `Draw a graph, without calling a cloud, as Mermaid (the default) or Graphviz DOT:

  infra graph                 the fleet document's resources and their references
  infra graph --plan FILE     a saved plan (plan --out FILE): its actions by class
  infra graph --fleets        this fleet's capabilities, slots and wires, with the
                              providers' published records read from the state

See docs/cli.md.`,
		RunE: func(c *cobra.Command, args []string) error {
			return runGraph(c, g, opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.format, "format", render.GraphFormats[0], "mermaid or dot")
	f.StringVar(&opts.planFile, "plan", "", "draw this saved plan (from plan --out) instead of the fleet document")
	f.BoolVar(&opts.fleets, "fleets", false, "draw the fleet's wires to other fleets instead of its resources")
	return c
}

func runGraph(c *cobra.Command, g *globals, opts *graphOptions) error {
	if err := render.CheckGraphFormat(opts.format); err != nil {
		return usageError{fmt.Errorf("--format: %w", err)}
	}
	if opts.planFile != "" && opts.fleets {
		return usageError{errors.New("--plan and --fleets draw different graphs: pass one")}
	}
	var graph *render.Graph
	var err error
	switch {
	case opts.planFile != "":
		graph, err = planGraph(opts.planFile)
	case opts.fleets:
		graph, err = fleetsGraph(c, g)
	default:
		var doc *spec.Document
		if doc, err = g.loadDocument(c.Context()); err == nil {
			graph, err = documentGraph(g, doc)
		}
	}
	if err != nil {
		return err
	}
	text, err := render.DrawGraph(graph, opts.format)
	if err != nil {
		return err
	}
	_, err = io.WriteString(g.io().Out, text)
	return err
}

// planGraph reads a saved plan as apply --plan does.
func planGraph(file string) (*render.Graph, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--plan: %w", err)
	}
	p, err := operations.DecodePlan(data)
	if err != nil {
		return nil, fmt.Errorf("--plan %s: %w", file, err)
	}
	return render.PlanGraph(p), nil
}

func documentGraph(g *globals, doc *spec.Document) (*render.Graph, error) {
	m, err := compile(g, doc)
	if err != nil {
		return nil, err
	}
	return render.DocumentGraph(m), nil
}

// compile compiles the fleet document, refusing one with errors: a graph
// of what does not compile would draw references that mean nothing.
func compile(g *globals, doc *spec.Document) (*spec.Model, error) {
	m, diags := spec.Compile(doc)
	if spec.HasErrors(diags) {
		g.io().errDiagnostics(diags)
		return nil, errFleetHasErrors
	}
	return m, nil
}

// fleetsGraph draws the fleet's wires, with the published record of each
// provider that can be read from its state (infra output's reader); a
// record that cannot be read is a warning, and its provider is drawn from
// the wire alone.
func fleetsGraph(c *cobra.Command, g *globals) (*render.Graph, error) {
	ops, doc, err := g.operations(c.Context())
	if err != nil {
		return nil, err
	}
	m, err := compile(g, doc)
	if err != nil {
		return nil, err
	}
	records := map[string]*spec.Published{}
	for _, slot := range slices.Sorted(maps.Keys(m.Uses)) {
		if m.Uses[slot].Wire == nil {
			continue
		}
		for _, w := range m.Uses[slot].Wire.Each() {
			if _, done := records[w.Fleet]; done {
				continue
			}
			out, err := ops.Output(c.Context(), operations.OutputRequest{Fleet: w.Fleet, State: w.State})
			if err != nil {
				fmt.Fprintf(g.io().ErrOut, "warning: the published record of %s is not drawn: %s\n", spec.Printable(w.Fleet), spec.Printable(err.Error()))
				records[w.Fleet] = nil
				continue
			}
			records[w.Fleet] = &spec.Published{Fleet: out.Fleet, Capabilities: out.Capabilities}
		}
	}
	return render.FleetsGraph(m, records), nil
}

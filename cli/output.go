package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
)

func newOutput(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "output [CAPABILITY[.EXPORT]]",
		Short: "Print what the fleet publishes: its exports at its last apply (a secret as its reference)",
		Long: `Print the fleet's published exports: what each capability it provides resolved
to at its last successful apply, read from its state. A secret export prints as
its reference (an ARN or an id), never its value.

With CAPABILITY.EXPORT and no --json, only the value is printed, for scripts.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ops, doc, err := g.operations(c.Context())
			if err != nil {
				return err
			}
			sel := ""
			if len(args) == 1 {
				sel = args[0]
			}
			out, err := ops.Output(c.Context(), operations.OutputRequest{Document: doc, Select: sel})
			if err != nil {
				return err
			}
			w := g.io().Out
			if asJSON {
				return render.JSON(w, out)
			}
			if name, export, one := strings.Cut(sel, "."); one {
				raw, ok := render.ExportRaw(out.Capabilities[name].Exports[export])
				if !ok {
					return fmt.Errorf("%s of %s is pending: its provider has not applied what it is read from", sel, out.Fleet)
				}
				fmt.Fprintln(w, raw)
				return nil
			}
			return render.OutputText(w, out.Fleet, out.Where, out.Capabilities)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the record as JSON")
	return c
}

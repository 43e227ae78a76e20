package cli

import (
	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/spec"
)

func newSynth(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "synth",
		Short: "Print the fleet document (JSON)",
		RunE: func(c *cobra.Command, args []string) error {
			doc, err := g.loadDocument(c.Context())
			if err != nil {
				return err
			}
			b, err := spec.EncodeDocument(doc)
			if err != nil {
				return err
			}
			_, err = g.io().Out.Write(b)
			return err
		},
	}
}

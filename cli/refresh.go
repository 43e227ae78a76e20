package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
)

func newRefresh(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "refresh",
		Short: "Observe the cloud and rewrite the cache (never the ledger)",
		RunE: func(c *cobra.Command, args []string) error {
			ops, doc, err := g.operations(c.Context())
			if err != nil {
				return err
			}
			res, err := ops.Refresh(c.Context(), operations.RefreshRequest{Document: doc})
			if err != nil {
				return g.remedy(err)
			}
			out := g.io().Out
			for _, a := range res.Accounts {
				fmt.Fprintf(out, "%s: %s in %s ok\n", a.Provider, a.Account, joinList(a.Regions))
			}
			fmt.Fprintf(out, "refreshed: %d resource(s) observed; %d managed\n", res.Observed, res.Managed)
			return nil
		},
	}
}

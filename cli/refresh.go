package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
)

func newRefresh(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
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
			if asJSON {
				return render.JSON(out, render.Refreshed{FormatVersion: operations.FormatVersion, Fleet: doc.Fleet,
					Accounts: nonNil(res.Accounts), Refresh: render.RefreshCounts{Observed: res.Observed, Managed: res.Managed}})
			}
			for _, a := range res.Accounts {
				fmt.Fprintf(out, "%s: %s in %s ok\n", a.Provider, a.Account, joinList(a.Regions))
			}
			fmt.Fprintf(out, "refreshed: %d resource(s) observed; %d managed\n", res.Observed, res.Managed)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the accounts and what was observed as JSON")
	return c
}

// nonNil is s, or an empty list: JSON says [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/spec"
)

func newRefresh(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "refresh",
		Short: "Observe the cloud and rewrite the cache (never the ledger)",
		RunE: func(c *cobra.Command, args []string) error {
			s, err := g.open(c.Context(), "refresh", true)
			if err != nil {
				return err
			}
			defer s.close()
			if spec.HasErrors(s.diags) {
				s.printWarnings(s.diags)
				return fmt.Errorf("the fleet has errors; fix them (infra check lists them all)")
			}
			accounts, cache, err := s.engine.Refresh(c.Context(), s.model, s.ledger)
			if err != nil {
				return err
			}
			if err := s.store.SaveCache(c.Context(), cache); err != nil {
				return err
			}
			out := g.io().Out
			for _, a := range accounts {
				fmt.Fprintf(out, "%s: %s in %s ok\n", a.Provider, a.Account, joinList(a.Regions))
			}
			fmt.Fprintf(out, "refreshed: %d resource(s) observed; %d managed\n", len(cache.Resources), len(s.ledger.Rows))
			return nil
		},
	}
}

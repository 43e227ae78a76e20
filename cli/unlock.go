package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

func newUnlock(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "unlock LOCK-ID",
		Short: "Break a stale lock, naming its id (printed by the refused run)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			doc, err := g.loadDocument(c.Context())
			if err != nil {
				return err
			}
			if !spec.ValidFleetName(doc.Fleet) {
				return fmt.Errorf("invalid fleet name %q; run infra check", doc.Fleet)
			}
			store, err := g.f.Store(c.Context(), g.state, doc.Fleet)
			if err != nil {
				return err
			}
			if err := store.Unlock(c.Context(), args[0]); err != nil {
				if errors.Is(err, state.ErrNotLocked) {
					return fmt.Errorf("nothing to unlock: %s holds no lock", store.Where())
				}
				return err
			}
			fmt.Fprintf(g.io().Out, "unlocked %s (lock %s)\n", store.Where(), args[0])
			return nil
		},
	}
}

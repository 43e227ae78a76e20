package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
)

func newUnlock(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "unlock LOCK-ID",
		Short: "Break a stale lock, naming its id (printed by the refused run)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ops, doc, err := g.operations(c.Context())
			if err != nil {
				return err
			}
			where, err := ops.Unlock(c.Context(), operations.UnlockRequest{Document: doc, ID: args[0]})
			if errors.Is(err, operations.ErrNotLocked) {
				return fmt.Errorf("nothing to unlock: %s holds no lock", where)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.io().Out, "unlocked %s (lock %s)\n", where, args[0])
			return nil
		},
	}
}

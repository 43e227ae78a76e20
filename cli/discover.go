package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
)

type discoverOptions struct {
	write bool
	json  bool
}

func newDiscover(g *globals) *cobra.Command {
	opts := &discoverOptions{}
	c := &cobra.Command{
		Use:   "discover",
		Short: "Rebuild the ledger from the ownership tags (prints the difference; --write saves it)",
		RunE: func(c *cobra.Command, args []string) error {
			return runDiscover(c, g, opts)
		},
	}
	c.Flags().BoolVar(&opts.write, "write", false, "save the rebuilt ledger")
	c.Flags().BoolVar(&opts.json, "json", false, "print the discovery as JSON")
	return c
}

func runDiscover(c *cobra.Command, g *globals, opts *discoverOptions) error {
	ops, doc, err := g.operations(c.Context())
	if err != nil {
		return err
	}
	res, err := ops.Discover(c.Context(), operations.DiscoverRequest{Document: doc, Write: opts.write})
	if res == nil {
		return g.remedy(err)
	}
	out := g.io().Out
	if opts.json {
		if err := render.JSON(out, res.Discovery); err != nil {
			return err
		}
	} else {
		renderDiscovery(g, res.Discovery, res.Was, opts.write)
	}
	return g.remedy(err)
}

func renderDiscovery(g *globals, dx *operations.Discovery, was int, written bool) {
	// Addresses, regions and owners come from the cloud's tags.
	out := printableWriter{g.io().Out}
	for _, a := range dx.Accounts {
		fmt.Fprintf(out, "%s: %s in %s ok\n", a.Provider, a.Account, joinList(a.Regions))
	}
	for _, r := range dx.Added {
		fmt.Fprintf(out, "  + %-40s %-14s (tagged for this fleet, not in the ledger)\n", r.Address(), r.Region)
	}
	for _, r := range dx.Removed {
		fmt.Fprintf(out, "  - %-40s %-14s (not found carrying this fleet's tag)\n", r.Address(), r.Region)
	}
	for _, m := range dx.Moved {
		fmt.Fprintf(out, "  ~ %-40s %s -> %s\n", m.Row.Address(), m.From, m.Row.Region)
	}
	for _, f := range dx.Foreign {
		fmt.Fprintf(out, "  ! %-40s %-14s owned by fleet %s: left alone\n", f.Address, f.Region, f.Owner)
	}
	verb := "would record"
	if written {
		verb = "recorded"
	}
	fmt.Fprintf(out, "Discovered: %d managed (was %d); %d added, %d removed, %d moved; %d owned by other fleets; %s.\n",
		len(dx.Ledger.Rows), was, len(dx.Added), len(dx.Removed), len(dx.Moved), len(dx.Foreign), verb)
	if !written && len(dx.Added)+len(dx.Removed)+len(dx.Moved) > 0 {
		fmt.Fprintln(g.io().ErrOut, "Run with --write to save the rebuilt ledger.")
	}
}

func joinList(xs []string) string { return strings.Join(xs, ", ") }

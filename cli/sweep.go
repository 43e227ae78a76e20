package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

type sweepOptions struct {
	prefix    string
	olderThan string
	regions   []string
	kinds     []string
	yes       bool
	json      bool
}

func newSweep(g *globals) *cobra.Command {
	opts := &sweepOptions{}
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Delete test debris by name prefix (a dry run unless --yes)",
		Long: `sweep lists every kind on every cloud with credentials, in the given regions (or
the fleet's placement with --fleet), and reports each resource whose name starts with
--prefix as a candidate or as kept, with the reason. With --yes it deletes the
candidates, retrying refused deletes in rounds, then lists again to verify. See
docs/sweep.md.`,
		RunE: func(c *cobra.Command, args []string) error {
			return runSweep(c, g, opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.prefix, "prefix", "", "what a candidate's name starts with (case-sensitive, at least 3 characters), for example ci-tests-")
	f.StringVar(&opts.olderThan, "older-than", "0", "only resources older than this (90m, 2h, 7d); a resource of unknown age is never old enough unless 0")
	f.StringArrayVar(&opts.regions, "region", nil, "a region to sweep (repeatable); default: the fleet's placement with --fleet, else each cloud's configured region")
	f.StringArrayVar(&opts.kinds, "kind", nil, "a kind to sweep (repeatable); default: every kind")
	f.BoolVar(&opts.yes, "yes", false, "delete the candidates (without it, a dry run)")
	f.BoolVar(&opts.json, "json", false, "print the report as JSON")
	return c
}

func runSweep(c *cobra.Command, g *globals, opts *sweepOptions) error {
	ctx := c.Context()
	req := operations.SweepRequest{Prefix: opts.prefix, OlderThan: opts.olderThan, Delete: opts.yes,
		ConfiguredRegions: true, Progress: sweepProgress(g.progress(g.io()))}
	for _, k := range opts.kinds {
		if _, ok := spec.Lookup(spec.Kind(k)); !ok {
			return usageError{fmt.Errorf("--kind %s: unknown kind; known kinds: %s", k, kindList())}
		}
		req.Kinds = append(req.Kinds, spec.Kind(k))
	}
	// The fleet is read only when named: sweep works on an account, and a
	// fleet.json that happens to be in the directory must not narrow it.
	if g.doc != nil || g.fleet != "" {
		doc, err := g.loadDocument(ctx)
		if err != nil {
			return err
		}
		req.Document = doc
	}
	if len(opts.regions) > 0 {
		regions, err := operations.RegionsByProvider(opts.regions)
		if err != nil {
			return usageError{fmt.Errorf("--region %w", err)}
		}
		req.Regions = regions
	}
	rep, err := operations.New(operations.Env{Backends: g.f.Backends}).Sweep(ctx, req)
	g.progress(g.io()).finish()
	var noRegion *operations.NoRegionError
	var age *operations.AgeError
	switch {
	case errors.Is(err, operations.ErrNoPrefix):
		return errors.New("sweep needs a prefix (--prefix ci-tests-): without one every resource in the account would be a candidate")
	case errors.As(err, &age) && age.Negative:
		return fmt.Errorf("--older-than %q: an age cannot be negative", age.Value)
	case errors.As(err, &age):
		return fmt.Errorf("--older-than %q: want a duration such as 90m, 2h or 7d", age.Value)
	}
	if errors.As(err, &noRegion) {
		return fmt.Errorf("%s: no region to sweep: pass --region, or configure the cloud's default region (AWS_REGION, SCW_DEFAULT_REGION, CLOUDSDK_COMPUTE_REGION)", noRegion.Provider)
	}
	if rep == nil {
		return g.remedy(err)
	}
	out := g.io().Out
	if opts.json {
		if rerr := render.JSON(out, rep); rerr != nil {
			return rerr
		}
	} else if rerr := render.SweepText(printableWriter{out}, rep); rerr != nil { // names come from the cloud
		return rerr
	}
	if err != nil {
		return exitError{code: ExitError, err: err}
	}
	return nil
}

// sweepProgress prints the sweep's events to stderr, one line each, with
// the live counter of its deletes on a terminal (progress).
func sweepProgress(p *progress) func(operations.SweepEvent) {
	return func(ev operations.SweepEvent) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.clear()
		defer p.draw()
		w := p.io.ErrOut
		switch ev.Kind {
		case operations.SweepBegin:
			p.begin(ev.Total)
		case operations.SweepStart:
			p.running[ev.Address.String()] = true
		case operations.SweepAccount, operations.SweepListed, operations.SweepRound, operations.SweepVerify:
			fmt.Fprintln(w, ev.Message)
		case operations.SweepDeleted:
			p.settle(ev.Address.String(), &p.done)
			fmt.Fprintf(w, "delete %s ... ok (%s)\n", ev.Address, ev.Elapsed.Round(time.Millisecond))
		case operations.SweepDeferred:
			p.settle(ev.Address.String(), nil)
			fmt.Fprintf(w, "delete %s ... refused for now, will retry: %v\n", ev.Address, ev.Err)
		case operations.SweepFailed:
			if ev.Address.IsZero() {
				fmt.Fprintf(w, "%s ... failed: %v\n", ev.Message, ev.Err)
			} else {
				p.settle(ev.Address.String(), &p.failed)
				fmt.Fprintf(w, "delete %s ... failed: %v\n", ev.Address, ev.Err)
			}
		case operations.SweepWaiting:
			names := make([]string, len(ev.Outstanding))
			for i, a := range ev.Outstanding {
				names[i] = a.String()
			}
			fmt.Fprintf(w, "still deleting: %s\n", strings.Join(names, ", "))
		case operations.SweepWarning:
			fmt.Fprintf(w, "warning: %s\n", ev.Message)
		}
	}
}

func kindList() string {
	var names []string
	for _, k := range spec.Kinds() {
		names = append(names, string(k.Kind))
	}
	return strings.Join(names, ", ")
}

package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	scwprovider "github.com/infra-iac/infra/providers/scaleway"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/sweep"
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
	if err := sweep.CheckPrefix(opts.prefix); err != nil {
		return err
	}
	age, err := sweep.ParseAge(opts.olderThan)
	if err != nil {
		return err
	}
	var kinds []spec.Kind
	for _, k := range opts.kinds {
		if _, ok := spec.Lookup(spec.Kind(k)); !ok {
			return usageError{fmt.Errorf("--kind %s: unknown kind; known kinds: %s", k, kindList())}
		}
		kinds = append(kinds, spec.Kind(k))
	}
	so := sweep.Options{Prefix: opts.prefix, OlderThan: age, Kinds: kinds, Delete: opts.yes,
		Regions: map[spec.Provider][]string{}, Skipped: map[spec.Provider]string{}}

	// The fleet is read only when named: sweep works on an account, and a
	// fleet.json that happens to be in the directory must not narrow it.
	if g.doc != nil || g.fleet != "" {
		doc, err := g.loadDocument(ctx)
		if err != nil {
			return err
		}
		m, diags := spec.Compile(doc)
		if spec.HasErrors(diags) {
			g.io().errDiagnostics(diags)
			return fmt.Errorf("the fleet has errors; fix them (infra check lists them all)")
		}
		so.Exclusions, so.Accounts = m.Exclusions, m.Accounts
		for p, rs := range m.Regions() {
			so.Regions[p] = append(so.Regions[p], rs...)
		}
		for p, r := range m.Placement {
			so.Regions[p] = append(so.Regions[p], r)
		}
	}
	if len(opts.regions) > 0 {
		so.Regions, err = regionsByProvider(opts.regions)
		if err != nil {
			return usageError{err}
		}
	}
	// Named regions decide the clouds; otherwise every cloud is tried, and
	// the ones without credentials are reported as not swept.
	explicit := len(so.Regions) > 0
	ps := spec.Providers
	if explicit {
		ps = nil
		for _, p := range spec.Providers {
			if len(so.Regions[p]) > 0 {
				ps = append(ps, p)
			}
		}
	}
	so.Backends = map[spec.Provider]providers.Backend{}
	for _, p := range ps {
		// One cloud at a time, so that a cloud whose configuration cannot
		// even be loaded is reported as not swept rather than stopping
		// the others — unless it was asked for by name.
		backends, why, err := g.f.Backends(ctx, []spec.Provider{p})
		if err != nil {
			if explicit {
				return err
			}
			so.Skipped[p] = err.Error()
			continue
		}
		b, ok := backends[p]
		if !ok {
			so.Skipped[p] = why[p]
			if so.Skipped[p] == "" {
				so.Skipped[p] = "no backend was built"
			}
			continue
		}
		if missing := noCredentials(ctx, b); missing != "" {
			if explicit {
				return fmt.Errorf("%s: %s", p, missing)
			}
			so.Skipped[p] = missing
			continue
		}
		if !explicit {
			r := defaultRegion(b)
			if r == "" {
				return fmt.Errorf("%s: no region to sweep: pass --region, or configure the cloud's default region (AWS_REGION, SCW_DEFAULT_REGION)", p)
			}
			so.Regions[p] = []string{r}
		}
		so.Backends[p] = b
	}
	so.Progress = sweepProgress(g.io())

	rep, err := sweep.Run(ctx, so)
	if rep == nil {
		return err
	}
	out := g.io().Out
	if opts.json {
		if rerr := sweep.RenderJSON(out, rep); rerr != nil {
			return rerr
		}
	} else if rerr := sweep.RenderText(printableWriter{out}, rep); rerr != nil { // names come from the cloud
		return rerr
	}
	if err != nil {
		return exitError{code: ExitError, err: err}
	}
	return nil
}

// regionsByProvider assigns each --region to the cloud whose table holds
// it. raw:CODE, for a region infra's table does not know, goes to every
// cloud: the listing there fails loudly if the cloud has no such region.
func regionsByProvider(written []string) (map[spec.Provider][]string, error) {
	out := map[spec.Provider][]string{}
	for _, r := range written {
		if code, ok := strings.CutPrefix(r, spec.RawPrefix); ok && code != "" {
			for _, p := range spec.Providers {
				out[p] = append(out[p], code)
			}
			continue
		}
		p, ok := spec.RegionOwner(r)
		if !ok {
			return nil, fmt.Errorf("--region %s: no cloud has this region in infra's table (aws: %s; scaleway: %s); write raw:%s to use it anyway",
				r, strings.Join(spec.Regions(spec.AWS), ", "), strings.Join(spec.Regions(spec.Scaleway), ", "), r)
		}
		out[p] = append(out[p], r)
	}
	return out, nil
}

// noCredentials says why a backend has no credentials to sweep with, or
// "" when it has some. It asks without a call: the AWS SDK resolves its
// credential chain locally (environment, profile, SSO cache), and the
// Scaleway client holds the key from its configuration. Credentials that
// are present but wrong fail later, at the account check, as an error.
func noCredentials(ctx context.Context, b providers.Backend) string {
	switch cb := b.(type) {
	case *awsprovider.Backend:
		cfg := cb.Config()
		if cfg.Credentials == nil {
			return "no AWS credentials were found"
		}
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			return fmt.Sprintf("no AWS credentials were found (%v)", err)
		}
	case *scwprovider.Backend:
		if key, ok := cb.Client().GetAccessKey(); !ok || key == "" {
			return "no Scaleway credentials were found (SCW_ACCESS_KEY and SCW_SECRET_KEY, or ~/.config/scw/config.yaml)"
		}
	}
	return ""
}

// defaultRegion is the cloud's own configured region.
func defaultRegion(b providers.Backend) string {
	if ab, ok := b.(*awsprovider.Backend); ok {
		return ab.Config().Region
	}
	if r, ok := b.(interface{ Region() string }); ok {
		return r.Region()
	}
	return ""
}

// sweepProgress prints the sweep's events to stderr, one line each.
func sweepProgress(s *IOStreams) func(sweep.Event) {
	var mu sync.Mutex
	return func(ev sweep.Event) {
		mu.Lock()
		defer mu.Unlock()
		w := s.ErrOut
		switch ev.Kind {
		case sweep.EventAccount, sweep.EventListed, sweep.EventRound, sweep.EventVerify:
			fmt.Fprintln(w, ev.Message)
		case sweep.EventDeleted:
			fmt.Fprintf(w, "delete %s ... ok (%s)\n", ev.Address, ev.Elapsed.Round(time.Millisecond))
		case sweep.EventDeferred:
			fmt.Fprintf(w, "delete %s ... refused for now, will retry: %v\n", ev.Address, ev.Err)
		case sweep.EventFailed:
			if ev.Address.IsZero() {
				fmt.Fprintf(w, "%s ... failed: %v\n", ev.Message, ev.Err)
			} else {
				fmt.Fprintf(w, "delete %s ... failed: %v\n", ev.Address, ev.Err)
			}
		case sweep.EventWaiting:
			names := make([]string, len(ev.Outstanding))
			for i, a := range ev.Outstanding {
				names[i] = a.String()
			}
			fmt.Fprintf(w, "still deleting: %s\n", strings.Join(names, ", "))
		case sweep.EventWarning:
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

package operations

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	gcpprovider "github.com/infra-iac/infra/providers/gcp"
	scwprovider "github.com/infra-iac/infra/providers/scaleway"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/sweep"
)

// SweepRequest asks to delete debris by name prefix. It needs no state and
// takes no lock: a sweep manages no ledger.
type SweepRequest struct {
	// Document, when set, narrows the sweep to the fleet's placement and
	// applies its exclusions and accounts.
	Document *spec.Document
	// Prefix is what a candidate's name starts with; OlderThan the age
	// floor ("2h", "7d", "0").
	Prefix, OlderThan string
	// Kinds limits the kinds swept; all when empty.
	Kinds []spec.Kind
	// Regions, when set, are the regions swept, per cloud (see
	// RegionsByProvider), in place of the document's.
	Regions map[spec.Provider][]string
	// ConfiguredRegions, when no region is given, sweeps each cloud that
	// has credentials in its own configured region. Without it, a sweep
	// with no region is ErrNoRegions.
	ConfiguredRegions bool
	// Delete deletes the candidates; without it, a dry run.
	Delete   bool
	Progress func(sweep.Event)
}

// ErrNoRegions is a sweep that was given no region and may not guess.
var ErrNoRegions = errors.New("sweep needs regions")

// Sweep lists, deletes (with Delete) and verifies. The report comes back
// whenever something was listed, with the error too when the sweep did not
// finish clean.
func (o *Operations) Sweep(ctx context.Context, req SweepRequest) (*sweep.Report, error) {
	if err := sweep.CheckPrefix(req.Prefix); err != nil {
		return nil, err
	}
	age, err := sweep.ParseAge(req.OlderThan)
	if err != nil {
		return nil, err
	}
	so := sweep.Options{Prefix: req.Prefix, OlderThan: age, Kinds: req.Kinds, Delete: req.Delete,
		Regions: map[spec.Provider][]string{}, Skipped: map[spec.Provider]string{}, Progress: req.Progress}
	if req.Document != nil {
		m, diags := spec.Compile(req.Document)
		if spec.HasErrors(diags) {
			return nil, &DiagnosticsError{Diagnostics: diags}
		}
		so.Exclusions, so.Accounts = m.Exclusions, m.Accounts
		for p, rs := range m.Regions() {
			so.Regions[p] = append(so.Regions[p], rs...)
		}
		for p, r := range m.Placement {
			so.Regions[p] = append(so.Regions[p], r)
		}
	}
	if len(req.Regions) > 0 {
		so.Regions = req.Regions
	}
	for p, rs := range so.Regions {
		sort.Strings(rs)
		so.Regions[p] = dedupe(rs)
	}
	if len(so.Regions) == 0 && !req.ConfiguredRegions {
		return nil, ErrNoRegions
	}
	if err := sweepBackends(ctx, o.env, &so); err != nil {
		return nil, err
	}
	return sweep.Run(ctx, so)
}

// sweepBackends builds the backends to sweep with. Named regions decide
// the clouds, and a cloud named that cannot be reached is an error;
// otherwise every cloud is tried, one at a time, and the ones without
// credentials are reported as not swept rather than stopping the others.
func sweepBackends(ctx context.Context, env Env, so *sweep.Options) error {
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
		var backends map[spec.Provider]providers.Backend
		var why map[spec.Provider]string
		err := errors.New("no cloud backends")
		if env.Backends != nil {
			backends, why, err = env.Backends(ctx, []spec.Provider{p})
		}
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
				return &NoRegionError{Provider: p}
			}
			so.Regions[p] = []string{r}
		}
		so.Backends[p] = b
	}
	return nil
}

// NoRegionError is a cloud with credentials but no configured region, in a
// sweep that was given none.
type NoRegionError struct{ Provider spec.Provider }

func (e *NoRegionError) Error() string {
	return fmt.Sprintf("%s: no region to sweep: configure the cloud's default region (AWS_REGION, SCW_DEFAULT_REGION, CLOUDSDK_COMPUTE_REGION)", e.Provider)
}

// RegionsByProvider assigns each written region to the cloud whose table
// holds it. raw:CODE, for a region infra's table does not know, goes to
// every cloud: the listing there fails loudly if the cloud has no such
// region.
func RegionsByProvider(written []string) (map[spec.Provider][]string, error) {
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
			var tables []string
			for _, p := range spec.Providers {
				tables = append(tables, fmt.Sprintf("%s: %s", p, strings.Join(spec.Regions(p), ", ")))
			}
			return nil, fmt.Errorf("%s: no cloud has this region in infra's table (%s); write raw:%s to use it anyway",
				r, strings.Join(tables, "; "), r)
		}
		out[p] = append(out[p], r)
	}
	return out, nil
}

func dedupe(xs []string) []string {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
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
	case *gcpprovider.Backend:
		return cb.MissingCredentials()
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

// CheckSweepPrefix refuses a prefix that would sweep more than debris.
func CheckSweepPrefix(prefix string) error { return sweep.CheckPrefix(prefix) }

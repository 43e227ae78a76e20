package operations

import (
	"context"
	"errors"
	"fmt"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// PlanRequest asks what apply would do.
type PlanRequest struct {
	Document *spec.Document
	// Destroy plans the teardown of everything the fleet manages.
	Destroy bool
	// Upstream holds, by fleet, what a provider planned in the same run
	// will publish (its plan's Published): a consumer planned beside it
	// reads that instead of the stored record, so what the provider's
	// apply will make is pending rather than missing. CI plans the fleets
	// of one pull request this way, providers first.
	Upstream map[string]*spec.Published
	// NoRefresh plans from the cache, what the last apply or refresh saw,
	// instead of observing the cloud (plan --refresh=false): no backend is
	// built, so no credentials are needed and no cloud is called. The plan
	// is marked FromCache and no apply accepts it. A cache that cannot be
	// read, or that is missing or empty, is refused. The zero value
	// refreshes.
	NoRefresh bool
	Scope
}

// Scope narrows a plan, and the apply that must find the same plan: the
// targets and the forced replaces (engine.PlanOptions). The zero Scope is
// the whole fleet.
type Scope struct {
	// Targets plans only these resources and what they depend on.
	Targets []spec.Address
	// Replace forces a replace of each of these resources.
	Replace []spec.Address
}

// TargetError is a target or a forced replace the plan cannot honour.
type TargetError = engine.TargetError

// ErrTargetsWithDestroy refuses a scoped teardown.
var ErrTargetsWithDestroy = engine.ErrTargetsWithDestroy

// Partial reports whether the scope narrows the plan to targets.
func (sc Scope) Partial() bool { return len(sc.Targets) > 0 }

func (sc Scope) options(destroy bool) engine.PlanOptions {
	return engine.PlanOptions{Destroy: destroy, Targets: sc.Targets, Replace: sc.Replace}
}

// Plan observes the cloud (or, with NoRefresh, reads the cache) and
// returns the plan; it writes nothing, not even the cache (docs/state.md
// says why). A fleet with errors returns its plan (which carries the
// diagnostics, and was made without reading any cloud) together with a
// *DiagnosticsError.
func (o *Operations) Plan(ctx context.Context, req PlanRequest) (*engine.Plan, error) {
	s, err := openWith(ctx, o.env, req.Document, "plan", false, opening{upstream: req.Upstream, offline: req.NoRefresh})
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	if req.NoRefresh && !spec.HasErrors(s.diags) {
		if s.cache, err = s.loadCacheToPlan(ctx); err != nil {
			return nil, err
		}
	}
	return s.plan(ctx, req.Scope.options(req.Destroy), false)
}

// ErrNoCache is wrapped by the refusal to plan from a cache that is
// missing or empty: there is nothing to plan from, and an empty cache is
// not an empty cloud.
var ErrNoCache = errors.New("nothing to plan from")

// loadCacheToPlan reads the cache a plan from the cache is made from.
func (s *session) loadCacheToPlan(ctx context.Context) (*state.Cache, error) {
	c, err := s.store.LoadCache(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan from the cache: it cannot be read: %w. Or plan without --refresh=false, which reads the cloud", err)
	}
	if len(c.Resources) == 0 {
		return nil, fmt.Errorf("plan from the cache: %s has no cache, or an empty one: %w. Run infra refresh or apply first, or plan without --refresh=false, which reads the cloud",
			s.store.Where(), ErrNoCache)
	}
	return c, nil
}

// plan plans the session's fleet, protecting the consumers of what it
// provides (force overrides). A plan with errors comes back with a
// *DiagnosticsError.
func (s *session) plan(ctx context.Context, opts engine.PlanOptions, force bool) (*engine.Plan, error) {
	destroy := opts.Destroy
	var p *engine.Plan
	var err error
	if s.cache != nil {
		p, err = s.engine.PlanFromCache(ctx, s.model, s.diags, s.ledger, s.cache, opts)
	} else {
		p, err = s.engine.Plan(ctx, s.model, s.diags, s.ledger, opts)
	}
	if err != nil {
		return nil, err
	}
	if p.Applicable && s.model.ReadsOthers() {
		// The accounts the credentials belong to are known now.
		accounts := map[spec.Provider]string{}
		for _, a := range p.Accounts {
			accounts[a.Provider] = a.Account
		}
		p.Diagnostics = spec.SortDiagnostics(append(p.Diagnostics, spec.AccountRows(s.model, accounts)...))
		p.Applicable = !spec.HasErrors(p.Diagnostics)
	}
	if p.Applicable {
		if err := s.protect(ctx, p, force); err != nil {
			return nil, err
		}
	}
	if p.Applicable && len(s.model.Provides) > 0 && !destroy {
		p.Publishes = p.Published()
	}
	if !p.Applicable {
		return p, &DiagnosticsError{Diagnostics: p.Diagnostics, Planned: !spec.HasErrors(s.diags)}
	}
	return p, nil
}

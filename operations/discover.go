package operations

import (
	"context"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// DiscoverRequest asks to rebuild the ledger from the ownership marks.
type DiscoverRequest struct {
	Document *spec.Document
	// Write saves the rebuilt ledger (under the lock); without it nothing
	// is written.
	Write bool
}

// DiscoverResult is the rebuilt ledger and how it differs.
type DiscoverResult struct {
	Discovery *engine.Discovery
	// Was is how many rows the ledger had before.
	Was int
	// Saved is set when the rebuilt ledger was written.
	Saved bool
	// Diagnostics are the fleet's warnings.
	Diagnostics []spec.Diagnostic
}

// Discover finds every resource carrying this fleet's mark and rebuilds
// the ledger from them.
func (o *Operations) Discover(ctx context.Context, req DiscoverRequest) (*DiscoverResult, error) {
	s, err := open(ctx, o.env, req.Document, "discover", req.Write)
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	if err := s.refuseErrors(); err != nil {
		return nil, err
	}
	dx, err := s.engine.Discover(ctx, s.model, s.ledger)
	if err != nil {
		return nil, err
	}
	res := &DiscoverResult{Discovery: dx, Was: len(s.ledger.Rows), Diagnostics: s.diags}
	if req.Write {
		if err := s.store.SaveLedger(ctx, dx.Ledger); err != nil {
			return res, err
		}
		res.Saved = true
	}
	return res, nil
}

// RefreshRequest asks to observe the cloud and rewrite the cache.
type RefreshRequest struct {
	Document *spec.Document
}

// RefreshResult says what a refresh observed.
type RefreshResult struct {
	Accounts []engine.Account
	// Observed counts the resources in the new cache; Managed the ledger's
	// rows, which a refresh never changes.
	Observed, Managed int
}

// Refresh observes the cloud and rewrites the cache, never the ledger.
func (o *Operations) Refresh(ctx context.Context, req RefreshRequest) (*RefreshResult, error) {
	s, err := open(ctx, o.env, req.Document, "refresh", true)
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	if err := s.refuseErrors(); err != nil {
		return nil, err
	}
	accounts, cache, err := s.engine.Refresh(ctx, s.model, s.ledger)
	if err != nil {
		return nil, err
	}
	if err := s.store.SaveCache(ctx, cache); err != nil {
		return nil, err
	}
	return &RefreshResult{Accounts: accounts, Observed: len(cache.Resources), Managed: len(s.ledger.Rows)}, nil
}

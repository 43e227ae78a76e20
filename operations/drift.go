package operations

import (
	"context"
	"fmt"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// DriftRequest asks what changed in the cloud out of band.
type DriftRequest struct {
	Document *spec.Document
}

// Drift is what changed out of band since the last apply.
type Drift = engine.Drift

// Drift observes what the fleet manages and compares it with the cache,
// what the last apply or refresh saw; it writes nothing and takes no
// lock. A fleet with errors is refused with a *DiagnosticsError. A cache
// that cannot be read is refused with what to do: drift has no baseline
// without it.
func (o *Operations) Drift(ctx context.Context, req DriftRequest) (*Drift, error) {
	s, err := open(ctx, o.env, req.Document, "drift", false)
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	if err := s.refuseErrors(); err != nil {
		return nil, err
	}
	last, err := s.store.LoadCache(ctx)
	if err != nil {
		return nil, fmt.Errorf("drift compares with the cache, what the last apply saw, and it cannot be read: %w. Run infra refresh to take the cloud as it is now as the baseline", err)
	}
	return s.engine.Drift(ctx, s.model, s.ledger, last)
}

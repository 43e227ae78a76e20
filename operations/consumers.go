package operations

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/infra-iac/infra/spec"
)

// Consumers reads who holds the capabilities a fleet provides: its claims,
// by capability, each list of consumer fleets sorted. A fleet nobody reads
// has none (an empty map, no error). CI names them on the provider's plan
// comment; the plan itself refuses to break what they read.
func (o *Operations) Consumers(ctx context.Context, doc *spec.Document) (map[string][]string, error) {
	if doc == nil {
		return nil, errors.New("no fleet document")
	}
	if !spec.ValidFleetName(doc.Fleet) {
		return nil, fmt.Errorf("invalid fleet name %q; run infra check", doc.Fleet)
	}
	if o.env.Store == nil {
		return nil, errors.New("no state location")
	}
	store, err := o.env.Store(ctx, doc.Fleet)
	if err != nil {
		return nil, err
	}
	claims, err := store.LoadClaims(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the claims on %s at %s: %w", doc.Fleet, store.Where(), err)
	}
	out := map[string][]string{}
	if claims == nil {
		return out, nil
	}
	for capability := range claims.Capabilities {
		// One fleet may claim a capability through two slots.
		if holders := slices.Compact(claims.Holders(capability)); len(holders) > 0 {
			out[capability] = holders
		}
	}
	return out, nil
}

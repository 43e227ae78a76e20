package operations

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// PendingError refuses an apply that needs a value another fleet has not
// published yet; it names the fleets to apply first.
type PendingError = engine.PendingError

// resolveWires reads the published record of every fleet the model is
// wired to and resolves the imports against it (spec.ResolveWires). A
// record is read with read access only: no lock is taken on the far
// fleet's state.
func (s *session) resolveWires(ctx context.Context) {
	if len(s.model.Uses) == 0 {
		return
	}
	far := map[string]spec.Far{}
	for _, name := range slices.Sorted(maps.Keys(s.model.Uses)) {
		w := s.model.Uses[name].Wire
		if w == nil {
			continue
		}
		if _, done := far[w.Fleet]; done {
			continue
		}
		far[w.Fleet] = s.readFar(ctx, w)
	}
	s.diags = spec.SortDiagnostics(append(s.diags, spec.ResolveWires(s.model, far)...))
}

// readFar reads one far fleet's published record, beside this fleet's
// state or where the wire says.
func (s *session) readFar(ctx context.Context, w *spec.Wire) spec.Far {
	var st state.Store
	var err error
	switch {
	case w.State == "":
		st, err = s.env.Store(ctx, w.Fleet)
	case s.env.StoreAt == nil:
		return spec.Far{Where: w.State, Err: fmt.Errorf("this front end reads other fleets' state only beside its own")}
	default:
		st, err = s.env.StoreAt(ctx, w.State, w.Fleet)
	}
	if err != nil {
		return spec.Far{Where: w.State, Err: err}
	}
	rec, err := st.LoadPublished(ctx)
	return spec.Far{Record: rec, Where: st.Where(), Err: err}
}

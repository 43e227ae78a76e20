package operations

import (
	"context"
	"errors"
	"fmt"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// ErrNotLocked is an unlock of a state that holds no lock.
var ErrNotLocked = state.ErrNotLocked

// UnlockRequest asks to break a stale lock, named by its id (which the
// refused run printed): breaking it by the wrong id would break a live run.
type UnlockRequest struct {
	Document *spec.Document
	ID       string
}

// Unlock breaks the fleet's lock and returns where the state is. A state
// without a lock is ErrNotLocked; another holder's id is refused.
func (o *Operations) Unlock(ctx context.Context, req UnlockRequest) (string, error) {
	if req.Document == nil || !spec.ValidFleetName(req.Document.Fleet) {
		fleet := ""
		if req.Document != nil {
			fleet = req.Document.Fleet
		}
		return "", fmt.Errorf("invalid fleet name %q; run infra check", fleet)
	}
	if o.env.Store == nil {
		return "", errors.New("no state location")
	}
	store, err := o.env.Store(ctx, req.Document.Fleet)
	if err != nil {
		return "", err
	}
	return store.Where(), store.Unlock(ctx, req.ID)
}

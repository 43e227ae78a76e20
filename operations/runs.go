package operations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/infra-iac/infra/state"
)

// OpenBlobState opens one fleet's state in an object store, under prefix.
func OpenBlobState(blobs state.Blobs, prefix, fleet string) (state.Store, error) {
	return state.OpenBlobs(blobs, prefix, fleet)
}

// RunFile is the object, beside the ledger, in which BlobRuns keeps the
// plan accepted last. It stays after the run is done, so that a request
// sent again (a response lost on the way) reads "nothing left to do"
// instead of a refusal; the next accepted apply replaces it, so an old run
// can never resume once another has been accepted.
const RunFile = "executor-run.json"

// BlobRuns keeps the run record beside the fleet's ledger, in the layout
// of OpenBlobState.
func BlobRuns(blobs state.Blobs, prefix, fleet string) Runs {
	p := strings.Trim(prefix, "/")
	if p != "" {
		p += "/"
	}
	return blobRuns{blobs: blobs, key: p + fleet + "/" + RunFile}
}

type blobRuns struct {
	blobs state.Blobs
	key   string
}

func (b blobRuns) LoadRun(ctx context.Context) (*RunRecord, error) {
	data, _, err := b.blobs.Get(ctx, b.key)
	if errors.Is(err, state.ErrBlobNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the run record %s/%s: %w", b.blobs.Where(), b.key, err)
	}
	var r RunRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Version != RunRecordVersion {
		return nil, nil
	}
	return &r, nil
}

// SaveRun writes under the fleet's lock, so it needs no condition of its
// own.
func (b blobRuns) SaveRun(ctx context.Context, r *RunRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode the run record: %w", err)
	}
	if _, err := b.blobs.Put(ctx, b.key, data, state.Condition{}); err != nil {
		return fmt.Errorf("save the run record %s/%s: %w", b.blobs.Where(), b.key, err)
	}
	return nil
}

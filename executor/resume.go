package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// RunFile is the object, beside the ledger, in which the executor remembers
// the plan it accepted last. It stays after the run is done, so that a
// request sent again (a response lost on the way) reads "nothing left to
// do" instead of a refusal; the next accepted apply replaces it, so an old
// run can never resume once another has been accepted.
const RunFile = "executor-run.json"

const runRecordVersion = 1

// runRecord is an accepted apply. After the first invocation has changed
// some of the cloud, a fresh plan no longer has the reviewed id; the record
// lets the next invocation of the same run check that the fresh plan is
// only what is left of the reviewed one, and refuse anything else.
type runRecord struct {
	Version int    `json:"version"`
	RunID   string `json:"runId"`
	PlanID  string `json:"planId"`
	Destroy bool   `json:"destroy,omitempty"`
	// Document is the hash of the accepted document: a resume must send
	// the same one, so that the only difference between the fresh plan and
	// the reviewed one is the progress already made.
	Document string          `json:"document"`
	Actions  []engine.Action `json:"actions"`
	Accepted time.Time       `json:"accepted"`
}

// runKey is where the record lives: beside the fleet's ledger, in the same
// layout as state.OpenBlobs.
func (s *session) runKey() string {
	p := strings.Trim(s.prefix, "/")
	if p != "" {
		p += "/"
	}
	return p + s.model.Fleet + "/" + RunFile
}

// loadRun returns the record, or nil when there is none (or one this build
// cannot read, which can only refuse a resume, never allow one).
func (s *session) loadRun(ctx context.Context) (*runRecord, error) {
	data, _, err := s.blobs.Get(ctx, s.runKey())
	if errors.Is(err, state.ErrBlobNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the run record %s/%s: %w", s.blobs.Where(), s.runKey(), err)
	}
	var r runRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Version != runRecordVersion {
		return nil, nil
	}
	return &r, nil
}

// saveRun writes under the fleet's lock, so it needs no condition of its
// own.
func (s *session) saveRun(ctx context.Context, r runRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode the run record: %w", err)
	}
	if _, err := s.blobs.Put(ctx, s.runKey(), data, state.Condition{}); err != nil {
		return fmt.Errorf("save the run record %s/%s: %w", s.blobs.Where(), s.runKey(), err)
	}
	return nil
}

// resumes says why the fresh plan p may not continue the run of req, or ""
// when it may: the same run resumes the plan it was accepted with, and
// every action of p is what is left of one of its actions.
func (r *runRecord) resumes(req Request, destroy bool, p *engine.Plan) string {
	switch {
	case r == nil || r.PlanID != req.ExpectPlanID:
		return "no apply of the reviewed plan is in progress"
	case req.RunID == "" || r.RunID != req.RunID:
		return fmt.Sprintf("the reviewed plan was accepted for run %q, and this request is run %q", r.RunID, req.RunID)
	case r.Destroy != destroy:
		return "the reviewed plan was accepted for another operation"
	case r.Document != documentHash(req.Document):
		return "the document is not the one the reviewed plan was accepted with"
	}
	accepted := make(map[spec.Address]engine.Action, len(r.Actions))
	for _, a := range r.Actions {
		accepted[a.Address] = a
	}
	for _, a := range p.Actions {
		was, ok := accepted[a.Address]
		if !ok {
			return fmt.Sprintf("%s %s is not in it", a.Action, a.Address)
		}
		if why := leftOf(was, a); why != "" {
			return fmt.Sprintf("%s %s: %s", a.Action, a.Address, why)
		}
	}
	return ""
}

// follows lists, for each action a fresh plan may show, the accepted
// actions it can be the rest of: a replace whose delete is done leaves a
// create; a create or update interrupted half-way leaves an update of some
// of its fields; a create done but not recorded leaves an adopt.
var follows = map[engine.ActionKind][]engine.ActionKind{
	engine.Create:  {engine.Create, engine.Replace},
	engine.Update:  {engine.Update, engine.Create, engine.Replace},
	engine.Replace: {engine.Replace},
	engine.Delete:  {engine.Delete},
	engine.Forget:  {engine.Forget},
	engine.Adopt:   {engine.Adopt, engine.Create, engine.Update, engine.Replace},
}

// leftOf says why fresh is not what is left of was, or "".
func leftOf(was, fresh engine.Action) string {
	ok := false
	for _, k := range follows[fresh.Action] {
		ok = ok || k == was.Action
	}
	if !ok {
		return fmt.Sprintf("the reviewed plan had %s", was.Action)
	}
	if fresh.Region != was.Region {
		return fmt.Sprintf("region %s, reviewed %s", fresh.Region, was.Region)
	}
	target := make(map[string]engine.Change, len(was.Changes))
	for _, c := range was.Changes {
		target[c.Field] = c
	}
	for _, c := range fresh.Changes {
		t, ok := target[c.Field]
		if !ok {
			// A replace lists only the fields that differed; the create it
			// leaves behind sets the rest too, as declared in the same
			// document. Anything else must have been reviewed.
			if was.Action == engine.Replace {
				continue
			}
			return fmt.Sprintf("field %s was not in the reviewed plan", c.Field)
		}
		if !sameTarget(t, c) {
			return fmt.Sprintf("field %s has another target than reviewed", c.Field)
		}
	}
	return ""
}

// documentHash identifies a document by its canonical encoding, so that
// the same document sent by another encoder hashes the same; bytes that do
// not decode hash as they are.
func documentHash(raw json.RawMessage) string {
	b := []byte(raw)
	if doc, err := spec.DecodeDocument(raw); err == nil {
		if canon, err := json.Marshal(doc); err == nil {
			b = canon
		}
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// sameTarget compares where two changes of one field lead. A sensitive
// value is never filled in a plan, so only its flag can be compared; a
// value known only after apply is compared by that flag too.
func sameTarget(a, b engine.Change) bool {
	if a.Sensitive || b.Sensitive || a.KnownAfterApply || b.KnownAfterApply {
		return a.Sensitive == b.Sensitive && a.KnownAfterApply == b.KnownAfterApply
	}
	x, err1 := json.Marshal(a.After)
	y, err2 := json.Marshal(b.After)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

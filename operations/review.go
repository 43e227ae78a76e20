package operations

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// review is the reviewed-plan check, the only one: it accepts a fresh plan
// that is the reviewed one, or what is left of it when the same run
// resumes, and refuses anything else. It reports whether the plan was
// accepted as a resume.
func review(ctx context.Context, req ApplyRequest, p *engine.Plan) (bool, error) {
	switch {
	case req.Expect == "" && req.Confirm == nil:
		return false, &NotReviewedError{Fresh: p.ID, Destroy: req.Destroy}
	case req.Expect == "" || req.Expect == p.ID:
		return false, nil
	case req.Runs == nil:
		return false, &PlanChangedError{Reviewed: req.Expect, Fresh: p.ID}
	}
	rec, err := req.Runs.LoadRun(ctx)
	if err != nil {
		return false, err
	}
	if why := rec.resumes(req, p); why != "" {
		return false, &PlanChangedError{Reviewed: req.Expect, Fresh: p.ID, Why: why}
	}
	return true, nil
}

// resuming reports whether req continues the run of the reviewed plan
// with a forced replace, the one case the fresh plan must treat apart: the
// replace's delete may be done, and a forced replace of nothing is
// otherwise refused.
func resuming(ctx context.Context, req ApplyRequest) (bool, error) {
	if req.Runs == nil || req.Expect == "" || req.RunID == "" || len(req.Replace) == 0 {
		return false, nil
	}
	rec, err := req.Runs.LoadRun(ctx)
	if err != nil {
		return false, err
	}
	return rec != nil && rec.PlanID == req.Expect && rec.RunID == req.RunID, nil
}

// Runs keeps the record of the plan an apply accepted last.
type Runs interface {
	// LoadRun returns the record, or nil when there is none (or one this
	// build cannot read, which can only refuse a resume, never allow one).
	LoadRun(ctx context.Context) (*RunRecord, error)
	// SaveRun replaces the record; it is called under the fleet's lock.
	SaveRun(ctx context.Context, r *RunRecord) error
}

// RunRecordVersion is the version of RunRecord.
const RunRecordVersion = 1

// RunRecord is an accepted apply. After the first part of a run has
// changed some of the cloud, a fresh plan no longer has the reviewed id;
// the record lets the rest of the same run check that the fresh plan is
// only what is left of the reviewed one, and refuse anything else.
type RunRecord struct {
	Version int    `json:"version"`
	RunID   string `json:"runId"`
	PlanID  string `json:"planId"`
	Destroy bool   `json:"destroy,omitempty"`
	// Document is the hash of the accepted document: a resume must send
	// the same one, so that the only difference between the fresh plan and
	// the reviewed one is the progress already made.
	Document string `json:"document"`
	// Targets and Replace are the accepted request's scope: a resume must
	// send the same.
	Targets  []spec.Address  `json:"targets,omitempty"`
	Replace  []spec.Address  `json:"replace,omitempty"`
	Actions  []engine.Action `json:"actions"`
	Accepted time.Time       `json:"accepted"`
}

func newRunRecord(req ApplyRequest, p *engine.Plan, now time.Time) *RunRecord {
	return &RunRecord{Version: RunRecordVersion, RunID: req.RunID, PlanID: p.ID, Destroy: req.Destroy,
		Document: DocumentHash(req.Document), Targets: p.Targets, Replace: p.Replace, Actions: p.Actions, Accepted: now.UTC()}
}

// resumes says why the fresh plan p may not continue the run of req, or ""
// when it may: the same run resumes the plan it was accepted with, and
// every action of p is what is left of one of its actions.
func (r *RunRecord) resumes(req ApplyRequest, p *engine.Plan) string {
	switch {
	case r == nil || r.PlanID != req.Expect:
		return "no apply of the reviewed plan is in progress"
	case req.RunID == "" || r.RunID != req.RunID:
		return fmt.Sprintf("the reviewed plan was accepted for run %q, and this request is run %q", r.RunID, req.RunID)
	case r.Destroy != req.Destroy:
		return "the reviewed plan was accepted for another operation"
	case r.Document != DocumentHash(req.Document):
		return "the document is not the one the reviewed plan was accepted with"
	case !slices.Equal(r.Targets, p.Targets) || !slices.Equal(r.Replace, p.Replace):
		return "the targets or forced replaces are not the ones the reviewed plan was accepted with"
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

// DocumentHash identifies a document by its canonical encoding, so that
// the same document sent by another encoder hashes the same.
func DocumentHash(doc *spec.Document) string {
	b, _ := json.Marshal(doc)
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

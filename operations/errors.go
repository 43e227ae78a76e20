package operations

import (
	"fmt"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
	"github.com/infra-iac/infra/sweep"
)

// The typed errors of the layers below, named here for the front ends.
type (
	// BrakeError refuses to destroy most of a fleet that still declares
	// things; the request's Force overrides it.
	BrakeError = engine.BrakeError
	// LockedError is a fleet whose lock another run holds.
	LockedError = state.LockedError
	// AccountMismatchError is credentials for another account than the
	// fleet declares.
	AccountMismatchError = engine.AccountMismatchError
	// AgeError is a sweep's age floor that does not parse.
	AgeError = sweep.AgeError
)

// ErrNoPrefix refuses a sweep without a prefix.
var ErrNoPrefix = sweep.ErrNoPrefix

// DiagnosticsError refuses an operation on a fleet whose check or plan has
// errors. Nothing in the cloud or the state was touched.
type DiagnosticsError struct {
	Diagnostics []spec.Diagnostic
	// Planned is set when the plan found the errors (having read the
	// clouds); unset, the document itself has them and nothing was read.
	Planned bool
}

func (e *DiagnosticsError) Error() string {
	return fmt.Sprintf("the fleet has %d error(s)", e.Count())
}

// Count is the number of errors among the diagnostics.
func (e *DiagnosticsError) Count() int {
	n, _ := spec.CountDiagnostics(e.Diagnostics)
	return n
}

// PlanChangedError refuses a reviewed apply whose fresh plan is not the
// reviewed one, nor (when the same run resumes) what is left of it.
// Nothing was changed.
type PlanChangedError struct {
	// Reviewed and Fresh are the plans' ids.
	Reviewed, Fresh string
	// Why says what differs, when a resume was considered; else empty.
	Why string
}

func (e *PlanChangedError) Error() string {
	msg := fmt.Sprintf("the reviewed plan is %s, but the fleet and the cloud now give %s", e.Reviewed, e.Fresh)
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg
}

// NotReviewedError refuses an apply that names no reviewed plan and has
// no one to confirm the fresh one.
type NotReviewedError struct {
	// Fresh is the fresh plan's id, which the caller may review.
	Fresh   string
	Destroy bool
}

func (e *NotReviewedError) Error() string {
	return fmt.Sprintf("no reviewed plan and no confirmation for the fresh plan %s", e.Fresh)
}

package render

import (
	"github.com/infra-iac/infra/engine"
)

// AppliedPlan is what apply --json and destroy --json print: the plan JSON
// (format version 1, every field plan --json writes) of the plan the run
// made, with how the run ended under "apply". It is an optional addition
// to version 1, so a reader of plans reads it as a plan (apply --plan,
// graph --plan, a policy) and one of applies reads the outcome.
type AppliedPlan struct {
	*engine.Plan
	Apply ApplyOutcome `json:"apply"`
}

// Outcomes of an apply, in ApplyOutcome.Outcome: the words of the
// pull-request comment's verdict (Apply.Verdict).
const (
	// OutcomeApplied: every action is done; with no actions, nothing
	// needed doing.
	OutcomeApplied = "applied"
	// OutcomeFailed: an action failed (its row says which and why), or
	// the run failed after it had a plan (a save, the publication).
	OutcomeFailed = "failed"
	// OutcomeIncomplete: interrupted; what finished is recorded, the
	// rest never started. Running again finishes it.
	OutcomeIncomplete = "incomplete"
	// OutcomeRefused: nothing was started, and nothing changed: the fleet
	// has errors, the brake, a saved plan that is no longer the fresh one,
	// no confirmation.
	OutcomeRefused = "refused"
)

// ApplyOutcome is how an apply or a destroy ended.
type ApplyOutcome struct {
	// Verb is apply or destroy (also for apply --plan of a saved
	// teardown).
	Verb    string `json:"verb"`
	Outcome string `json:"outcome"`
	// Error is the error the run ended with, the words of its last line
	// on stderr without "error: "; absent when it succeeded.
	Error string `json:"error,omitempty"`
	// Applied has one row per action of the plan, in the plan's order:
	// done, failed (with the provider's words), skipped (a dependency
	// failed, or a build did, so nothing is deleted) or not-started (the
	// run was refused or stopped before its turn).
	Applied []engine.Applied `json:"applied"`
	// ElapsedMs is the engine's time for the apply (recording what
	// exists, the actions, the saves); 0 when it did not run.
	ElapsedMs int64 `json:"elapsedMs"`
}

// NewApplyOutcome is the outcome of a run that made plan p: report is
// what the engine did (nil when it did nothing), err the run's error as
// the command line words it, refused whether err refused before
// anything started.
func NewApplyOutcome(verb string, p *engine.Plan, report *engine.Report, err error, refused bool) ApplyOutcome {
	o := ApplyOutcome{Verb: verb, Outcome: OutcomeApplied, Applied: []engine.Applied{}}
	if report != nil {
		o.Applied, o.ElapsedMs = report.Applied, report.ElapsedMs
	} else {
		for _, a := range p.Actions {
			o.Applied = append(o.Applied, engine.Applied{Address: a.Address, Action: a.Action, Status: engine.StatusNotStarted})
		}
	}
	if err == nil {
		return o
	}
	o.Error = err.Error()
	switch {
	case report == nil && refused:
		o.Outcome = OutcomeRefused
	case report != nil && report.Incomplete && !anyFailed(report.Applied):
		o.Outcome = OutcomeIncomplete
	default:
		o.Outcome = OutcomeFailed
	}
	return o
}

func anyFailed(rows []engine.Applied) bool {
	for _, a := range rows {
		if a.Status == engine.StatusFailed {
			return true
		}
	}
	return false
}

// Refreshed is what refresh --json prints: the plan JSON's header
// (formatVersion, fleet, accounts) and what the refresh observed, so that
// a reader of plans reads its accounts as a plan's.
type Refreshed struct {
	FormatVersion int              `json:"formatVersion"`
	Fleet         string           `json:"fleet"`
	Accounts      []engine.Account `json:"accounts"`
	Refresh       RefreshCounts    `json:"refresh"`
}

// RefreshCounts are a refresh's numbers: the resources now in the cache,
// and the ledger's rows, which a refresh never changes.
type RefreshCounts struct {
	Observed int `json:"observed"`
	Managed  int `json:"managed"`
}

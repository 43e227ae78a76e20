// Package executor is infra inside AWS: a Lambda handler that plans and
// applies a fleet document with the state in S3, so CI holds no admin keys
// (it may only invoke the function). This file is the wire protocol, the
// contract between the executor and its callers (the GitHub Action and
// `infra executor invoke`); docs/executor.md documents it.
package executor

import (
	"encoding/json"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// ProtocolVersion is the version of Request and Response. A response always
// carries it, so a caller can tell an executor older than itself.
const ProtocolVersion = 1

// Operation is what a request asks for.
type Operation string

const (
	// OpPlan observes and returns the plan; it writes nothing.
	OpPlan Operation = "plan"
	// OpApply re-plans under the lock and applies, but only when the fresh
	// plan is the reviewed one (ExpectPlanID).
	OpApply Operation = "apply"
	// OpDestroy deletes everything the fleet manages (the same pipeline
	// against a target that declares nothing).
	OpDestroy Operation = "destroy"
	// OpDiscover rebuilds the ledger from the ownership tags; it saves it
	// only with Options.Write.
	OpDiscover Operation = "discover"
	// OpSweep deletes leftovers by name prefix (options.prefix,
	// olderThan, regions; yes to delete, else a dry run).
	OpSweep Operation = "sweep"
	// OpOutput reads a fleet's published record (what `infra output`
	// prints): the fleet named by Document or by Fleet, narrowed by
	// Options.Select. It reads the state and no cloud, and writes nothing;
	// a secret export is its reference, never its value.
	OpOutput Operation = "output"
	// OpDrift reports what changed in the cloud out of band since the
	// last apply (what `infra drift` prints); it writes nothing and takes
	// no lock.
	OpDrift Operation = "drift"
	// OpImport lists what exists in the fleet's accounts that no fleet
	// owns, as declarations to adopt (what `infra import` finds),
	// narrowed by Options.Kinds, Regions and Prefix. It writes nothing
	// and takes no lock: the caller writes the declarations into its fleet.
	OpImport Operation = "import"
)

// Operations lists every operation, in the order docs present them.
var Operations = []Operation{OpPlan, OpApply, OpDestroy, OpDiscover, OpSweep, OpOutput, OpDrift, OpImport}

// Request is the Lambda payload.
type Request struct {
	Operation Operation `json:"operation"`
	// Document is the infra/v1 fleet document, as `infra synth` prints it.
	// It stays raw so the executor decodes it with the same rules as the
	// CLI (spec.DecodeDocument), which report every problem at once.
	Document json.RawMessage `json:"document"`
	// Fleet names the fleet instead of a document (output only).
	Fleet string `json:"fleet,omitempty"`
	// Upstream holds, by fleet, what a provider planned in the same run
	// will publish (its plan's Published), for a consumer's plan (plan
	// only): see operations.PlanRequest.Upstream. It changes what the plan
	// shows, never what an apply reads: apply reads the stored record.
	Upstream map[string]*spec.Published `json:"upstream,omitempty"`
	// Targets and Replace narrow the plan (plan, apply): only the targets
	// and what they depend on are planned, and each address in Replace is
	// replaced though nothing forces it (operations.Scope). An apply of a
	// reviewed partial plan must send the plan's own targets and replace,
	// which its JSON carries, or the fresh plan has another id and is
	// refused. Each is "provider/kind/name".
	Targets []spec.Address `json:"targets,omitempty"`
	Replace []spec.Address `json:"replace,omitempty"`
	// ExpectPlanID is the reviewed plan's id ("sha256:…"). For apply and
	// destroy, when set, a fresh plan with another id is refused. Re-sending
	// the same request (same RunID) after "incomplete" resumes: the executor
	// remembers the accepted plan and accepts a fresh plan that is what is
	// left of it.
	ExpectPlanID string `json:"expectPlanId,omitempty"`
	// RunID identifies one logical apply across its invocations (the
	// action uses the workflow run id). It goes into the lock, so a held
	// lock names the run.
	RunID   string  `json:"runId,omitempty"`
	Options Options `json:"options,omitempty"`
}

// Options refine an operation; each says which one it applies to.
type Options struct {
	// Force overrides the brake (apply, destroy).
	Force bool `json:"force,omitempty"`
	// Unreviewed allows apply or destroy without ExpectPlanID: the fresh
	// plan is applied as it is, like `infra apply --yes`. Without it, an
	// apply that names no reviewed plan is refused, so a caller that forgot
	// the id never applies something nobody read.
	Unreviewed bool `json:"unreviewed,omitempty"`
	// Write saves the rebuilt ledger (discover).
	Write bool `json:"write,omitempty"`
	// Sweep's options: the prefix, the age floor ("2h", "7d"), the
	// regions (else the document's placement), and Yes to delete rather
	// than report. Prefix and Regions narrow import too: what a name
	// starts with, and the regions to list (else the fleet's).
	Prefix    string   `json:"prefix,omitempty"`
	OlderThan string   `json:"olderThan,omitempty"`
	Regions   []string `json:"regions,omitempty"`
	Yes       bool     `json:"yes,omitempty"`
	// Kinds are the kinds import lists ("queues"); empty is every kind.
	Kinds []string `json:"kinds,omitempty"`
	// Select narrows output to one capability ("eu") or one export
	// ("eu.endpoint").
	Select string `json:"select,omitempty"`
	// LockTimeout is how long a writing operation waits for a lock
	// another run holds ("90s"), within what is left of the invocation;
	// empty refuses at once.
	LockTimeout string `json:"lockTimeout,omitempty"`
}

// Status is how an operation ended.
type Status string

const (
	// StatusDone: the operation finished. For apply, every action succeeded.
	StatusDone Status = "done"
	// StatusIncomplete: the executor stopped before its deadline with the
	// ledger saved; send the same request again to resume.
	StatusIncomplete Status = "incomplete"
	// StatusRefused: apply found a fresh plan other than ExpectPlanID;
	// Plan is the fresh plan, and nothing was changed.
	StatusRefused Status = "refused"
	// StatusFailed: an error (Message), a document with errors
	// (Diagnostics), or an action that failed (Applied).
	StatusFailed Status = "failed"
)

// Response is the Lambda result. A handler never returns a Go error for a
// failure it understood: a Lambda error reaches the caller as an opaque
// errorMessage, while a failed Response says what happened and what to do.
type Response struct {
	ProtocolVersion int    `json:"protocolVersion"`
	Operation       string `json:"operation"`
	Status          Status `json:"status"`
	// Plan is the plan (plan, apply, destroy): for refused, the fresh plan
	// that differs from the reviewed one; for apply, the plan this
	// invocation worked on.
	Plan *operations.Plan `json:"plan,omitempty"`
	// Applied is what this invocation did, one row per action of Plan
	// (done, failed, skipped, not-started). After incomplete, the next
	// invocation reports only its own rows.
	Applied []operations.Applied `json:"applied,omitempty"`
	// Diagnostics are the fleet's check and plan rows.
	Diagnostics []spec.Diagnostic `json:"diagnostics,omitempty"`
	// Discovery is the rebuilt ledger and its differences (discover).
	Discovery *operations.Discovery `json:"discovery,omitempty"`
	// Saved is set when discover wrote the rebuilt ledger.
	Saved bool `json:"saved,omitempty"`
	// Sweep is the sweep's report: candidates, what was kept and why,
	// survivors with the provider's words.
	Sweep *operations.SweepReport `json:"sweep,omitempty"`
	// Output is the fleet's published record, narrowed to what was asked
	// (output). A done output without it: the fleet has published nothing
	// (Message says where it looked).
	Output *operations.Output `json:"output,omitempty"`
	// Drift is the drift report (drift).
	Drift *operations.Drift `json:"drift,omitempty"`
	// Import is what import found: the accounts listed, a declaration per
	// resource no fleet owns, and counts of what was passed over.
	Import *operations.ImportResult `json:"import,omitempty"`
	// Consumers are, by capability, the fleets that claim what this fleet
	// provides (plan of a fleet that provides).
	Consumers map[string][]string `json:"consumers,omitempty"`
	// Message says, in one sentence, what happened and what to do next.
	Message string `json:"message,omitempty"`
	// RunID echoes the request's.
	RunID string `json:"runId,omitempty"`
	// ElapsedMs is this invocation's time in the handler.
	ElapsedMs int64 `json:"elapsedMs"`
}

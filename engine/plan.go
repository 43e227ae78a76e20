// Package engine observes the cloud, diffs it against a fleet, orders the
// actions and applies them. It knows addresses and regions, never
// credentials or endpoints. The Plan is versioned data; the text, JSON and
// markdown renderers all draw from it, so they can never disagree.
package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// FormatVersion is the version of the plan JSON.
const FormatVersion = 1

// ActionKind is what an action does.
type ActionKind string

const (
	Create  ActionKind = "create"
	Update  ActionKind = "update"
	Replace ActionKind = "replace"
	Delete  ActionKind = "delete"
	// Forget drops the ledger row and releases the ownership mark; the
	// resource stays.
	Forget ActionKind = "forget"
	// Adopt records a declared resource that exists and is ours, with
	// nothing to change.
	Adopt ActionKind = "adopt"
)

// ReplaceOrder is the order in which a replace deletes the old resource
// and creates the new one.
type ReplaceOrder string

// DeleteFirst deletes the old resource, and before it whatever holds an
// attachment to it, then creates the new one and, after it, those again.
// It is the order whenever the old and the new cannot exist at once.
const DeleteFirst ReplaceOrder = "delete-first"

// Destructive reports whether the action destroys a resource.
func (k ActionKind) Destructive() bool { return k == Delete || k == Replace }

// Change is one field's difference.
type Change struct {
	Field string `json:"field"`
	// Before is what the cloud reports; absent at create.
	Before any `json:"before,omitempty"`
	// After is the target; absent when it is known only after apply.
	After             any  `json:"after,omitempty"`
	ForcesReplacement bool `json:"forcesReplacement,omitempty"`
	// Sensitive: a secret; Before and After are never filled.
	Sensitive bool `json:"sensitive,omitempty"`
	// KnownAfterApply: After depends on a value only the apply will know.
	KnownAfterApply bool `json:"knownAfterApply,omitempty"`
	// From names the values from other fleets the target reads, such as
	// "pg-shared:eu.endpoint". The plan's id binds these names rather than
	// After, so a plan reviewed while a value was pending stays the same
	// plan once the provider has published it.
	From []string `json:"from,omitempty"`
	// Pending are those of From that their provider has not published
	// yet (a consumer planned beside its provider's plan): apply refuses
	// until they are. Not part of the id, for the reason From is.
	Pending []string `json:"pending,omitempty"`
}

// Action is one step of a plan. The reason explains the action; it never
// decides it.
type Action struct {
	Address spec.Address `json:"address"`
	Action  ActionKind   `json:"action"`
	Reason  string       `json:"reason,omitempty"`
	Region  string       `json:"region"`
	Changes []Change     `json:"changes,omitempty"`
	// Order is how a replace runs; the reason says why.
	Order ReplaceOrder `json:"order,omitempty"`
	// DependsOn lists the actions of this plan that must finish first.
	DependsOn []spec.Address `json:"dependsOn,omitempty"`
	// Class is how a reviewer reads the action (ClassOf its kind): an
	// update is an update in place, which the PR comment groups apart
	// from a replace. Cause is the short why of the class: the fields that
	// change, the field that forces a replace and what it reads, or
	// "cut: members.db". Both explain the action; neither decides it, and
	// the id leaves them out (computeID).
	Class ActionClass `json:"class,omitempty"`
	Cause string      `json:"cause,omitempty"`
	// Component and Member place the resource in the component instance
	// it belongs to ("shop-a", "db"), from PlanOptions.Members, so that a
	// reviewer sees a component's resources together. Empty for a resource
	// of no component.
	Component string `json:"component,omitempty"`
	Member    string `json:"member,omitempty"`
	// Cut is, for a delete whose cause is a component member the document
	// no longer has, that member's path ("shop-a.db"), from
	// PlanOptions.CutOf.
	Cut string `json:"cut,omitempty"`
}

// Account is one provider's header line: the account the credentials
// belong to, checked against the fleet's, and the regions in play.
type Account struct {
	Provider spec.Provider `json:"provider"`
	Account  string        `json:"account"`
	Regions  []string      `json:"regions"`
	// Unverified: no call established the credentials' account, because
	// the plan was made from the cache; Account is the one the document
	// states ("" when it states none).
	Unverified bool `json:"unverified,omitempty"`
}

// Summary counts actions by kind.
type Summary struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
	Forget  int `json:"forget"`
	Adopt   int `json:"adopt"`
	// Contract counts the plan's contracts. They change nothing, so
	// Changes leaves them out; omitted when zero, so that a plan without
	// contracts reads as before.
	Contract int `json:"contract,omitempty"`
}

// Changes is the number of actions that change the cloud.
func (s Summary) Changes() int { return s.Create + s.Update + s.Replace + s.Delete }

// Plan is an ordered list of actions, the diagnostics found on the way, and
// the header. Its ID is a hash of its canonical content, which is what "the
// reviewed plan" means.
type Plan struct {
	FormatVersion int    `json:"formatVersion"`
	Fleet         string `json:"fleet"`
	ID            string `json:"id"`
	Destroy       bool   `json:"destroy,omitempty"`
	// Targets, when set, makes this a partial plan: only these resources
	// (sorted, as given) and what they depend on were planned
	// (PlanOptions.Targets). Replace lists the forced replaces. Both are
	// part of the id, so a partial plan is never a full one.
	Targets  []spec.Address `json:"targets,omitempty"`
	Replace  []spec.Address `json:"replace,omitempty"`
	Accounts []Account      `json:"accounts"`
	Actions  []Action       `json:"actions"`
	// Contracts are the resources with no action of their own that read,
	// at run time, a resource this plan updates or replaces. They are
	// told, never applied, and not part of the id (computeID).
	Contracts   []Contract        `json:"contracts,omitempty"`
	Diagnostics []spec.Diagnostic `json:"diagnostics"`
	// Attention lists what the plan found in the cloud and leaves alone,
	// which a person should look at: a declared resource another fleet or
	// nobody owns, a ledger row now tagged for another fleet, an excluded
	// resource. A plan with no actions and some attention is not "the
	// cloud matches the fleet".
	Attention []spec.Diagnostic `json:"attention"`
	Summary   Summary           `json:"summary"`
	// Applicable is false when any diagnostic is an error: apply refuses
	// such a plan. Only apply reads it; the plan and its rows are shown
	// either way.
	Applicable bool `json:"applicable"`
	// Publishes is what this plan's apply will publish for other fleets
	// (Published), for a fleet that provides capabilities: a consumer
	// planned beside this plan reads it (infra plan --upstream). Not part
	// of the id.
	Publishes *spec.Published `json:"publishes,omitempty"`
	// FromCache is set when the plan was made from the cache, what the
	// last apply or refresh saw, without reading the cloud
	// (PlanFromCache). Such a plan is for review only: apply always
	// observes the cloud, and it is part of the id, so it is never the id
	// of a refreshed plan.
	FromCache *CacheInfo `json:"fromCache,omitempty"`

	// run carries what Apply needs and the JSON must not show.
	run *run
}

// HasChanges reports whether applying the plan would change anything
// recorded or real.
func (p *Plan) HasChanges() bool { return len(p.Actions) > 0 }

// HasDestroys reports whether the plan deletes or replaces anything.
func (p *Plan) HasDestroys() bool { return p.Summary.Delete+p.Summary.Replace > 0 }

// computeID hashes the canonical form of everything that decides what an
// apply would do: fleet, accounts, the ordered actions and their changes.
// Diagnostics and timestamps stay out, so the same inputs against the same
// cloud always give the same id. So do the contracts, which apply never
// reads, and each action's class, cause, component, member and cut: they
// are drawn from what the id binds already (the kind, the changes) or from
// the component map, which shapes the review, not the apply. Leaving them
// out also keeps the id of a plan saved before they existed. The targets
// and the forced replaces are in, omitted when empty for the same reason:
// a partial plan whose actions happen to equal the full plan's is still
// another plan, which an apply without the same targets must not accept.
// Whether the plan came from the cache is in too (not when, which is a
// timestamp), omitted for a refreshed plan: the same actions recalled
// rather than observed are not what anyone may apply.
func (p *Plan) computeID() string {
	canon := struct {
		FormatVersion int            `json:"formatVersion"`
		Fleet         string         `json:"fleet"`
		Destroy       bool           `json:"destroy"`
		Targets       []spec.Address `json:"targets,omitempty"`
		Replace       []spec.Address `json:"replace,omitempty"`
		Accounts      []Account      `json:"accounts"`
		Actions       []Action       `json:"actions"`
		FromCache     bool           `json:"fromCache,omitempty"`
	}{p.FormatVersion, p.Fleet, p.Destroy, p.Targets, p.Replace, p.Accounts, bindReferences(p.Actions), p.FromCache != nil}
	// encoding/json sorts map keys, so this is canonical for our values.
	b, err := json.Marshal(canon)
	if err != nil {
		// Only a value JSON cannot carry (a NaN a driver reported) gets
		// here; hash its printed form rather than fail the plan.
		b = []byte(fmt.Sprintf("%#v", canon))
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// bindReferences is the actions as the id sees them: a change that reads
// other fleets' values counts by their names, not by what they resolved to.
func bindReferences(actions []Action) []Action {
	out := make([]Action, len(actions))
	for i, a := range actions {
		out[i] = a
		out[i].Class, out[i].Cause, out[i].Component, out[i].Member, out[i].Cut = "", "", "", "", ""
		out[i].Changes = make([]Change, len(a.Changes))
		for j, c := range a.Changes {
			if len(c.From) > 0 {
				c.After, c.KnownAfterApply, c.Pending = nil, false, nil
			}
			out[i].Changes[j] = c
		}
	}
	return out
}

// Summarize counts the actions into the summary; the planner calls it, and
// so may anyone who builds a plan by hand.
func (p *Plan) Summarize() {
	p.Summary = Summary{}
	for _, a := range p.Actions {
		switch a.Action {
		case Create:
			p.Summary.Create++
		case Update:
			p.Summary.Update++
		case Replace:
			p.Summary.Replace++
		case Delete:
			p.Summary.Delete++
		case Forget:
			p.Summary.Forget++
		case Adopt:
			p.Summary.Adopt++
		}
	}
	p.Summary.Contract = len(p.Contracts)
}

// DecodePlan reads plan JSON as infra writes it (render.JSON).
func DecodePlan(data []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("not a plan file infra wrote: %w", err)
	}
	if p.FormatVersion == 0 && p.ID == "" {
		return nil, fmt.Errorf("not a plan file infra wrote: it has no formatVersion and no id (write one with infra plan --out FILE)")
	}
	if p.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("plan format version %d, but this build understands %d; plan again with this build", p.FormatVersion, FormatVersion)
	}
	if !strings.HasPrefix(p.ID, "sha256:") {
		return nil, fmt.Errorf("not a plan file infra wrote: no id")
	}
	return &p, nil
}

package sweep

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/infra-iac/infra/spec"
)

// Report is what a sweep found and did. Every resource it listed is in
// Candidates or Kept; nothing it saw goes unreported.
type Report struct {
	Prefix    string    `json:"prefix"`
	OlderThan string    `json:"olderThan"`
	Delete    bool      `json:"delete"`
	At        time.Time `json:"at"`
	Clouds    []Cloud   `json:"clouds"`
	// Candidates are the resources every rule allows deleting: in a dry
	// run, what would be deleted; after a deletion, each with its outcome.
	Candidates []Entry `json:"candidates"`
	// Kept are the resources a rule protects, each with its reason.
	Kept []Entry `json:"kept"`
	// Survivors are the candidates still there after the deletion, each
	// with the provider's own words.
	Survivors []Entry `json:"survivors,omitempty"`
	// Errors are listings and reads that failed: what they would have
	// shown is unknown, so the sweep is incomplete.
	Errors []string `json:"errors,omitempty"`
	// Warnings are gaps the sweep knows about, such as a kind this build
	// has no driver for.
	Warnings  []string `json:"warnings,omitempty"`
	Deleted   int      `json:"deleted"`
	Rounds    int      `json:"rounds,omitempty"`
	ElapsedMs int64    `json:"elapsedMs"`
}

// Cloud is one provider: swept in an account and regions, or skipped.
type Cloud struct {
	Provider spec.Provider `json:"provider"`
	Account  string        `json:"account,omitempty"`
	Regions  []string      `json:"regions,omitempty"`
	Skipped  string        `json:"skipped,omitempty"`
}

// Entry is one listed resource and the sweep's decision on it.
type Entry struct {
	Address spec.Address `json:"address"`
	Region  string       `json:"region"`
	// Created is when the cloud says the resource was made; absent when
	// it does not say.
	Created *time.Time `json:"created,omitempty"`
	// Owner is the fleet its ownership mark names; empty for none.
	Owner string `json:"owner,omitempty"`
	// OwnerUnknown: the mark could not be read (the entry is kept).
	OwnerUnknown bool `json:"ownerUnknown,omitempty"`
	// Reason says which rule keeps a kept entry; Why says it in words.
	Reason Reason `json:"reason,omitempty"`
	Why    string `json:"why,omitempty"`
	// Status is a candidate's outcome.
	Status Status `json:"status,omitempty"`
	// Attempts counts delete calls (one per round it took part in).
	Attempts int `json:"attempts,omitempty"`
	// Error is the last refusal, in the provider's words.
	Error string `json:"error,omitempty"`
}

// Age is how old the entry was at t, and whether the cloud said.
func (e Entry) Age(t time.Time) (time.Duration, bool) {
	if e.Created == nil {
		return 0, false
	}
	return t.Sub(*e.Created), true
}

// Reason names the rule that keeps a resource.
type Reason string

const (
	// ReasonPrefix: the name does not start with the prefix.
	ReasonPrefix Reason = "prefix"
	// ReasonExcluded: an exclusion covers it.
	ReasonExcluded Reason = "excluded"
	// ReasonForeign: its ownership tag names a fleet outside the prefix.
	ReasonForeign Reason = "foreign"
	// ReasonUnreadable: its ownership tag could not be read.
	ReasonUnreadable Reason = "unreadable"
	// ReasonTooYoung: it is not older than the age floor.
	ReasonTooYoung Reason = "too-young"
	// ReasonAgeUnknown: the cloud does not say when it was made, and the
	// age floor is not 0.
	ReasonAgeUnknown Reason = "age-unknown"
)

// Status is a candidate's outcome.
type Status string

const (
	StatusWouldDelete Status = "would-delete" // dry run
	StatusDeleted     Status = "deleted"
	StatusLeft        Status = "left" // still there after the deletion: a survivor
)

// OK reports whether the sweep finished with nothing unknown and nothing
// left.
func (r *Report) OK() bool { return len(r.Errors) == 0 && len(r.Survivors) == 0 }

// Err is nil when the sweep is OK, and otherwise says what is wrong in one
// line; the report has the details.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	var parts []string
	if n := len(r.Survivors); n > 0 {
		names := make([]string, 0, n)
		for _, s := range r.Survivors {
			names = append(names, s.Address.String())
		}
		parts = append(parts, fmt.Sprintf("%d resource(s) with the prefix %s are left: %s", n, r.Prefix, strings.Join(names, ", ")))
	}
	if n := len(r.Errors); n > 0 {
		parts = append(parts, fmt.Sprintf("the sweep is incomplete: %d listing(s) or read(s) failed (%s)", n, r.Errors[0]))
	}
	return &IncompleteError{Survivors: len(r.Survivors), Errors: len(r.Errors), msg: strings.Join(parts, "; ")}
}

// IncompleteError is Run's error when the sweep listed, but something is
// left or unknown.
type IncompleteError struct {
	Survivors, Errors int
	msg               string
}

func (e *IncompleteError) Error() string { return e.msg }

func (r *Report) sort() {
	for _, es := range [][]Entry{r.Candidates, r.Kept, r.Survivors} {
		sort.SliceStable(es, func(i, j int) bool {
			if es[i].Address != es[j].Address {
				return es[i].Address.Less(es[j].Address)
			}
			return es[i].Region < es[j].Region
		})
	}
	sort.Strings(r.Errors)
	sort.Strings(r.Warnings)
}

// EventKind says what an event reports.
type EventKind string

const (
	EventBegin    EventKind = "begin"    // the deletes start (Total)
	EventStart    EventKind = "start"    // a delete started
	EventAccount  EventKind = "account"  // an account was verified
	EventListed   EventKind = "listed"   // a listing finished
	EventDeleted  EventKind = "deleted"  // a delete succeeded
	EventDeferred EventKind = "deferred" // a delete was refused for now; a later round retries it
	EventFailed   EventKind = "failed"   // a delete failed for good, or a listing or read failed
	EventRound    EventKind = "round"    // a retry round starts
	EventWaiting  EventKind = "waiting"  // heartbeat: deletes still running
	EventVerify   EventKind = "verify"   // listing again to verify
	EventWarning  EventKind = "warning"  // something the user should read
)

// Event is one progress report.
type Event struct {
	Kind    EventKind
	Address spec.Address
	Region  string
	Message string
	Err     error
	Elapsed time.Duration
	// Outstanding lists what a heartbeat is still waiting for.
	Outstanding []spec.Address
	// Total is how many deletes the sweep runs (EventBegin).
	Total int
}

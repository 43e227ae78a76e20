package spec

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Severity of a diagnostic.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// RowID names the rule that produced a diagnostic: stable, kebab-case, one
// per rule. Every id is a Row… constant of rows.go, so a typo fails to
// compile and docs/diagnostics.md can list them all.
type RowID string

// Diagnostic is one problem found in user input. Diagnostics are data: they
// are collected and returned all at once, never thrown.
//
// In JSON a row also carries its v1 names: "address" (the subject) and
// "hint" (the resolution), with the same text, for readers written before
// the row had an id; decoding such a row fills Subject and Resolution.
type Diagnostic struct {
	Severity Severity
	// ID is the rule that produced the row.
	ID RowID
	// Subject is what the row is about: a resource's address, or a
	// document path such as "fleet" or "placement.aws" when it is about no
	// resource.
	Subject string
	Message string
	// Evidence is the fact that proves the row, where the rule has one at
	// hand: the other end of a reference, the owner tag's value, the
	// values that were allowed.
	Evidence string
	// Resolution says what to do.
	Resolution string
	// Member is the component member (instance.member, "shop-a.db.pg")
	// of the resource the row is about, when a component declared it.
	Member string
}

// diagnosticJSON is a Diagnostic on the wire, with the v1 names beside the
// new ones.
type diagnosticJSON struct {
	Severity   Severity `json:"severity"`
	ID         RowID    `json:"id"`
	Subject    string   `json:"subject"`
	Address    string   `json:"address"`
	Message    string   `json:"message"`
	Evidence   string   `json:"evidence,omitempty"`
	Resolution string   `json:"resolution,omitempty"`
	Hint       string   `json:"hint,omitempty"`
	Member     string   `json:"member,omitempty"`
}

// MarshalJSON writes the row with "address" and "hint" repeating subject
// and resolution for v1 readers.
func (d Diagnostic) MarshalJSON() ([]byte, error) {
	return json.Marshal(diagnosticJSON{Severity: d.Severity, ID: d.ID, Subject: d.Subject, Address: d.Subject,
		Message: d.Message, Evidence: d.Evidence, Resolution: d.Resolution, Hint: d.Resolution, Member: d.Member})
}

// UnmarshalJSON reads a row, a v1 one (only "address" and "hint") too.
func (d *Diagnostic) UnmarshalJSON(data []byte) error {
	var w diagnosticJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*d = Diagnostic{Severity: w.Severity, ID: w.ID, Subject: w.Subject, Message: w.Message,
		Evidence: w.Evidence, Resolution: w.Resolution, Member: w.Member}
	if d.Subject == "" {
		d.Subject = w.Address
	}
	if d.Resolution == "" {
		d.Resolution = w.Hint
	}
	return nil
}

// String is the row as text, escaped (Printable): its subject, message
// and resolution quote the document. The rule's id ends the line.
func (d Diagnostic) String() string {
	s := fmt.Sprintf("%s: %s: %s", d.Severity, d.Where(), Printable(d.Message))
	if d.Resolution != "" {
		s += " (" + Printable(d.Resolution) + ")"
	}
	return s + " [" + Printable(string(d.ID)) + "]"
}

// Errorf builds an error row of rule id about subject.
func Errorf(id RowID, subject, resolution, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: Error, ID: id, Subject: subject, Message: fmt.Sprintf(format, args...), Resolution: resolution}
}

// Warnf builds a warning row of rule id about subject.
func Warnf(id RowID, subject, resolution, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: Warning, ID: id, Subject: subject, Message: fmt.Sprintf(format, args...), Resolution: resolution}
}

// WithEvidence is d with the fact that proves it.
func (d Diagnostic) WithEvidence(evidence string) Diagnostic {
	d.Evidence = evidence
	return d
}

// HasErrors reports whether any row is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// CountDiagnostics counts the errors and the warnings among ds.
func CountDiagnostics(ds []Diagnostic) (errs, warns int) {
	for _, d := range ds {
		if d.Severity == Error {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}

// SortDiagnostics orders rows by subject, then errors before warnings,
// then id, message, resolution and evidence, and removes exact duplicates.
// The order is total, so the same input always prints the same table.
func SortDiagnostics(ds []Diagnostic) []Diagnostic {
	sort.SliceStable(ds, func(i, j int) bool { return diagnosticLess(ds[i], ds[j]) })
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && d == ds[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// diagnosticLess is the table's order: subject, then errors before
// warnings, then id, message, resolution and evidence.
func diagnosticLess(a, b Diagnostic) bool {
	if a.Subject != b.Subject {
		return a.Subject < b.Subject
	}
	if a.Severity != b.Severity {
		return a.Severity == Error
	}
	if a.ID != b.ID {
		return a.ID < b.ID
	}
	if a.Message != b.Message {
		return a.Message < b.Message
	}
	if a.Resolution != b.Resolution {
		return a.Resolution < b.Resolution
	}
	return a.Evidence < b.Evidence
}

// Where is the row's subject as text, printable, with its component
// member beside it when it has one: "aws/postgres/shop-a-db-pg
// (shop-a.db.pg)".
func (d Diagnostic) Where() string {
	if d.Member == "" {
		return Printable(d.Subject)
	}
	return Printable(d.Subject) + " (" + Printable(d.Member) + ")"
}

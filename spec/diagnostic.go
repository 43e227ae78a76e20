package spec

import (
	"fmt"
	"sort"
)

// Severity of a diagnostic.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Diagnostic is one problem found in user input. Diagnostics are data: they
// are collected and returned all at once, never thrown.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Address is the resource the row is about, or a document path such as
	// "fleet" or "placement.aws" when it is about no resource.
	Address string `json:"address"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// String is the row as text, escaped (Printable): its address, message
// and hint quote the document.
func (d Diagnostic) String() string {
	s := fmt.Sprintf("%s: %s: %s", d.Severity, Printable(d.Address), Printable(d.Message))
	if d.Hint != "" {
		s += " (" + Printable(d.Hint) + ")"
	}
	return s
}

// Errorf builds an error row.
func Errorf(addr, hint, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: Error, Address: addr, Message: fmt.Sprintf(format, args...), Hint: hint}
}

// Warnf builds a warning row.
func Warnf(addr, hint, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: Warning, Address: addr, Message: fmt.Sprintf(format, args...), Hint: hint}
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

// SortDiagnostics orders rows by address, then errors before warnings, then
// message, and removes exact duplicates. The order is total, so the same
// input always prints the same table.
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

// diagnosticLess is the table's order: address, then errors before
// warnings, then message, then hint.
func diagnosticLess(a, b Diagnostic) bool {
	if a.Address != b.Address {
		return a.Address < b.Address
	}
	if a.Severity != b.Severity {
		return a.Severity == Error
	}
	if a.Message != b.Message {
		return a.Message < b.Message
	}
	return a.Hint < b.Hint
}

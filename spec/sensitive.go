package spec

import "fmt"

// Sensitive carries a secret's value. Every way of printing it — String,
// GoString, %v, %+v, %#v, %s, %q and JSON — shows "(sensitive)", so a value
// that reaches a log line, an error or a plan by mistake still stays secret.
// Only Reveal gives the value, and only a driver's create call should use it.
type Sensitive struct{ v string }

// Redacted is what a Sensitive value prints as.
const Redacted = "(sensitive)"

// NewSensitive wraps a value.
func NewSensitive(v string) Sensitive { return Sensitive{v} }

// Reveal returns the value. Call it only where the value leaves for the
// cloud.
func (s Sensitive) Reveal() string { return s.v }

func (Sensitive) String() string                { return Redacted }
func (Sensitive) GoString() string              { return Redacted }
func (Sensitive) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(Redacted)) }
func (Sensitive) MarshalJSON() ([]byte, error)  { return []byte(`"` + Redacted + `"`), nil }
func (Sensitive) MarshalText() ([]byte, error)  { return []byte(Redacted), nil }

package spec

import (
	"crypto/rand"
	"fmt"
)

// Sensitive carries a secret's value. Every way of printing it — String,
// GoString, %v, %+v, %#v, %s, %q and JSON — shows "(sensitive)", so a value
// that reaches a log line, an error or a plan by mistake still stays secret.
// Only Reveal gives the value, and only a driver's create call should use it.
//
// The value is kept masked with a key drawn at start: fmt cannot call Format
// on a Sensitive held in another value's unexported field and prints such a
// field by reflection instead, which then shows only masked bytes.
type Sensitive struct{ masked []byte }

// sensitiveKey masks every Sensitive in this process. Reflection on a value
// cannot reach it.
var sensitiveKey = func() [64]byte {
	var k [64]byte
	_, _ = rand.Read(k[:])
	return k
}()

func mask(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = c ^ sensitiveKey[i%len(sensitiveKey)] ^ byte(i/len(sensitiveKey))
	}
	return out
}

// Redacted is what a Sensitive value prints as.
const Redacted = "(sensitive)"

// NewSensitive wraps a value.
func NewSensitive(v string) Sensitive { return Sensitive{mask([]byte(v))} }

// Reveal returns the value. Call it only where the value leaves for the
// cloud.
func (s Sensitive) Reveal() string { return string(mask(s.masked)) }

func (Sensitive) String() string                { return Redacted }
func (Sensitive) GoString() string              { return Redacted }
func (Sensitive) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(Redacted)) }
func (Sensitive) MarshalJSON() ([]byte, error)  { return []byte(`"` + Redacted + `"`), nil }
func (Sensitive) MarshalText() ([]byte, error)  { return []byte(Redacted), nil }

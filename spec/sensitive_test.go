package spec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A secret stays secret however it is printed, including inside another
// value's unexported field, where fmt cannot call its methods.
func TestSensitiveNeverPrints(t *testing.T) {
	const canary = "CANARY-8c1d"
	s := NewSensitive(canary)
	type holder struct {
		secret Sensitive
		Public Sensitive
		m      map[string]any
	}
	h := holder{secret: s, Public: s, m: map[string]any{"v": s}}
	var out strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		fmt.Fprintf(&out, verb+"\n", s)
		fmt.Fprintf(&out, verb+"\n", h)
		fmt.Fprintf(&out, verb+"\n", &h)
		fmt.Fprintf(&out, verb+"\n", []any{s, h})
	}
	b, _ := json.Marshal(map[string]any{"s": s, "h": h, "l": []Sensitive{s}})
	out.Write(b)
	out.WriteString(s.String() + s.GoString())
	if strings.Contains(out.String(), canary) || strings.Contains(out.String(), fmt.Sprintf("%x", canary)) {
		t.Fatalf("the value leaked:\n%s", out.String())
	}
	if s.Reveal() != canary || (Sensitive{}).Reveal() != "" {
		t.Fatal("Reveal")
	}
}

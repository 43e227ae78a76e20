package spec

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// The comparison rules, stated once: the engine diffs with them, and the
// driver conformance suite holds drivers to them.

// Canon normalises a JSON-like value so that equal values compare equal:
// every number becomes a float64, every list []any, every object
// map[string]any, whatever Go types a driver used. A Sensitive becomes its
// redaction, so a secret can never be compared or kept.
func Canon(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = Canon(y)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = Canon(y)
		}
		return out
	case Sensitive:
		return Redacted
	}
	return v
}

// Equal compares a target with a reported value under field f's rule:
// lists the service may reorder compare as sets (by each element's JSON
// form, so lists of objects too), versions by dot-prefix, policy documents
// by meaning (ComparePolicy), other JSON by its value (CompareJSON),
// objects of labelled values by their values, everything else exactly.
// Duplicates are kept, and an empty list is not a nil one.
func Equal(f Field, target, reported any) bool {
	a, b := Canon(target), Canon(reported)
	if f.Compare == CompareVersion {
		want, ok1 := a.(string)
		got, ok2 := b.(string)
		if ok1 && ok2 {
			return got == want || strings.HasPrefix(got, want+".")
		}
	}
	if f.Type == TypeObjects {
		return equalItems(f, a, b)
	}
	if f.Compare == ComparePolicy {
		if equal, ok := policyEqual(a, b); ok {
			return equal
		}
	}
	if f.Compare == CompareJSON {
		if ja, ok := parsedJSON(a); ok {
			jb, ok := parsedJSON(b)
			return ok && reflect.DeepEqual(ja, jb)
		}
	}
	if f.Compare == CompareSet {
		if la, ok := a.([]any); ok {
			lb, ok := b.([]any)
			return ok && reflect.DeepEqual(setOf(la), setOf(lb))
		}
	}
	if f.Compare == CompareValues {
		if ma, ok := a.(map[string]any); ok {
			mb, ok := b.(map[string]any)
			return ok && reflect.DeepEqual(setOf(valuesOf(ma)), setOf(valuesOf(mb)))
		}
	}
	return reflect.DeepEqual(a, b)
}

// equalItems compares objects of items: the same names, and in each item
// every field the target sets equal under its own rule. A field the target
// leaves out is never compared, as a resource's own.
func equalItems(f Field, target, reported any) bool {
	ta, ok1 := target.(map[string]any)
	rb, ok2 := reported.(map[string]any)
	if !ok1 || !ok2 || len(ta) != len(rb) {
		return reflect.DeepEqual(target, reported)
	}
	for name, t := range ta {
		ti, ok1 := t.(map[string]any)
		ri, ok2 := rb[name].(map[string]any)
		if !ok1 || !ok2 {
			return false
		}
		for k, v := range ti {
			sub, _ := f.ItemField(k)
			if !Equal(sub, v, ri[k]) {
				return false
			}
		}
	}
	return true
}

func valuesOf(m map[string]any) []any {
	out := make([]any, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// WithoutOwnershipTag returns reported tags without the ownership tag: the
// mark infra writes is never part of the compared tags, so it can never
// cause an update.
func WithoutOwnershipTag(v any) any {
	m, ok := Canon(v).(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k != OwnershipTagKey {
			out[k] = x
		}
	}
	return out
}

func setOf(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		b, _ := json.Marshal(x)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

// CloneMap deep-copies an object of JSON-like values; nil stays nil. A
// driver or a double that keeps what it is handed clones it first, so the
// caller's maps never change underneath.
func CloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = CloneValue(v)
	}
	return out
}

// CloneValue deep-copies a JSON-like value.
func CloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return CloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = CloneValue(y)
		}
		return out
	}
	return v
}

// parsedJSON is v parsed, when v is a string holding JSON.
func parsedJSON(v any) (any, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, false
	}
	return out, true
}

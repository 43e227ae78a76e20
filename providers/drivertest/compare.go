package drivertest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/infra-iac/infra/spec"
)

// diverging returns one line per field of target that the reported fields
// contradict, under the engine's comparison rules (engine/diff.go; keep the
// two in step):
//
//   - a field absent from the target is unknown, never compared;
//   - a field never compared (CompareNever) or secret is skipped;
//   - a field the driver does not report is never drift (missing lists it);
//   - CompareSet lists compare as sets and maps as sets of pairs;
//   - numbers compare as float64 whatever their Go type;
//   - the ownership tag is stripped from reported tags before comparing.
func diverging(info *spec.KindInfo, target, reported map[string]any) []string {
	var out []string
	for _, name := range sortedKeys(target) {
		f, ok := info.Field(name)
		if !ok || f.Compare == spec.CompareNever || f.Secret {
			continue
		}
		got, ok := reported[name]
		if !ok {
			continue
		}
		want := target[name]
		if name == spec.TagsField {
			got = stripOwnership(got)
		}
		if !equal(f, want, got) {
			out = append(out, fmt.Sprintf("%s: reported %s, want %s", name, show(got), show(want)))
		}
	}
	return out
}

// missing returns the compared fields of target the driver did not report.
// The engine treats them as unknown (never drift); the suite asks the
// harness to declare them, so that a driver cannot pass by reporting
// nothing.
func missing(info *spec.KindInfo, target, reported map[string]any) []string {
	var out []string
	for _, name := range sortedKeys(target) {
		f, ok := info.Field(name)
		if !ok || f.Compare == spec.CompareNever || f.Secret {
			continue
		}
		if _, ok := reported[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

func stripOwnership(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k != spec.OwnershipTagKey {
			out[k] = x
		}
	}
	return out
}

func equal(f spec.Field, want, got any) bool {
	want, got = normalize(want), normalize(got)
	if f.Compare == spec.CompareSet {
		if w, ok := want.([]any); ok {
			g, ok := got.([]any)
			return ok && reflect.DeepEqual(canonicalSet(w), canonicalSet(g))
		}
	}
	return reflect.DeepEqual(want, got)
}

// normalize turns every number into float64 and every typed slice or map
// of the JSON shapes into []any and map[string]any, so that a driver
// reporting []string or int is judged on the value, not the Go type.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return v
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = normalize(y)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = y
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = normalize(y)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = y
		}
		return out
	}
	return v
}

// canonicalSet sorts a list by the JSON form of its elements, so that lists
// of strings and of objects (ingress rules) compare as sets. Like the
// engine, it keeps duplicates, and an empty list is not a nil one: a driver
// reports an empty list as []any{}.
func canonicalSet(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		b, _ := json.Marshal(x)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

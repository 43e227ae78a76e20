package drivertest

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/infra-iac/infra/spec"
)

// diverging returns one line per field of target that the reported fields
// contradict, under the engine's comparison rules (spec.Equal, the same
// function the engine diffs with):
//
//   - a field absent from the target is unknown, never compared;
//   - a field never compared (CompareNever) or secret is skipped;
//   - a field the driver does not report is never drift (missing lists it);
//   - CompareSet lists compare as sets and maps as sets of pairs;
//   - numbers compare as float64 whatever their Go type;
//   - the ownership tag is stripped from reported tags before comparing.
//
// A reference field's target is a name, but the driver reports the
// identity the cloud records it by (a security group's groupId): identity
// turns the one into the other, as the engine does when it plans; in an
// object of references, each value.
func diverging(info *spec.KindInfo, target, reported map[string]any, identity func(spec.Field, any) any) []string {
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
		switch f.Type {
		case spec.TypeRef:
			want = identity(f, want)
		case spec.TypeRefMap:
			if m, ok := want.(map[string]any); ok {
				ids := make(map[string]any, len(m))
				for k, v := range m {
					ids[k] = identity(f, v)
				}
				want = ids
			}
		}
		if name == spec.TagsField {
			got = spec.WithoutOwnershipTag(got)
		}
		if !spec.Equal(f, want, got) {
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

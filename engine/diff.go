package engine

import (
	"encoding/json"
	"reflect"
	"sort"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// diff compares a declared resource with what the cloud reports. The rules,
// each paid for by a real bug:
//   - a field the document does not set is unknown, and unknown is not drift;
//   - a field the cloud does not report is never drift either;
//   - lists the service may reorder compare as sets;
//   - the ownership tag is never part of the compared tags;
//   - a target that is an instruction (imageId "latest") is never drift;
//   - a field never compared (a secret, a password, forceDestroy) is never
//     a reason to act.
func (r *resolver) diff(d *spec.Declared, obs providers.Resource) []Change {
	info, _ := spec.Lookup(d.Address.Kind)
	var changes []Change
	for _, f := range info.Fields {
		v, set := d.Fields[f.Name]
		if !set || f.Compare == spec.CompareNever || f.Secret {
			continue
		}
		if isInstruction(d.Address.Kind, f.Name, v) {
			continue
		}
		before, reported := obs.Fields[f.Name]
		if !reported {
			continue
		}
		if f.Name == spec.TagsField {
			before = withoutOwnershipTag(before)
		}
		after, known := r.planValue(v)
		if !known {
			changes = append(changes, Change{Field: f.Name, Before: canon(before), KnownAfterApply: true, ForcesReplacement: f.Replace})
			continue
		}
		if equal(f, after, before) {
			continue
		}
		changes = append(changes, Change{Field: f.Name, Before: canon(before), After: canon(after), ForcesReplacement: f.Replace})
	}
	return changes
}

// createChanges lists every field a create will set, for review.
func (r *resolver) createChanges(d *spec.Declared) []Change {
	info, _ := spec.Lookup(d.Address.Kind)
	var changes []Change
	for _, f := range info.Fields {
		v, set := d.Fields[f.Name]
		if !set {
			continue
		}
		if f.Secret {
			changes = append(changes, Change{Field: f.Name, Sensitive: true})
			continue
		}
		after, known := r.planValue(v)
		if !known {
			changes = append(changes, Change{Field: f.Name, KnownAfterApply: true})
			continue
		}
		changes = append(changes, Change{Field: f.Name, After: canon(after)})
	}
	return changes
}

// isInstruction reports a target that says what to do at create rather
// than what must stay true: an AMI of "latest" never equals the ami-… the
// cloud reports, and would otherwise replace the instance on every plan.
func isInstruction(k spec.Kind, field string, v spec.Value) bool {
	if k == spec.AWSInstance && field == "imageId" {
		if lit, ok := v.(spec.Lit); ok && lit.V == "latest" {
			return true
		}
	}
	return false
}

func withoutOwnershipTag(v any) any {
	m, ok := canon(v).(map[string]any)
	if !ok {
		return v
	}
	if _, has := m[spec.OwnershipTagKey]; !has {
		return m
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k != spec.OwnershipTagKey {
			out[k] = x
		}
	}
	return out
}

// equal compares a target with a reported value under the field's rule.
func equal(f spec.Field, target, reported any) bool {
	a, b := canon(target), canon(reported)
	if f.Compare == spec.CompareSet {
		if la, ok := a.([]any); ok {
			lb, ok := b.([]any)
			return ok && reflect.DeepEqual(sortedJSON(la), sortedJSON(lb))
		}
	}
	return reflect.DeepEqual(a, b)
}

// canon normalises a JSON-like value so that equal values compare equal:
// every number is a float64, every list []any, every object map[string]any.
func canon(v any) any {
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
			out[i] = canon(y)
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
			out[k] = canon(y)
		}
		return out
	case spec.Sensitive:
		return spec.Redacted
	}
	return v
}

func sortedJSON(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		b, _ := json.Marshal(x)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

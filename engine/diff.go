package engine

import (
	"iter"

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
//     a reason to act, except a secret's value whose inputs changed since
//     the last apply sent it (inputs.go).
func (r *resolver) diff(d *spec.Declared, obs providers.Resource) []Change {
	var changes []Change
	for f, v := range setFields(d) {
		if f.Compare == spec.CompareNever || f.Secret {
			// Never compared, but a value built from what a replaced
			// resource publishes (a secret composed from a database's
			// endpoint) must be sent again. A reference to a secret
			// hands over its value, which a replacement keeps.
			if !f.IsRef() && len(r.pendingIn(v)) > 0 {
				changes = append(changes, Change{Field: f.Name, Sensitive: f.Secret, KnownAfterApply: true, ForcesReplacement: f.Replace})
			} else if r.importChanged(v) {
				// Nor is a value another fleet published: a secret
				// composed from it is sent again once it has changed.
				changes = append(changes, Change{Field: f.Name, Sensitive: f.Secret, ForcesReplacement: f.Replace})
			} else if c, _, changed := r.inputsChange(d); changed && f.Type == spec.TypeSecretSource {
				// Nor is a secret's value, which is never read back; but
				// what it is made of is compared with what the last
				// apply that sent it recorded (inputs.go).
				changes = append(changes, c)
			}
			continue
		}
		if f.IsInstruction(v) {
			// Says what to do at create (imageId "latest"), never what
			// must stay true: the cloud reports what it made of it.
			continue
		}
		before, reported := obs.Fields[f.Name]
		if !reported {
			continue
		}
		if f.Name == spec.TagsField {
			before = spec.WithoutOwnershipTag(before)
		}
		after, known := r.planValue(v)
		if !known {
			changes = append(changes, Change{Field: f.Name, Before: canon(before), KnownAfterApply: true,
				ForcesReplacement: f.Replace || r.heldByReplaced(f, v)})
			continue
		}
		if spec.Equal(f, after, before) {
			continue
		}
		changes = append(changes, Change{Field: f.Name, Before: canon(before), After: canon(after), ForcesReplacement: f.Replace})
	}
	return changes
}

// setFields yields each field of d's kind that the document sets, in the
// kind's order, with its value: the rest are unknown.
func setFields(d *spec.Declared) iter.Seq2[spec.Field, spec.Value] {
	return func(yield func(spec.Field, spec.Value) bool) {
		info, _ := spec.Lookup(d.Address.Kind)
		for _, f := range info.Fields {
			if v, set := d.Fields[f.Name]; set && !yield(f, v) {
				return
			}
		}
	}
}

// heldByReplaced reports whether field f, a reference the cloud holds as
// an attachment, points at a resource this plan deletes and makes again:
// the old one cannot go while this one is attached to it, so this one is
// deleted first and made again after, whatever the field's mutability.
func (r *resolver) heldByReplaced(f spec.Field, v spec.Value) bool {
	if !f.Holds {
		return false
	}
	for _, a := range r.pendingIn(v) {
		if r.replaced[a] {
			return true
		}
	}
	return false
}

// createChanges lists every field a create will set, for review.
func (r *resolver) createChanges(d *spec.Declared) []Change {
	var changes []Change
	for f, v := range setFields(d) {
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

// canon is spec.Canon: the engine's values and a driver's reports meet in
// one normal form.
func canon(v any) any { return spec.Canon(v) }

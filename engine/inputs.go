package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// A secret's value is never read back, so no comparison with the cloud
// can tell that the document now composes it otherwise (a literal of its
// format edited). What the value is made of is what can be compared: the
// apply that sends it records a fingerprint of its inputs in the ledger
// row (state.ValueInputs), and a plan computes the same from the
// document and plans an update of the value when they differ. A secret
// input (another secret's value, an environment variable) counts by its
// identity alone: its value is never hashed. docs/fleet-document.md
// ("When a secret's value is sent") says what this can and cannot see.

// sourceField is d's field whose value is a secret source (a secret's
// value), if its kind has one.
func sourceField(d *spec.Declared) (spec.Field, spec.Value, bool) {
	info, ok := spec.Lookup(d.Address.Kind)
	if !ok {
		return spec.Field{}, nil, false
	}
	for _, f := range info.Fields {
		if f.Type == spec.TypeSecretSource {
			v, set := d.Fields[f.Name]
			return f, v, set && f.UsedOn(d.Address.Provider)
		}
	}
	return spec.Field{}, nil, false
}

// valueInputs fingerprints what d's secret value is made of, from the
// world as the resolver sees it: at plan, an input a pending resource
// publishes is unknown, and so is Values; at apply, everything the value
// reads has been applied. ok is false when d has no secret source.
func (r *resolver) valueInputs(d *spec.Declared) (state.ValueInputs, bool) {
	_, v, ok := sourceField(d)
	if !ok {
		return state.ValueInputs{}, false
	}
	sources, _ := r.inputTree(v, false, 0)
	out := state.ValueInputs{Sources: inputsHash(sources)}
	if values, known := r.inputTree(v, true, 0); known {
		out.Values = inputsHash(values)
	}
	return out, true
}

func inputsHash(tree any) string {
	b, err := json.Marshal(tree)
	if err != nil {
		b = []byte(fmt.Sprintf("%#v", tree))
	}
	sum := sha256.Sum256(append([]byte("infra value inputs 1\x00"), b...))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// inputTree is v as its fingerprint sees it: the document's own words,
// and with values the public values of its inputs; known is false when
// one of those is known only after apply. A secret's value is never in
// it: secretValue stands for what that secret is made of, fromEnv for the
// variable's name.
func (r *resolver) inputTree(v spec.Value, values bool, depth int) (tree any, known bool) {
	if depth > 64 {
		// The document has no cycle (check refuses one); this is a
		// bound, not a rule.
		return "(too deep)", true
	}
	known = true
	sub := func(x spec.Value) any {
		t, k := r.inputTree(x, values, depth+1)
		known = known && k
		return t
	}
	switch x := v.(type) {
	case spec.Lit:
		return map[string]any{"literal": x.V}, true
	case spec.List:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = sub(y)
		}
		return out, known
	case spec.Map:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = sub(y)
		}
		return out, known
	case spec.FromEnv:
		return map[string]any{"fromEnv": x.Var}, true
	case spec.SecretValue:
		out := map[string]any{"secretValue": x.Of.String()}
		if d, ok := r.m.Lookup(x.Of); ok {
			if _, src, ok := sourceField(d); ok {
				out["from"] = sub(src)
			}
		}
		return out, known
	case spec.Composed:
		args := make([]any, len(x.Args))
		for i, a := range x.Args {
			args[i] = sub(a)
		}
		return map[string]any{"format": x.Format, "args": args}, known
	case spec.Observed, spec.Ref, spec.Import:
		return r.inputRead(x, values)
	}
	return fmt.Sprintf("%T", v), true
}

// inputRead is inputTree for what reads another resource or fleet: its
// identity, and with values its public value.
func (r *resolver) inputRead(v spec.Value, values bool) (tree any, known bool) {
	switch x := v.(type) {
	case spec.Observed:
		out := map[string]any{"observed": x.Of.String(), "attribute": x.Attribute}
		if values {
			val, err := r.plan(x)
			if err != nil {
				return out, false
			}
			out["value"] = val
		}
		return out, true
	case spec.Ref:
		out := map[string]any{"ref": x.To.String()}
		if values {
			id, ok := r.identity(x.To)
			if !ok {
				return out, false
			}
			out["value"] = id
		}
		return out, true
	case spec.Import:
		// What the slot is wired to is part of its identity; a secret
		// export's value is its reference (a name or an ARN), not the
		// secret.
		known = true
		var wires []any
		for _, w := range r.m.WiredOf(x) {
			e := map[string]any{"ref": w.Ref, "key": w.Key}
			if values {
				if !w.Known() {
					known = false
				} else {
					e["value"] = w.Export.Value
				}
			}
			wires = append(wires, e)
		}
		return map[string]any{"use": x.Slot, "export": x.Export, "wires": wires}, known
	}
	return fmt.Sprintf("%T", v), true
}

// inputsChange is the change of d's secret value its fingerprint calls
// for against the ledger's row, and why; ok is false when there is none.
// A row without a fingerprint (an older build's, or one discover wrote)
// is never a reason to act: the next apply records it (adoptInputs).
// When an input is known only after apply, only a change of what the
// document says counts.
func (r *resolver) inputsChange(d *spec.Declared) (c Change, why string, ok bool) {
	if r.ledger == nil {
		return Change{}, "", false
	}
	row, recorded := r.ledger.Get(d.Address)
	if !recorded || row.ValueInputs.Sources == "" {
		return Change{}, "", false
	}
	now, has := r.valueInputs(d)
	if !has {
		return Change{}, "", false
	}
	f, v, _ := sourceField(d)
	c = Change{Field: f.Name, Sensitive: true, KnownAfterApply: now.Values == "", ForcesReplacement: f.Replace}
	switch {
	case now.Sources != row.ValueInputs.Sources:
		if env, isEnv := v.(spec.FromEnv); isEnv {
			return c, fmt.Sprintf("%s: now read from %s, not from the variable the last apply read", f.Name, env.Var), true
		}
		return c, fmt.Sprintf("%s: its format, a literal or an input it names changed since the last apply sent it", f.Name), true
	case now.Values != "" && row.ValueInputs.Values != "" && now.Values != row.ValueInputs.Values:
		return c, fmt.Sprintf("%s: a value its composition reads changed since the last apply sent it", f.Name), true
	}
	return Change{}, "", false
}

// inputsReason is why d's changes send its secret value again, when its
// fingerprint is the cause.
func (r *resolver) inputsReason(d *spec.Declared, changes []Change) string {
	_, why, ok := r.inputsChange(d)
	if !ok {
		return ""
	}
	f, _, _ := sourceField(d)
	for _, c := range changes {
		if c.Field == f.Name {
			return why
		}
	}
	return ""
}

// adoptInputs gives the adoption rows an older build wrote, which hold no
// fingerprint, the one the document has now, once known and when this
// plan does not send the value anyway: upgrading sends nothing, and from
// the next apply on a change is seen. A change made in the same apply as
// the upgrade is not (docs/fleet-document.md says what to do).
func (pl *planner) adoptInputs() {
	sends := map[spec.Address]bool{}
	for _, a := range pl.actions {
		d, ok := pl.m.Lookup(a.Address)
		if !ok {
			continue
		}
		f, _, has := sourceField(d)
		if !has {
			continue
		}
		for _, c := range a.Changes {
			if c.Field == f.Name {
				sends[a.Address] = true
			}
		}
	}
	for i, row := range pl.run.adopt {
		a := row.Address()
		if !row.ValueInputs.IsZero() || sends[a] {
			continue
		}
		d, ok := pl.m.Lookup(a)
		if !ok {
			continue
		}
		if in, has := pl.res.valueInputs(d); has && in.Values != "" {
			pl.run.adopt[i].ValueInputs = in
		}
	}
}

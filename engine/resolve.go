package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// resolver evaluates spec values against the world. At plan time a value
// that depends on something not yet applied is unknown; at apply time
// everything it depends on has been applied (the scheduler saw to it), so
// it must be known, and secrets are settled.
type resolver struct {
	e     *Engine
	m     *spec.Model
	w     *world
	fleet string
	// pending holds the resources whose observed attributes the plan will
	// change (create, replace): what they publish is known only after apply.
	pending map[spec.Address]bool
	// replaced holds the pending resources whose old copy the apply
	// deletes (replace, move), as opposed to creates.
	replaced map[spec.Address]bool
	// ledger is the plan's ledger, whose rows hold what each secret's
	// value was last made of (inputs.go); nil at apply.
	ledger *state.Ledger
}

// identity is what a reference to a resolves to: the attribute the cloud
// records references by (a security group's groupId), or the name. It is
// unknown while a is pending, since a replacement has a new identity.
func (r *resolver) identity(a spec.Address) (any, bool) {
	if r.pending[a] {
		return nil, false
	}
	info, _ := spec.Lookup(a.Kind)
	if info == nil || info.Identity == "" {
		return a.Name, true
	}
	res, ok := r.w.get(a)
	if !ok {
		return nil, false
	}
	id, ok := res.Attributes[info.Identity]
	return id, ok && id != ""
}

// pendingIn lists the pending resources whose identity or attributes v
// reads: why a value is known only after apply.
func (r *resolver) pendingIn(v spec.Value) []spec.Address {
	var out []spec.Address
	for _, a := range spec.Deps(v) {
		if r.pending[a] {
			out = append(out, a)
		}
	}
	return out
}

// errUnknown is planValue's answer for a value only the apply will know.
var errUnknown = errors.New("known only after apply")

// planValue returns v as a plain JSON-like value, or known=false when it
// depends on a value only the apply will know. It never reads a secret.
func (r *resolver) planValue(v spec.Value) (any, bool) {
	val, err := r.plan(v)
	return val, err == nil
}

// plan is planValue with errUnknown for not known, so that lists and maps
// are evaluated as at apply.
func (r *resolver) plan(v spec.Value) (any, error) {
	switch x := v.(type) {
	case spec.Lit:
		return x.V, nil
	case spec.List, spec.Map:
		return evalItems(x, r.plan)
	case spec.Ref:
		// A reference resolves to the identity the cloud records it by,
		// so a dependent still attached to a replaced or foreign resource
		// differs from its target.
		if id, ok := r.identity(x.To); ok {
			return id, nil
		}
	case spec.Observed:
		if r.pending[x.Of] {
			return nil, errUnknown
		}
		res, ok := r.w.get(x.Of)
		if !ok {
			return nil, errUnknown
		}
		if val, ok := res.Attributes[x.Attribute]; ok {
			return val, nil
		}
	case spec.Import:
		return r.planImport(x)
	case spec.Composed:
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			val, err := r.plan(a)
			if err != nil {
				return nil, err
			}
			s, isStr := val.(string)
			if !isStr {
				s = fmt.Sprint(val)
			}
			args[i] = s
		}
		if s, err := spec.Format(x.Format, args); err == nil {
			return s, nil
		}
	}
	// SecretValue and FromEnv are never evaluated while planning.
	return nil, errUnknown
}

// applyValue evaluates v for a driver call. A value built from a secret is a
// spec.Sensitive.
func (r *resolver) applyValue(ctx context.Context, v spec.Value) (any, error) {
	switch x := v.(type) {
	case spec.Lit:
		return x.V, nil
	case spec.List, spec.Map:
		return evalItems(x, func(y spec.Value) (any, error) { return r.applyValue(ctx, y) })
	case spec.Ref:
		// Drivers take the referenced resource's name and resolve it at
		// the call, when the scheduler has made sure it exists.
		return x.To.Name, nil
	case spec.Observed:
		res, ok := r.w.get(x.Of)
		if !ok {
			return nil, fmt.Errorf("%s does not exist, so its %s is unknown", x.Of, x.Attribute)
		}
		val, ok := res.Attributes[x.Attribute]
		if !ok || val == "" {
			return nil, fmt.Errorf("%s has not published %q", x.Of, x.Attribute)
		}
		return val, nil
	case spec.SecretValue:
		return r.secret(ctx, x.Of)
	case spec.Import:
		return r.applyImport(ctx, x)
	case spec.FromEnv:
		val := r.e.opts.Getenv(x.Var)
		if val == "" {
			return nil, fmt.Errorf("environment variable %s is not set", x.Var)
		}
		return spec.NewSensitive(val), nil
	case spec.Composed:
		args := make([]string, len(x.Args))
		sensitive := false
		for i, a := range x.Args {
			val, err := r.applyValue(ctx, a)
			if err != nil {
				return nil, err
			}
			switch s := val.(type) {
			case spec.Sensitive:
				sensitive = true
				args[i] = s.Reveal()
			case string:
				args[i] = s
			default:
				args[i] = fmt.Sprint(s)
			}
		}
		s, err := spec.Format(x.Format, args)
		if err != nil {
			return nil, err
		}
		if sensitive {
			return spec.NewSensitive(s), nil
		}
		return s, nil
	}
	return nil, fmt.Errorf("cannot evaluate %T", v)
}

// evalItems evaluates each item of a list or a map with eval into the same
// shape, stopping at the first that fails.
func evalItems(v spec.Value, eval func(spec.Value) (any, error)) (any, error) {
	var err error
	switch x := v.(type) {
	case spec.List:
		out := make([]any, len(x))
		for i, y := range x {
			if out[i], err = eval(y); err != nil {
				return nil, err
			}
		}
		return out, nil
	case spec.Map:
		out := make(map[string]any, len(x))
		for k, y := range x {
			if out[k], err = eval(y); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot evaluate %T as a list or a map", v)
}

// secret settles one of the fleet's secrets: from its declared source when
// that is available in this run, else from the cloud. The value is handed
// to one driver call and never kept.
func (r *resolver) secret(ctx context.Context, a spec.Address) (spec.Sensitive, error) {
	d, ok := r.m.Lookup(a)
	if !ok {
		return spec.Sensitive{}, fmt.Errorf("%s is not declared", a)
	}
	src := d.Fields["value"]
	if env, isEnv := src.(spec.FromEnv); isEnv {
		if val := r.e.opts.Getenv(env.Var); val != "" {
			return spec.NewSensitive(val), nil
		}
		// The variable is not set in this run; the secret was created
		// earlier, so the cloud has the value.
	} else if src != nil {
		val, err := r.applyValue(ctx, src)
		if err == nil {
			switch s := val.(type) {
			case spec.Sensitive:
				return s, nil
			case string:
				return spec.NewSensitive(s), nil
			}
		}
	}
	rs, err := r.e.resources(a)
	if err != nil {
		return spec.Sensitive{}, err
	}
	if !rs.ReadsSecrets() {
		if env, isEnv := src.(spec.FromEnv); isEnv {
			return spec.Sensitive{}, fmt.Errorf("the value of %s comes from %s, which is not set", a, env.Var)
		}
		return spec.Sensitive{}, fmt.Errorf("the value of %s cannot be read back from %s", a, a.Provider)
	}
	val, err := rs.ReadSecretValue(providers.WithAddress(ctx, a), d.Region, a.Name)
	if err != nil {
		if env, isEnv := src.(spec.FromEnv); isEnv {
			return spec.Sensitive{}, fmt.Errorf("%s is not set, and reading the value from the cloud failed: %w", env.Var, err)
		}
		return spec.Sensitive{}, err // it names the address and the operation
	}
	return val, nil
}

// secretOf settles what a field that takes a secret holds: one of this
// fleet's secrets, or another fleet's secret export.
func (r *resolver) secretOf(ctx context.Context, v spec.Value) (any, error) {
	if im, ok := v.(spec.Import); ok {
		return r.applyImport(ctx, im)
	}
	ref, ok := v.(spec.Ref)
	if !ok {
		return nil, fmt.Errorf("cannot take a secret from %T", v)
	}
	return r.secret(ctx, ref.To)
}

// target builds a driver's target fields for a declared resource. At create
// (fill) unset fields with a default get it; an update sends only what the
// document sets.
func (r *resolver) target(ctx context.Context, d *spec.Declared, fill bool, changed []string) (map[string]any, error) {
	info, _ := spec.Lookup(d.Address.Kind)
	out := map[string]any{}
	for _, f := range info.Fields {
		v, set := d.Fields[f.Name]
		if !fill && f.Compare == spec.CompareNever && !slices.Contains(changed, f.Name) {
			// A create-time field an update does not change (a secret's
			// value, a database's password): reading it would ask for
			// what the update never sends.
			continue
		}
		if !set {
			if fill && f.Default != nil {
				out[f.Name] = f.Default
			}
			continue
		}
		var val any
		var err error
		switch {
		case f.Secret && f.Type == spec.TypeRef:
			// A reference to a secret hands the driver the secret's value
			// (a database's master password), read once, at this call.
			val, err = r.secretOf(ctx, v)
		case f.Secret && f.Type == spec.TypeRefMap:
			m := map[string]any{}
			for k, ref := range v.(spec.Map) {
				s, serr := r.secretOf(ctx, ref)
				if serr != nil {
					err = serr
					break
				}
				m[k] = s
			}
			val = m
		default:
			val, err = r.applyValue(ctx, v)
		}
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		if s, plain := val.(string); plain && f.Secret {
			// A secret composed only of public values (a URL and an ARN)
			// is still stored as a secret, and drivers take it as one.
			val = spec.NewSensitive(s)
		}
		out[f.Name] = val
	}
	return out, nil
}

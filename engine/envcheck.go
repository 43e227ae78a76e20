package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// A secret's fromEnv value is read from the environment of the run that
// applies, at the call that sends it. A variable that run lacks used to
// be found there, halfway through the apply, after what came before was
// made. The plan finds it first: every action that will send a value an
// unset variable supplies is an error row (env-unset), so apply refuses
// the plan; and Apply asks again before its first call, in case it runs
// in another environment than the plan did (its own engine's Getenv).

// unsetVar is one environment variable an action needs and this run
// lacks: the secret whose value comes from it, and the field of the
// action's resource that reads that secret.
type unsetVar struct {
	Var    string
	Secret spec.Address
	Field  string
}

// unsetVars lists what a's calls would read from an unset variable: the
// secret fields it sends (all of them at a create or a replace, the
// changed ones at an update or an adoption that finishes a create), and
// through them every secret whose value is settled from its source at
// this apply (secret). A secret that exists, is not remade by this plan
// and can be read back from its cloud needs no variable: the cloud has
// the value.
func (r *resolver) unsetVars(a Action) []unsetVar {
	d, ok := r.m.Lookup(a.Address)
	if !ok {
		return nil
	}
	sends := map[string]bool{}
	switch a.Action {
	case Create, Replace:
		for f := range setFields(d) {
			sends[f.Name] = true
		}
	case Update, Adopt:
		for _, c := range a.Changes {
			sends[c.Field] = true
		}
	default:
		return nil
	}
	var out []unsetVar
	for f, v := range setFields(d) {
		if !sends[f.Name] || !f.Secret || !f.UsedOn(a.Address.Provider) {
			continue
		}
		var found []unsetVar
		switch f.Type {
		case spec.TypeSecretSource:
			found = r.sourceUnset(v, d.Address, 0)
		case spec.TypeRef, spec.TypeRefMap:
			for _, ref := range spec.RefsIn(v) {
				found = append(found, r.secretUnset(ref.To, 0)...)
			}
		}
		for _, u := range found {
			u.Field = f.Name
			if !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// sourceUnset lists the unset variables evaluating the secret source v of
// secret owner reads.
func (r *resolver) sourceUnset(v spec.Value, owner spec.Address, depth int) []unsetVar {
	if depth > 64 {
		return nil // the document has no cycle; this is a bound
	}
	var out []unsetVar
	switch x := v.(type) {
	case spec.FromEnv:
		if r.e.opts.Getenv(x.Var) == "" {
			out = append(out, unsetVar{Var: x.Var, Secret: owner})
		}
	case spec.SecretValue:
		out = append(out, r.secretUnset(x.Of, depth+1)...)
	case spec.Composed:
		for _, arg := range x.Args {
			out = append(out, r.sourceUnset(arg, owner, depth+1)...)
		}
	}
	return out
}

// secretUnset is sourceUnset for the value of the fleet's secret a, as
// resolver.secret settles it: from its source, or else from the cloud.
func (r *resolver) secretUnset(a spec.Address, depth int) []unsetVar {
	d, ok := r.m.Lookup(a)
	if !ok {
		return nil
	}
	_, src, ok := sourceField(d)
	if !ok {
		return nil
	}
	missing := r.sourceUnset(src, a, depth)
	if len(missing) == 0 || r.readsBack(a) {
		return nil
	}
	return missing
}

// readsBack reports whether the apply can read a's value from its cloud:
// a exists, this plan does not remake it, and its driver reads values.
// Without a backend to ask (a plan from the cache), it cannot tell, and
// says yes: the apply observes again and is refused there if not.
func (r *resolver) readsBack(a spec.Address) bool {
	if r.pending[a] {
		return false
	}
	if _, exists := r.w.get(a); !exists {
		return false
	}
	rs, err := r.e.resources(a)
	if err != nil {
		return true
	}
	return rs.ReadsSecrets()
}

// envRow is the error row of an action that needs variables this run
// lacks.
func envRow(a Action, missing []unsetVar) spec.Diagnostic {
	var parts, vars []string
	for _, u := range missing {
		part := fmt.Sprintf("its %s, which comes from %s", u.Field, u.Var)
		if u.Secret != a.Address {
			part = fmt.Sprintf("its %s, which reads the value of %s, which comes from %s and cannot be read back from the cloud", u.Field, u.Secret, u.Var)
		}
		parts = append(parts, part)
		if !slices.Contains(vars, u.Var) {
			vars = append(vars, u.Var)
		}
	}
	slices.Sort(vars)
	isNot := " is not set"
	if len(vars) > 1 {
		isNot = " are not set"
	}
	return spec.Errorf(spec.RowEnvUnset, a.Address.String(),
		fmt.Sprintf("set %s in the environment of the run that applies (the executor reads it from its credentials secret), then plan again", strings.Join(vars, " and ")),
		"this %s sends %s; %s%s in this run's environment, so apply refuses the plan rather than fail at this %s after making what comes before it",
		a.Action, strings.Join(parts, ", and "), strings.Join(vars, " and "), isNot, a.Action).WithEvidence(strings.Join(vars, ", "))
}

// envRows is an env-unset row for every planned action that needs a
// variable this run lacks. They are diagnostics, not attention: they are
// about this run, not about something in the cloud left alone.
func (pl *planner) envRows() []spec.Diagnostic {
	if pl.run.destroy {
		return nil
	}
	var rows []spec.Diagnostic
	for _, a := range pl.actions {
		if missing := pl.res.unsetVars(a); len(missing) > 0 {
			d := envRow(a, missing)
			rows = append(rows, d)
			pl.e.emit(Event{Kind: EventWarning, Address: a.Address, Message: d.Message})
		}
	}
	return rows
}

// EnvUnsetError refuses an apply, before its first call, whose actions
// need environment variables this run lacks: the plan was made where they
// were set, and the apply runs where they are not.
type EnvUnsetError struct {
	Diagnostics []spec.Diagnostic
}

func (e *EnvUnsetError) Error() string {
	msgs := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		msgs[i] = d.Subject + ": " + d.Message
	}
	return "refusing to apply before the first call: " + strings.Join(msgs, "; ") + "; " + e.Diagnostics[0].Resolution
}

// checkEnv is the apply's own look at the variables its actions need,
// with its engine's environment.
func (e *Engine) checkEnv(p *Plan) error {
	rn := p.run
	if rn.destroy {
		return nil
	}
	r := &resolver{e: e, m: rn.model, w: rn.world, fleet: rn.model.Fleet, pending: rn.pending}
	var rows []spec.Diagnostic
	for _, a := range p.Actions {
		if missing := r.unsetVars(a); len(missing) > 0 {
			rows = append(rows, envRow(a, missing))
		}
	}
	if len(rows) > 0 {
		return &EnvUnsetError{Diagnostics: rows}
	}
	return nil
}

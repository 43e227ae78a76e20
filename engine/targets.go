package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/infra-iac/infra/ownership"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// ForcedCause is the cause, and the start of the reason, of a replace
// that PlanOptions.Replace forced rather than a field's change.
const ForcedCause = "forced by --replace"

// TargetError is an address given as a target or a forced replace that
// the plan cannot honour: not declared, not in the ledger, not yet
// created, or not this fleet's. Option is "target" or "replace"; Hint is
// a close address that exists, or "".
type TargetError struct {
	Option  string
	Address spec.Address
	Why     string
	Hint    string
}

func (e *TargetError) Error() string {
	s := fmt.Sprintf("plan: %s %s: %s", e.Option, e.Address, e.Why)
	if e.Hint != "" {
		s += fmt.Sprintf(" (did you mean %s?)", e.Hint)
	}
	return s
}

// ErrTargetsWithDestroy refuses a partial teardown: deleting a target
// would also need its dependents deleted first, which the targets do not
// name, so a destroy is always of the whole fleet.
var ErrTargetsWithDestroy = errors.New("plan: a destroy takes no targets and no forced replaces: it deletes the whole fleet")

// checkScope refuses, before any cloud is read, a target that is neither
// declared nor in the ledger and a forced replace that is not declared.
func checkScope(m *spec.Model, ledger *state.Ledger, opts PlanOptions) error {
	if opts.Destroy && len(opts.Targets)+len(opts.Replace) > 0 {
		return ErrTargetsWithDestroy
	}
	for _, a := range opts.Targets {
		_, declared := m.Lookup(a)
		_, recorded := ledger.Get(a)
		if !declared && !recorded {
			return &TargetError{Option: "target", Address: a, Why: "neither declared nor in the ledger", Hint: closest(a, known(m, ledger))}
		}
	}
	for _, a := range opts.Replace {
		if _, declared := m.Lookup(a); !declared {
			return &TargetError{Option: "replace", Address: a, Why: "not declared: only a declared resource can be replaced", Hint: closest(a, known(m, nil))}
		}
	}
	return nil
}

// known lists the declared addresses and the ledger's, for a hint.
func known(m *spec.Model, ledger *state.Ledger) []spec.Address {
	var out []spec.Address
	for _, d := range m.Resources {
		out = append(out, d.Address)
	}
	if ledger != nil {
		for _, r := range ledger.Rows {
			out = append(out, r.Address())
		}
	}
	return out
}

// closest is the address among candidates nearest a by edit distance, if
// it is near enough to be a typo of it; else "".
func closest(a spec.Address, candidates []spec.Address) string {
	best, bestD := "", len(a.String())/3+1
	for _, c := range candidates {
		if d := editDistance(a.String(), c.String()); d < bestD {
			best, bestD = c.String(), d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between two strings, by bytes.
func editDistance(x, y string) int {
	prev := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur := make([]int, len(y)+1)
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(y)]
}

// force marks each forced replace pending and replaced before the
// propagation runs, so that what reads it is planned as it would be for a
// replace a field forced. A forced replace must exist and be ours; a
// moved one is replaced already.
func (pl *planner) force(ds []decision) error {
	pl.forced = map[spec.Address]bool{}
	for _, a := range pl.opts.Replace {
		if _, moved := pl.run.moves[a]; moved {
			pl.forced[a] = true
			continue
		}
		i := slices.IndexFunc(ds, func(dc decision) bool { return dc.d.Address == a })
		switch {
		case i < 0:
			return &TargetError{Option: "replace", Address: a, Why: "excluded from the fleet: infra will not touch it"}
		case !ds[i].exists && pl.opts.ReplaceGone:
			continue // the delete half of the forced replace is done
		case !ds[i].exists:
			return &TargetError{Option: "replace", Address: a, Why: "not yet created: there is nothing to replace (plan without --replace creates it)"}
		case !ds[i].ours:
			return &TargetError{Option: "replace", Address: a, Why: ownership.Describe(mustGet(pl.w, a).Owner) + ": this fleet will not replace it"}
		}
		pl.forced[a] = true
		pl.res.pending[a], pl.res.replaced[a] = true, true
	}
	return nil
}

// narrow keeps, in a partial plan, the actions on the targets, on what
// they depend on (the declared resources their fields reference,
// transitively, the edges the plan is ordered by), and on what a replace
// among those forces to be replaced; a resource the document no longer
// declares only when it is itself a target. The adoptions and the rows to
// drop are narrowed alike, so a partial apply records nothing else.
func (pl *planner) narrow() {
	if len(pl.opts.Targets) == 0 {
		return
	}
	in := pl.scope()
	keep := func(a spec.Address) bool { return in[a] }
	pl.actions = slices.DeleteFunc(pl.actions, func(a Action) bool { return !keep(a.Address) })
	pl.run.adopt = slices.DeleteFunc(pl.run.adopt, func(r state.Row) bool { return !keep(r.Address()) })
	pl.run.drop = slices.DeleteFunc(pl.run.drop, func(a spec.Address) bool { return !keep(a) })
}

// scope is the set narrow keeps.
func (pl *planner) scope() map[spec.Address]bool {
	in := map[spec.Address]bool{}
	var visit func(a spec.Address)
	visit = func(a spec.Address) {
		if in[a] {
			return
		}
		in[a] = true
		if d, declared := pl.m.Lookup(a); declared {
			for _, dep := range d.Deps() {
				visit(dep)
			}
		}
	}
	for _, a := range append(slices.Clone(pl.opts.Targets), pl.opts.Replace...) {
		visit(a)
	}
	// A replace in scope changes what reads it; a reader the propagation
	// replaces too would otherwise keep an attachment to, or the id of, a
	// resource that is gone.
	for grew := true; grew; {
		grew = false
		for _, a := range pl.actions {
			if in[a.Address] || a.Action != Replace {
				continue
			}
			d, _ := pl.m.Lookup(a.Address)
			if d != nil && slices.ContainsFunc(d.Deps(), func(dep spec.Address) bool { return in[dep] && pl.res.replaced[dep] }) {
				visit(a.Address)
				grew = true
			}
		}
	}
	return in
}

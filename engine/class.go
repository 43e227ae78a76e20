package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// ActionClass is how a reviewer reads an action (issue 15 §5). It is the
// action's kind, except that an update is named for what sets it apart
// from a replace: it changes the resource in place.
type ActionClass string

const (
	ClassReplace       ActionClass = "replace"
	ClassDelete        ActionClass = "delete"
	ClassUpdateInPlace ActionClass = "update-in-place"
	ClassCreate        ActionClass = "create"
	ClassAdopt         ActionClass = "adopt"
	ClassForget        ActionClass = "forget"
)

// Classes lists the classes in the order a review reads them: what
// destroys first, then what changes, then what only records.
var Classes = []ActionClass{ClassReplace, ClassDelete, ClassUpdateInPlace, ClassCreate, ClassAdopt, ClassForget}

// ClassOf is the class of an action of kind k.
func ClassOf(k ActionKind) ActionClass {
	if k == Update {
		return ClassUpdateInPlace
	}
	return ActionClass(k)
}

// Classified is the action's class: Class, or the class of its kind for
// an action built by hand or read from a plan that predates classes.
func (a Action) Classified() ActionClass {
	if a.Class != "" {
		return a.Class
	}
	return ClassOf(a.Action)
}

// Contract is a resource with no action of its own that reads, at run
// time, a resource this plan updates or replaces: a container's secretEnv
// reads the secret's value when it starts, so nothing is sent to it, yet
// what it will run with changes. A contract is told, never applied.
type Contract struct {
	Address spec.Address `json:"address"`
	// Field is the field, spec.Field.RunTime, that holds the reference.
	Field string `json:"field"`
	// Reads is the referenced resource, and Change its action here
	// (update or replace).
	Reads  spec.Address `json:"reads"`
	Change ActionKind   `json:"change"`
	Cause  string       `json:"cause"`
	// Component and Member are as on Action.
	Component string `json:"component,omitempty"`
	Member    string `json:"member,omitempty"`
}

// classify sets the class, the cause and the component of an action the
// planner has built; markImports has named what its changes read.
func (pl *planner) classify(a *Action) {
	a.Class = ClassOf(a.Action)
	switch a.Action {
	case Update:
		a.Cause = "changes: " + changedFields(a.Changes)
	case Replace:
		a.Cause = pl.replaceCause(*a)
	case Create:
		a.Cause = "declared, not in the cloud"
	case Delete:
		a.Cause = a.Reason
		// A destroy deletes everything, a cut member among it: the
		// destroy is the cause.
		if cut := pl.cutOf(a.Address); cut != "" && !pl.run.destroy {
			a.Cut = cut
			_, member := splitMemberPath(cut)
			a.Cause = "cut: members." + member
		}
	default:
		a.Cause = a.Reason
	}
	a.Component, a.Member = pl.membersOf(a.Address)
	if a.Component == "" && a.Cut != "" {
		// What was cut is no longer in the model's component map; its
		// path still names the component it belonged to.
		a.Component, a.Member = splitMemberPath(a.Cut)
	}
}

func changedFields(changes []Change) string {
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Field
	}
	return strings.Join(names, ", ")
}

// replaceCause names each field that forces the replace and the values of
// other resources its target reads, since a replace forced through a
// reference is one a reviewer cannot see in the field's own diff:
// `field "securityGroup" forces a replace; it reads aws/security-group/web,
// which is replaced`.
func (pl *planner) replaceCause(a Action) string {
	d, declared := pl.m.Lookup(a.Address)
	var clauses []string
	if pl.forced[a.Address] {
		clauses = append(clauses, ForcedCause)
	}
	for _, c := range a.Changes {
		if !c.ForcesReplacement {
			continue
		}
		clause := fmt.Sprintf("field %q forces a replace", c.Field)
		if declared {
			if reads := pl.readsOf(d.Fields[c.Field], c.From); len(reads) > 0 {
				clause += "; it reads " + strings.Join(reads, ", ")
			}
		}
		clauses = append(clauses, clause)
	}
	return strings.Join(clauses, "; ")
}

// readsOf names what v reads of other resources: an observed attribute as
// ADDR.attribute, a reference as ADDR (the identity it resolves to), each
// with what this plan does to it; and from, the values of other fleets.
func (pl *planner) readsOf(v spec.Value, from []string) []string {
	var out []string
	add := func(s string, of spec.Address) {
		switch {
		case pl.res.replaced[of]:
			s += ", which is replaced"
		case pl.res.pending[of]:
			s += ", which is created"
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, o := range spec.ObservedIn(v) {
		add(o.Of.String()+"."+o.Attribute, o.Of)
	}
	for _, a := range refsIn(v) {
		add(a.String(), a)
	}
	return append(out, from...)
}

// refsIn lists the references of v: spec.Deps without what it observes or
// reads as a secret's value.
func refsIn(v spec.Value) []spec.Address {
	var out []spec.Address
	switch x := v.(type) {
	case spec.Ref:
		out = append(out, x.To)
	case spec.Map:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, refsIn(x[k])...)
		}
	case spec.List:
		for _, e := range x {
			out = append(out, refsIn(e)...)
		}
	}
	return out
}

// contracts lists, for every declared resource with no action of its own,
// each run-time field's reference to a resource this plan updates or
// replaces, by address, field and reference.
func (pl *planner) contracts(actions []Action) []Contract {
	if pl.run.destroy {
		return nil
	}
	acted := map[spec.Address]ActionKind{}
	for _, a := range actions {
		acted[a.Address] = a.Action
	}
	var out []Contract
	for i := range pl.m.Resources {
		d := &pl.m.Resources[i]
		if _, ok := acted[d.Address]; ok {
			continue
		}
		if _, excluded := pl.m.Excluded(d.Address); excluded {
			continue
		}
		for f, v := range setFields(d) {
			for _, dep := range runTimeReads(f, v) {
				if k := acted[dep]; k == Update || k == Replace {
					out = append(out, pl.contract(d.Address, f.Name, dep, k))
				}
			}
		}
	}
	slices.SortFunc(out, func(x, y Contract) int {
		if c := strings.Compare(x.Address.String(), y.Address.String()); c != 0 {
			return c
		}
		if c := strings.Compare(x.Field, y.Field); c != 0 {
			return c
		}
		return strings.Compare(x.Reads.String(), y.Reads.String())
	})
	return out
}

// runTimeReads are the resources whose values a field hands the workload
// to read at run time: every reference of a run-time field (secretEnv),
// and in any field a secret's own name (its ARN or id), which a workload
// reads the value behind when it runs. Neither changes when the value
// does.
func runTimeReads(f spec.Field, v spec.Value) []spec.Address {
	if f.RunTime {
		return spec.Deps(v)
	}
	var out []spec.Address
	for _, o := range spec.ObservedIn(v) {
		if o.Of.Kind == spec.Secrets && (o.Attribute == "arn" || o.Attribute == "id") && !slices.Contains(out, o.Of) {
			out = append(out, o.Of)
		}
	}
	return out
}

func (pl *planner) contract(a spec.Address, field string, reads spec.Address, k ActionKind) Contract {
	what := "which changes"
	if k == Replace {
		what = "which is replaced"
	}
	c := Contract{Address: a, Field: field, Reads: reads, Change: k,
		Cause: fmt.Sprintf("reads %s at run time, %s; no action on %s", reads, what, a)}
	c.Component, c.Member = pl.membersOf(a)
	return c
}

// membersOf is PlanOptions.Members, which may be nil.
func (pl *planner) membersOf(a spec.Address) (component, member string) {
	if pl.opts.Members == nil {
		return "", ""
	}
	return pl.opts.Members(a)
}

// cutOf is PlanOptions.CutOf, which may be nil.
func (pl *planner) cutOf(a spec.Address) string {
	if pl.opts.CutOf == nil {
		return ""
	}
	return pl.opts.CutOf(a)
}

// splitMemberPath splits "shop-a.db" into the component instance and the
// member path within it; a component's name has no dot.
func splitMemberPath(path string) (component, member string) {
	component, member, found := strings.Cut(path, ".")
	if !found {
		return "", path
	}
	return component, member
}

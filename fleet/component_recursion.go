package fleet

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// A component may have itself as a member: a tree that counts a depth
// setting down is a recursion with an end. One without an end is asked
// lazily, member by member, by expand, so the SDK can stop it: each check
// here is a component-recursion row, and the members it stops are not
// asked (docs/components.md#a-component-inside-itself).

const recursionFix = "end the recursion: a component that has itself as a member must stop adding it (give the member a setting that counts down, and add no member at 0)"

// beyondLimits reports, before the member of n at path is asked, that it is
// deeper than MaxMemberDepth or past MaxMembers of the instance. The
// member and its later siblings are then not asked.
func (in *instance) beyondLimits(n *node, path string) bool {
	switch {
	case n.depth+1 > MaxMemberDepth:
		msg := fmt.Sprintf("the member is %d members deep, past the limit of %d: ", n.depth+1, MaxMemberDepth)
		if name, at, k := mostRepeated(n); k > 1 {
			msg += fmt.Sprintf("component %s (defined at %s) is a member of itself, %d times on this path", name, at, k-1)
		} else {
			msg += "it and its siblings are not asked"
		}
		in.recursionRow(path, recursionFix+"; infra asks members "+fmt.Sprint(MaxMemberDepth)+" deep at most", "%s", msg)
		return true
	case in.members >= MaxMembers:
		if !in.tooMany {
			in.tooMany = true
			in.recursionRow(path, recursionFix+", or split the instance; infra asks "+fmt.Sprint(MaxMembers)+" members of one instance at most",
				"instance %s (component %s) has more than %d members: this one and the members after it are not asked", in.name, in.record.Component, MaxMembers)
		}
		return true
	}
	return false
}

// repeats reports a child of one definition, and equal settings, with
// one of its ancestors: its ask half sees only its settings, so it would
// ask the same members again, without end. Its members are not asked.
func (in *instance) repeats(child *node) bool {
	if child.def == 0 {
		return false
	}
	for a := child.parent; a != nil; a = a.parent {
		if a.def != child.def || !reflect.DeepEqual(a.settings, child.settings) {
			continue
		}
		ancestor := in.name + pathSuffix(a.path)
		in.recursionRow(child.path, recursionFix+", or make the member of another component",
			"the member is component %s (defined at %s) with the same settings as its ancestor %s, so it would ask the same members again, without end",
			child.component, child.source, ancestor)
		return true
	}
	return false
}

// recursionRow is the row about the member at path: its subject is the
// path shortened for a reader, its evidence the whole path.
func (in *instance) recursionRow(path, resolution, format string, args ...any) {
	full := in.name + pathSuffix(path)
	in.f.diags = append(in.f.diags, spec.Errorf(spec.RowComponentRecursion, shortPath(full), resolution, format, args...).WithEvidence(full))
}

// mostRepeated is the component (name and where it is defined) that
// appears most often on the path from n up to the root, and how often.
func mostRepeated(n *node) (name, at string, k int) {
	count := map[[2]string]int{}
	for a := n; a != nil; a = a.parent {
		key := [2]string{a.component, a.source}
		count[key]++
		if count[key] > k {
			name, at, k = a.component, a.source, count[key]
		}
	}
	return name, at, k
}

// shortPath keeps the first four and the last names of a long member
// path, so a row stays one line.
func shortPath(p string) string {
	parts := strings.Split(p, ".")
	if len(parts) <= 6 {
		return p
	}
	return strings.Join(parts[:4], ".") + ".…." + parts[len(parts)-1]
}

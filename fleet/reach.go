package fleet

import (
	"fmt"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// Reach (docs/sdk.md#reach-all). A SlotAll reads every capability its wire
// lists, and an export read through it is a set keyed FLEET/REGION, known
// only at plan, from the providers' records. It is its own type so that
// the one-capability API does not take it: Wire takes a Slot, Exports is
// not a method of a SlotAll, and the set fills a whole Env or map of tags,
// never a field of one value.

// SlotAll is a slot that reaches all the capabilities its wire lists
// ("reach": "all"). Declare it with UseAll, wire it with WireAll and read
// it with Each or EachTags.
type SlotAll[E any] struct {
	name string
	in   Interface[E]
	// decl is set on a component's slot (NeedAll): the fleet-level slot
	// the author's WireMemberAll made of it.
	decl *slotDecl
}

func (s SlotAll[E]) componentSlot() *slotDecl { return s.decl }

// NeedAll declares a slot of a component that reaches every capability
// the author's wire lists (WireMemberAll): a component cannot bind it to
// a member, since a binding is one edge.
func NeedAll[E any](name string, in Interface[E], requires ...Requirement) SlotAll[E] {
	d := Need(name, in, requires...).decl
	d.all = true
	return SlotAll[E]{name: name, in: in, decl: d}
}

// WireMemberAll fills the reach-all slot at path (member path, then the
// use) with the capabilities entries name, as WireAll does for a fleet.
func WireMemberAll(path string, entries ...WireEntry) InstanceOption {
	w := spec.Wire{List: true, Entries: []spec.Wire{}}
	for _, e := range entries {
		w.Entries = append(w.Entries, e.w)
	}
	return InstanceOption{kind: "wire", path: path, wire: w, source: caller(1)}
}

// slotName is the fleet-level slot the set is read through: a component
// slot's is the one its wire made.
func (s SlotAll[E]) slotName() string {
	if s.decl != nil {
		return s.decl.wired
	}
	return s.name
}

// Name is the slot's name.
func (s SlotAll[E]) Name() string { return s.name }

// UseAll declares that f uses every capability of interface in that its
// wire lists, through the slot name. The requirements hold for each of
// them.
//
//	queues := fleet.UseAll(f, "queues", jobs.Queue)
//	fleet.WireAll(f, queues, fleet.At("a", "jobs"), fleet.At("b", "jobs"))
func UseAll[E any](f *Fleet, name string, in Interface[E], requires ...Requirement) SlotAll[E] {
	s := SlotAll[E]{name: name, in: in}
	if f.inBody("fleet.UseAll") {
		return s
	}
	_, dup := f.uses[name]
	Use(f, name, in, requires...)
	if !dup {
		u := f.uses[name]
		u.Reach = "all"
		f.uses[name] = u
	}
	return s
}

// WireEntry is one capability of a reach-all wire, made by At.
type WireEntry struct{ w spec.Wire }

// At names capability provides of fleet providerFleet, for WireAll.
func At(providerFleet, provides string, opts ...WireOption) WireEntry {
	w := spec.Wire{Fleet: providerFleet, Provides: provides}
	for _, o := range opts {
		if o.state != "" {
			w.State = o.state
		}
	}
	return WireEntry{w: w}
}

// WireAll fills slot s of f with the capabilities entries name, each of
// which its fleet must expose. The set is keyed by fleet and region even
// with one entry; a slot is wired once.
func WireAll[E any](f *Fleet, s SlotAll[E], entries ...WireEntry) {
	if f.inBody("fleet.WireAll") {
		return
	}
	if s.name == "" {
		f.diags = append(f.diags, spec.Errorf(spec.RowWireUnknownSlot, "wires", "wire the slot fleet.UseAll returned", "wires a zero fleet.SlotAll"))
		return
	}
	if _, dup := f.wires[s.name]; dup {
		f.diags = append(f.diags, spec.Errorf(spec.RowGivenTwice, "wires."+s.name, "list every capability in one fleet.WireAll", "slot %q wired twice", s.name))
		return
	}
	w := spec.Wire{List: true, Entries: []spec.Wire{}}
	for _, e := range entries {
		w.Entries = append(w.Entries, e.w)
	}
	if f.wires == nil {
		f.wires = map[string]spec.Wire{}
	}
	f.wires[s.name] = w
}

// eachKey is the Env key that stands for a whole keyed set: no
// environment variable is called that, and Env.specValue writes the set
// as the field's whole value.
const eachKey = "\x00fleet.SlotAll.Each"

// Each is the set of one string export, picked from the interface's
// exports, as a whole Env: {FLEET/REGION: value} for each capability of
// the slot, filled in at plan.
//
//	Env: queues.Each(func(q jobs.Exports) fleet.Output[string] { return q.URL })
//
// It fills the Env as a whole: merged with other entries it is reported.
// A secret export is not an Output, so it does not compile here.
func (s SlotAll[E]) Each(pick func(E) Output[string]) Env {
	name := s.slotName()
	if name == "" {
		return Env{eachKey: {problems: []string{"a zero or unwired fleet.SlotAll reads nothing: use the slot fleet.UseAll returned, or wire the component's with fleet.WireMemberAll"}}}
	}
	o := pick(s.in.each(s.in.exports, func(_ *exportDef, field exportField) { field.readFrom(name) }))
	if im, ok := o.v.(spec.Import); !ok || im.Slot != name {
		return Env{eachKey: {problems: []string{fmt.Sprintf("slot %q: Each picks a field of the exports it is given, not another value", s.name)}}}
	}
	return Env{eachKey: o}
}

// EachTags is the set of one string export as a whole map of tags, for
// the Tags of a spec: {FLEET/REGION: value}, filled in at plan. It is Each
// for the fields that take tags, whose keys take the '/' of a key (an AWS
// function's environment does not). Given more entries, it is reported.
//
//	Tags: queues.EachTags(func(q jobs.Exports) fleet.Output[string] { return q.URL })
func (s SlotAll[E]) EachTags(pick func(E) Output[string]) map[string]string {
	o := s.Each(pick)[eachKey]
	if len(o.problems) > 0 {
		return map[string]string{eachKey: "\x00" + o.problems[0]}
	}
	im := o.v.(spec.Import)
	return map[string]string{eachKey: im.Slot + "\x00" + im.Export}
}

// tagsSet is a map of tags made by EachTags: the set as the field's whole
// value. isSet is false for any other map.
func tagsSet(m map[string]string) (v spec.Value, problems []string, isSet bool) {
	enc, ok := m[eachKey]
	if !ok {
		return nil, nil, false
	}
	slot, export, _ := strings.Cut(enc, "\x00")
	switch {
	case len(m) > 1:
		return nil, []string{"a set read with SlotAll.EachTags fills the whole map of tags: it cannot be given other tags"}, true
	case slot == "":
		return nil, []string{export}, true
	}
	return spec.Import{Slot: slot, Export: export}, nil, true
}

// keyedSet is an Env made by Each: the set as the field's whole value.
// isSet is false for any other Env.
func (e Env) keyedSet() (v spec.Value, set bool, problems []string, isSet bool) {
	o, ok := e[eachKey]
	if !ok {
		return nil, false, nil, false
	}
	if len(e) > 1 {
		return nil, false, []string{"a set read with SlotAll.Each fills the whole Env: it cannot be merged with other entries"}, true
	}
	v, set, problems = o.specValue()
	return v, set, problems, true
}

package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// FleetsGraph draws the fleet among the fleets it is wired to: a group
// for this fleet holding the capabilities it provides and the slots it
// uses, and a group per provider fleet its wires name. Each slot has an
// arrow to each capability its wire names (every entry of a reach-all
// list), labelled with the exports this fleet's fields read through the
// slot. records holds the published records read for the providers, by
// fleet: a provider's group then shows every capability its record holds,
// with its interface and whether it is exposed, and a wired capability the
// record lacks is drawn as missing. A provider absent from records is
// drawn from the wire alone.
func FleetsGraph(m *spec.Model, records map[string]*spec.Published) *Graph {
	gb := newGraphBuilder()
	self := "fleet:" + m.Fleet
	gb.group(self, "fleet "+m.Fleet+" (this document)")
	for _, name := range slices.Sorted(maps.Keys(m.Provides)) {
		c := m.Provides[name]
		gb.node(GraphNode{Key: capabilityKey(m.Fleet, name), Label: capabilityLabel("provides "+name, c.Interface, c.Exposed),
			Class: graphCapability, Group: self})
	}
	reads := map[string][]string{}
	for _, im := range m.Imports() {
		reads[im.Slot] = append(reads[im.Slot], im.Export)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Uses)) {
		slot := m.Uses[name]
		label := "uses " + name + " (" + slot.Interface + ")"
		if slot.All {
			label += ", reach all"
		}
		n := GraphNode{Key: "slot:" + name, Label: label, Class: graphSlot, Group: self}
		if slot.Wire == nil {
			n.Label, n.Class = label+": not wired", graphMissing
		}
		gb.node(n)
		if slot.Wire == nil {
			continue
		}
		for _, w := range slot.Wire.Each() {
			gb.provider(w, records[w.Fleet])
			label := ""
			if len(reads[name]) > 0 {
				label = "reads " + strings.Join(reads[name], ", ")
			}
			gb.edge(n.Key, capabilityKey(w.Fleet, w.Provides), label, false)
		}
	}
	return gb.done()
}

// provider adds the group of the fleet at the far end of w, its record's
// capabilities when it was read, and the capability w names.
func (gb *graphBuilder) provider(w spec.Wire, rec *spec.Published) {
	group := "fleet:" + w.Fleet
	label := "fleet " + w.Fleet
	if w.State != "" {
		label += " (state " + w.State + ")"
	}
	if rec == nil {
		label += ": no published record read"
	}
	gb.group(group, label)
	key := capabilityKey(w.Fleet, w.Provides)
	if rec == nil {
		gb.node(GraphNode{Key: key, Label: w.Provides, Class: graphCapability, Group: group})
		return
	}
	for _, name := range slices.Sorted(maps.Keys(rec.Capabilities)) {
		c := rec.Capabilities[name]
		gb.node(GraphNode{Key: capabilityKey(w.Fleet, name), Label: capabilityLabel(name, c.Interface, c.Exposed), Class: graphCapability, Group: group})
	}
	gb.node(GraphNode{Key: key, Label: fmt.Sprintf("%s: not in the record of %s", w.Provides, w.Fleet), Class: graphMissing, Group: group})
}

func capabilityKey(fleet, name string) string { return "capability:" + fleet + ":" + name }

// capabilityLabel is "eu (postgres-database), exposed".
func capabilityLabel(name, iface string, exposed bool) string {
	if exposed {
		return name + " (" + iface + "), exposed"
	}
	return name + " (" + iface + "), not exposed"
}

package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Reach (docs/wiring.md#reach). A slot of reach one reads one capability;
// a slot of reach all reads a set of them, its wire a list, and an export
// read through it is a map keyed by FLEET/REGION, even with one entry, so
// that a consumer's field has one shape whatever the size of the set.

// reach reads a use's "reach": "one" (the default) or "all".
func (c *compiler) reach(where, reach string) bool {
	switch reach {
	case "", "one":
		return false
	case "all":
		return true
	}
	c.add(Errorf(RowReachUnknown, where, `reach is "one" (the default: one capability) or "all" (a set of capabilities, keyed by fleet and region)`, "unknown reach %q", reach))
	return false
}

// wireShape checks that a slot's wire has the shape of its reach, then
// each capability it names.
func (c *compiler) wireShape(slot Slot, w Wire) {
	where := "wires." + slot.Name
	switch {
	case w.List && !slot.All:
		c.add(Errorf(RowReachWire, where, fmt.Sprintf(`wire one capability: "wires": {%q: {"fleet": "…", "provides": "…"}}, or make the use read them all: "uses": {%q: {…, "reach": "all"}}`, slot.Name, slot.Name),
			"slot %q reaches one capability, and its wire is a list", slot.Name))
		return
	case !w.List && slot.All:
		c.add(Errorf(RowReachWire, where, fmt.Sprintf(`write a list, even of one capability: "wires": {%q: [{"fleet": %q, "provides": %q}]}`, slot.Name, w.Fleet, w.Provides),
			"slot %q reaches all, and its wire is one object", slot.Name))
		return
	case !w.List:
		c.wire(where, slot.Name, w)
		return
	}
	seen := map[string]int{}
	for i, e := range w.Entries {
		at := fmt.Sprintf("%s[%d]", where, i)
		c.wire(at, slot.Name, e)
		name := e.Fleet + ":" + e.Provides
		if j, dup := seen[name]; dup {
			c.add(Errorf(RowReachKeyDuplicate, at, "list each capability once", "slot %q lists %s twice (items %d and %d)", slot.Name, name, j+1, i+1))
		}
		seen[name] = i
	}
}

// reachFieldRow is the row for an import whose shape is not the field's:
// a reach-all set is a map, read only as the whole value of a map field
// (tags, env); a reach-one export is one value, never a whole map.
func reachFieldRow(at Address, f Field, slot Slot, e Import, whole bool) *Diagnostic {
	where := at.String()
	asMap := whole && f.Type == TypeStringMap
	var row Diagnostic
	switch {
	case slot.All && asMap && f.Name == "env" && at.Provider == AWS && at.Kind == Compute:
		// Lambda takes variable names of letters, digits and '_' only,
		// and would refuse the keys halfway through an apply.
		row = Errorf(RowReachField, where, fmt.Sprintf(`read the set into the function's tags, "tags": {"use": %q, "export": %q}, whose keys take '/'`, e.Slot, e.Export),
			"field %q reads the set %s.%s, keyed FLEET/REGION, and Lambda takes environment variable names of letters, digits and '_' only", f.Name, e.Slot, e.Export)
	case slot.All && !asMap:
		row = Errorf(RowReachField, where, fmt.Sprintf(`read it as the whole value of a map field, such as "tags": {"use": %q, "export": %q}, or make the slot reach one`, e.Slot, e.Export),
			"field %q reads %s.%s, a set keyed by fleet and region (slot %q reaches all), where it takes one value", f.Name, e.Slot, e.Export, e.Slot)
	case !slot.All && asMap:
		row = Errorf(RowReachField, where, fmt.Sprintf(`read it as one entry, {"KEY": {"use": %q, "export": %q}}, or make the slot reach all`, e.Slot, e.Export),
			"field %q takes a map, and %s.%s is one value (slot %q reaches one)", f.Name, e.Slot, e.Export, e.Slot)
	default:
		return nil
	}
	return &row
}

// mapImport reads {"use": SLOT, "export": E} written as the whole value of
// a map field: an object of exactly those two string keys is an import,
// never a map of two entries.
func mapImport(raw any) (Value, bool) {
	m, ok := raw.(map[string]any)
	if !ok || len(m) != 2 {
		return nil, false
	}
	slot, ok1 := m["use"].(string)
	export, ok2 := m["export"].(string)
	if !ok1 || !ok2 {
		return nil, false
	}
	return Import{Slot: slot, Export: export}, true
}

// WiredOf is what an import resolved to: the entries of a reach-all set,
// sorted by key, or the one value of a reach-one slot.
func (m *Model) WiredOf(im Import) []Wired {
	key := Import{Slot: im.Slot, Export: im.Export}
	if set, ok := m.WiredAll[key]; ok {
		return set
	}
	if w, ok := m.Wired[key]; ok {
		return []Wired{w}
	}
	return nil
}

// ReadsOthers reports whether an import resolved to anything.
func (m *Model) ReadsOthers() bool { return len(m.Wired) > 0 || len(m.WiredAll) > 0 }

// wiredExport is export e of a capability, as read through wire w.
func wiredExport(w Wire, e string, x PublishedExport) Wired {
	return Wired{Ref: fmt.Sprintf("%s:%s.%s", w.Fleet, w.Provides, e), Fleet: w.Fleet, Export: x}
}

// resolveSet resolves a reach-all slot: every rule of a wire holds for
// each entry, and each entry is keyed by its fleet and region.
func resolveSet(m *Model, slot Slot, far map[string]Far) []Diagnostic {
	var diags []Diagnostic
	keys := map[string]string{}
	for i, w := range slot.Wire.Entries {
		where := fmt.Sprintf("wires.%s[%d]", slot.Name, i)
		capab, rows := wiredCapability(m, slot, where, w, far[w.Fleet])
		diags = append(diags, rows...)
		if capab == nil {
			continue
		}
		key, row := setKey(slot, where, w, capab)
		name := w.Fleet + ":" + w.Provides
		switch other, dup := keys[key]; {
		case row != nil:
			diags = append(diags, *row)
			continue
		case dup && other != name:
			diags = append(diags, Errorf(RowReachKeyDuplicate, where, "a set holds one capability per fleet and region: wire one of them through a slot of its own",
				"slot %q reaches %s and %s, which have the same key %s", slot.Name, other, name, key))
			continue
		case dup:
			continue // listed twice: reported by Compile
		}
		keys[key] = name
		for _, e := range sortedKeys(capab.Exports) {
			x := wiredExport(w, e, capab.Exports[e])
			x.Key = key
			im := Import{Slot: slot.Name, Export: e}
			m.WiredAll[im] = append(m.WiredAll[im], x)
		}
		for _, p := range slot.Requires {
			diags = append(diags, checkPredicate(slot, w, p, capab.Exports[p.Export])...)
		}
	}
	for im, set := range m.WiredAll {
		if im.Slot == slot.Name {
			sort.Slice(set, func(i, j int) bool { return set[i].Key < set[j].Key })
		}
	}
	return diags
}

// setKey is an entry's key in a reach-all set: FLEET/REGION, REGION being
// the one region the capability's exports live in by the provider's
// record, or FLEET alone when none of them has a region (literals, a
// global kind). A capability whose exports live in several regions has no
// one key.
func setKey(slot Slot, where string, w Wire, capab *PublishedCapability) (string, *Diagnostic) {
	regions := map[string]bool{}
	for _, x := range capab.Exports {
		if x.Region != "" {
			regions[x.Region] = true
		}
	}
	switch names := sortedKeys(regions); len(names) {
	case 0:
		return w.Fleet, nil
	case 1:
		return w.Fleet + "/" + names[0], nil
	default:
		row := Errorf(RowReachKeyAmbiguous, where, "ask the provider for one capability per region, and wire each",
			"slot %q reaches %s:%s, whose exports live in %s, so it has no one key FLEET/REGION", slot.Name, w.Fleet, w.Provides, strings.Join(names, " and "))
		return "", &row
	}
}

// regionSetRows refuses a reach-all read of an export whose bound is
// region-local only, from capabilities in more than one region: the value
// is usable only in its own region, and one resource is in one region.
// The imports it refuses are not checked again entry by entry.
func regionSetRows(m *Model) ([]Diagnostic, map[Import]bool) {
	var diags []Diagnostic
	refused := map[Import]bool{}
	for _, im := range m.Imports() {
		slot := m.Uses[im.Slot]
		def := m.Interfaces[slot.Interface].Exports[im.Export]
		if !slot.All || len(def.Locality) != 1 || def.Locality[0] != LocalityRegion {
			continue
		}
		regions := map[string]bool{}
		var entries []string
		for _, w := range m.WiredAll[im] {
			regions[w.Export.Region] = true
			entries = append(entries, w.Ref+" in "+w.Export.Region)
		}
		if len(regions) < 2 {
			continue
		}
		refused[im] = true
		diags = append(diags, Errorf(RowReachRegion, "uses."+im.Slot, "read a region-local value through a slot of reach one per region, from a resource in that region, or wire capabilities of one region",
			"slot %q reaches all, and export %q is region-local: no placement can make a multi-region set agree with a value that never leaves its region (%s)", im.Slot, im.Export, strings.Join(entries, ", ")).
			WithEvidence(fmt.Sprintf("interface %s bounds %s to locality region", slot.Interface, im.Export)))
	}
	return diags, refused
}

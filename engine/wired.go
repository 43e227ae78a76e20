package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// Values read from other fleets (docs/wiring.md). At plan, an import
// resolves to the provider's published value, or is unknown while it is
// pending or secret; at apply, a secret import is read from the cloud with
// this run's credentials, handed to one driver call and never kept.

// PendingError refuses an apply that needs a value another fleet has not
// published yet.
type PendingError struct {
	// Refs are the pending values, such as "pg-shared:eu.endpoint".
	Refs []string
	// Fleets are the fleets to apply first.
	Fleets []string
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("this apply needs %s, not published yet: apply %s first", strings.Join(e.Refs, ", "), strings.Join(e.Fleets, " and "))
}

// wired returns what an import resolved to at plan.
func (r *resolver) wired(im spec.Import) (spec.Wired, bool) {
	w, ok := r.m.Wired[spec.Import{Slot: im.Slot, Export: im.Export}]
	return w, ok
}

// planImport is an import's value at plan: unknown while pending, and a
// secret is never read while planning.
func (r *resolver) planImport(im spec.Import) (any, error) {
	if r.m.Uses[im.Slot].All {
		return r.setOf(im, func(w spec.Wired) (any, error) {
			if !w.Known() || w.Export.Secret {
				return nil, errUnknown
			}
			return w.Export.Value, nil
		})
	}
	w, ok := r.wired(im)
	if !ok || !w.Known() || w.Export.Secret {
		return nil, errUnknown
	}
	return w.Export.Value, nil
}

// applyImport is an import's value for a driver call.
func (r *resolver) applyImport(ctx context.Context, im spec.Import) (any, error) {
	if r.m.Uses[im.Slot].All {
		return r.setOf(im, func(w spec.Wired) (any, error) {
			switch {
			case !w.Known():
				return nil, fmt.Errorf("%s is not published yet: apply %s first", w.Ref, w.Fleet)
			case w.Export.Secret:
				// Refused at plan: a set fills a map field, which never
				// takes a secret.
				return nil, fmt.Errorf("%s is secret, and this field does not take a secret", w.Ref)
			}
			return w.Export.Value, nil
		})
	}
	w, ok := r.wired(im)
	switch {
	case !ok:
		return nil, fmt.Errorf("slot %q was not resolved against the fleet it is wired to", im.Slot)
	case !w.Known():
		return nil, fmt.Errorf("%s is not published yet: apply %s first", w.Ref, w.Fleet)
	case !w.Export.Secret:
		return w.Export.Value, nil
	case !im.InSecret:
		// Refused at plan (secret-export-misused); never read a secret
		// into a field that would hold it in clear.
		return nil, fmt.Errorf("%s is secret, and this field does not take a secret", w.Ref)
	}
	ref, _ := w.Export.Value.(string)
	rs, err := r.e.resources(spec.Address{Provider: w.Export.Provider, Kind: spec.Secrets, Name: ref})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", w.Ref, err)
	}
	val, err := rs.ReadSecretValue(ctx, w.Export.Region, ref)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", w.Ref, err)
	}
	return val, nil
}

// setOf is a reach-all import's value: a map from each entry's key
// (FLEET/REGION) to its value, even of one entry or none.
func (r *resolver) setOf(im spec.Import, value func(spec.Wired) (any, error)) (any, error) {
	out := map[string]any{}
	for _, w := range r.m.WiredOf(im) {
		v, err := value(w)
		if err != nil {
			return nil, err
		}
		out[w.Key] = v
	}
	return out, nil
}

// importChanged reports whether v reads another fleet's value that has
// changed since this fleet's last apply read it.
func (r *resolver) importChanged(v spec.Value) bool {
	for _, im := range spec.ImportsIn(v) {
		for _, w := range r.m.WiredOf(im) {
			if w.Changed() {
				return true
			}
		}
	}
	return false
}

// importRefs names the values from other fleets that v reads, and those
// of them not published yet, sorted.
func (r *resolver) importRefs(v spec.Value) (refs, pending []string) {
	seen := map[string]bool{}
	for _, im := range spec.ImportsIn(v) {
		for _, w := range r.m.WiredOf(im) {
			if !seen[w.Ref] {
				seen[w.Ref] = true
				refs = append(refs, w.Ref)
				if !w.Known() {
					pending = append(pending, w.Ref)
				}
			}
		}
	}
	sort.Strings(refs)
	sort.Strings(pending)
	return refs, pending
}

// markImports labels each change of a declared resource with the values
// from other fleets it reads: the plan's id binds those names, not values
// that may be pending at review.
func (pl *planner) markImports(a *Action) {
	d, ok := pl.m.Lookup(a.Address)
	if !ok || !pl.m.ReadsOthers() {
		return
	}
	for i := range a.Changes {
		a.Changes[i].From, a.Changes[i].Pending = pl.res.importRefs(d.Fields[a.Changes[i].Field])
	}
}

// Pending returns the values from other fleets this plan's actions need
// and that are not published yet: apply refuses while there are any.
func (p *Plan) Pending() *PendingError {
	if p.run == nil {
		return nil
	}
	m := p.run.model
	refs, fleets := map[string]bool{}, map[string]bool{}
	for _, a := range p.Actions {
		d, ok := m.Lookup(a.Address)
		if !ok || a.Action == Delete || a.Action == Forget {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(d.Fields)) {
			for _, im := range spec.ImportsIn(d.Fields[name]) {
				for _, w := range m.WiredOf(im) {
					if !w.Known() {
						refs[w.Ref] = true
						fleets[w.Fleet] = true
					}
				}
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	return &PendingError{Refs: slices.Sorted(maps.Keys(refs)), Fleets: slices.Sorted(maps.Keys(fleets))}
}

// Published is the record this fleet publishes after the apply: each
// capability's exports resolved against what the apply left in the cloud.
// A destroy publishes no capabilities. A value that cannot be read (its
// resource was not made) is pending.
func (p *Plan) Published() *spec.Published {
	rec := &spec.Published{Fleet: p.Fleet, Capabilities: map[string]spec.PublishedCapability{}}
	if p.run == nil || p.run.destroy {
		return rec
	}
	m, w := p.run.model, p.run.world
	accounts := map[spec.Provider]string{}
	for _, a := range p.Accounts {
		accounts[a.Provider] = a.Account
	}
	for name, c := range m.Provides {
		in := m.Interfaces[c.Interface]
		pc := spec.PublishedCapability{Interface: c.Interface, InterfaceHash: in.Hash, Consumers: "many", Exposed: c.Exposed,
			Exports: map[string]spec.PublishedExport{}}
		if c.One {
			pc.Consumers = "one"
		}
		for e, b := range c.Bindings {
			pc.Exports[e] = publishedExport(m, w, accounts, in.Exports[e], b)
		}
		rec.Capabilities[name] = pc
	}
	return rec
}

func publishedExport(m *spec.Model, w *world, accounts map[spec.Provider]string, def spec.ExportDef, b spec.Binding) spec.PublishedExport {
	out := spec.PublishedExport{Type: def.Type, Lifecycle: b.Lifecycle, Locality: b.Locality, Secret: b.Secret || def.Secret}
	var of spec.Address
	var attribute string
	switch v := b.Value.(type) {
	case spec.Observed:
		of, attribute = v.Of, v.Attribute
	case spec.SecretRef:
		of, attribute = v.Of, "arn"
	default:
		out.Value = spec.Encode(v)
		return out
	}
	out.Resource = of.String()
	out.Provider = of.Provider
	out.Account = accounts[of.Provider]
	if d, ok := m.Lookup(of); ok {
		out.Region = d.Region
	}
	res, ok := w.get(of)
	if !ok {
		out.Pending = true
		return out
	}
	val := res.Attributes[attribute]
	if val == "" && attribute == "arn" {
		val = res.Attributes["id"] // a Scaleway secret is referred to by its id
	}
	if val == "" {
		out.Pending = true
		return out
	}
	out.Value = val
	return out
}

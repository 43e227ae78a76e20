package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// Several fleets of one run that wire to each other (docs/ci.md): they are
// planned, commented and applied providers first.

// synthAll synthesizes every fleet input, in input order; a fleet that
// fails is left out, with its error.
func (a *action) synthAll(ctx context.Context) ([]*fleetDoc, []error) {
	var fleets []*fleetDoc
	var failures []error
	for _, input := range a.in.fleets {
		f, err := a.synth(ctx, input)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		fleets = append(fleets, f)
	}
	return fleets, failures
}

// providersIn are the fleets of the run that f's wires name, sorted.
func providersIn(f *fleetDoc, run map[string]bool) []string {
	var out []string
	for _, wire := range f.document.Wires {
		for _, w := range wire.Each() {
			if w.Fleet != f.Name && run[w.Fleet] && !slices.Contains(out, w.Fleet) {
				out = append(out, w.Fleet)
			}
		}
	}
	sort.Strings(out)
	return out
}

// orderFleets puts each fleet after the fleets of the run it is wired to
// (a topological order); of the fleets free to go next, the first in input
// order goes. Fleets that wire to each other in a cycle are an error that
// names them.
func orderFleets(fleets []*fleetDoc) ([]*fleetDoc, error) {
	run := map[string]bool{}
	for _, f := range fleets {
		run[f.Name] = true
	}
	placed := map[string]bool{}
	var out []*fleetDoc
	for len(out) < len(fleets) {
		next := -1
		for i, f := range fleets {
			if placed[f.Name] {
				continue
			}
			ready := true
			for _, p := range providersIn(f, run) {
				ready = ready && placed[p]
			}
			if ready {
				next = i
				break
			}
		}
		if next < 0 {
			var edges []string
			for _, f := range fleets {
				if placed[f.Name] {
					continue
				}
				var waits []string
				for _, p := range providersIn(f, run) {
					if !placed[p] {
						waits = append(waits, p)
					}
				}
				edges = append(edges, f.Name+" reads "+strings.Join(waits, " and "))
			}
			return nil, fmt.Errorf("the fleets of this run wire to each other in a cycle (%s): no order applies each provider before its consumers; unwire one of them", strings.Join(edges, "; "))
		}
		placed[fleets[next].Name] = true
		out = append(out, fleets[next])
	}
	return out, nil
}

// readsOf is what the consumer's comment says it reads: each wired slot,
// and, for a provider planned earlier in this run, which of the values the
// plan's changes read are pending until it applies.
func readsOf(f *fleetDoc, p *operations.Plan, upstream map[string]*spec.Published) []render.Read {
	var out []render.Read
	for _, slot := range slices.Sorted(maps.Keys(f.document.Wires)) {
		// A reach-all slot reads each capability of its list.
		for _, w := range f.document.Wires[slot].Each() {
			out = append(out, readOf(slot, w, p, upstream))
		}
	}
	return out
}

// readOf is one capability a slot reads, and, when its provider was planned
// earlier in this run, which of its values the plan's changes wait for.
func readOf(slot string, w spec.Wire, p *operations.Plan, upstream map[string]*spec.Published) render.Read {
	r := render.Read{Slot: slot, Fleet: w.Fleet, Capability: w.Provides}
	rec := upstream[w.Fleet]
	if rec == nil {
		return r
	}
	r.Beside = true
	exports := rec.Capabilities[w.Provides].Exports
	prefix := w.Fleet + ":" + w.Provides + "."
	for _, a := range p.Actions {
		for _, c := range a.Changes {
			for _, ref := range c.From {
				if e, ok := strings.CutPrefix(ref, prefix); ok && exports[e].Pending && !slices.Contains(r.Pending, e) {
					r.Pending = append(r.Pending, e)
				}
			}
		}
	}
	sort.Strings(r.Pending)
	return r
}

// consumersOf is who the provider's comment says reads it: the fleets
// whose claims its state holds, and the fleets of this run wired to it
// that hold none yet.
func consumersOf(f *fleetDoc, claims map[string][]string, fleets []*fleetDoc) []render.Consumer {
	var out []render.Consumer
	held := map[[2]string]bool{}
	for _, capability := range slices.Sorted(maps.Keys(claims)) {
		for _, fleet := range claims[capability] {
			out = append(out, render.Consumer{Capability: capability, Fleet: fleet, Claimed: true})
			held[[2]string{capability, fleet}] = true
		}
	}
	for _, c := range fleets {
		for _, slot := range slices.Sorted(maps.Keys(c.document.Wires)) {
			for _, w := range c.document.Wires[slot].Each() {
				if w.Fleet != f.Name || c.Name == f.Name || held[[2]string{w.Provides, c.Name}] {
					continue
				}
				held[[2]string{w.Provides, c.Name}] = true
				out = append(out, render.Consumer{Capability: w.Provides, Fleet: c.Name})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Capability < out[j].Capability })
	return out
}

// exportsOutput reads the published record of each fleet that provides a
// capability, for the exports output: {fleet: {capability: {export:
// value}}}, a secret as its reference and a pending value null. A fleet
// that has published nothing is left out; a record that cannot be read is
// a warning, never the run's failure.
func (a *action) exportsOutput(ctx context.Context, fleets []*fleetDoc) map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for _, f := range fleets {
		if len(f.document.Provides) == 0 {
			continue
		}
		rec, err := a.runner.Output(ctx, f)
		if errors.Is(err, operations.ErrNothingPublished) {
			continue
		}
		if err != nil {
			a.gha.Warningf("fleet %s: read its published exports for the exports output: %v", f.Name, err)
			continue
		}
		caps := map[string]map[string]any{}
		for name, c := range rec.Capabilities {
			values := map[string]any{}
			for e, x := range c.Exports {
				values[e] = nil
				if !x.Pending {
					values[e] = x.Value
				}
			}
			caps[name] = values
		}
		out[f.Name] = caps
	}
	return out
}

// setExports sets the exports output, when any fleet has published.
func (a *action) setExports(exports map[string]map[string]map[string]any) error {
	if len(exports) == 0 {
		return nil
	}
	b, err := json.Marshal(exports)
	if err != nil {
		return fmt.Errorf("encode the exports output: %w", err)
	}
	return a.setOutput("exports", asciiJSON(b))
}

// asciiJSON escapes every character of a JSON text outside printable ASCII
// as \uXXXX (a surrogate pair above U+FFFF): the same JSON, and nothing in
// it that the escaping of outputs would have to change.
func asciiJSON(b []byte) string {
	var s strings.Builder
	for _, r := range string(b) {
		switch {
		case r >= 0x20 && r < 0x7f:
			s.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&s, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			s.WriteString(`\u` + fmt.Sprintf("%04x", r))
		}
	}
	return s.String()
}

// blockedBy names the provider of this run whose failure stops f, or "".
func blockedBy(f *fleetDoc, failed map[string]bool, run map[string]bool) string {
	for _, p := range providersIn(f, run) {
		if failed[p] {
			return p
		}
	}
	return ""
}

package engine

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// Drift is what changed in the cloud out of band: each managed resource as
// it is now against the cache, what the last apply (or refresh) saw of it.
// It never compares with the document, so a change the document asks for
// and nobody applied yet is not drift: that is what plan shows.
type Drift struct {
	FormatVersion int       `json:"formatVersion"`
	Fleet         string    `json:"fleet"`
	Accounts      []Account `json:"accounts"`
	// Since is when the cache was last written: the baseline's age.
	Since time.Time `json:"since,omitzero"`
	// Resources are the managed resources that drifted, by address.
	Resources []Drifted `json:"resources"`
	// Unknown are managed resources the cache has no record of: no
	// baseline to compare with (an apply or a refresh makes one).
	Unknown []spec.Address `json:"unknown,omitempty"`
	// Checked is how many managed resources were compared.
	Checked int `json:"checked"`
}

// HasDrift reports whether anything changed out of band.
func (d *Drift) HasDrift() bool { return len(d.Resources) > 0 }

// Drifted is one resource that changed out of band.
type Drifted struct {
	Address spec.Address `json:"address"`
	Region  string       `json:"region"`
	// Gone: it was there at the last apply and is not now.
	Gone bool `json:"gone,omitempty"`
	// Owner is set when the ownership tag changed: before, after.
	Owner []string `json:"owner,omitempty"`
	// Changes are its fields that differ: Before is what the last apply
	// saw, After what the cloud reports now.
	Changes []Change `json:"changes,omitempty"`
	// Member is the component member that declares it, if one does.
	Member string `json:"member,omitempty"`
}

// Drift observes what the fleet manages (its ledger) and compares each
// resource with last, the cache. It changes nothing.
func (e *Engine) Drift(ctx context.Context, m *spec.Model, ledger *state.Ledger, last *state.Cache) (*Drift, error) {
	if ledger == nil {
		ledger = state.NewLedger()
	}
	if last == nil {
		last = state.NewCache()
	}
	accounts, _, err := e.verifyAccounts(ctx, m, ledger)
	if err != nil {
		return nil, err
	}
	// The tag scan answers ownership and tags as it does for a plan, so
	// drift makes the calls a no-change plan makes and no more.
	sc, err := e.scan(ctx, scanRegions(m, accounts), false)
	if err != nil {
		return nil, err
	}
	w, err := e.observe(ctx, interest(m, ledger), sc)
	if err != nil {
		return nil, err
	}
	if err := e.confirmScannedTags(ctx, m, w); err != nil {
		return nil, err
	}
	d := &Drift{FormatVersion: FormatVersion, Fleet: m.Fleet, Accounts: accounts, Resources: []Drifted{}}
	for _, row := range ledger.Rows {
		a := row.Address()
		was, known := last.Resources[a.String()]
		if !known {
			d.Unknown = append(d.Unknown, a)
			continue
		}
		d.Checked++
		if was.Seen.After(d.Since) {
			d.Since = was.Seen
		}
		if x, drifted := driftOf(a, was, w); drifted {
			if at, ok := m.Components.Of(a); ok {
				x.Member = at.Path()
			}
			d.Resources = append(d.Resources, x)
		}
	}
	sort.Slice(d.Resources, func(i, j int) bool { return d.Resources[i].Address.Less(d.Resources[j].Address) })
	return d, nil
}

// driftOf compares one resource as last seen with the world now.
func driftOf(a spec.Address, was state.Observed, w *world) (Drifted, bool) {
	x := Drifted{Address: a, Region: was.Region}
	now, ok := w.get(a)
	if !ok {
		x.Gone = true
		return x, true
	}
	if now.Owner != was.Owner {
		x.Owner = []string{was.Owner, now.Owner}
	}
	info, _ := spec.Lookup(a.Kind)
	names := make([]string, 0, len(was.Fields))
	for name := range was.Fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		after, reported := now.Fields[name]
		if !reported {
			continue // a field the cloud does not report now is unknown, not drift
		}
		before := was.Fields[name]
		after = canon(after)
		if name == spec.TagsField {
			// The ownership tag is Owner's business.
			before, after = spec.WithoutOwnershipTag(before), spec.WithoutOwnershipTag(after)
		}
		if sameObserved(info, name, before, after) {
			continue
		}
		x.Changes = append(x.Changes, Change{Field: name, Before: canon(before), After: after})
	}
	return x, x.Owner != nil || len(x.Changes) > 0
}

// sameObserved compares two observations of one field: as the kind
// compares it (a list the service may reorder, as a set), else as JSON.
func sameObserved(info *spec.KindInfo, name string, a, b any) bool {
	if info != nil {
		if f, ok := info.Field(name); ok {
			return spec.Equal(f, a, b)
		}
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

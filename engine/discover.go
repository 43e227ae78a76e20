package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// scanRegions returns, per provider, the regions a tag scan covers: every
// region the fleet places resources in or the ledger records, and the
// provider's placement.
func scanRegions(m *spec.Model, accounts []Account) map[spec.Provider][]string {
	out := map[spec.Provider][]string{}
	for _, a := range accounts {
		rs := append([]string{}, a.Regions...)
		if p := m.Placement[a.Provider]; p != "" {
			rs = appendUnique(rs, p)
		}
		sort.Strings(rs)
		out[a.Provider] = rs
	}
	return out
}

// tagged is one resource a tag scan found.
type tagged struct {
	Address spec.Address
	Region  string
	Owner   string
	// Tags are all its tags, when the scan carries them.
	Tags map[string]string
}

// scanResult is what a tag scan found: the marked resources, the
// providers it covered, and the listings a backend without a tag-scan API
// made to find them (providers.ListingDiscoverer), which observing the
// same kind in the same region takes instead of listing again.
type scanResult struct {
	owned   []tagged
	scanned map[spec.Provider]bool
	listed  map[listKey][]providers.Resource
}

// listKey names one listing: a kind of a provider in a region.
type listKey struct {
	provider spec.Provider
	kind     spec.Kind
	region   string
}

// scan asks every reachable backend that can, which resources carry an
// ownership mark in the regions in play, concurrently. A refused or
// throttled scan fails the run: a partial scan is never "all".
func (e *Engine) scan(ctx context.Context, regions map[spec.Provider][]string, deep bool) (*scanResult, error) {
	var mu sync.Mutex // guards sc: the scan's jobs add to it as they finish
	sc := &scanResult{scanned: map[spec.Provider]bool{}, listed: map[listKey][]providers.Resource{}}
	var jobs []job
	for _, p := range spec.Providers {
		b, ok := e.opts.Backends[p]
		if !ok {
			continue
		}
		d, ok := b.(providers.Discoverer)
		if !ok {
			continue
		}
		sc.scanned[p] = true
		for _, region := range regions[p] {
			jobs = append(jobs, job{service: string(p) + "/tags", do: func(ctx context.Context) error {
				var owned []providers.Owned
				var listed []providers.Listed
				var err error
				if ld, ok := d.(providers.ListingDiscoverer); ok {
					owned, listed, err = ld.OwnedListed(ctx, region, deep)
				} else {
					owned, err = d.Owned(ctx, region, deep)
				}
				if err != nil {
					return fmt.Errorf("%s in %s: scan ownership tags: %s: %w", p, region, e.code(p, err), err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, o := range owned {
					if o.Region == "" {
						o.Region = region
					}
					a := spec.Address{Provider: p, Kind: o.Kind, Name: o.Name}
					sc.owned = append(sc.owned, tagged{Address: a, Region: o.Region, Owner: o.Owner, Tags: o.Tags})
				}
				for _, l := range listed {
					sc.listed[listKey{provider: p, kind: l.Kind, region: l.Region}] = l.Resources
				}
				return nil
			}})
		}
	}
	if err := e.runBounded(ctx, jobs); err != nil {
		return nil, err
	}
	sort.Slice(sc.owned, func(i, j int) bool { return sc.owned[i].Address.Less(sc.owned[j].Address) })
	return sc, nil
}

// taggedRows returns the rows of resources tagged for this fleet that are
// neither declared nor in the ledger (nor their physical twins): orphans
// that only the tag remembers, because a ledger was lost or a run died
// before recording its create.
func taggedRows(m *spec.Model, ledger *state.Ledger, owned []tagged) []state.Row {
	known := map[string]bool{}
	for _, d := range m.Resources {
		known[physicalKey(d.Address)] = true
	}
	for _, r := range ledger.Rows {
		known[physicalKey(r.Address())] = true
	}
	var out []state.Row
	for _, o := range owned {
		if o.Owner != m.Fleet {
			continue
		}
		a := o.Address
		if known[physicalKey(a)] {
			continue
		}
		known[physicalKey(a)] = true
		row := state.Row{Provider: a.Provider, Kind: a.Kind, Name: a.Name, Region: o.Region}
		if mem, ok := m.Components.Of(a); ok {
			row.Member = mem.Path()
		}
		out = append(out, row)
	}
	return out
}

// RegionChange is a ledger row whose resource was found in another region.
type RegionChange struct {
	Row  state.Row `json:"row"`
	From string    `json:"from"`
}

// Foreign is a resource another fleet's tag claims.
type Foreign struct {
	Address spec.Address `json:"address"`
	Region  string       `json:"region"`
	Owner   string       `json:"owner"`
}

// Discovery is a ledger rebuilt from the ownership tags, and how it differs
// from the one on file.
type Discovery struct {
	Accounts []Account      `json:"accounts"`
	Ledger   *state.Ledger  `json:"ledger"`
	Added    []state.Row    `json:"added"`
	Removed  []state.Row    `json:"removed"`
	Moved    []RegionChange `json:"moved"`
	// Foreign lists what other fleets own in the same regions: reported,
	// never claimed.
	Foreign []Foreign `json:"foreign"`
}

// Discover rebuilds the ledger from the cloud: every resource carrying this
// fleet's tag, read to confirm it exists (a tag scan also returns resources
// that once had tags). Rows of a provider that cannot be scanned are
// carried over unchanged.
func (e *Engine) Discover(ctx context.Context, m *spec.Model, ledger *state.Ledger) (*Discovery, error) {
	if ledger == nil {
		ledger = state.NewLedger()
	}
	accounts, _, err := e.verifyAccounts(ctx, m, ledger)
	if err != nil {
		return nil, err
	}
	sc, err := e.scan(ctx, scanRegions(m, accounts), true)
	if err != nil {
		return nil, err
	}
	var candidates []state.Row
	dx := &Discovery{Accounts: accounts, Ledger: state.NewLedger(), Added: []state.Row{}, Removed: []state.Row{},
		Moved: []RegionChange{}, Foreign: []Foreign{}}
	for _, o := range sc.owned {
		a := o.Address
		if o.Owner != m.Fleet {
			dx.Foreign = append(dx.Foreign, Foreign{Address: a, Region: o.Region, Owner: o.Owner})
			continue
		}
		if _, excluded := m.Excluded(a); excluded {
			continue
		}
		candidates = append(candidates, state.Row{Provider: a.Provider, Kind: a.Kind, Name: a.Name, Region: o.Region})
	}
	// Confirm each candidate with a read, through the normal observation
	// (or by the listing that found it, which is no older).
	w, err := e.observe(ctx, interest(&spec.Model{Fleet: m.Fleet}, &state.Ledger{Rows: candidates}), &scanResult{listed: sc.listed})
	if err != nil {
		return nil, err
	}
	for _, r := range candidates {
		if res, ok := w.get(r.Address()); ok && res.Owner == m.Fleet {
			dx.Ledger.Put(r)
		}
	}
	for _, r := range ledger.Rows {
		if !sc.scanned[r.Provider] {
			dx.Ledger.Put(r)
		}
	}
	// An intent is no tag a scan could find: the evidence that an
	// interrupted create left an untagged resource. Rebuilding the rows
	// keeps it, so the next plan can still claim that resource.
	for _, in := range ledger.Intents {
		dx.Ledger.PutIntent(in)
	}
	for _, r := range dx.Ledger.Rows {
		old, had := ledger.Get(r.Address())
		switch {
		case !had:
			dx.Added = append(dx.Added, r)
		case old.Region != r.Region:
			dx.Moved = append(dx.Moved, RegionChange{Row: r, From: old.Region})
		}
	}
	for _, r := range ledger.Rows {
		if _, kept := dx.Ledger.Get(r.Address()); !kept {
			dx.Removed = append(dx.Removed, r)
		}
	}
	return dx, nil
}

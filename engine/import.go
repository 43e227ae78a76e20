package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// ImportOptions narrow what Unowned looks for.
type ImportOptions struct {
	// Kinds are the kinds to list; empty is every kind a reachable
	// backend manages.
	Kinds []spec.Kind
	// Regions are the regions to list, each for the cloud it belongs to;
	// empty is the regions the fleet is in (its placement, what it
	// declares and what its ledger records).
	Regions []string
	// NamePrefix keeps only names that start with it.
	NamePrefix string
}

// Found is one resource no fleet's mark claims, as its read reported it.
type Found struct {
	Address spec.Address `json:"address"`
	Region  string       `json:"region"`
	// Fields are what the cloud reports, under the spec's field names.
	Fields map[string]any `json:"-"`
	// Unmodelled are the settings the cloud reported that no spec field
	// holds (providers.Resource.Unmodelled).
	Unmodelled []string `json:"unmodelled,omitempty"`
}

// Importable is what Unowned found, and what it passed over.
type Importable struct {
	Accounts []Account `json:"accounts"`
	Found    []Found   `json:"found"`
	// Owned counts the resources passed over because a fleet's mark
	// claims them (this one's included): they are never offered.
	Owned int `json:"owned"`
	// Known counts those passed over because this fleet declares them,
	// records them or excludes them.
	Known int `json:"known"`
}

// Unowned lists, in the fleet's accounts, the resources that carry no
// ownership mark and that the fleet neither declares, records nor
// excludes: what `infra import` offers. It writes nothing. It makes the
// listings, one tag scan per region, and one read of each candidate the
// listing could not answer; the read settles ownership, since a scan
// does not cover every kind.
func (e *Engine) Unowned(ctx context.Context, m *spec.Model, ledger *state.Ledger, opts ImportOptions) (*Importable, error) {
	if ledger == nil {
		ledger = state.NewLedger()
	}
	accounts, _, err := e.verifyAccounts(ctx, m, ledger)
	if err != nil {
		return nil, err
	}
	regions, err := importRegions(m, accounts, opts.Regions)
	if err != nil {
		return nil, err
	}
	sc, err := e.scan(ctx, regions, false)
	if err != nil {
		return nil, err
	}
	out := &Importable{Accounts: accounts, Found: []Found{}}
	marked := map[string]bool{} // physical key + region of what a scan says is owned
	for _, o := range sc.owned {
		marked[physicalKey(o.Address)+"@"+o.Region] = true
	}
	known := map[string]bool{}
	for _, d := range m.Resources {
		known[physicalKey(d.Address)] = true
	}
	for _, r := range ledger.Rows {
		known[physicalKey(r.Address())] = true
	}
	keep := out.keeper(m, known, marked, opts.NamePrefix)
	for _, a := range accounts {
		kinds := e.importKinds(a.Provider, opts.Kinds)
		// A global kind (IAM users) lists the same names in every region:
		// once, in the placement where it is listed, as the fleet
		// declares it there.
		home := ""
		if rs := regions[a.Provider]; len(rs) > 0 {
			home = rs[0]
			if pl := m.Placement[a.Provider]; slices.Contains(rs, pl) {
				home = pl
			}
		}
		for _, region := range regions[a.Provider] {
			// One region at a time: the world is keyed by address, and the
			// same name may exist in two regions.
			var ls []*listing
			for _, k := range kinds {
				if info, _ := spec.Lookup(k.read); info.Global && region != home {
					continue
				}
				ls = append(ls, &listing{provider: a.Provider, kind: k.read, region: region, keep: keep(a.Provider, k.read, region)})
			}
			w, err := e.observe(ctx, ls, sc)
			if err != nil {
				return nil, err
			}
			for addr, r := range w.m {
				if r.Owner != "" {
					out.Owned++ // the read found a mark the scan does not cover
					continue
				}
				offered, fields := offeredKind(kinds, addr, r.Fields)
				out.Found = append(out.Found, Found{Address: offered, Region: region, Fields: fields, Unmodelled: r.Unmodelled})
			}
		}
	}
	sort.Slice(out.Found, func(i, j int) bool {
		if out.Found[i].Address != out.Found[j].Address {
			return out.Found[i].Address.Less(out.Found[j].Address)
		}
		return out.Found[i].Region < out.Found[j].Region
	})
	return out, nil
}

// keeper returns, per listing, the names worth reading: not outside the
// prefix, not known to the fleet, not claimed by a mark the scan saw. It
// counts what it passes over.
func (out *Importable) keeper(m *spec.Model, known, marked map[string]bool, prefix string) func(p spec.Provider, k spec.Kind, region string) func(string) bool {
	var mu sync.Mutex // guards out's counts: listings run concurrently
	return func(p spec.Provider, k spec.Kind, region string) func(string) bool {
		return func(name string) bool {
			a := spec.Address{Provider: p, Kind: k, Name: name}
			_, excluded := m.Excluded(a)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !strings.HasPrefix(name, prefix):
				return false
			case known[physicalKey(a)] || excluded:
				out.Known++
				return false
			case marked[physicalKey(a)+"@"+region]:
				out.Owned++
				return false
			}
			return true
		}
	}
}

// importKind is a kind to offer, and the kind listed and read for it:
// kinds that are one physical resource (a bucket as object-store and as
// s3-bucket) are read once, through the one with the most fields.
type importKind struct {
	read   spec.Kind
	offers []spec.Kind // the twins, the fewest fields first
}

// importKinds are the kinds of provider p to list: want, or every kind the
// backend manages, with physical twins folded together.
func (e *Engine) importKinds(p spec.Provider, want []spec.Kind) []importKind {
	b, ok := e.opts.Backends[p]
	if !ok {
		return nil
	}
	groups := map[string][]spec.Kind{}
	var order []string
	for _, info := range spec.KindsOf(p) {
		if len(want) > 0 && !slices.Contains(want, info.Kind) {
			continue
		}
		if _, ok := b.Driver(info.Kind); !ok {
			continue
		}
		if info.MarkOn(p) == spec.MarkNamePrefix {
			// The name is the mark (Scaleway queues, Serverless SQL): one
			// without the fleet's prefix can never be this fleet's, and one
			// with it is already. A companion's mark (a Route 53 record's)
			// is read like a tag: a record that neither a companion nor its
			// zone marks is offered, and its adoption writes the companion.
			continue
		}
		class := spec.PhysicalClass(p, info.Kind)
		if _, seen := groups[class]; !seen {
			order = append(order, class)
		}
		groups[class] = append(groups[class], info.Kind)
	}
	out := make([]importKind, 0, len(order))
	for _, class := range order {
		ks := groups[class]
		sort.SliceStable(ks, func(i, j int) bool { return fieldCount(ks[i]) < fieldCount(ks[j]) })
		out = append(out, importKind{read: ks[len(ks)-1], offers: ks})
	}
	return out
}

func fieldCount(k spec.Kind) int {
	info, _ := spec.Lookup(k)
	return len(info.Fields)
}

// offeredKind is the kind a read resource is offered as: the twin with the
// fewest fields that still holds every field the read reported at other
// than its default (a bucket with object lock is an s3-bucket, any other
// an object-store). Fields the offered kind lacks are dropped: they are
// at their defaults.
func offeredKind(kinds []importKind, a spec.Address, fields map[string]any) (spec.Address, map[string]any) {
	for _, k := range kinds {
		if k.read != a.Kind {
			continue
		}
		read, _ := spec.Lookup(k.read)
	offers:
		for _, offer := range k.offers {
			info, _ := spec.Lookup(offer)
			for name, v := range fields {
				f, _ := read.Field(name)
				if _, has := info.Field(name); !has && f.Default != nil && !spec.Equal(f, f.Default, v) {
					continue offers
				}
			}
			kept := map[string]any{}
			for name, v := range fields {
				if _, has := info.Field(name); has {
					kept[name] = v
				}
			}
			return spec.Address{Provider: a.Provider, Kind: offer, Name: a.Name}, kept
		}
	}
	return a, fields
}

// importRegions are the regions to list per provider: those given, each
// for the cloud whose region it is, or the fleet's own.
func importRegions(m *spec.Model, accounts []Account, given []string) (map[spec.Provider][]string, error) {
	if len(given) == 0 {
		return scanRegions(m, accounts), nil
	}
	in := map[spec.Provider]bool{}
	for _, a := range accounts {
		in[a.Provider] = true
	}
	out := map[spec.Provider][]string{}
	for _, r := range given {
		p, ok := spec.RegionOwner(r)
		if !ok {
			return nil, fmt.Errorf("--region %s: no cloud infra knows has that region", r)
		}
		if !in[p] {
			return nil, fmt.Errorf("--region %s: a %s region, and the fleet has no %s account to list it with; add it to the fleet's accounts", r, p, p)
		}
		out[p] = appendUnique(out[p], r)
	}
	for p := range out {
		sort.Strings(out[p])
	}
	return out, nil
}

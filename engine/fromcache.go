package engine

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// CacheInfo says what of the cache a plan was made from.
type CacheInfo struct {
	// Seen is the oldest observation the plan used: how stale it may be.
	// With no entry used, the oldest in the cache.
	Seen time.Time `json:"seen"`
	// Entries counts the cached resources the plan used.
	Entries int `json:"entries"`
}

// ErrFromCache refuses to apply a plan made from the cache.
var ErrFromCache = errors.New("this plan was made from the cache, without reading the cloud: apply always observes the cloud, so plan again without --refresh=false and apply that")

// PlanFromCache plans against cache, what the last apply or refresh saw,
// instead of the cloud: no account check, no tag scan, no list, no read,
// so no backend is needed. The world is the cache's entries, matched as a
// listing would match them (the name placed in the region it was seen
// in); the tag scan's answer is the cached resources whose mark is this
// fleet's; the accounts are the document's, Unverified. An absent entry
// is an absent resource, so an empty cache plans as an empty cloud: the
// caller refuses one. The plan is marked FromCache and Apply refuses it.
func (e *Engine) PlanFromCache(ctx context.Context, m *spec.Model, diags []spec.Diagnostic, ledger *state.Ledger, cache *state.Cache, opts PlanOptions) (*Plan, error) {
	if cache == nil {
		cache = state.NewCache()
	}
	return e.planFrom(ctx, m, diags, ledger, opts, func(_ context.Context, m *spec.Model, ledger *state.Ledger) (*sight, error) {
		return recall(m, ledger, cache), nil
	})
}

// recall is look's answer from the cache.
func recall(m *spec.Model, ledger *state.Ledger, cache *state.Cache) *sight {
	accounts := statedAccounts(m, ledger)
	extra := taggedRows(m, ledger, cachedOwned(m, cache, scanRegions(m, accounts)))
	w, info := newWorld(), &CacheInfo{}
	for _, l := range interest(m, knownRows(ledger, extra)) {
		for _, names := range []struct {
			set map[string]bool
			old bool
		}{{l.names, false}, {l.old, true}} {
			for name := range names.set {
				a := spec.Address{Provider: l.provider, Kind: l.kind, Name: name}
				o, ok := cache.Resources[a.String()]
				if !ok || o.Region != l.region {
					continue // a listing of l.region would not have found it
				}
				w.put(a, providers.Resource{Name: name, Region: o.Region, Fields: o.Fields, Attributes: o.Attributes,
					Owner: o.Owner, Complete: true}, names.old)
				info.note(o.Seen)
			}
		}
	}
	if info.Entries == 0 {
		for _, o := range cache.Resources {
			if info.Seen.IsZero() || o.Seen.Before(info.Seen) {
				info.Seen = o.Seen
			}
		}
	}
	return &sight{accounts: accounts, extra: extra, world: w, cache: info}
}

func (c *CacheInfo) note(seen time.Time) {
	if c.Entries == 0 || seen.Before(c.Seen) {
		c.Seen = seen
	}
	c.Entries++
}

// statedAccounts is verifyAccounts without the calls: each provider in
// scope with the account the document states, unverified.
func statedAccounts(m *spec.Model, ledger *state.Ledger) []Account {
	regions, inScope := accountScope(m, ledger)
	var out []Account
	for _, p := range spec.Providers {
		if inScope[p] {
			sort.Strings(regions[p])
			out = append(out, Account{Provider: p, Account: m.Accounts[p], Regions: regions[p], Unverified: true})
		}
	}
	return out
}

// cachedOwned is the tag scan as the cache remembers it: the cached
// resources in the scanned regions that carry a mark, by address so that
// taggedRows keeps the same twin whatever the map's order.
func cachedOwned(m *spec.Model, cache *state.Cache, regions map[spec.Provider][]string) []tagged {
	var out []tagged
	for key, o := range cache.Resources {
		a, err := spec.ParseAddress(key)
		if err != nil || o.Owner == "" {
			continue // LoadCache refuses a bad address; a hand-made cache is skipped
		}
		for _, r := range regions[a.Provider] {
			if r == o.Region {
				out = append(out, tagged{Address: a, Region: o.Region, Owner: o.Owner})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address.Less(out[j].Address) })
	return out
}

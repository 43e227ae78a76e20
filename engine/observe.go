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

// world is what the engine knows of the cloud: the resources it observed,
// then what each action reported. Absent means observed absent.
type world struct {
	mu sync.Mutex
	m  map[spec.Address]providers.Resource
	// old holds a declared resource found in the region its ledger row
	// records, when the document now places it elsewhere.
	old map[spec.Address]providers.Resource
	// scanTagged marks the resources whose tags came from the tag scan
	// rather than from reading them (see confirmScannedTags).
	scanTagged map[spec.Address]bool
}

func newWorld() *world {
	return &world{m: map[spec.Address]providers.Resource{}, old: map[spec.Address]providers.Resource{},
		scanTagged: map[spec.Address]bool{}}
}

func (w *world) getOld(a spec.Address) (providers.Resource, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.old[a]
	return r, ok
}

func (w *world) get(a spec.Address) (providers.Resource, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.m[a]
	return r, ok
}

func (w *world) set(a spec.Address, r providers.Resource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m[a] = r
}

func (w *world) put(a spec.Address, r providers.Resource, old bool) {
	if old {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.old[a] = r
		return
	}
	w.set(a, r)
}

func (w *world) drop(a spec.Address) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, a)
}

// listing is one list call: a kind in a region, and the names in it the
// fleet cares about.
type listing struct {
	provider spec.Provider
	kind     spec.Kind
	region   string
	names    map[string]bool
	// old: names whose ledger row records this region while the document
	// places them in another.
	old map[string]bool
	// keep, when set, chooses the names itself instead of names: an
	// import's listing, which looks for what nobody declared.
	keep func(name string) bool
	// wants, when set, is what a read needs of each name (wantsOf); a
	// name it lacks needs nothing but its existence and its mark. Unset,
	// a read reports everything (import).
	wants map[string]providers.Want
}

// interest collects, per provider, kind and region, the names to look for:
// declared resources placed there and ledger rows recorded there. A
// listing's answers are matched only against names placed in its region,
// so a bucket named assets in one region never satisfies a declaration in
// another.
func interest(m *spec.Model, ledger *state.Ledger) []*listing {
	byKey := map[string]*listing{}
	at := func(p spec.Provider, k spec.Kind, region string) *listing {
		key := string(p) + "/" + string(k) + "/" + region
		l, ok := byKey[key]
		if !ok {
			l = &listing{provider: p, kind: k, region: region, names: map[string]bool{}, old: map[string]bool{}}
			byKey[key] = l
		}
		return l
	}
	for _, d := range m.Resources {
		if d.Region != "" {
			at(d.Address.Provider, d.Address.Kind, d.Region).names[d.Address.Name] = true
		}
	}
	for _, r := range ledger.Rows {
		if d, declared := m.Lookup(r.Address()); declared && d.Region != r.Region {
			at(r.Provider, r.Kind, r.Region).old[r.Name] = true
			continue
		}
		at(r.Provider, r.Kind, r.Region).names[r.Name] = true
	}
	wants := wantsOf(m)
	out := make([]*listing, 0, len(byKey))
	for _, l := range byKey {
		l.wants = map[string]providers.Want{}
		for name := range l.names {
			if w, ok := wants[spec.Address{Provider: l.provider, Kind: l.kind, Name: name}]; ok {
				l.wants[name] = w
			}
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.provider != b.provider {
			return a.provider < b.provider
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.region < b.region
	})
	return out
}

// verifyAccounts establishes, before anything is listed, which account each
// reachable provider's credentials belong to, and refuses a mismatch with
// the fleet's stated account. It first tells fleet-scoped backends whose
// fleet this is, so that name-prefix ownership can be read.
func (e *Engine) verifyAccounts(ctx context.Context, m *spec.Model, ledger *state.Ledger) ([]Account, []spec.Diagnostic, error) {
	for _, b := range e.opts.Backends {
		if fs, ok := b.(providers.FleetScoped); ok {
			fs.SetFleet(m.Fleet)
		}
	}
	regions, inScope := accountScope(m, ledger)
	var accounts []Account
	var diags []spec.Diagnostic
	for _, p := range spec.Providers {
		if !inScope[p] {
			continue
		}
		b, ok := e.opts.Backends[p]
		if !ok {
			declares := false
			for _, d := range m.Resources {
				declares = declares || d.Address.Provider == p
			}
			if declares {
				return nil, nil, fmt.Errorf("%s: the fleet declares %s resources, but %s", p, p, e.unreachable(p))
			}
			n := 0
			for _, r := range ledger.Rows {
				if r.Provider == p {
					n++
				}
			}
			if n > 0 {
				diags = append(diags, spec.Errorf(spec.RowUnreachableCloud, string(p),
					"declare the cloud (its account in \"accounts\"), or open the state of the right ledger",
					"the ledger records %d %s resource(s), but %s; apply refuses, because it would report them destroyed without deleting any",
					n, p, e.unreachable(p)))
			}
			continue
		}
		if err := checkCtx(ctx); err != nil {
			return nil, nil, err
		}
		got, err := b.Account(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: cannot establish the account of the credentials: %w", p, err)
		}
		if want, stated := m.Accounts[p]; stated && want != got {
			return nil, nil, &AccountMismatchError{Provider: p, Got: got, Want: want}
		}
		sort.Strings(regions[p])
		accounts = append(accounts, Account{Provider: p, Account: got, Regions: regions[p]})
		e.emit(Event{Kind: EventAccount, Message: fmt.Sprintf("%s: %s in %s ok", p, got, joinRegions(regions[p]))})
	}
	return accounts, diags, nil
}

// accountScope is the providers a plan involves (declared, or in the
// ledger) and the regions in play for each.
func accountScope(m *spec.Model, ledger *state.Ledger) (map[spec.Provider][]string, map[spec.Provider]bool) {
	regions := m.Regions()
	for _, r := range ledger.Rows {
		regions[r.Provider] = appendUnique(regions[r.Provider], r.Region)
	}
	inScope := map[spec.Provider]bool{}
	for _, p := range m.Providers() {
		inScope[p] = true
	}
	for _, r := range ledger.Rows {
		inScope[r.Provider] = true
	}
	return regions, inScope
}

// observe lists every (provider, kind, region) in scope and reads the
// matching names a listing could not fully answer, with bounded
// concurrency. Not found on read means absent; any other error fails the
// run, naming what was being observed. sc, when not nil, is this run's
// tag scan: a driver that can take the tags it found reads nothing more
// for them, and a listing the scan made is not made again.
func (e *Engine) observe(ctx context.Context, ls []*listing, sc *scanResult) (*world, error) {
	if sc == nil {
		sc = &scanResult{}
	}
	w := newWorld()
	reads, err := e.listAll(ctx, ls, sc.listed, w)
	if err != nil {
		return nil, err
	}
	// Keyed by the physical resource, not the address: the scan reports
	// a resource under one kind, and a twin kind reading the same thing
	// (a Lambda function the scan calls compute, read as lambda-function)
	// takes its tags too.
	scanTags := map[string]tagged{}
	for _, t := range sc.owned {
		if t.Tags != nil {
			scanTags[physicalKey(t.Address)] = t
		}
	}
	if err := e.readAll(ctx, reads, scanTags, w); err != nil {
		return nil, err
	}
	return w, nil
}

// readReq is a resource a listing found and could not fully answer.
type readReq struct {
	addr   spec.Address
	region string
	old    bool
	// listed is what the listing said, for a driver that can finish
	// it in fewer calls than a Read.
	listed providers.Resource
	// want is what the read needs; nil, everything.
	want *providers.Want
}

// lister is one run's listings: the scan's, and those this run made that
// another kind's listing starts from (providers.ListerFrom).
type lister struct {
	scanned map[listKey][]providers.Resource
	// bases are the listings some listing of this run starts from.
	bases map[listKey]bool
	mu    sync.Mutex
	made  map[listKey][]providers.Resource
}

func (lr *lister) keep(k listKey, rs []providers.Resource) {
	if !lr.bases[k] {
		return
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.made[k] = rs
}

// baseOf is the listing from names, when this run has it.
func (lr *lister) baseOf(from *listKey) ([]providers.Resource, bool) {
	if from == nil {
		return nil, false
	}
	k := *from
	if rs, ok := lr.scanned[k]; ok {
		return providers.InRegion(rs, k.region), true
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	rs, ok := lr.made[k]
	return rs, ok
}

// listAll runs every listing the scan did not already make (scanned),
// putting into w what a listing fully answers, and returns what must
// still be read. A listing that starts from another kind's listing in
// this run (a record's from the zones) runs after every other, and takes
// it.
func (e *Engine) listAll(ctx context.Context, ls []*listing, scanned map[listKey][]providers.Resource, w *world) ([]readReq, error) {
	lr := &lister{scanned: scanned, bases: map[listKey]bool{}, made: map[listKey][]providers.Resource{}}
	listed := map[listKey]bool{}
	for _, l := range ls {
		listed[listKey{provider: l.provider, kind: l.kind, region: l.region}] = true
	}
	var mu sync.Mutex
	var reads []readReq
	var first, second []job
	for _, l := range ls {
		if _, ok := e.opts.Backends[l.provider]; !ok {
			continue // unreachable: reported by verifyAccounts
		}
		rs, err := e.resources(spec.Address{Provider: l.provider, Kind: l.kind, Name: "*"})
		if err != nil {
			return nil, err
		}
		var from *listKey
		if k, ok := rs.ListsFrom(); ok && scanned[listKey{provider: l.provider, kind: l.kind, region: l.region}] == nil {
			if bk := (listKey{provider: l.provider, kind: k, region: l.region}); listed[bk] || scanned[bk] != nil {
				from = &bk
				lr.bases[bk] = true
			}
		}
		l := l
		j := job{service: e.service(l.provider, l.kind), do: func(ctx context.Context) error {
			more, err := e.list(ctx, l, rs, from, lr, w)
			mu.Lock()
			reads = append(reads, more...)
			mu.Unlock()
			return err
		}}
		if from != nil {
			second = append(second, j)
		} else {
			first = append(first, j)
		}
	}
	for _, jobs := range [][]job{first, second} {
		if err := e.runBounded(ctx, jobs); err != nil {
			return nil, err
		}
	}
	return reads, nil
}

// list runs one listing, or takes the scan's, keeping only the names it
// is for. from, when set, is the listing of this run it starts from.
func (e *Engine) list(ctx context.Context, l *listing, rs *providers.Resources, from *listKey, lr *lister, w *world) ([]readReq, error) {
	key := listKey{provider: l.provider, kind: l.kind, region: l.region}
	var found []providers.Resource
	var err error
	if scanned, ok := lr.scanned[key]; ok {
		found = providers.InRegion(scanned, l.region)
	} else if base, ok := lr.baseOf(from); ok {
		found, err = rs.ListFrom(ctx, l.region, base)
	} else {
		found, err = rs.List(ctx, l.region)
	}
	if err != nil {
		return nil, err
	}
	lr.keep(key, found)
	e.emit(Event{Kind: EventObserve, Message: fmt.Sprintf("%s/%s in %s: %d found", l.provider, l.kind, l.region, len(found))})
	var reads []readReq
	for _, r := range found {
		old := l.old[r.Name]
		if l.keep != nil {
			if !l.keep(r.Name) {
				continue
			}
		} else if !l.names[r.Name] && !old {
			continue
		}
		a := spec.Address{Provider: l.provider, Kind: l.kind, Name: r.Name}
		if r.Complete {
			w.put(a, r, old)
			continue
		}
		rq := readReq{addr: a, region: l.region, old: old, listed: r}
		if l.wants != nil {
			w := l.wants[r.Name]
			rq.want = &w
		}
		reads = append(reads, rq)
	}
	return reads, nil
}

// readAll reads each resource at most once: only what a listing found and
// could not fully answer.
func (e *Engine) readAll(ctx context.Context, reads []readReq, scanTags map[string]tagged, w *world) error {
	jobs := make([]job, 0, len(reads))
	for _, rq := range reads {
		rq := rq
		jobs = append(jobs, job{service: e.service(rq.addr.Provider, rq.addr.Kind), do: func(ctx context.Context) error {
			return e.read(ctx, rq, scanTags, w)
		}})
	}
	return e.runBounded(ctx, jobs)
}

func (e *Engine) read(ctx context.Context, rq readReq, scanTags map[string]tagged, w *world) error {
	ctx = providers.WithAddress(ctx, rq.addr)
	if rq.want != nil {
		ctx = providers.WithWant(ctx, *rq.want)
	}
	rs, err := e.resources(rq.addr)
	if err != nil {
		return err
	}
	var r providers.Resource
	var found bool
	if rs.ReadsListed() {
		var tags map[string]string
		if t, ok := scanTags[physicalKey(rq.addr)]; ok && t.Region == rq.region {
			tags = t.Tags
		}
		r, found, err = rs.ReadListed(ctx, rq.listed, tags)
		// Only the declared region's copy is compared with the
		// declaration, and so confirmed (confirmScannedTags): a copy in
		// the region the ledger row records (old) is to be deleted, and
		// marking it would confirm an observation that does not exist.
		if err == nil && found && tags != nil && !rq.old {
			w.mu.Lock()
			w.scanTagged[rq.addr] = true
			w.mu.Unlock()
		}
	} else {
		r, found, err = rs.Read(ctx, rq.region, rq.addr.Name)
	}
	if err != nil || !found {
		// Listed, then gone: absent, not a failure (eventual
		// consistency).
		return err
	}
	w.put(rq.addr, r, rq.old)
	return nil
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func joinRegions(rs []string) string {
	if len(rs) == 0 {
		return "(no region)"
	}
	s := rs[0]
	for _, r := range rs[1:] {
		s += ", " + r
	}
	return s
}

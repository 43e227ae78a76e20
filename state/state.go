// Package state holds infra's two records and where they are kept. The
// ledger says what a fleet manages; the cache says what was last seen.
// Neither ever holds a secret value.
package state

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/infra-iac/infra/spec"
)

// LedgerVersion is the ledger format this build reads and writes.
const LedgerVersion = 1

// CacheVersion is the cache format this build reads and writes.
const CacheVersion = 1

// Row is one managed resource. The region is recorded because an orphan's
// placement can no longer be derived from the declaration.
type Row struct {
	Provider spec.Provider `json:"provider"`
	Kind     spec.Kind     `json:"kind"`
	Name     string        `json:"name"`
	Region   string        `json:"region"`
	// Member is the component member that declared the resource
	// (instance.member, such as "shop.db.pg"), when one did: once the
	// member is cut, the resource is no longer declared, and this is how
	// a plan says its delete is the cut's (docs/components.md).
	Member string `json:"member,omitempty"`
	// Caveat is what the cloud could not do for the resource when it was
	// made, as its driver said it (providers.Resource.Caveat): every
	// plan of the fleet says it again, as a warning.
	Caveat string `json:"caveat,omitempty"`
	// ValueInputs fingerprints what the resource's secret value was made
	// from when an apply last sent it (a secret's composed or fromEnv
	// value), so that a plan can tell that the document now composes it
	// otherwise: the value itself is never read back, and never stored.
	// Zero for a kind without such a value, and for a row an older build
	// wrote (the next apply records it without sending anything:
	// docs/state.md).
	ValueInputs ValueInputs `json:"valueInputs,omitzero"`
}

// ValueInputs are two hashes of the inputs of a secret value, never of
// the value: what a plan knows of a value it may not read. Neither hashes
// a secret (another secret's value, an environment variable's), which
// counts by its identity alone: a hash of a short secret is guessable.
type ValueInputs struct {
	// Sources hashes what the document says the value is made of: the
	// format, the literals, and the identity of every input (an address
	// and attribute, a variable's name, a slot and export, and what
	// another secret read by secretValue is itself made of).
	Sources string `json:"sources,omitempty"`
	// Values hashes the same together with the public values those inputs
	// had (an endpoint, an id, another fleet's public export); empty when
	// one was not known.
	Values string `json:"values,omitempty"`
}

// IsZero reports whether nothing is recorded.
func (v ValueInputs) IsZero() bool { return v.Sources == "" && v.Values == "" }

// Address is the row's resource address.
func (r Row) Address() spec.Address {
	return spec.Address{Provider: r.Provider, Kind: r.Kind, Name: r.Name}
}

// Ledger is what a fleet manages: rows sorted by address, and the
// intents of creates that may have happened without being recorded.
type Ledger struct {
	Version int   `json:"version"`
	Rows    []Row `json:"rows"`
	// Intents are written before a run creates anything: a process that
	// dies inside a create (after the cloud made the resource, before it
	// was tagged or recorded) leaves one, so the next run can recognise
	// the resource as this fleet's. Sorted by address.
	Intents []Intent `json:"intents,omitempty"`
}

// Intent is a create a run was about to make.
type Intent struct {
	Row
	// RunID names the run, for the message that adopts what it left.
	RunID string `json:"runId"`
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{Version: LedgerVersion, Rows: []Row{}} }

// Intent returns the intent recorded for a.
func (l *Ledger) Intent(a spec.Address) (Intent, bool) {
	if i, ok := l.searchIntent(a); ok {
		return l.Intents[i], true
	}
	return Intent{}, false
}

// PutIntent records in, replacing an intent for the same address. It
// reports whether the ledger changed.
func (l *Ledger) PutIntent(in Intent) bool {
	i, ok := l.searchIntent(in.Address())
	if ok {
		if l.Intents[i] == in {
			return false
		}
		l.Intents[i] = in
		return true
	}
	l.Intents = slices.Insert(l.Intents, i, in)
	return true
}

// DropIntent removes the intent for a. It reports whether the ledger
// changed.
func (l *Ledger) DropIntent(a spec.Address) bool {
	i, ok := l.searchIntent(a)
	if ok {
		l.Intents = slices.Delete(l.Intents, i, i+1)
	}
	return ok
}

// Get returns the row for a.
func (l *Ledger) Get(a spec.Address) (Row, bool) {
	if i, ok := l.search(a); ok {
		return l.Rows[i], true
	}
	return Row{}, false
}

// Put records r, replacing the row with the same address (a re-record
// repairs a stale region). It reports whether the ledger changed.
func (l *Ledger) Put(r Row) bool {
	i, ok := l.search(r.Address())
	if ok {
		if l.Rows[i] == r {
			return false
		}
		l.Rows[i] = r
		return true
	}
	l.Rows = slices.Insert(l.Rows, i, r)
	return true
}

// Remove drops the row for a. It reports whether the ledger changed.
func (l *Ledger) Remove(a spec.Address) bool {
	i, ok := l.search(a)
	if ok {
		l.Rows = slices.Delete(l.Rows, i, i+1)
	}
	return ok
}

// Clone returns an independent copy.
func (l *Ledger) Clone() *Ledger {
	c := &Ledger{Version: l.Version, Rows: append([]Row{}, l.Rows...)}
	if len(l.Intents) > 0 {
		c.Intents = append([]Intent{}, l.Intents...)
	}
	return c
}

// search finds a's place among the rows, and whether a row is there.
func (l *Ledger) search(a spec.Address) (int, bool) {
	return slices.BinarySearchFunc(l.Rows, a, func(r Row, a spec.Address) int { return r.Address().Compare(a) })
}

// searchIntent finds a's place among the intents, kept sorted by address
// like the rows: a run records one per create, and a linear search made
// recording them quadratic.
func (l *Ledger) searchIntent(a spec.Address) (int, bool) {
	return slices.BinarySearchFunc(l.Intents, a, func(in Intent, a spec.Address) int { return in.Address().Compare(a) })
}

// sortRows restores the ledger's order after decoding.
func (l *Ledger) sortRows() {
	sort.Slice(l.Rows, func(i, j int) bool { return l.Rows[i].Address().Less(l.Rows[j].Address()) })
}

// Cache is what was last seen, keyed by address text.
type Cache struct {
	Version   int                 `json:"version"`
	Resources map[string]Observed `json:"resources"`
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{Version: CacheVersion, Resources: map[string]Observed{}} }

// Observed is the cached view of one resource. It has no field for a secret
// value, and the engine never puts one in Fields.
type Observed struct {
	Region     string            `json:"region"`
	Fields     map[string]any    `json:"fields,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	Owner      string            `json:"owner,omitempty"`
	Seen       time.Time         `json:"seen"`
}

// LockInfo says who holds a fleet's lock.
type LockInfo struct {
	ID      string    `json:"id"`
	Holder  string    `json:"holder"`
	RunID   string    `json:"runId,omitempty"`
	Command string    `json:"command"`
	Created time.Time `json:"created"`
	// Host and PID identify the holding process, so a run on the same host
	// can tell that the holder died (SIGKILL, a crash) and break its lock.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
}

// Lock is a held lock.
type Lock interface {
	Info() LockInfo
	Release(ctx context.Context) error
}

// Store keeps one fleet's ledger and cache. Saves are guarded: a save that
// would overwrite a change made since this store last loaded or saved fails
// with a *ConflictError instead of losing it, and writes nothing. A ledger
// must be loaded before it is saved (a save of one never read succeeds only
// if there is none); a cache, written whole from what a run observed, may be
// saved without being read.
type Store interface {
	// Lock takes the fleet's lock. A lock that is already held is a
	// *LockedError naming the holder.
	Lock(ctx context.Context, info LockInfo) (Lock, error)
	// Unlock breaks a stale lock. It refuses an id that is not the holder's.
	Unlock(ctx context.Context, id string) error
	// LoadLedger returns the ledger; a missing one is empty. A corrupt file,
	// or one of an unknown version, is refused with what to do.
	LoadLedger(ctx context.Context) (*Ledger, error)
	SaveLedger(ctx context.Context, l *Ledger) error
	LoadCache(ctx context.Context) (*Cache, error)
	SaveCache(ctx context.Context, c *Cache) error
	// LoadPublished returns what the fleet publishes to other fleets
	// (exports.json), nil when it has published nothing. It needs only
	// read access: a consumer reads its provider's record this way.
	LoadPublished(ctx context.Context) (*spec.Published, error)
	// SavePublished writes it, at the end of a successful apply.
	SavePublished(ctx context.Context, p *spec.Published) error
	// LoadClaims returns who claims this fleet's capabilities; SaveClaims
	// writes it, guarded like the ledger: a claim saved over one made
	// since the load is a *ConflictError, and writes nothing.
	LoadClaims(ctx context.Context) (*spec.Claims, error)
	SaveClaims(ctx context.Context, c *spec.Claims) error
	// Where says where the state is kept, for messages.
	Where() string
}

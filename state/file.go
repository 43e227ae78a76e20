package state

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/infra-iac/infra/spec"
)

// DefaultDir is where the CLI keeps local state when no store is named.
const DefaultDir = ".infra"

// The files of one fleet's directory.
const (
	LedgerFile = "ledger.json"
	CacheFile  = "cache.json"
	// PublishedFile is the fleet's published exports (docs/wiring.md).
	PublishedFile = "exports.json"
	// ClaimsFile is the consumers' claims on the fleet's capabilities.
	ClaimsFile = "claims.json"
	LockFile   = "lock.json"
	// guardFile is only ever locked, never written: it makes a guarded
	// save's check-then-rename one step across processes.
	guardFile = ".guard"
)

// FileStore keeps one fleet's state in <dir>/<fleet>/. It is safe for use
// by several goroutines; several processes are kept apart by the lock and
// by guarded saves.
type FileStore struct {
	dir string // <dir>/<fleet>

	mu sync.Mutex
	// seen is the version token of each file as this store last loaded or
	// saved it: what a guarded save expects to find.
	seen map[string]token
	// held is the id of the lock this store took, if any, so a conflict can
	// tell a rival writer from the lock's own holder.
	held string
}

var _ Store = (*FileStore)(nil)

// token is a file's version: a sha256 of its bytes, or its absence. The zero
// token means "never looked at"; see blind.
type token struct {
	looked bool
	exists bool
	sum    [sha256.Size]byte
}

func tokenOf(data []byte, exists bool) token {
	t := token{looked: true, exists: exists}
	if exists {
		t.sum = sha256.Sum256(data)
	}
	return t
}

// OpenFile returns the store for fleet under dir (DefaultDir when empty). It
// touches nothing on disk: a plan against a fleet that never applied must
// not leave a directory behind.
func OpenFile(dir, fleet string) (*FileStore, error) {
	if dir == "" {
		dir = DefaultDir
	}
	// The fleet name becomes a path element, so only a valid name is let
	// through: "../x" must not escape the state directory.
	if !spec.ValidFleetName(fleet) {
		return nil, fmt.Errorf("state: fleet name %q is not valid (lower-case letters, digits, '-' and '_', starting with a letter)", fleet)
	}
	return &FileStore{dir: filepath.Join(dir, fleet), seen: map[string]token{}}, nil
}

// Where returns the fleet's directory.
func (s *FileStore) Where() string { return s.dir }

func (s *FileStore) path(name string) string { return filepath.Join(s.dir, name) }

// LoadLedger returns the ledger; a missing file is an empty ledger.
func (s *FileStore) LoadLedger(ctx context.Context) (*Ledger, error) {
	return loadRecord(ctx, s, LedgerFile, DecodeLedger, NewLedger)
}

// SaveLedger writes l if ledger.json is as this store last saw it, and
// only if it has seen it: see save.
func (s *FileStore) SaveLedger(ctx context.Context, l *Ledger) error {
	return saveRecord(ctx, s, LedgerFile, l, EncodeLedger, false)
}

// LoadCache returns the cache; a missing file is an empty cache.
func (s *FileStore) LoadCache(ctx context.Context) (*Cache, error) {
	return loadRecord(ctx, s, CacheFile, DecodeCache, NewCache)
}

// SaveCache writes c if cache.json is as this store last saw it, or if it
// never looked at it: see save.
func (s *FileStore) SaveCache(ctx context.Context, c *Cache) error {
	return saveRecord(ctx, s, CacheFile, c, EncodeCache, true)
}

// LoadPublished returns the fleet's published record, nil when it has
// published nothing.
func (s *FileStore) LoadPublished(ctx context.Context) (*spec.Published, error) {
	return loadRecord(ctx, s, PublishedFile, DecodePublished, func() *spec.Published { return nil })
}

// SavePublished writes the fleet's published record.
func (s *FileStore) SavePublished(ctx context.Context, p *spec.Published) error {
	return saveRecord(ctx, s, PublishedFile, p, EncodePublished, true)
}

// LoadClaims returns the consumers' claims on this fleet's capabilities;
// none is an empty record.
func (s *FileStore) LoadClaims(ctx context.Context) (*spec.Claims, error) {
	return loadClaims(ctx, s)
}

// SaveClaims writes the claims if they are as this store last loaded them:
// two consumers claiming at once cannot both win.
func (s *FileStore) SaveClaims(ctx context.Context, c *spec.Claims) error {
	return saveClaims(ctx, s, c)
}

// recordStore is what the two stores share for the two records: a file
// read with the version it had, a save that checks that version (blind: see
// FileStore.save), and a refusal that names where the file is.
type recordStore interface {
	load(ctx context.Context, name string) (data []byte, ok bool, err error)
	save(ctx context.Context, name string, data []byte, blind bool) error
	named(err error, name string) error
}

// loadRecord loads one of the two records, empty when its file is missing,
// naming the file in a refusal.
func loadRecord[T any](ctx context.Context, s recordStore, name string, decode func([]byte) (*T, error), empty func() *T) (*T, error) {
	data, ok, err := s.load(ctx, name)
	if err != nil || !ok {
		return empty(), err
	}
	v, err := decode(data)
	return v, s.named(err, name)
}

func saveRecord[T any](ctx context.Context, s recordStore, name string, v *T, encode func(*T) ([]byte, error), blind bool) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	return s.save(ctx, name, data, blind)
}

// named puts the file's path into a codec refusal.
func (s *FileStore) named(err error, name string) error { return named(err, s.path(name)) }

// load reads a file and remembers its version. ok is false when the file
// does not exist.
func (s *FileStore) load(ctx context.Context, name string) (data []byte, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok, err = readIfExists(s.path(name))
	if err != nil {
		return nil, false, err
	}
	s.seen[name] = tokenOf(data, ok)
	return data, ok, nil
}

// save writes data to the file atomically, but only if the file is as this
// store last loaded or saved it. The check and the rename happen under the
// directory's guard so that no other process can write in between.
//
// blind says what a save of a file this store never looked at may do. The
// ledger is read, changed and written back, so saving one never read would
// drop every row it did not know of: that save must find no file (the S3
// store's If-None-Match: *). The cache is written whole from what a run
// observed, never merged, so a run may replace one it did not read (a
// plain put); once it has read or written the cache, it is guarded too.
func (s *FileStore) save(ctx context.Context, name string, data []byte, blind bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ensureDir(); err != nil {
		return err
	}
	return s.guarded(func() error {
		current, ok, err := readIfExists(s.path(name))
		if err != nil {
			return err
		}
		want := s.seen[name]
		if reason := changed(want, tokenOf(current, ok)); reason != "" && !(blind && !want.looked) {
			return &ConflictError{File: s.path(name), Reason: reason, Holder: s.rival()}
		}
		if err := writeAtomic(s.dir, name, data); err != nil {
			return err
		}
		s.seen[name] = tokenOf(data, true)
		return nil
	})
}

// changed says how a file moved from the version a store expects, or "".
func changed(want, got token) string {
	switch {
	case want.exists && !got.exists:
		return "was removed since this run read it"
	case want.exists && got.sum != want.sum:
		return "changed since this run read it"
	case !want.exists && got.exists && want.looked:
		return "was created since this run found it missing"
	case !want.exists && got.exists:
		return "exists, but this run never read it (load it before saving)"
	}
	return ""
}

// rival returns the fleet's lock when someone other than this store holds
// it: the likely other writer in a conflict.
func (s *FileStore) rival() *LockInfo {
	info, ok, err := s.readLock(context.Background())
	if err != nil || !ok || info.ID == s.held {
		return nil
	}
	return &info
}

// ensureDir creates the fleet's directory on first write, with a
// .gitignore that ignores the directory itself: local state belongs to
// this checkout, and committing it was tried once and reverted. The file
// goes inside the fleet's directory, never above it, so a state directory
// of "." cannot make git ignore a whole repository.
func (s *FileStore) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	ignore := s.path(".gitignore")
	f, err := os.OpenFile(ignore, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	_, err = f.WriteString("# infra's local state: never commit it.\n*\n")
	return errors.Join(err, f.Close())
}

// readIfExists reads a file; ok is false when it does not exist.
func readIfExists(path string) (data []byte, ok bool, err error) {
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state: %w", err)
	}
	return data, true, nil
}

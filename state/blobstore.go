package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/infra-iac/infra/spec"
)

// Blobs is an object store with conditional writes: the shape of S3. The
// state package knows nothing of any cloud; providers/aws implements Blobs
// over S3, so only providers import cloud SDKs.
type Blobs interface {
	// Get returns an object and its version tag (an ETag). A missing object
	// is an error wrapping ErrBlobNotFound.
	Get(ctx context.Context, key string) (data []byte, tag string, err error)
	// Put writes an object under a condition and returns its new tag. A
	// failed condition is an error wrapping ErrPrecondition.
	Put(ctx context.Context, key string, data []byte, cond Condition) (tag string, err error)
	// Delete removes an object; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// Where names the store for messages, such as s3://bucket/prefix.
	Where() string
}

// Condition guards a Put.
type Condition struct {
	// IfNoneMatch: write only if the object does not exist (If-None-Match: *).
	IfNoneMatch bool
	// IfMatch: write only if the object's tag is this one (If-Match).
	IfMatch string
}

var (
	// ErrBlobNotFound: the object does not exist.
	ErrBlobNotFound = errors.New("no such object")
	// ErrPrecondition: a conditional write found the object changed.
	ErrPrecondition = errors.New("precondition failed")
)

// BlobStore keeps one fleet's state as objects under <prefix>/<fleet>/: the
// lock created with If-None-Match: *, saves guarded with If-Match on the
// tag this store last read or wrote, so two applies can never interleave and
// a lost race overwrites nothing.
type BlobStore struct {
	blobs  Blobs
	prefix string // "<prefix>/<fleet>/"
	where  string

	mu sync.Mutex
	// tags holds, per key, the version this store last loaded or saved; a
	// key present with "" was seen absent.
	tags map[string]string
	held string
}

var _ Store = (*BlobStore)(nil)

// OpenBlobs returns the store of fleet under prefix in blobs.
func OpenBlobs(blobs Blobs, prefix, fleet string) (*BlobStore, error) {
	if !spec.ValidFleetName(fleet) {
		return nil, fmt.Errorf("state: invalid fleet name %q", fleet)
	}
	p := strings.Trim(prefix, "/")
	if p != "" {
		p += "/"
	}
	p += fleet + "/"
	return &BlobStore{blobs: blobs, prefix: p, where: strings.TrimSuffix(blobs.Where(), "/") + "/" + fleet, tags: map[string]string{}}, nil
}

func (s *BlobStore) Where() string { return s.where }

func (s *BlobStore) key(name string) string { return s.prefix + name }

// Lock creates the lock object only if none exists. A 412 on a lock that
// holds this call's own id is a win: the write took effect, its answer was
// lost, and the SDK's retry of it failed its condition on our own object.
func (s *BlobStore) Lock(ctx context.Context, info LockInfo) (Lock, error) {
	info = complete(info)
	data, err := encode(info)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		_, err := s.blobs.Put(ctx, s.key(LockFile), data, Condition{IfNoneMatch: true})
		if err == nil {
			s.mu.Lock()
			s.held = info.ID
			s.mu.Unlock()
			return &blobLock{store: s, info: info}, nil
		}
		if !errors.Is(err, ErrPrecondition) {
			return nil, fmt.Errorf("state: take the lock in %s: %w", s.where, err)
		}
		held, ok, err := s.readLock(ctx)
		if err != nil {
			return nil, err
		}
		if ok && held.ID == info.ID {
			s.mu.Lock()
			s.held = info.ID
			s.mu.Unlock()
			return &blobLock{store: s, info: info}, nil
		}
		// Released between our write and our read: try again.
		if ok || attempt == 2 {
			return nil, &LockedError{Where: s.where, Info: held}
		}
	}
}

func (s *BlobStore) readLock(ctx context.Context) (LockInfo, bool, error) {
	data, _, err := s.blobs.Get(ctx, s.key(LockFile))
	if errors.Is(err, ErrBlobNotFound) {
		return LockInfo{}, false, nil
	}
	if err != nil {
		return LockInfo{}, false, fmt.Errorf("state: read the lock in %s: %w", s.where, err)
	}
	var info LockInfo
	if err := json.Unmarshal(data, &info); err != nil || info.ID == "" {
		return LockInfo{ID: "unreadable"}, true, nil
	}
	return info, true, nil
}

// Unlock breaks the lock whose id is id.
func (s *BlobStore) Unlock(ctx context.Context, id string) error {
	held, ok, err := s.readLock(ctx)
	if err != nil {
		return err
	}
	if err := mayUnlock(s.where, id, held, ok); err != nil {
		return err
	}
	return s.blobs.Delete(ctx, s.key(LockFile))
}

type blobLock struct {
	store *BlobStore
	info  LockInfo
	done  bool
}

func (l *blobLock) Info() LockInfo { return l.info }

// Release removes the lock if it is still ours; a lock someone else took
// after breaking ours is left alone and reported.
func (l *blobLock) Release(ctx context.Context) error {
	if l.done {
		return nil
	}
	l.done = true
	held, ok, err := l.store.readLock(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("state: the lock on %s was broken while this run held it", l.store.where)
	}
	if held.ID != l.info.ID {
		return fmt.Errorf("state: the lock on %s was broken while this run held it, and is now held by %s", l.store.where, describeLock(held))
	}
	return l.store.blobs.Delete(ctx, l.store.key(LockFile))
}

func (s *BlobStore) load(ctx context.Context, name string) ([]byte, bool, error) {
	data, tag, err := s.blobs.Get(ctx, s.key(name))
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(err, ErrBlobNotFound) {
		s.tags[name] = ""
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state: read %s/%s: %w", s.where, name, err)
	}
	s.tags[name] = tag
	return data, true, nil
}

// save writes name guarded by what this store last saw of it. A name never
// seen is written only if absent, unless blind: the cache, which nothing
// reads back, may be written unguarded (see FileStore.save).
func (s *BlobStore) save(ctx context.Context, name string, data []byte, blind bool) error {
	s.mu.Lock()
	tag, seen := s.tags[name]
	s.mu.Unlock()
	var cond Condition
	switch {
	case seen && tag == "":
		cond.IfNoneMatch = true
	case seen:
		cond.IfMatch = tag
	case !blind:
		cond.IfNoneMatch = true
	}
	newTag, err := s.blobs.Put(ctx, s.key(name), data, cond)
	if errors.Is(err, ErrPrecondition) {
		newTag, err = s.ownWrite(ctx, name, data)
	}
	if errors.Is(err, ErrPrecondition) {
		reason := "changed since this run read it"
		if !seen {
			reason = "exists, but this run never read it"
		}
		c := &ConflictError{File: s.where + "/" + name, Reason: reason}
		if held, ok, _ := s.readLock(ctx); ok && held.ID != s.heldID() {
			c.Holder = &held
		}
		return c
	}
	if err != nil {
		return fmt.Errorf("state: write %s/%s: %w", s.where, name, err)
	}
	s.mu.Lock()
	s.tags[name] = newTag
	s.mu.Unlock()
	return nil
}

// ownWrite tells a save whose answer was lost from a lost race: the SDK's
// retry of a write that took effect fails its condition on the object the
// write made. When the object holds exactly the bytes this save wrote, it
// is saved, at the version read back; that is also right should another
// writer have written the very same bytes, since nothing differs.
// Otherwise, or when the object cannot be read, the precondition failure
// stands: a conflict overwrites nothing.
func (s *BlobStore) ownWrite(ctx context.Context, name string, data []byte) (string, error) {
	got, tag, err := s.blobs.Get(ctx, s.key(name))
	if err == nil && bytes.Equal(got, data) {
		return tag, nil
	}
	return "", ErrPrecondition
}

func (s *BlobStore) heldID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

func (s *BlobStore) LoadLedger(ctx context.Context) (*Ledger, error) {
	return loadRecord(ctx, s, LedgerFile, DecodeLedger, NewLedger)
}

func (s *BlobStore) SaveLedger(ctx context.Context, l *Ledger) error {
	return saveRecord(ctx, s, LedgerFile, l, EncodeLedger, false)
}

func (s *BlobStore) LoadCache(ctx context.Context) (*Cache, error) {
	return loadRecord(ctx, s, CacheFile, DecodeCache, NewCache)
}

func (s *BlobStore) SaveCache(ctx context.Context, c *Cache) error {
	return saveRecord(ctx, s, CacheFile, c, EncodeCache, true)
}

func (s *BlobStore) LoadPublished(ctx context.Context) (*spec.Published, error) {
	return loadRecord(ctx, s, PublishedFile, DecodePublished, func() *spec.Published { return nil })
}

func (s *BlobStore) SavePublished(ctx context.Context, p *spec.Published) error {
	return saveRecord(ctx, s, PublishedFile, p, EncodePublished, true)
}

// LoadClaims returns the consumers' claims on this fleet's capabilities;
// none is an empty record.
func (s *BlobStore) LoadClaims(ctx context.Context) (*spec.Claims, error) {
	return loadClaims(ctx, s)
}

// SaveClaims writes the claims if they are as this store last loaded them:
// two consumers claiming at once cannot both win.
func (s *BlobStore) SaveClaims(ctx context.Context, c *spec.Claims) error {
	return saveClaims(ctx, s, c)
}

// named puts the object's place into a codec refusal.
func (s *BlobStore) named(err error, name string) error { return named(err, s.where+"/"+name) }

// named fills in the file a FormatError is about.
func named(err error, file string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.File = file
	}
	return err
}

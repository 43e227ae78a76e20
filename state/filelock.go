package state

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"time"
)

// settle is how long a reader waits for a lock file that was just created
// to get its content: the holder creates it empty, then writes it.
const settle = time.Second

// Lock takes the fleet's lock by creating lock.json exclusively (O_EXCL, the
// file store's If-None-Match: *). Fields of info left empty are filled in:
// ID with a random id, Holder with user@host pid N, Created with now. A lock
// someone else holds is a *LockedError naming them.
func (s *FileStore) Lock(ctx context.Context, info LockInfo) (Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	info = complete(info)
	data, err := encode(info)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	// A lock released between our failed create and our read is gone; try
	// again rather than report a holder that no longer exists.
	for attempt := 0; ; attempt++ {
		err := createExclusive(s.path(LockFile), data)
		if err == nil {
			s.held = info.ID
			return &fileLock{store: s, info: info}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		held, ok, err := s.readLock(ctx)
		if err != nil {
			return nil, err
		}
		if ok || attempt == 2 {
			return nil, &LockedError{Where: s.dir, Info: held}
		}
	}
}

// Unlock breaks the lock whose id is id: the way out when a run died
// holding it. Any other id is refused with an *UnlockRefusedError naming
// the holder; no lock at all wraps ErrNotLocked.
func (s *FileStore) Unlock(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state: %s: %w", s.dir, ErrNotLocked)
	}
	return s.guarded(func() error {
		held, ok, err := s.readLock(ctx)
		if err != nil {
			return err
		}
		if err := mayUnlock(s.dir, id, held, ok); err != nil {
			return err
		}
		if s.held == id {
			s.held = ""
		}
		return removeLock(s.path(LockFile))
	})
}

// fileLock is a lock this store took.
type fileLock struct {
	store    *FileStore
	info     LockInfo
	released bool
}

func (l *fileLock) Info() LockInfo { return l.info }

// Release removes the lock if it is still ours. If someone broke it (infra
// unlock) while this run held it, that is reported, and a lock another run
// has taken since is left alone.
func (l *fileLock) Release(ctx context.Context) error {
	s := l.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.released {
		return nil
	}
	return s.guarded(func() error {
		held, ok, err := s.readLock(ctx)
		if err != nil {
			return err
		}
		l.released = true
		if s.held == l.info.ID {
			s.held = ""
		}
		if !ok {
			return fmt.Errorf("state: the lock on %s (lock %s) was broken while this run held it; check what ran in the meantime", s.dir, l.info.ID)
		}
		if held.ID != l.info.ID {
			return fmt.Errorf("state: the lock on %s (lock %s) was broken while this run held it, and is now held by %s; it was left alone", s.dir, l.info.ID, describeLock(held))
		}
		return removeLock(s.path(LockFile))
	})
}

// readLock reads lock.json; ok is false when there is none. A lock file
// that stays unreadable past settle (a holder that died between creating
// and writing it, or a hand edit) is still reported as a lock, with an id
// derived from its bytes, so that `infra unlock <id>` can break it.
func (s *FileStore) readLock(ctx context.Context) (info LockInfo, ok bool, err error) {
	path := s.path(LockFile)
	for {
		data, ok, err := readIfExists(path)
		if err != nil || !ok {
			return LockInfo{}, false, err
		}
		if jerr := json.Unmarshal(data, &info); jerr == nil && info.ID != "" {
			return info, true, nil
		}
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released while we looked
		}
		if err != nil {
			return LockInfo{}, false, fmt.Errorf("state: %w", err)
		}
		if time.Since(fi.ModTime()) > settle {
			return unreadableLock(data, fi.ModTime()), true, nil
		}
		select {
		case <-ctx.Done():
			return LockInfo{}, false, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func unreadableLock(data []byte, when time.Time) LockInfo {
	sum := sha256.Sum256(data)
	return LockInfo{
		ID:      "unreadable-" + hex.EncodeToString(sum[:4]),
		Holder:  "an unknown holder (the lock file is not readable)",
		Created: when,
	}
}

// createExclusive creates path with data, failing with fs.ErrExist if it
// exists. A failed write removes the file so that it cannot lock the fleet
// with nothing in it.
func createExclusive(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("state: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return errors.Join(fmt.Errorf("state: writing %s: %w", path, err), os.Remove(path))
	}
	return nil
}

func removeLock(path string) error {
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// complete fills the fields of a lock its taker left empty.
func complete(info LockInfo) LockInfo {
	if info.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
		info.ID = hex.EncodeToString(b[:])
	}
	if info.Holder == "" {
		info.Holder = holder()
	}
	if info.Created.IsZero() {
		info.Created = time.Now().UTC().Truncate(time.Second)
	}
	if info.Host == "" && info.PID == 0 {
		info.Host, _ = os.Hostname()
		info.PID = os.Getpid()
	}
	return info
}

// holder names this process the way a lock does: user@host pid N.
func holder() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s@%s pid %d", name, host, os.Getpid())
}

package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// mustLock takes s's lock, failing the test if it cannot.
func mustLock(t *testing.T, s Store, info LockInfo) Lock {
	t.Helper()
	lock, err := s.Lock(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	return lock
}

func TestLockFillsItsInfo(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	lock := mustLock(t, s, LockInfo{RunID: "run-1", Command: "apply"})
	info := lock.Info()
	if len(info.ID) != 16 || info.Created.IsZero() || info.RunID != "run-1" || info.Command != "apply" {
		t.Fatalf("info: %+v", info)
	}
	if !strings.Contains(info.Holder, "@") || !strings.HasSuffix(info.Holder, fmt.Sprintf(" pid %d", os.Getpid())) {
		t.Fatalf("holder %q is not user@host pid N", info.Holder)
	}
	var onDisk LockInfo
	if err := json.Unmarshal([]byte(read(t, s, LockFile)), &onDisk); err != nil || onDisk != info {
		t.Fatalf("lock.json holds %+v (%v), want %+v", onDisk, err, info)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Where(), LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("Release left lock.json")
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatalf("a second Release: %v", err)
	}
	again := mustLock(t, s, LockInfo{Command: "destroy"})
	if again.Info().ID == info.ID {
		t.Fatal("two locks got the same id")
	}
}

func TestSecondLockIsRefusedNamingTheHolder(t *testing.T) {
	a, dir := openTemp(t)
	ctx := context.Background()
	created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	held := mustLock(t, a, LockInfo{ID: "4f2a9c", Holder: "alice@laptop pid 42", RunID: "r-17", Command: "apply", Created: created})
	b, _ := OpenFile(dir, "web")
	_, err := b.Lock(ctx, LockInfo{Command: "destroy"})
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("want a *LockedError, got %v", err)
	}
	if le.Info != held.Info() {
		t.Fatalf("LockedError holds %+v, want %+v", le.Info, held.Info())
	}
	want := filepath.Join(dir, "web") + ` is locked by alice@laptop pid 42 running "apply" (run r-17) since 2025-03-01T12:00:00Z, lock 4f2a9c: ` +
		"wait for it to finish, or, if that run is dead, run `infra unlock 4f2a9c`"
	if err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err, want)
	}
	// The same store cannot take its own lock twice either.
	if _, err := a.Lock(ctx, LockInfo{}); !errors.As(err, &le) {
		t.Fatalf("got %v", err)
	}
}

func TestUnlock(t *testing.T) {
	a, dir := openTemp(t)
	ctx := context.Background()
	b, _ := OpenFile(dir, "web")
	if err := b.Unlock(ctx, "x"); !errors.Is(err, ErrNotLocked) {
		t.Fatalf("unlock with no state: %v", err)
	}
	held := mustLock(t, a, LockInfo{Holder: "alice@laptop pid 42", Command: "apply"})
	before := read(t, a, LockFile)

	err := b.Unlock(ctx, "wrong")
	var re *UnlockRefusedError
	if !errors.As(err, &re) || re.Info != held.Info() || re.Given != "wrong" {
		t.Fatalf("want an *UnlockRefusedError, got %v", err)
	}
	for _, w := range []string{`"wrong" is not the id of its lock`, `alice@laptop pid 42 running "apply"`, "infra unlock " + held.Info().ID} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message lacks %q: %s", w, err)
		}
	}
	if read(t, a, LockFile) != before {
		t.Fatal("a refused unlock touched the lock")
	}

	if err := b.Unlock(ctx, held.Info().ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx, held.Info().ID); !errors.Is(err, ErrNotLocked) {
		t.Fatalf("second unlock: %v", err)
	}
	if _, err := b.Lock(ctx, LockInfo{Command: "apply"}); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
}

// brokenLock takes a lock and has another store break it, as `infra
// unlock` would while the run still holds it.
func brokenLock(t *testing.T) (mine Lock, other *FileStore) {
	t.Helper()
	a, dir := openTemp(t)
	ctx := context.Background()
	mine = mustLock(t, a, LockInfo{Command: "apply"})
	other, _ = OpenFile(dir, "web")
	if err := other.Unlock(ctx, mine.Info().ID); err != nil {
		t.Fatal(err)
	}
	return mine, other
}

func TestReleaseLeavesAnotherRunsLock(t *testing.T) {
	mine, b := brokenLock(t)
	ctx := context.Background()
	theirs := mustLock(t, b, LockInfo{Holder: "bob@ci pid 7", Command: "apply"})
	err := mine.Release(ctx)
	if err == nil || !strings.Contains(err.Error(), "was broken while this run held it, and is now held by bob@ci pid 7") {
		t.Fatalf("got %v", err)
	}
	var onDisk LockInfo
	if err := json.Unmarshal([]byte(read(t, b, LockFile)), &onDisk); err != nil || onDisk.ID != theirs.Info().ID {
		t.Fatal("Release removed a lock that was not its own")
	}
	if err := theirs.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestReleaseReportsABrokenLock(t *testing.T) {
	mine, _ := brokenLock(t)
	if err := mine.Release(context.Background()); err == nil || !strings.Contains(err.Error(), "was broken while this run held it") {
		t.Fatalf("got %v", err)
	}
}

// A lock file that never got its content (its holder died between creating
// and writing it) still locks, and can still be broken by the id shown.
func TestUnreadableLock(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	write(t, s, LockFile, "")
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(s.Where(), LockFile), old, old); err != nil {
		t.Fatal(err)
	}
	_, err := s.Lock(ctx, LockInfo{})
	var le *LockedError
	if !errors.As(err, &le) || !strings.HasPrefix(le.Info.ID, "unreadable-") || !strings.Contains(err.Error(), "the lock file is not readable") {
		t.Fatalf("got %v", err)
	}
	if err := s.Unlock(ctx, le.Info.ID); err != nil {
		t.Fatal(err)
	}
	mustLock(t, s, LockInfo{})
}

// A reader that finds the lock file just created, still empty, waits for its
// content instead of reporting an unknown holder.
func TestLockBeingWritten(t *testing.T) {
	s, dir := openTemp(t)
	ctx := context.Background()
	write(t, s, LockFile, "")
	go func() {
		time.Sleep(50 * time.Millisecond)
		data, _ := encode(LockInfo{ID: "late", Holder: "carol@box pid 3", Command: "apply"})
		_ = os.WriteFile(filepath.Join(dir, "web", LockFile), data, 0o644)
	}()
	_, err := s.Lock(ctx, LockInfo{})
	var le *LockedError
	if !errors.As(err, &le) || le.Info.Holder != "carol@box pid 3" {
		t.Fatalf("got %v", err)
	}
}

// Goroutines, each as its own run with its own store, race for the lock:
// exactly one wins, and every other is told who.
func TestLockRaceGoroutines(t *testing.T) {
	_, dir := openTemp(t)
	ctx := context.Background()
	const n = 16
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		locks  = make([]Lock, n)
		errs   = make([]error, n)
		stores = make([]*FileStore, n)
	)
	for i := range n {
		stores[i], _ = OpenFile(dir, "web")
		wg.Go(func() {
			<-start
			locks[i], errs[i] = stores[i].Lock(ctx, LockInfo{RunID: fmt.Sprint("run-", i), Command: "apply"})
		})
	}
	close(start)
	wg.Wait()
	var winner *LockInfo
	for i := range n {
		if errs[i] == nil {
			if winner != nil {
				t.Fatalf("two winners: %+v and %+v", *winner, locks[i].Info())
			}
			info := locks[i].Info()
			winner = &info
		}
	}
	if winner == nil {
		t.Fatalf("nobody won: %v", errs)
	}
	for i := range n {
		if errs[i] == nil {
			continue
		}
		var le *LockedError
		if !errors.As(errs[i], &le) || le.Info != *winner {
			t.Fatalf("loser %d: got %v, want a LockedError naming %+v", i, errs[i], *winner)
		}
	}
}

package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// memBlobs is Blobs in memory with S3's conditional-write semantics; the
// S3 implementation in providers/aws is tested against the emulator with
// the same expectations.
type memBlobs struct {
	mu   sync.Mutex
	objs map[string][]byte
	tags map[string]int
}

func newMemBlobs() *memBlobs { return &memBlobs{objs: map[string][]byte{}, tags: map[string]int{}} }

func (b *memBlobs) Get(ctx context.Context, key string) ([]byte, string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.objs[key]
	if !ok {
		return nil, "", fmt.Errorf("get %s: %w", key, ErrBlobNotFound)
	}
	return append([]byte{}, d...), fmt.Sprint(b.tags[key]), nil
}

func (b *memBlobs) Put(ctx context.Context, key string, data []byte, c Condition) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, exists := b.objs[key]
	if c.IfNoneMatch && exists {
		return "", ErrPrecondition
	}
	if c.IfMatch != "" && (!exists || fmt.Sprint(b.tags[key]) != c.IfMatch) {
		return "", ErrPrecondition
	}
	b.objs[key] = append([]byte{}, data...)
	b.tags[key]++
	return fmt.Sprint(b.tags[key]), nil
}

func (b *memBlobs) Delete(ctx context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objs, key)
	return nil
}

func (b *memBlobs) Where() string { return "mem://bucket/prefix" }

func TestBlobStoreLockIsExclusiveAndNamesTheHolder(t *testing.T) {
	ctx := context.Background()
	blobs := newMemBlobs()
	a, _ := OpenBlobs(blobs, "prefix", "shop")
	b, _ := OpenBlobs(blobs, "prefix", "shop")
	la := mustLock(t, a, LockInfo{ID: "aaa", Holder: "alice@ci pid 1", Command: "apply"})
	_, err := b.Lock(ctx, LockInfo{ID: "bbb", Command: "apply"})
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Info.ID != "aaa" || !strings.Contains(err.Error(), "infra unlock aaa") ||
		!strings.Contains(err.Error(), "alice@ci pid 1") {
		t.Fatalf("got %v", err)
	}
	var refused *UnlockRefusedError
	if err := b.Unlock(ctx, "zzz"); !errors.As(err, &refused) {
		t.Fatalf("unlock with a wrong id: %v", err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, LockInfo{ID: "bbb"}); err != nil {
		t.Fatalf("after release: %v", err)
	}
	if err := a.Unlock(ctx, "bbb"); err != nil {
		t.Fatal(err)
	}
	if err := a.Unlock(ctx, "bbb"); !errors.Is(err, ErrNotLocked) {
		t.Fatalf("unlock of nothing: %v", err)
	}
	if _, ok := blobs.objs["prefix/shop/lock.json"]; ok {
		t.Fatal("lock object left")
	}
}

func TestBlobStoreGuardedSaves(t *testing.T) {
	ctx := context.Background()
	blobs := newMemBlobs()
	a, _ := OpenBlobs(blobs, "", "shop")
	b, _ := OpenBlobs(blobs, "", "shop")
	la, _ := a.LoadLedger(ctx)
	lb, _ := b.LoadLedger(ctx)
	la.Put(Row{Provider: spec.AWS, Kind: spec.Queues, Name: "a", Region: "eu-west-3"})
	if err := a.SaveLedger(ctx, la); err != nil {
		t.Fatal(err)
	}
	// Saving after every action needs no reload.
	la.Put(Row{Provider: spec.AWS, Kind: spec.Queues, Name: "b", Region: "eu-west-3"})
	if err := a.SaveLedger(ctx, la); err != nil {
		t.Fatal(err)
	}
	before := string(blobs.objs["shop/ledger.json"])
	lb.Put(Row{Provider: spec.AWS, Kind: spec.Queues, Name: "c", Region: "eu-west-3"})
	var conflict *ConflictError
	if err := b.SaveLedger(ctx, lb); !errors.As(err, &conflict) || !strings.Contains(err.Error(), "nothing was overwritten") {
		t.Fatalf("lost race: %v", err)
	}
	if string(blobs.objs["shop/ledger.json"]) != before {
		t.Fatal("the losing save overwrote the winner")
	}
	// A store that never read the ledger cannot overwrite it either.
	c, _ := OpenBlobs(blobs, "", "shop")
	if err := c.SaveLedger(ctx, NewLedger()); !errors.As(err, &conflict) {
		t.Fatalf("blind save: %v", err)
	}
	got, err := c.LoadLedger(ctx)
	if err != nil || len(got.Rows) != 2 {
		t.Fatalf("load: %v %v", got, err)
	}
	blobs.objs["shop/ledger.json"] = []byte("{nope")
	if _, err := c.LoadLedger(ctx); err == nil || !strings.Contains(err.Error(), "mem://bucket/prefix/shop/ledger.json") {
		t.Fatalf("corrupt: %v", err)
	}
}

// lostAnswer is Blobs whose next lose Puts are carried out but their
// answers lost: the SDK sends each again, and returns what the repeat got
// (a 412 under a condition, the object being the first attempt's now).
type lostAnswer struct {
	*memBlobs
	lose int
	puts int
}

func (b *lostAnswer) Put(ctx context.Context, key string, data []byte, c Condition) (string, error) {
	b.puts++
	if b.lose > 0 {
		b.lose--
		if _, err := b.memBlobs.Put(ctx, key, data, c); err != nil {
			return "", err
		}
	}
	return b.memBlobs.Put(ctx, key, data, c)
}

// A lock written whose answer was lost, and whose repeat got 412, is won:
// the lock read back is this attempt's own. Another run's lock is still
// held against it.
func TestBlobStoreLockWhoseAnswerWasLost(t *testing.T) {
	ctx := context.Background()
	blobs := &lostAnswer{memBlobs: newMemBlobs(), lose: 1}
	a, _ := OpenBlobs(blobs, "prefix", "shop")
	b, _ := OpenBlobs(blobs, "prefix", "shop")
	l, err := a.Lock(ctx, LockInfo{ID: "mine", Command: "apply"})
	if err != nil {
		t.Fatalf("lock whose answer was lost: %v; want it taken", err)
	}
	if l.Info().ID != "mine" || blobs.puts != 1 {
		t.Fatalf("lock %s after %d puts", l.Info().ID, blobs.puts)
	}
	var locked *LockedError
	if _, err := b.Lock(ctx, LockInfo{ID: "theirs"}); !errors.As(err, &locked) || locked.Info.ID != "mine" {
		t.Fatalf("a second run's lock: %v; want held by mine", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	blobs.lose = 1
	if _, err := b.Lock(ctx, LockInfo{ID: "theirs"}); err != nil {
		t.Fatalf("after release: %v", err)
	}
	if _, err := a.Lock(ctx, LockInfo{ID: "mine"}); !errors.As(err, &locked) || locked.Info.ID != "theirs" {
		t.Fatalf("lock held by another run: %v; want held by theirs", err)
	}
}

// A guarded save written whose answer was lost, and whose repeat got 412
// (the object now being what it wrote), is saved; the next save is guarded
// by the version it made. A save that finds other bytes is still a
// conflict.
func TestBlobStoreSaveWhoseAnswerWasLost(t *testing.T) {
	ctx := context.Background()
	blobs := &lostAnswer{memBlobs: newMemBlobs()}
	a, _ := OpenBlobs(blobs, "", "shop")
	l, _ := a.LoadLedger(ctx)
	// The first save is If-None-Match: *, the next ones If-Match; each
	// one after a lost answer shows the store kept the right version.
	for i, lose := range []int{1, 0, 1, 0} {
		blobs.lose = lose
		l.Put(Row{Provider: spec.AWS, Kind: spec.Queues, Name: fmt.Sprint("q", i), Region: "eu-west-3"})
		if err := a.SaveLedger(ctx, l); err != nil {
			t.Fatalf("save %d (answers lost: %d): %v; want it saved", i, lose, err)
		}
		fresh, _ := OpenBlobs(blobs, "", "shop")
		if got, err := fresh.LoadLedger(ctx); err != nil || len(got.Rows) != i+1 {
			t.Fatalf("after save %d: %+v %v", i, got, err)
		}
	}
	b, _ := OpenBlobs(blobs, "", "shop")
	lb, _ := b.LoadLedger(ctx)
	lb.Put(Row{Provider: spec.AWS, Kind: spec.Queues, Name: "theirs", Region: "eu-west-3"})
	if err := b.SaveLedger(ctx, lb); err != nil {
		t.Fatal(err)
	}
	blobs.lose = 1
	l.Put(Row{Provider: spec.AWS, Kind: spec.Queues, Name: "d", Region: "eu-west-3"})
	var conflict *ConflictError
	if err := a.SaveLedger(ctx, l); !errors.As(err, &conflict) {
		t.Fatalf("a stale save: %v; want a conflict", err)
	}
}

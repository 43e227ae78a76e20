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
	la, err := a.Lock(ctx, LockInfo{ID: "aaa", Holder: "alice@ci pid 1", Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(ctx, LockInfo{ID: "bbb", Command: "apply"})
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

package operations

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infra-iac/infra/state"
)

// A run that finds the lock held waits up to LockTimeout, saying who holds
// it, and takes the lock once the holder lets go; past the timeout it
// fails naming the holder.
func TestLockTimeoutWaitsForTheHolder(t *testing.T) {
	ctx := context.Background()
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	held, err := store.Lock(ctx, state.LockInfo{Holder: "alice@ci pid 7", Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var said []string
	env := Env{LockTimeout: 400 * time.Millisecond, Warn: func(m string) { mu.Lock(); said = append(said, m); mu.Unlock() }}

	start := time.Now()
	if _, err := takeLock(ctx, env, store, "apply"); err == nil || !strings.Contains(err.Error(), "waited 400ms for the lock") || !strings.Contains(err.Error(), "alice@ci pid 7") {
		t.Fatalf("past the timeout: %v", err)
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Fatalf("gave up after %s", waited)
	}
	mu.Lock()
	if len(said) == 0 || !strings.Contains(said[0], "alice@ci pid 7") || !strings.Contains(said[0], "waiting for it") {
		t.Fatalf("said %q", said)
	}
	mu.Unlock()

	env.LockTimeout = 5 * time.Second
	go func() { time.Sleep(300 * time.Millisecond); held.Release(ctx) }()
	l, err := takeLock(ctx, env, store, "apply")
	if err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
	l.Release(ctx)

	// Without a timeout the refusal is at once, as before.
	if _, err := store.Lock(ctx, state.LockInfo{Holder: "bob"}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := takeLock(ctx, Env{}, store, "apply"); err == nil || time.Since(start) > time.Second {
		t.Fatalf("no timeout: %v after %s", err, time.Since(start))
	}
}

package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infra-iac/infra/spec"
)

// The ledger's saves are paced group commits: actions do not wait for
// them, and one save holds every change made since the one before, so a
// large ledger is not written whole for each action (quadratic at scale);
// every action is recorded when apply returns.
func TestConcurrentActionsShareLedgerSaves(t *testing.T) {
	f := newFixture(t)
	f.store.delay = 20 * time.Millisecond
	var rs []string
	for i := 0; i < 24; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/q%02d", "spec": {}}`, i))
	}
	f.mustApply(doc(rs...))
	// The intents, then one save at most every 200 ms (nine times a
	// save's 20 ms after each), then the last.
	if f.store.nsaves >= 6 {
		t.Errorf("%d saves for 24 creates at parallelism 4: not paced", f.store.nsaves)
	}
	for i := 0; i < 24; i++ {
		a := spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: fmt.Sprintf("q%02d", i)}
		if _, ok := f.store.ledger.Get(a); !ok {
			t.Errorf("%s is not recorded", a)
		}
	}
	if n := len(f.store.ledger.Intents); n != 0 {
		t.Errorf("%d intents left: %v", n, f.store.ledger.Intents)
	}
}

// When the saves after the intents fail, what the cloud did is not in the
// ledger: each such action is reported failed, with why, no action starts
// after the failure, and the next run adopts what was made by its intent.
func TestUnsavedActionsFailAndTheNextRunAdoptsThem(t *testing.T) {
	f := newFixture(t)
	f.store.failFrom = 2
	var rs []string
	for i := 0; i < 6; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/q%d", "spec": {}}`, i))
	}
	_, rep, err := f.apply(doc(rs...))
	if err == nil || !strings.Contains(err.Error(), "save the ledger to memory: disk full") {
		t.Fatalf("want the save's failure, got %v", err)
	}
	made := 0
	for _, a := range rep.Applied {
		switch a.Status {
		case StatusFailed:
			made++
			if !strings.Contains(a.Error, a.Address.String()+": done, but not recorded: save the ledger") {
				t.Errorf("%s: %q", a.Address, a.Error)
			}
		case StatusDone:
			t.Errorf("%s reported done, but no save after the intents held it", a.Address)
		}
	}
	if made == 0 || made != len(f.cloud.Addresses()) {
		t.Fatalf("%d reported made but unrecorded, the cloud holds %v", made, f.cloud.Addresses())
	}
	if n := len(f.store.ledger.Intents); n != 6 || len(f.store.ledger.Rows) != 0 {
		t.Fatalf("the ledger holds %d intents and %d rows, want the 6 intents alone", n, len(f.store.ledger.Rows))
	}
	f.store.failFrom = 0
	f.mustApply(doc(rs...))
	if p := f.plan(doc(rs...), false); len(p.Actions) != 0 {
		t.Fatalf("not converged: %v", actionsOf(p))
	}
	if len(f.store.ledger.Rows) != 6 || len(f.cloud.Addresses()) != 6 {
		t.Fatalf("ledger %d rows, cloud %v", len(f.store.ledger.Rows), f.cloud.Addresses())
	}
}

// A save that fails once stops the run from starting actions; the last
// save, which succeeds, holds every change made, so nothing done is lost,
// and the run says why it stopped and what to do.
func TestAFailedSaveStopsTheRunAndTheLastSaveKeepsWhatWasDone(t *testing.T) {
	f := newFixture(t)
	f.store.failOnly = 2 // the first after the intents
	// Hold the first action's end until that save has failed, so that it
	// falls inside the walk, not at its end, however fast the walk is.
	var once sync.Once
	f.onEvent = func(ev Event) {
		if ev.Kind != EventDone {
			return
		}
		once.Do(func() {
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				f.store.mu.Lock()
				n := f.store.nsaves
				f.store.mu.Unlock()
				if n >= 2 {
					return
				}
			}
		})
	}
	var rs []string
	for i := 0; i < 8; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/q%d", "spec": {}}`, i))
	}
	_, rep, err := f.apply(doc(rs...))
	if err == nil || !strings.Contains(err.Error(), "stopped starting actions when save the ledger to memory: disk full; a later save held every change made, so apply again to finish") {
		t.Fatalf("want the stop and its reason, got %v", err)
	}
	notStarted := 0
	for _, a := range rep.Applied {
		_, recorded := f.store.ledger.Get(a.Address)
		switch a.Status {
		case StatusNotStarted:
			notStarted++
		case StatusDone:
			if !recorded {
				t.Errorf("%s is done but not recorded", a.Address)
			}
		case StatusFailed:
			t.Errorf("%s failed: %s", a.Address, a.Error)
		}
	}
	if notStarted == 0 || !rep.Incomplete {
		t.Errorf("every action started after the failed save (incomplete %v)", rep.Incomplete)
	}
	if len(f.store.ledger.Rows) != len(f.cloud.Addresses()) {
		t.Fatalf("the ledger holds %d rows, the cloud %v", len(f.store.ledger.Rows), f.cloud.Addresses())
	}
	f.mustApply(doc(rs...))
	if p := f.plan(doc(rs...), false); len(p.Actions) != 0 || len(f.store.ledger.Rows) != 8 {
		t.Fatalf("not converged: %v, %d rows", actionsOf(p), len(f.store.ledger.Rows))
	}
}

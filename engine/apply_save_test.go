package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/infra-iac/infra/spec"
)

// The ledger's saves are group commits: actions that finish while a save
// is being written share the next one, instead of each writing the whole
// ledger (quadratic at scale), and every action is recorded when apply
// returns.
func TestConcurrentActionsShareLedgerSaves(t *testing.T) {
	f := newFixture(t)
	f.store.delay = 20 * time.Millisecond
	var rs []string
	for i := 0; i < 24; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/q%02d", "spec": {}}`, i))
	}
	f.mustApply(doc(rs...))
	if f.store.nsaves >= 24 {
		t.Errorf("%d saves for 24 creates at parallelism 4: none shared", f.store.nsaves)
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

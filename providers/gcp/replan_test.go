package gcp

import (
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/infra-iac/infra/internal/lifecycle"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/state"
)

// TestARePlanMakesEachCallOnce: once the fleet of every GCP kind is
// applied, a plan that finds nothing to do makes no call twice. The tag
// scan is each kind's listing (GCP has no tag-scan API), and observing the
// declared resources takes those listings rather than listing again
// (providers.ListingDiscoverer): 10 calls for 11 resources of 7 kinds,
// where 19 were made before.
func TestARePlanMakesEachCallOnce(t *testing.T) {
	e := fastEnv(t)
	var mu sync.Mutex
	var recording bool
	var calls []string
	// Set before the first client is made: each client's transport takes
	// the log when it is made.
	e.backend.opts.Log = func(c providers.Call) {
		mu.Lock()
		defer mu.Unlock()
		if recording {
			calls = append(calls, c.Service+" "+c.Operation)
		}
	}
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	lifecycle.Replan(t, gcpEngine(e), store, full.document(testProject), func() {
		mu.Lock()
		recording = true
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(calls)
	t.Logf("%d calls:\n%s", len(calls), strings.Join(calls, "\n"))
	for i := 1; i < len(calls); i++ {
		if calls[i] == calls[i-1] {
			t.Errorf("made twice: %s", calls[i])
		}
	}
}

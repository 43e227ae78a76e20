package scaleway

import (
	"sort"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/lifecycle"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// TestARePlanMakesEachRESTCallOnce: once the Scaleway fleet is applied, a
// plan that finds nothing to do sends no REST request twice. The tag scan
// is each kind's listing, and a bucket's read (Scaleway has no tag-scan
// API); observing the declared resources takes what the scan found
// rather than listing and reading again (providers.ListingDiscoverer):
// 12 calls where 22 were made before.
func TestARePlanMakesEachRESTCallOnce(t *testing.T) {
	e := newEnv(t, "shop")
	eng := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.Scaleway: e.backend},
		Getenv: func(k string) string { return map[string]string{"LIFE_BASE": "base-secret"}[k] }, Parallelism: 4})
	store, err := state.OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	full := life{visibility: 30, maxScale: 1, memory: 256, greeting: "hello", team: "web", nsDoc: "functions"}
	lifecycle.Replan(t, eng, store, full.document(testProject), e.fake.ClearLog)
	var calls []string
	for _, r := range e.fake.Requests() {
		calls = append(calls, r.Method+" "+r.Path+"?"+r.Query.Encode())
	}
	sort.Strings(calls)
	t.Logf("%d REST calls:\n%s", len(calls), strings.Join(calls, "\n"))
	times := map[string]int{}
	for _, c := range calls {
		times[c]++
	}
	for c, n := range times {
		// The container and function listings list their namespaces to
		// name each one's, besides the namespace kinds' own listings.
		namespaces := strings.Contains(c, "/namespaces?") && (strings.HasPrefix(c, "GET /containers/") || strings.HasPrefix(c, "GET /functions/"))
		if n > 1 && !(namespaces && n == 2) {
			t.Errorf("sent %d times: %s", n, c)
		}
	}
}

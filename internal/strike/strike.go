// Package strike chooses where a crash test strikes: at every point of a
// run in CI, at a sample of them in the README's test command, so that it
// stays short while CI still proves every point.
package strike

import (
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"
)

// Points returns the points k in 1..n at which a crash test strikes. With
// INFRA_CRASH_EVERY=1 (as .ci/run sets it) it is every k; otherwise the
// first two, the middle, the last two and one more drawn from a seed that
// changes daily, logged: the ends are where a run starts and records, and
// the daily draw walks the middle over time. INFRA_CRASH_K=k strikes at k alone, to
// repeat a failure.
func Points(t testing.TB, n int) []int {
	t.Helper()
	if v := os.Getenv("INFRA_CRASH_K"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || k > n {
			t.Fatalf("INFRA_CRASH_K=%q: want 1..%d", v, n)
		}
		return []int{k}
	}
	if os.Getenv("INFRA_CRASH_EVERY") != "" {
		ks := make([]int, n)
		for i := range ks {
			ks[i] = i + 1
		}
		return ks
	}
	seed := uint64(time.Now().UTC().YearDay())
	rng := rand.New(rand.NewPCG(seed, seed))
	pick := map[int]bool{}
	for _, k := range []int{1, 2, n / 2, n - 1, n} {
		if k >= 1 && k <= n {
			pick[k] = true
		}
	}
	for len(pick) < min(n, 6) {
		pick[1+rng.IntN(n)] = true
	}
	ks := make([]int, 0, len(pick))
	for k := range pick {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	t.Logf("striking at %v of %d (seed %d; INFRA_CRASH_EVERY=1 strikes at every one)", ks, n, seed)
	return ks
}

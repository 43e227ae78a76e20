package render

import (
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/golden"
)

// cachePlan is samplePlan as a plan from the cache makes it: marked, the
// accounts the document's.
func cachePlan() (*engine.Plan, time.Time) {
	p := samplePlan()
	seen := time.Date(2026, 12, 2, 5, 12, 0, 0, time.UTC)
	p.FromCache = &engine.CacheInfo{Seen: seen, Entries: 7}
	for i := range p.Accounts {
		p.Accounts[i].Unverified = true
	}
	return p, seen.Add(41*time.Minute + 20*time.Second)
}

// Every rendering of a plan from the cache says so first, with the age
// of what it used; the header does not claim a checked account, and the
// comment does not say that merging applies it.
func TestPlanFromCacheIsMarkedEverywhere(t *testing.T) {
	p, now := cachePlan()
	var b strings.Builder
	if err := Text(&b, p, TextOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "plan-from-cache.txt", b.String())
	const first = "Planned from the cache (last observed 2026-12-02 05:12 UTC, 41 minutes ago): nothing was read from the cloud.\n"
	if !strings.HasPrefix(b.String(), first) {
		t.Fatalf("text does not start with the cache line:\n%s", b.String())
	}
	if strings.Contains(b.String(), " ok\n") {
		t.Fatalf("text claims a checked account:\n%s", b.String())
	}
	md := Markdown(p, MarkdownOptions{HeadSHA: "0123456789abcdef0123456789abcdef01234567", Now: now})
	golden.Check(t, "plan-from-cache.md", md)
	if !strings.Contains(md, "> **"+strings.TrimSuffix(first, "\n")+"**") || strings.Contains(md, "Merging applies") {
		t.Fatalf("comment:\n%s", md)
	}
}

// A document that states no account gets a header that says so.
func TestPlanFromCacheWithNoStatedAccount(t *testing.T) {
	p, now := cachePlan()
	p.Accounts = p.Accounts[:1]
	p.Accounts[0].Account = ""
	var b strings.Builder
	if err := Text(&b, p, TextOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	if want := "\naws: (no account) in eu-west-3 (the document states none; not verified)\n"; !strings.Contains(b.String(), want) {
		t.Fatalf("text lacks %q:\n%s", want, b.String())
	}
	md := Markdown(p, MarkdownOptions{Now: now})
	if want := "| aws | (no account) (the document states none; not verified) | eu-west-3 |"; !strings.Contains(md, want) {
		t.Fatalf("comment lacks %q:\n%s", want, md)
	}
}

func TestAgeReadsAsAPersonCountsIt(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "less than a minute ago", 59 * time.Second: "less than a minute ago", time.Minute: "1 minute ago",
		41*time.Minute + 59*time.Second: "41 minutes ago", 90 * time.Minute: "1 hour ago", 47 * time.Hour: "47 hours ago", 72 * time.Hour: "3 days ago",
	} {
		if got := ago(d); got != want {
			t.Errorf("ago(%s) = %q, want %q", d, got, want)
		}
	}
}

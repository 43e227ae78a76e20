package render

import (
	"fmt"
	"time"

	"github.com/infra-iac/infra/engine"
)

// CacheLine is, for a plan made from the cache, what every rendering says
// first: when what it planned against was last observed, and how long ago
// that is. Empty for a plan that read the cloud.
func CacheLine(p *engine.Plan, now time.Time) string {
	if p.FromCache == nil {
		return ""
	}
	when := "at a time the cache does not record"
	if seen := p.FromCache.Seen; !seen.IsZero() {
		if now.IsZero() {
			now = time.Now()
		}
		when = seen.UTC().Format("2006-01-02 15:04 UTC") + ", " + ago(now.Sub(seen))
	}
	return fmt.Sprintf("Planned from the cache (last observed %s): nothing was read from the cloud.", when)
}

// cacheNote says what a plan from the cache is for, after CacheLine.
const cacheNote = "It is for review only: apply always reads the cloud, so no apply accepts this plan; plan again without --refresh=false for one that can be applied."

// ago is a duration as a reader counts it: minutes, hours, then days.
func ago(d time.Duration) string {
	count := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case d < time.Minute:
		return "less than a minute ago"
	case d < time.Hour:
		return count(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return count(int(d/time.Hour), "hour")
	}
	return count(int(d/(24*time.Hour)), "day")
}

// accountText is the account a header shows: an unverified plan's may be
// none, which reads as such rather than as a blank.
func accountText(a engine.Account) string {
	if a.Unverified && a.Account == "" {
		return "(no account)"
	}
	return a.Account
}

// accountNote follows an account in the header: checked against the
// credentials, or only what the document states, which may be nothing.
func accountNote(a engine.Account) string {
	switch {
	case a.Unverified && a.Account == "":
		return "(the document states none; not verified)"
	case a.Unverified:
		return "(stated by the document, not verified)"
	}
	return "ok"
}

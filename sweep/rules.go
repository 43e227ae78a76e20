package sweep

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/infra-iac/infra/spec"
)

// prefixMiss says why name is not a candidate by its name, when it is not.
// The prefix is matched at the start of the name and case-sensitively: a
// substring match is how a sweeper deletes archive-of-ci-tests-c, and a
// case-blind one CI-TESTS-d, which someone named differently on purpose.
func prefixMiss(name, prefix string) (string, bool) {
	if strings.HasPrefix(name, prefix) {
		return "", false
	}
	switch {
	case len(name) >= len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) && utf8.ValidString(name[:len(prefix)]):
		return fmt.Sprintf("the name does not start with %s: it starts with %s, and the prefix is case-sensitive", prefix, name[:len(prefix)]), true
	case strings.Contains(name, prefix):
		return fmt.Sprintf("the name contains %s but does not start with it: a prefix is never a substring", prefix), true
	}
	return fmt.Sprintf("the name does not start with %s", prefix), true
}

// foreign says why a resource's ownership tag keeps it, when it does. An
// untagged resource is fair game (debris from a run that died before
// tagging, or made by a test outside infra), and so is one tagged by a
// fleet whose own name starts with the prefix (a test fleet). A tag naming
// any other fleet is a claim: that fleet manages the resource, whatever its
// name, and deleting it anyway is the failure users report of other
// sweepers.
func foreign(owner, prefix string) (string, bool) {
	if owner == "" || strings.HasPrefix(owner, prefix) {
		return "", false
	}
	return fmt.Sprintf("it is tagged %s=%s: fleet %s does not start with %s, so it is that fleet's; left alone",
		spec.OwnershipTagKey, owner, owner, prefix), true
}

// FormatAge writes a duration the way a person reads an age: 45s, 12m,
// 5h12m, 3d4h.
func FormatAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d == 0:
		return "0"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

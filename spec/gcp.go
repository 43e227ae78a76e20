package spec

import (
	"regexp"
	"strconv"
	"strings"
)

// gcpProjectRE is a GCP project id: the account of a GCP fleet.
var gcpProjectRE = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

// ValidGCPProject reports whether s is a GCP project id.
func ValidGCPProject(s string) bool { return gcpProjectRE.MatchString(s) }

// gcpName is how GCP's product for a kind spells a name, and the hint for
// one it would refuse: a name check fails at check, not halfway through an
// apply.
type gcpName struct {
	re   *regexp.Regexp
	hint string
}

var gcpNames = map[Kind]gcpName{
	ObjectStore: {regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$`),
		"a Cloud Storage bucket name is 3–63 characters of a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit"},
	Queues: {regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._~+%-]{2,254}$`),
		"a Pub/Sub topic name is 3–255 characters of letters, digits and -_.~+%, starting with a letter and not with \"goog\""},
	Secrets: {regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`),
		"a Secret Manager secret name is 1–255 characters of letters, digits, '-' and '_'"},
	ImageRegistry: {regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`),
		"an Artifact Registry repository name is 1–63 characters of a-z, 0-9 and '-', starting with a letter and not ending with '-'"},
	Postgres: {regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`),
		"a Cloud SQL instance name is 1–63 characters of a-z, 0-9 and '-', starting with a letter and not ending with '-'"},
	Compute: {regexp.MustCompile(`^[a-z]([a-z0-9-]{0,47}[a-z0-9])?$`),
		"a Cloud Run service name is 1–49 characters of a-z, 0-9 and '-', starting with a letter and not ending with '-'"},
	IAM: {regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`),
		"a service account id is 6–30 characters of a-z, 0-9 and '-', starting with a letter and not ending with '-'"},
}

// GCP labels restrict keys and values; user tags become labels, so a tag
// that is not a label would fail at apply.
var (
	gcpLabelKeyRE   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	gcpLabelValueRE = regexp.MustCompile(`^[a-z0-9_-]{0,63}$`)
)

// gcpMaxUserLabels is GCP's 64 labels a resource, less the ownership mark.
const gcpMaxUserLabels = 63

// gcpRules are the rows about names and values GCP's products refuse.
func (c *compiler) gcpRules(where string, a Address, d Declared) {
	// Pub/Sub reserves names starting with goog, which a regexp without
	// lookahead cannot say.
	reserved := a.Kind == Queues && strings.HasPrefix(strings.ToLower(a.Name), "goog")
	if n, ok := gcpNames[a.Kind]; ok && (!n.re.MatchString(a.Name) || reserved) {
		c.add(Errorf(RowInvalidNameForCloud, where, n.hint, "%s on gcp cannot be named %q", a.Kind, Printable(a.Name)))
	}
	if info, _ := Lookup(a.Kind); info.MarkOn(GCP) == MarkTag {
		c.gcpLabels(where, a, d) // else no labels: the description holds the tags (markFits)
	}
	switch a.Kind {
	case Queues:
		if n, ok := number(d.Fields["visibilityTimeoutSec"]); ok && (n < 10 || n > 600) {
			c.add(Errorf(RowOutOfRangeForCloud, where, "a Pub/Sub subscription's ack deadline is 10–600 seconds",
				"queues on gcp: visibilityTimeoutSec %v is outside 10–600", n))
		}
	case Postgres:
		c.gcpCapacity(where, d)
	case IAM:
		c.gcpRoles(where, d)
	}
}

func (c *compiler) gcpLabels(where string, a Address, d Declared) {
	m, ok := d.Fields[TagsField].(Map)
	if !ok {
		return
	}
	if len(m) > gcpMaxUserLabels {
		c.add(Errorf(RowTagNotLabel, where, "a GCP resource takes 64 labels, one of them the ownership mark",
			"%s on gcp has %d tags; at most %d fit", a.Kind, len(m), gcpMaxUserLabels))
	}
	for _, k := range sortedKeys(m) {
		if !gcpLabelKeyRE.MatchString(k) {
			c.add(Errorf(RowTagNotLabel, where, "on GCP tags are labels: a key is 1–63 characters of a-z, 0-9, '-' and '_', starting with a letter",
				"tag key %q is not a GCP label key", Printable(k)))
			continue
		}
		if lit, ok := m[k].(Lit); ok {
			if v, _ := lit.V.(string); !gcpLabelValueRE.MatchString(v) {
				c.add(Errorf(RowTagNotLabel, where, "on GCP tags are labels: a value is at most 63 characters of a-z, 0-9, '-' and '_'",
					"tag %s's value %q is not a GCP label value", k, Printable(v)))
			}
		}
	}
}

// gcpCapacity holds Cloud SQL to what it can do: an instance has a fixed
// machine of maxCapacity vCPUs (minCapacity when only it is given), and
// never scales.
func (c *compiler) gcpCapacity(where string, d Declared) {
	lo, hasLo := number(d.Fields["minCapacity"])
	hi, hasHi := number(d.Fields["maxCapacity"])
	for _, x := range []struct {
		name string
		n    float64
		set  bool
	}{{"minCapacity", lo, hasLo}, {"maxCapacity", hi, hasHi}} {
		// A custom machine has 1 or an even number of vCPUs.
		odd := x.n > 1 && int64(x.n)%2 == 1
		if x.set && (x.n != float64(int64(x.n)) || x.n < 1 || x.n > GCPMaxSQLVCPUs || odd) {
			c.add(Errorf(RowFractionalCapacity, where, "a Cloud SQL custom machine has 1 or an even number of vCPUs, up to "+strconv.Itoa(GCPMaxSQLVCPUs),
				"postgres on gcp needs a %s of 1 or an even whole number up to %d, not %v", x.name, GCPMaxSQLVCPUs, x.n))
		}
	}
	if hasLo && hasHi && lo < hi {
		c.add(Warnf(RowCapacityFixed, where, "Cloud SQL does not scale: the instance runs, and is billed, at maxCapacity; set minCapacity equal to it",
			"postgres on gcp runs at %v vCPUs all the time, not %v to %v", hi, lo, hi))
	}
}

// GCPMaxSQLVCPUs is the largest custom Cloud SQL machine.
const GCPMaxSQLVCPUs = 96

// GCPSQLVCPUs is the machine size a GCP postgres declares: maxCapacity,
// minCapacity when only it is given, or one vCPU.
func GCPSQLVCPUs(fields map[string]any) int {
	for _, name := range []string{"maxCapacity", "minCapacity"} {
		if n, ok := fields[name].(float64); ok && n >= 1 {
			return int(n)
		}
	}
	return 1
}

var gcpRoleRE = regexp.MustCompile(`^(roles/[A-Za-z0-9_.]+|(projects|organizations)/[^/]+/roles/[A-Za-z0-9_.]+)$`)

func (c *compiler) gcpRoles(where string, d Declared) {
	l, ok := d.Fields["policies"].(List)
	if !ok {
		return
	}
	for _, x := range l {
		if lit, ok := x.(Lit); ok {
			if s, _ := lit.V.(string); !gcpRoleRE.MatchString(s) {
				c.add(Errorf(RowPolicyNotARole, where, "on GCP, policies are roles granted on the project, such as roles/storage.objectViewer",
					"iam on gcp: %q is not a role name", Printable(s)))
			}
		}
	}
}

// number is a literal number value.
func number(v Value) (float64, bool) {
	lit, ok := v.(Lit)
	if !ok {
		return 0, false
	}
	n, ok := lit.V.(float64)
	return n, ok
}

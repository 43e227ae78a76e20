package spec

import "strings"

// An EC2 instance type is not really a string: AWS names it family.size, and
// both halves come from small closed sets. Written as one string, "t3.nanoo"
// would plan and then fail at RunInstances after the security group it
// refers to has been created. So the table below states families and sizes
// as two axes and checks the pair: t3 has no 32xlarge.
//
// The table is a snapshot of a catalogue that grows. Checked in November 2026
// against the InstanceType enum of aws-sdk-go-v2/service/ec2 v1.344.3: every
// family here has exactly the sizes that enum lists for it. A type the table
// lacks (accelerated, storage-optimised, newer generations) is written with
// RawPrefix, "raw:p5.48xlarge", so that reaching past the table is visible.
//
// It does not say whether a type is offered in a given region, or whether
// the account's quota allows it: that is catalogue and account state, and a
// stale third table would refuse valid declarations.

// InstanceFamily is an EC2 instance family, such as t3, and the sizes it
// comes in, smallest first.
type InstanceFamily struct {
	Name  string
	Sizes []string
	// Ladder names the size list the family shares with its siblings, such
	// as "graviton" for m6g, c6g, r6g, m7g, c7g and r7g.
	Ladder string
	// Category is "burstable", "general purpose", "compute optimised",
	// "memory optimised" or "storage optimised", for documentation and
	// for grouping in a generated SDK.
	Category string
}

// Has reports whether the family comes in size s.
func (f InstanceFamily) Has(size string) bool {
	for _, s := range f.Sizes {
		if s == size {
			return true
		}
	}
	return false
}

// instanceSizes is every size any family here comes in, smallest first. A
// generated SDK declares its size constants in this order.
var instanceSizes = []string{
	"nano", "micro", "small", "medium",
	"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "9xlarge",
	"12xlarge", "16xlarge", "18xlarge", "24xlarge", "32xlarge", "48xlarge",
	// Bare metal is spelled "metal" on families with one bare-metal shape
	// and "metal-24xl"/"metal-48xl" on those with two (or a single large
	// one, as on AMD gen 7). Both spellings are real.
	"metal", "metal-24xl", "metal-48xl",
}

// instanceLadders are the size lists families share. Each difference between
// them is one fact about AWS's catalogue, stated once, rather than repeated
// per family where a hand-written table goes wrong.
var instanceLadders = map[string][]string{
	// The only ladder with nano, micro and small, and the only one with no
	// bare metal.
	"burstable": {"nano", "micro", "small", "medium", "large", "xlarge", "2xlarge"},
	// Intel gen 5 (m5, r5): 24xlarge is the top, then one metal.
	"intel-5": {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal"},
	// c5 alone splits its ladder at 9xlarge and 18xlarge instead of 8 and 16.
	"c5": {"large", "xlarge", "2xlarge", "4xlarge", "9xlarge", "12xlarge", "18xlarge", "24xlarge", "metal"},
	// Intel gen 6 stops at 32xlarge: no 48xlarge, unlike its AMD sibling.
	"intel-6": {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "metal"},
	// AMD gen 6 has both 32xlarge and 48xlarge.
	"amd-6": {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "48xlarge", "metal"},
	// Graviton before gen 8 offers medium above the burstable tier and stops
	// at 16xlarge, plus metal.
	"graviton": {"medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "metal"},
	// Intel gen 7 jumps from 24xlarge to 48xlarge with no 32xlarge, and its
	// bare metal comes in two suffixed shapes. The row most often written
	// wrong from memory.
	"intel-7": {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge", "metal-24xl", "metal-48xl"},
	// The flex families are families of their own, not sizes of m7i/c7i:
	// nothing above 16xlarge and no metal.
	"flex-7": {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge"},
	// AMD gen 7 keeps 32xlarge where Intel gen 7 drops it, adds medium, and
	// has only the one metal shape.
	"amd-7": {"medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "48xlarge", "metal-48xl"},
	// Graviton gen 8 reaches 48xlarge, still with no 32xlarge, and takes the
	// suffixed metal spellings.
	"graviton-8": {"medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge", "metal-24xl", "metal-48xl"},
}

// instanceFamilies is the table the SDK's typed instance types are generated
// from, in the order a reader scans it: by category, then generation. A
// family that gains a size is one edit to its ladder; a family with a ladder
// of its own gets a new ladder above.
var instanceFamilies = []struct{ Name, Ladder, Category string }{
	{"t2", "burstable", "burstable"},
	{"t3", "burstable", "burstable"},
	{"t3a", "burstable", "burstable"},
	{"t4g", "burstable", "burstable"},

	{"m5", "intel-5", "general purpose"},
	{"m6i", "intel-6", "general purpose"},
	{"m6a", "amd-6", "general purpose"},
	{"m6g", "graviton", "general purpose"},
	{"m7i", "intel-7", "general purpose"},
	{"m7i-flex", "flex-7", "general purpose"},
	{"m7a", "amd-7", "general purpose"},
	{"m7g", "graviton", "general purpose"},
	{"m8g", "graviton-8", "general purpose"},

	{"c5", "c5", "compute optimised"},
	{"c6i", "intel-6", "compute optimised"},
	{"c6a", "amd-6", "compute optimised"},
	{"c6g", "graviton", "compute optimised"},
	{"c7i", "intel-7", "compute optimised"},
	{"c7i-flex", "flex-7", "compute optimised"},
	{"c7a", "amd-7", "compute optimised"},
	{"c7g", "graviton", "compute optimised"},
	{"c8g", "graviton-8", "compute optimised"},

	{"r5", "intel-5", "memory optimised"},
	{"r6i", "intel-6", "memory optimised"},
	{"r6a", "amd-6", "memory optimised"},
	{"r6g", "graviton", "memory optimised"},
	{"r7i", "intel-7", "memory optimised"},
	{"r7a", "amd-7", "memory optimised"},
	{"r7g", "graviton", "memory optimised"},
	{"r8g", "graviton-8", "memory optimised"},

	{"i4i", "intel-6", "storage optimised"},
}

// instanceTypeIndex answers InstanceTypeKnown without scanning the table:
// check runs it once per aws-instance, and a large fleet has many.
var instanceTypeIndex = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range instanceFamilies {
		for _, s := range instanceLadders[f.Ladder] {
			m[f.Name+"."+s] = true
		}
	}
	return m
}()

// InstanceFamilies returns every family with its sizes, in the table's
// order (category, then generation). The order is stable across calls and
// builds, so code generated from it does not churn. The slices are copies:
// changing them does not change the table.
func InstanceFamilies() []InstanceFamily {
	out := make([]InstanceFamily, 0, len(instanceFamilies))
	for _, f := range instanceFamilies {
		out = append(out, InstanceFamily{
			Name:     f.Name,
			Sizes:    append([]string(nil), instanceLadders[f.Ladder]...),
			Ladder:   f.Ladder,
			Category: f.Category,
		})
	}
	return out
}

// LookupInstanceFamily returns the named family.
func LookupInstanceFamily(name string) (InstanceFamily, bool) {
	for _, f := range InstanceFamilies() {
		if f.Name == name {
			return f, true
		}
	}
	return InstanceFamily{}, false
}

// InstanceSizes returns every size some family comes in, smallest first.
func InstanceSizes() []string { return append([]string(nil), instanceSizes...) }

// InstanceTypes returns every type the table can name, family by family in
// the table's order, each family's sizes smallest first.
func InstanceTypes() []string {
	out := make([]string, 0, len(instanceTypeIndex))
	for _, f := range instanceFamilies {
		for _, s := range instanceLadders[f.Ladder] {
			out = append(out, f.Name+"."+s)
		}
	}
	return out
}

// InstanceTypeKnown reports whether t (family.size) is in the table.
func InstanceTypeKnown(t string) bool { return instanceTypeIndex[t] }

// ResolveInstanceType checks a written instance type and strips the raw
// escape: "raw:p5.48xlarge" is taken on trust and resolves to "p5.48xlarge".
// ok is false when the type is neither in the table nor raw.
func ResolveInstanceType(written string) (code string, raw bool, ok bool) {
	if rest, isRaw := strings.CutPrefix(written, RawPrefix); isRaw && rest != "" {
		return rest, true, true
	}
	return written, false, InstanceTypeKnown(written)
}

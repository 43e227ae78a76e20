package spec

import (
	"sort"
	"strings"
)

// InstanceFamily is an EC2 instance family, such as t3, and the sizes it
// comes in.
type InstanceFamily struct {
	Name  string
	Sizes []string
}

// instanceLadders are the size lists families share. Each difference between
// them is stated once.
var instanceLadders = map[string][]string{
	"burstable": {"nano", "micro", "small", "medium", "large", "xlarge", "2xlarge"},
}

// instanceFamilies is the table the SDK's typed instance types are generated
// from. It is a snapshot of a catalogue that grows: a type it lacks is
// written with RawPrefix.
var instanceFamilies = []struct{ Name, Ladder string }{
	{"t3", "burstable"},
	{"t3a", "burstable"},
}

// InstanceFamilies returns every family with its sizes, sorted by name.
func InstanceFamilies() []InstanceFamily {
	out := make([]InstanceFamily, 0, len(instanceFamilies))
	for _, f := range instanceFamilies {
		out = append(out, InstanceFamily{Name: f.Name, Sizes: instanceLadders[f.Ladder]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// InstanceTypeKnown reports whether t (family.size) is in the table.
func InstanceTypeKnown(t string) bool {
	family, size, ok := strings.Cut(t, ".")
	if !ok {
		return false
	}
	for _, f := range instanceFamilies {
		if f.Name == family {
			for _, s := range instanceLadders[f.Ladder] {
				if s == size {
					return true
				}
			}
		}
	}
	return false
}

// ResolveInstanceType checks a written instance type and strips the raw
// escape.
func ResolveInstanceType(written string) (code string, raw bool, ok bool) {
	if strings.HasPrefix(written, RawPrefix) && len(written) > len(RawPrefix) {
		return written[len(RawPrefix):], true, true
	}
	return written, false, InstanceTypeKnown(written)
}

package spec

import (
	"slices"
	"testing"
)

// The counts are numbers rather than a shrug: when a family or a ladder
// changes, this is what says so, and the change should be checked against
// AWS's catalogue before the numbers are updated.
func TestInstanceTableCounts(t *testing.T) {
	if got := len(InstanceFamilies()); got != 31 {
		t.Errorf("families: got %d, want 31", got)
	}
	if got := len(InstanceSizes()); got != 19 {
		t.Errorf("sizes: got %d, want 19", got)
	}
	if got := len(instanceLadders); got != 10 {
		t.Errorf("ladders: got %d, want 10", got)
	}
	if got := len(InstanceTypes()); got != 301 {
		t.Errorf("valid types: got %d, want 301", got)
	}
}

func TestInstanceTypeGaps(t *testing.T) {
	cases := []struct {
		typ  string
		want bool
		why  string
	}{
		{"t3.nano", true, "burstable starts at nano"},
		{"t3.2xlarge", true, "burstable stops at 2xlarge"},
		{"t3.32xlarge", false, "t3 has no 32xlarge"},
		{"t3.metal", false, "burstable has no bare metal"},
		{"t2.micro", true, "t2 is burstable"},
		{"m5.metal", true, "Intel gen 5 has metal"},
		{"m5.32xlarge", false, "Intel gen 5 stops at 24xlarge"},
		{"c5.9xlarge", true, "c5 splits at 9xlarge"},
		{"c5.8xlarge", false, "c5 has no 8xlarge"},
		{"m5.9xlarge", false, "only c5 has 9xlarge"},
		{"m6i.32xlarge", true, "Intel gen 6 reaches 32xlarge"},
		{"m6i.48xlarge", false, "Intel gen 6 stops at 32xlarge"},
		{"m6a.48xlarge", true, "AMD gen 6 has 48xlarge"},
		{"i4i.32xlarge", true, "i4i shares the Intel gen 6 ladder"},
		{"m7i.32xlarge", false, "gen-7 Intel skips 32xlarge"},
		{"c7i.48xlarge", true, "gen-7 Intel jumps to 48xlarge"},
		{"r7i.metal-24xl", true, "gen-7 Intel metal is suffixed"},
		{"r7i.metal", false, "gen-7 Intel has no plain metal"},
		{"m7i-flex.large", true, "flex is a family of its own"},
		{"m7i-flex.medium", false, "flex has no medium"},
		{"m7i-flex.24xlarge", false, "flex stops at 16xlarge"},
		{"m7a.medium", true, "AMD gen 7 has medium"},
		{"m7a.metal-24xl", false, "AMD gen 7 has only metal-48xl"},
		{"m7g.16xlarge", true, "Graviton before gen 8 reaches 16xlarge"},
		{"m6g.24xlarge", false, "Graviton before gen 8 stops at 16xlarge"},
		{"c7g.metal", true, "Graviton before gen 8 has metal"},
		{"r8g.48xlarge", true, "Graviton gen 8 reaches 48xlarge"},
		{"c8g.32xlarge", false, "Graviton gen 8 skips 32xlarge"},
		{"t3.nanoo", false, "a typo"},
		{"t3", false, "no size"},
		{".micro", false, "no family"},
		{"", false, "empty"},
		{"T3.micro", false, "AWS spells types in lower case"},
	}
	for _, c := range cases {
		if got := InstanceTypeKnown(c.typ); got != c.want {
			t.Errorf("InstanceTypeKnown(%q) = %v, want %v (%s)", c.typ, got, c.want, c.why)
		}
	}
}

func TestResolveInstanceTypeRawEscape(t *testing.T) {
	cases := []struct {
		written, code string
		raw, ok       bool
	}{
		{"t3.micro", "t3.micro", false, true},
		{"t3.32xlarge", "t3.32xlarge", false, false},
		{"raw:p5.48xlarge", "p5.48xlarge", true, true},
		// The escape takes the value on trust, even one the table refuses:
		// that is what it is for when the table is stale.
		{"raw:t3.32xlarge", "t3.32xlarge", true, true},
		// An empty raw value is not an escape, it is a mistake.
		{"raw:", "raw:", false, false},
		{"p5.48xlarge", "p5.48xlarge", false, false},
	}
	for _, c := range cases {
		code, raw, ok := ResolveInstanceType(c.written)
		if code != c.code || raw != c.raw || ok != c.ok {
			t.Errorf("ResolveInstanceType(%q) = (%q, %v, %v), want (%q, %v, %v)",
				c.written, code, raw, ok, c.code, c.raw, c.ok)
		}
	}
}

// A code generator needs the same order on every run, every size of a family
// to be a declared size, and no name to collide.
func TestInstanceTableShape(t *testing.T) {
	sizes := InstanceSizes()
	seenType := map[string]bool{}
	seenFamily := map[string]bool{}
	used := map[string]bool{}
	for _, f := range InstanceFamilies() {
		if seenFamily[f.Name] {
			t.Errorf("family %s listed twice", f.Name)
		}
		seenFamily[f.Name] = true
		if len(f.Sizes) == 0 {
			t.Errorf("family %s has no sizes", f.Name)
		}
		if f.Category == "" {
			t.Errorf("family %s has no category", f.Name)
		}
		last := -1
		for _, s := range f.Sizes {
			i := slices.Index(sizes, s)
			if i < 0 {
				t.Errorf("family %s: size %s is not in InstanceSizes", f.Name, s)
			}
			if i <= last {
				t.Errorf("family %s: size %s is out of order", f.Name, s)
			}
			last = i
			used[s] = true
			name := f.Name + "." + s
			if seenType[name] {
				t.Errorf("type %s named twice", name)
			}
			seenType[name] = true
			if !InstanceTypeKnown(name) {
				t.Errorf("%s is in the table but not known", name)
			}
		}
	}
	// A size no family uses is a size invented from memory.
	for _, s := range sizes {
		if !used[s] {
			t.Errorf("size %s is used by no family", s)
		}
	}
	if !slices.Equal(InstanceTypes(), InstanceTypes()) {
		t.Error("InstanceTypes is not stable across calls")
	}
	if len(seenType) != len(InstanceTypes()) {
		t.Errorf("InstanceTypes lists %d types, the families %d", len(InstanceTypes()), len(seenType))
	}
	// The returned slices are copies: a caller cannot change the table.
	fams := InstanceFamilies()
	fams[0].Sizes[0] = "huge"
	if InstanceFamilies()[0].Sizes[0] == "huge" {
		t.Error("InstanceFamilies returns the table's own slices")
	}
}

func TestLookupInstanceFamily(t *testing.T) {
	f, ok := LookupInstanceFamily("t3")
	if !ok || f.Has("32xlarge") || !f.Has("nano") || f.Ladder != "burstable" {
		t.Errorf("LookupInstanceFamily(t3) = %+v, %v", f, ok)
	}
	if _, ok := LookupInstanceFamily("p5"); ok {
		t.Error("p5 is not in the table")
	}
}

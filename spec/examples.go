package spec

import (
	"maps"
	"strings"
)

// Examples returns the example resources of kinds on provider p in fleet,
// with the examples of every kind they refer to, the referenced before the
// referring. Each is named FLEET-KIND (the fleet prefix is the mark of the
// kinds without tags), or its row's ExampleName as is; one of a row's
// MoreExamples is named FLEET-KIND-SUFFIX, made only when an example
// refers to it. A kind p does not offer, or without an example, is left
// out. An example is written once for every provider that offers the
// kind: the fields p does not use are dropped, those of the row's
// On[p].Example replace the kind's (and a MoreExamples entry's replace
// both), and each reference is to p's example of the kind it names. The
// tests build documents from it (every kind checks; the crash tests apply
// the AWS kinds), so a new kind is covered by its row alone.
func Examples(p Provider, fleet string, kinds ...Kind) []Resource {
	var out []Resource
	seen := map[example]bool{}
	var add func(e example)
	add = func(e example) {
		info, ok := Lookup(e.kind)
		if seen[e] || !ok || !info.OfferedBy(p) || info.Example == nil {
			return
		}
		seen[e] = true
		s := map[string]any{}
		var refs []example
		fields := maps.Clone(info.Example)
		maps.Copy(fields, info.On[p].Example)
		maps.Copy(fields, info.MoreExamples[e.more])
		for _, name := range sortedKeys(fields) {
			if f, ok := info.Field(name); ok && !f.UsedOn(p) {
				continue
			}
			s[name] = exampleValue(p, fleet, fields[name], &refs)
		}
		for _, r := range refs {
			add(r)
		}
		out = append(out, Resource{Address: e.address(p, fleet), Spec: s})
	}
	for _, k := range kinds {
		add(example{kind: k})
	}
	return out
}

// example is one example resource: a kind's Example, or with more the
// suffix of one of its MoreExamples.
type example struct {
	kind Kind
	more string
}

// exampleOf is the example a reference's address a names: the kind's
// Example under its ExampleAddressName, or one of its MoreExamples under
// example-SUFFIX.
func exampleOf(a Address) (example, bool) {
	info, ok := Lookup(a.Kind)
	if !ok {
		return example{}, false
	}
	if a.Name == info.ExampleAddressName() {
		return example{kind: a.Kind}, true
	}
	suffix, _ := strings.CutPrefix(a.Name, "example-")
	if _, ok := info.MoreExamples[suffix]; ok {
		return example{kind: a.Kind, more: suffix}, true
	}
	return example{}, false
}

func (e example) address(p Provider, fleet string) string {
	info, _ := Lookup(e.kind)
	name := fleet + "-" + string(e.kind)
	switch {
	case e.more != "":
		name += "-" + e.more
	case info.ExampleName != "":
		name = info.ExampleName
	}
	return Address{Provider: p, Kind: e.kind, Name: name}.String()
}

// exampleValue copies v with each address in it (a reference's, an
// observed value's, a secret value's) made p's example of the one it
// names, adding those to refs. An address naming no example is left as
// it is: the document then refers to what it does not declare, which
// check reports.
func exampleValue(p Provider, fleet string, v any, refs *[]example) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			// A reference, an observed value or a secret's value names an
			// example.
			if s, ok := x.(string); ok && (k == "ref" || k == "observed" || k == "secretValue") {
				if a, err := ParseAddress(s); err == nil {
					if e, ok := exampleOf(a); ok {
						*refs = append(*refs, e)
						out[k] = e.address(p, fleet)
						continue
					}
				}
			}
			out[k] = exampleValue(p, fleet, x, refs)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = exampleValue(p, fleet, x, refs)
		}
		return out
	}
	return v
}

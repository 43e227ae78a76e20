package spec

import "maps"

// Examples returns the example resources of kinds on provider p in fleet,
// with the examples of every kind they refer to, each named FLEET-KIND
// (the fleet prefix is the mark of the kinds without tags), the referenced
// before the referring. A kind p does not offer, or without an
// example, is left out. An example is written once for every provider that
// offers the kind: the fields p does not use are dropped, those of the
// row's On[p].Example replace the kind's, and each reference is to p's
// example of the kind it names. The tests build
// documents from it (every kind checks; the crash tests apply the AWS
// kinds), so a new kind is covered by its row alone.
func Examples(p Provider, fleet string, kinds ...Kind) []Resource {
	var out []Resource
	seen := map[Kind]bool{}
	var add func(k Kind)
	add = func(k Kind) {
		info, ok := Lookup(k)
		if seen[k] || !ok || !info.OfferedBy(p) || info.Example == nil {
			return
		}
		seen[k] = true
		s := map[string]any{}
		var refs []Kind
		example := maps.Clone(info.Example)
		maps.Copy(example, info.On[p].Example)
		for _, name := range sortedKeys(example) {
			if f, ok := info.Field(name); ok && !f.UsedOn(p) {
				continue
			}
			s[name] = exampleValue(p, fleet, example[name], &refs)
		}
		for _, r := range refs {
			add(r)
		}
		out = append(out, Resource{Address: exampleAddress(p, fleet, k), Spec: s})
	}
	for _, k := range kinds {
		add(k)
	}
	return out
}

func exampleAddress(p Provider, fleet string, k Kind) string {
	return Address{Provider: p, Kind: k, Name: fleet + "-" + string(k)}.String()
}

// exampleValue copies v with each address in it (a reference's, an
// observed value's, a secret value's) made p's example of the kind it
// names, adding the kinds named to refs.
func exampleValue(p Provider, fleet string, v any, refs *[]Kind) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			// A reference, an observed value or a secret's value names an
			// example.
			if s, ok := x.(string); ok && (k == "ref" || k == "observed" || k == "secretValue") {
				if a, err := ParseAddress(s); err == nil {
					*refs = append(*refs, a.Kind)
					out[k] = exampleAddress(p, fleet, a.Kind)
					continue
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

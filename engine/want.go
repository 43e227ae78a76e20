package engine

import (
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// wantsOf is what the engine needs to know of each declared resource: the
// fields the document sets (an unset field is unknown and never compared,
// so nobody need read it), and the attributes something reads of it (a
// reference's identity, an observed value, what a published export or a
// secret reference needs). A resource it does not list, such as an
// undeclared ledger row, needs nothing but its existence and its mark.
func wantsOf(m *spec.Model) map[spec.Address]providers.Want {
	read := map[spec.Address]map[string]bool{}
	add := func(a spec.Address, attribute string) {
		if read[a] == nil {
			read[a] = map[string]bool{}
		}
		read[a][attribute] = true
	}
	for _, d := range m.Resources {
		for _, v := range d.Fields {
			attributesRead(v, add)
		}
	}
	for _, c := range m.Provides {
		for _, b := range c.Bindings {
			if s, ok := b.Value.(spec.SecretRef); ok {
				add(s.Of, providers.AllAttributes)
			}
			attributesRead(b.Value, add)
		}
	}
	out := make(map[spec.Address]providers.Want, len(m.Resources))
	for _, d := range m.Resources {
		fields := make(map[string]bool, len(d.Fields))
		for name := range d.Fields {
			fields[name] = true
		}
		out[d.Address] = providers.Want{Fields: fields, Attributes: read[d.Address]}
	}
	return out
}

// attributesRead calls add for each attribute v reads: a reference reads
// its target's identity (none where the name is the identity), an observed
// value its attribute, and a secret's value whatever the secrets driver
// needs to find it.
func attributesRead(v spec.Value, add func(spec.Address, string)) {
	for _, r := range spec.RefsIn(v) {
		if info, _ := spec.Lookup(r.To.Kind); info != nil && info.Identity != "" {
			add(r.To, info.Identity)
		}
	}
	for _, o := range spec.ObservedIn(v) {
		add(o.Of, o.Attribute)
	}
	for _, s := range spec.SecretValuesIn(v) {
		add(s.Of, providers.AllAttributes)
	}
}

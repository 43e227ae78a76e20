package engine

import (
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// wantsOf is what the engine needs to know of each declared resource: the
// fields the document sets (an unset field is unknown and never compared,
// so nobody need read it), and, for a resource something refers to, its
// attributes (a reference's identity, an observed value, a published
// export). A resource it does not list, such as an undeclared ledger row,
// needs nothing but its existence and its mark.
func wantsOf(m *spec.Model) map[spec.Address]providers.Want {
	referenced := map[spec.Address]bool{}
	for _, d := range m.Resources {
		for _, a := range d.Deps() {
			referenced[a] = true
		}
	}
	for _, c := range m.Provides {
		for _, b := range c.Bindings {
			if s, ok := b.Value.(spec.SecretRef); ok {
				referenced[s.Of] = true
			}
			for _, a := range spec.Deps(b.Value) {
				referenced[a] = true
			}
		}
	}
	out := make(map[spec.Address]providers.Want, len(m.Resources))
	for _, d := range m.Resources {
		fields := make(map[string]bool, len(d.Fields))
		for name := range d.Fields {
			fields[name] = true
		}
		out[d.Address] = providers.Want{Fields: fields, Attributes: referenced[d.Address]}
	}
	return out
}

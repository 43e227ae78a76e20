package spec

import (
	"net/netip"
	"strconv"
)

// ParseCIDR reads an IPv4 CIDR block as a CIDR field holds it. It fails,
// saying why and what to write, unless s is one in canonical form: EC2
// stores a block with host bits set masked (10.0.0.1/16 as 10.0.0.0/16),
// so such a declaration would differ from the cloud on every plan.
func ParseCIDR(s string) (netip.Prefix, *CIDRProblem) {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		return p, &CIDRProblem{What: strconv.Quote(s) + " is not an IPv4 CIDR block",
			Fix: "write an IPv4 block as a.b.c.d/n, such as 10.0.0.0/16"}
	case !p.Addr().Is4():
		return p, &CIDRProblem{What: strconv.Quote(s) + " is not an IPv4 CIDR block",
			Fix: "write an IPv4 block as a.b.c.d/n, such as 10.0.0.0/16; IPv6 blocks are not managed here"}
	case p.Masked() != p:
		return p, &CIDRProblem{What: strconv.Quote(s) + " has host bits set", Fix: "write " + strconv.Quote(p.Masked().String()) +
			": the cloud stores the block masked, so this one would differ from it on every plan"}
	}
	return p, nil
}

// CIDRProblem is why a value is not a canonical IPv4 CIDR block, and what
// to write instead.
type CIDRProblem struct{ What, Fix string }

func (p *CIDRProblem) Error() string { return p.What + "; " + p.Fix }

// cidrField checks one decoded CIDR field (an invalid-cidr row).
func (c *compiler) cidrField(where string, f Field, v Value) {
	lit, ok := v.(Lit)
	s, isString := lit.V.(string)
	if !f.CIDR || !ok || !isString {
		return
	}
	if _, bad := ParseCIDR(s); bad != nil {
		c.add(Errorf(RowInvalidCIDR, where, bad.Fix, "field %q: %s", f.Name, bad.What))
	}
}

// within holds every literal CIDR field with a Within to the block of the
// resource it refers to (a cidr-outside row on the resource). A reference
// to a resource the document lacks is a dangling-reference row already,
// and a block that does not parse an invalid-cidr row: neither is said
// again.
func (c *compiler) within() {
	for _, d := range c.m.Resources {
		info, _ := Lookup(d.Address.Kind)
		for _, f := range info.Fields {
			if f.Within == nil {
				continue
			}
			inner, ok := literalCIDR(d.Fields[f.Name])
			if !ok {
				continue
			}
			ref, isRef := d.Fields[f.Within.Ref].(Ref)
			if !isRef {
				continue
			}
			t, found := c.m.Lookup(ref.To)
			if !found {
				continue
			}
			outer, ok := literalCIDR(t.Fields[f.Within.Field])
			if !ok || outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr()) {
				continue
			}
			c.add(Errorf(RowCIDROutside, d.Address.String(),
				"choose a "+f.Name+" inside "+outer.String()+", or change the "+f.Within.Field+" of "+ref.To.String(),
				"field %q: %s is not inside %s, the %s of %s", f.Name, inner, outer, f.Within.Field, ref.To).WithEvidence(ref.To.String()))
		}
	}
}

// literalCIDR is v's block when v is a literal canonical IPv4 CIDR block.
func literalCIDR(v Value) (netip.Prefix, bool) {
	lit, ok := v.(Lit)
	s, isString := lit.V.(string)
	if !ok || !isString {
		return netip.Prefix{}, false
	}
	p, bad := ParseCIDR(s)
	return p, bad == nil
}

package aws

import "github.com/infra-iac/infra/spec"

// InstanceType is an EC2 instance type, written as family and size
// (T3.Nano()), so that a size a family lacks does not compile. The zero
// InstanceType is unset, which check reports as a missing required field.
type InstanceType struct {
	name string // family.size, or raw:… for InstanceTypeRaw
}

// InstanceTypeRaw is an instance type infra's table does not know, such as
// "p5e.48xlarge": the escape for a catalogue that grows faster than the
// table. check takes it as written.
func InstanceTypeRaw(name string) InstanceType { return InstanceType{name: spec.RawPrefix + name} }

// String is the instance type as AWS names it, such as "t3.nano".
func (t InstanceType) String() string {
	if len(t.name) > len(spec.RawPrefix) && t.name[:len(spec.RawPrefix)] == spec.RawPrefix {
		return t.name[len(spec.RawPrefix):]
	}
	return t.name
}

func (t InstanceType) value() spec.Value {
	if t.name == "" {
		return nil
	}
	return spec.Lit{V: t.name}
}

// Ingress is one inbound rule of a security group: TCP Port open to the
// CIDR block (such as "10.0.0.0/16", or "0.0.0.0/0" for everyone).
type Ingress struct {
	// Port is the TCP port opened, 0 to 65535.
	Port int
	// CIDR is the block of addresses the port is open to.
	CIDR string
}

func ingressValue(rules []Ingress) spec.Value {
	if rules == nil {
		return nil
	}
	out := make(spec.List, len(rules))
	for i, r := range rules {
		out[i] = spec.Map{"port": spec.Lit{V: float64(r.Port)}, "cidr": spec.Lit{V: r.CIDR}}
	}
	return out
}

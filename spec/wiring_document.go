package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The wiring keys of the document, as written. Like resources, they are
// syntax: an unknown key or an unknown tag decodes, and Compile reports it
// with everything else.

// InterfaceDoc is one entry of "interfaces".
type InterfaceDoc struct {
	// Hash, when written, must be the exports' content hash
	// (InterfaceHash): the SDK writes it, so that a hand edit shows.
	Hash    string               `json:"hash,omitempty"`
	Exports map[string]ExportDoc `json:"exports"`

	extra map[string]json.RawMessage
}

// ExportDoc is one export of an interface, as written.
type ExportDoc struct {
	Type string `json:"type"`
	// Lifecycle and Locality are a tag or a list of tags.
	Lifecycle Tags   `json:"lifecycle,omitempty"`
	Locality  Tags   `json:"locality,omitempty"`
	Secrecy   string `json:"secrecy,omitempty"`

	extra map[string]json.RawMessage
}

// Tags is one tag or a list of them; it is written as a string when it
// holds one.
type Tags []string

// MarshalJSON writes one tag as a string.
func (t Tags) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return marshal(t[0])
	}
	return marshal([]string(t))
}

// Provision is one entry of "provides".
type Provision struct {
	Interface string `json:"interface"`
	// Consumers is "one" or "many" (the default).
	Consumers string `json:"consumers,omitempty"`
	// Exports binds each export to a JSON tree: a literal,
	// {"observed": ADDR, "attribute": A} or {"secret": ADDR}.
	Exports map[string]any `json:"exports"`

	extra map[string]json.RawMessage
}

// Use is one entry of "uses".
type Use struct {
	Interface string `json:"interface"`
	// Reach is "one" (the default: the slot reads one capability) or
	// "all" (it reads a set of them, keyed by fleet and region).
	Reach    string        `json:"reach,omitempty"`
	Requires []Requirement `json:"requires,omitempty"`

	extra map[string]json.RawMessage
}

// Requirement is a predicate on a wired export, such as
// {"export": "version", "op": ">=", "value": 16}.
type Requirement struct {
	Export string `json:"export"`
	Op     string `json:"op"`
	Value  any    `json:"value"`
	// Severity is "require" (the default) or "want".
	Severity string `json:"severity,omitempty"`

	extra map[string]json.RawMessage
}

// MarshalJSON writes the unknown keys back.
func (x InterfaceDoc) MarshalJSON() ([]byte, error) {
	type plain InterfaceDoc
	return marshalWithExtra(plain(x), x.extra)
}

// MarshalJSON writes the unknown keys back.
func (x ExportDoc) MarshalJSON() ([]byte, error) {
	type plain ExportDoc
	return marshalWithExtra(plain(x), x.extra)
}

// MarshalJSON writes the unknown keys back.
func (x Provision) MarshalJSON() ([]byte, error) {
	type plain Provision
	return marshalWithExtra(plain(x), x.extra)
}

// MarshalJSON writes the unknown keys back.
func (x Use) MarshalJSON() ([]byte, error) {
	type plain Use
	return marshalWithExtra(plain(x), x.extra)
}

// MarshalJSON writes the unknown keys back.
func (x Requirement) MarshalJSON() ([]byte, error) {
	type plain Requirement
	return marshalWithExtra(plain(x), x.extra)
}

// MarshalJSON writes the unknown keys back, and a list wire (a reach-all
// slot's) as the list of its entries.
func (x Wire) MarshalJSON() ([]byte, error) {
	if x.List {
		// An empty list stays a list: null would read back as one object.
		return marshal(append([]Wire{}, x.Entries...))
	}
	type plain Wire
	return marshalWithExtra(plain(x), x.extra)
}

// UnmarshalJSON reads a wire as a published record keeps it: one object,
// or the list of a reach-all slot's entries.
func (x *Wire) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		*x = Wire{List: true}
		return json.Unmarshal(t, &x.Entries)
	}
	type plain Wire
	var p plain
	err := json.Unmarshal(b, &p)
	*x = Wire(p)
	return err
}

// named reads an object of named entries, each with entry.
func (r *reader) named(what, want string, entry func(name string) error) error {
	return r.object(func() string { return what }, want, entry)
}

func (r *reader) interfaces(doc *Document) error {
	return r.named(`"interfaces"`, "an object of interface name to interface", func(name string) error {
		var in InterfaceDoc
		what := fmt.Sprintf("interface %s", quoted(name))
		err := r.object(func() string { return what }, `an object with "hash" and "exports"`, func(key string) error {
			switch key {
			case "hash":
				var err error
				in.Hash, err = r.str(func() string { return `"hash" of ` + what }, "a string")
				return err
			case "exports":
				return r.object(func() string { return `"exports" of ` + what }, "an object of export name to export", func(e string) error {
					x, err := r.exportDoc(fmt.Sprintf("export %s of %s", quoted(e), what))
					if in.Exports == nil {
						in.Exports = map[string]ExportDoc{}
					}
					in.Exports[e] = x
					return err
				})
			}
			return r.unknown(&in.extra, key)
		})
		if doc.Interfaces == nil {
			doc.Interfaces = map[string]InterfaceDoc{}
		}
		doc.Interfaces[name] = in
		return err
	})
}

func (r *reader) exportDoc(what string) (ExportDoc, error) {
	var x ExportDoc
	err := r.object(func() string { return what }, `an object with "type", "lifecycle", "locality" and "secrecy"`, func(key string) error {
		var err error
		switch key {
		case "type":
			x.Type, err = r.str(func() string { return `"type" of ` + what }, "a string")
		case "secrecy":
			x.Secrecy, err = r.str(func() string { return `"secrecy" of ` + what }, "a string")
		case "lifecycle":
			x.Lifecycle, err = r.tags(`"lifecycle" of ` + what)
		case "locality":
			x.Locality, err = r.tags(`"locality" of ` + what)
		default:
			err = r.unknown(&x.extra, key)
		}
		return err
	})
	return x, err
}

// tags reads a tag or a list of tags.
func (r *reader) tags(what string) (Tags, error) {
	r.space()
	if r.i < len(r.data) && r.data[r.i] == '[' {
		var out Tags
		err := r.list(func() string { return what }, "a string or a list of strings", func(i int) error {
			s, err := r.str(func() string { return fmt.Sprintf("item %d of %s", i+1, what) }, "a string")
			out = append(out, s)
			return err
		})
		return out, err
	}
	s, err := r.str(func() string { return what }, "a string or a list of strings")
	if s == "" {
		return nil, err
	}
	return Tags{s}, err
}

func (r *reader) provides(doc *Document) error {
	return r.named(`"provides"`, "an object of capability name to capability", func(name string) error {
		var p Provision
		what := fmt.Sprintf("capability %s", quoted(name))
		err := r.object(func() string { return what }, `an object with "interface", "consumers" and "exports"`, func(key string) error {
			var err error
			switch key {
			case "interface":
				p.Interface, err = r.str(func() string { return `"interface" of ` + what }, "a string")
			case "consumers":
				p.Consumers, err = r.str(func() string { return `"consumers" of ` + what }, `"one" or "many"`)
			case "exports":
				err = r.object(func() string { return `"exports" of ` + what }, "an object of export name to binding", func(e string) error {
					v, err := r.value()
					if p.Exports == nil {
						p.Exports = map[string]any{}
					}
					p.Exports[e] = v
					return err
				})
			default:
				err = r.unknown(&p.extra, key)
			}
			return err
		})
		if doc.Provides == nil {
			doc.Provides = map[string]Provision{}
		}
		doc.Provides[name] = p
		return err
	})
}

func (r *reader) uses(doc *Document) error {
	return r.named(`"uses"`, "an object of slot name to use", func(name string) error {
		var u Use
		what := fmt.Sprintf("use %s", quoted(name))
		err := r.object(func() string { return what }, `an object with "interface", "reach" and "requires"`, func(key string) error {
			switch key {
			case "interface":
				var err error
				u.Interface, err = r.str(func() string { return `"interface" of ` + what }, "a string")
				return err
			case "reach":
				var err error
				u.Reach, err = r.str(func() string { return `"reach" of ` + what }, `"one" or "all"`)
				return err
			case "requires":
				return r.list(func() string { return `"requires" of ` + what }, "a list of requirements", func(i int) error {
					req, err := r.requirement(fmt.Sprintf("requirement %d of %s", i+1, what))
					u.Requires = append(u.Requires, req)
					return err
				})
			}
			return r.unknown(&u.extra, key)
		})
		if doc.Uses == nil {
			doc.Uses = map[string]Use{}
		}
		doc.Uses[name] = u
		return err
	})
}

func (r *reader) requirement(what string) (Requirement, error) {
	var q Requirement
	err := r.object(func() string { return what }, `an object with "export", "op", "value" and "severity"`, func(key string) error {
		var err error
		switch key {
		case "export":
			q.Export, err = r.str(func() string { return `"export" of ` + what }, "a string")
		case "op":
			q.Op, err = r.str(func() string { return `"op" of ` + what }, "a string")
		case "severity":
			q.Severity, err = r.str(func() string { return `"severity" of ` + what }, `"require" or "want"`)
		case "value":
			q.Value, err = r.value()
		default:
			err = r.unknown(&q.extra, key)
		}
		return err
	})
	return q, err
}

func (r *reader) wires(doc *Document) error {
	return r.named(`"wires"`, "an object of slot name to wire", func(name string) error {
		what := fmt.Sprintf("wire %s", quoted(name))
		var w Wire
		var err error
		r.space()
		if r.i < len(r.data) && r.data[r.i] == '[' {
			// A reach-all slot's wire: a list of capabilities.
			w.List = true
			err = r.list(func() string { return what }, "a list of wires", func(i int) error {
				e, err := r.wire(fmt.Sprintf("item %d of %s", i+1, what))
				w.Entries = append(w.Entries, e)
				return err
			})
		} else {
			w, err = r.wire(what)
		}
		if doc.Wires == nil {
			doc.Wires = map[string]Wire{}
		}
		doc.Wires[name] = w
		return err
	})
}

// wire reads one wire object: a fleet and the capability it provides.
func (r *reader) wire(what string) (Wire, error) {
	var w Wire
	err := r.object(func() string { return what }, `an object with "fleet", "provides" and "state", or, for a slot of reach all, a list of them`, func(key string) error {
		var err error
		switch key {
		case "fleet":
			w.Fleet, err = r.str(func() string { return `"fleet" of ` + what }, "a string")
		case "provides":
			w.Provides, err = r.str(func() string { return `"provides" of ` + what }, "a string")
		case "state":
			w.State, err = r.str(func() string { return `"state" of ` + what }, "a string")
		default:
			err = r.unknown(&w.extra, key)
		}
		return err
	})
	return w, err
}

func (r *reader) exposes(doc *Document) error {
	return r.list(func() string { return `"exposes"` }, "a list of capability names", func(i int) error {
		s, err := r.str(func() string { return fmt.Sprintf(`item %d of "exposes"`, i+1) }, "a string (a capability name)")
		doc.Exposes = append(doc.Exposes, s)
		return err
	})
}

package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// APIVersion is the version of the fleet document this build writes.
const APIVersion = "infra/v1"

// Document is the infra/v1 fleet document: what the SDK produces, what check
// validates, what a plan is computed from and what the executor receives. It
// is syntax: addresses and spec fields stay as written so that a broken
// document still decodes and every problem in it can be reported at once.
// Compile turns it into a Model.
type Document struct {
	APIVersion string              `json:"apiVersion"`
	Fleet      string              `json:"fleet"`
	Accounts   map[Provider]string `json:"accounts,omitempty"`
	Placement  map[Provider]string `json:"placement,omitempty"`
	Exclusions []Exclusion         `json:"exclusions,omitempty"`
	Resources  []Resource          `json:"resources"`
	Forget     []string            `json:"forget,omitempty"`
	// Adopt names declared resources that exist without any ownership mark
	// and that this fleet takes over: the plan adopts each, and apply tags
	// it and records it (what `infra import` writes; docs/import.md).
	Adopt []string `json:"adopt,omitempty"`

	// Wiring across fleets (docs/wiring.md).
	Interfaces map[string]InterfaceDoc `json:"interfaces,omitempty"`
	Provides   map[string]Provision    `json:"provides,omitempty"`
	Exposes    []string                `json:"exposes,omitempty"`
	Uses       map[string]Use          `json:"uses,omitempty"`
	Wires      map[string]Wire         `json:"wires,omitempty"`

	// Components says which component instance and member each resource
	// comes from (docs/components.md); the resources stay flat.
	Components map[string]ComponentInstance `json:"components,omitempty"`

	// extra holds top-level keys this build does not know, compacted.
	// Validate reports them rather than the decoder refusing them, so they
	// come out with every other problem; the encoder writes them back, so
	// decoding and encoding never loses what was written.
	extra map[string]json.RawMessage
}

// Exclusion names what must never be touched, and why.
type Exclusion struct {
	// Address is provider/kind/name; the name may end in * to match a prefix.
	Address string `json:"address"`
	Why     string `json:"why"`

	extra map[string]json.RawMessage
}

// Resource is one declared resource.
type Resource struct {
	Address string `json:"address"`
	// Region overrides the provider's placement for this resource.
	Region string `json:"region,omitempty"`
	// Spec holds the fields as JSON trees. An absent field is unknown: never
	// compared, never a reason to act.
	Spec map[string]any `json:"spec"`

	// extra holds keys other than address, region and spec, such as a
	// field written beside spec instead of inside it.
	extra map[string]json.RawMessage
}

var documentKeys = map[string]bool{
	"apiVersion": true, "fleet": true, "accounts": true, "placement": true,
	"exclusions": true, "resources": true, "forget": true, "adopt": true,
	"interfaces": true, "provides": true, "exposes": true, "uses": true, "wires": true,
	"components": true,
}

// DecodeDocument reads a fleet document. Only input that is not a JSON
// object at all, a known key whose JSON shape is wrong, a key written twice
// in one object, or objects and lists nested more than MaxDepth deep, is an
// error, a *DecodeError with the line and column; every other problem is
// left for Validate to report with the rest. A leading UTF-8 byte order
// mark is skipped.
func DecodeDocument(data []byte) (*Document, error) {
	doc, err := readDocument(data)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) && de.Syntax {
			return nil, fmt.Errorf("the fleet document is not valid JSON: %w", err)
		}
		return nil, err
	}
	// The encoder writes no resources as [] and leaves out empty optional
	// keys, so decode absent, null and empty alike: decoding what the
	// encoder wrote must give the same value.
	if doc.Resources == nil {
		doc.Resources = []Resource{}
	}
	if len(doc.Accounts) == 0 {
		doc.Accounts = nil
	}
	if len(doc.Placement) == 0 {
		doc.Placement = nil
	}
	if len(doc.Exclusions) == 0 {
		doc.Exclusions = nil
	}
	if len(doc.Forget) == 0 {
		doc.Forget = nil
	}
	if len(doc.Adopt) == 0 {
		doc.Adopt = nil
	}
	return doc, nil
}

// EncodeDocument writes the document as indented JSON with sorted object
// keys, so the same document always gives the same bytes.
func EncodeDocument(doc *Document) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// MarshalJSON writes resources as an empty list rather than null, and the
// unknown keys back.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document
	p := plain(d)
	if p.Resources == nil {
		p.Resources = []Resource{}
	}
	return marshalWithExtra(p, d.extra)
}

// MarshalJSON writes an empty spec as {} rather than null, and the unknown
// keys back.
func (r Resource) MarshalJSON() ([]byte, error) {
	type plain Resource
	p := plain(r)
	if p.Spec == nil {
		p.Spec = map[string]any{}
	}
	return marshalWithExtra(p, r.extra)
}

// UnmarshalJSON reads a resource as DecodeDocument does, keeping the keys
// a resource does not have, for Validate.
func (r *Resource) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(rd *reader) error {
		var err error
		*r, err = rd.resource(0)
		return err
	})
}

// MarshalJSON writes the unknown keys back.
func (x Exclusion) MarshalJSON() ([]byte, error) {
	type plain Exclusion
	return marshalWithExtra(plain(x), x.extra)
}

// UnmarshalJSON reads an exclusion as DecodeDocument does, keeping the
// keys an exclusion does not have, for Validate.
func (x *Exclusion) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(rd *reader) error {
		var err error
		*x, err = rd.exclusion(0)
		return err
	})
}

// UnknownKeys returns the top-level keys this build did not recognise,
// sorted.
func (d *Document) UnknownKeys() []string { return sortedKeys(d.extra) }

// UnknownKeys returns the keys of the resource other than address, region
// and spec, sorted.
func (r *Resource) UnknownKeys() []string { return sortedKeys(r.extra) }

// UnknownKeys returns the keys of the exclusion other than address and why,
// sorted.
func (x *Exclusion) UnknownKeys() []string { return sortedKeys(x.extra) }

// addExtra stores an unknown key's value compacted, so that a document
// decoded from indented and from compact JSON holds the same bytes.
func addExtra(m map[string]json.RawMessage, k string, v json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		// v came out of a successful decode, so it is valid JSON.
		buf.Reset()
		buf.Write(v)
	}
	m[k] = buf.Bytes()
	return m
}

// marshalWithExtra marshals v, then adds the unknown keys it was decoded
// with. Known keys win: an unknown key never shadows one this build writes.
func marshalWithExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, x := range extra {
		if _, known := all[k]; !known {
			all[k] = x
		}
	}
	return marshal(all)
}

// marshal is json.Marshal without HTML escaping: a document is not HTML,
// and "a&b" should stay readable in a tag value. The outer encoder's
// SetEscapeHTML does not reach inside a MarshalJSON method.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Lookup returns the declared resource with the given address text.
func (d *Document) Lookup(addr string) (*Resource, bool) {
	for i := range d.Resources {
		if d.Resources[i].Address == addr {
			return &d.Resources[i], true
		}
	}
	return nil, false
}

// ProvidersUsed returns the providers the document declares resources for or
// names an account for, sorted.
func (d *Document) ProvidersUsed() []Provider {
	seen := map[Provider]bool{}
	for _, r := range d.Resources {
		if a, err := ParseAddress(r.Address); err == nil && a.Provider.Known() {
			seen[a.Provider] = true
		}
	}
	for p := range d.Accounts {
		if p.Known() {
			seen[p] = true
		}
	}
	out := make([]Provider, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

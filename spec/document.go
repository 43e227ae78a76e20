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

	// unknown holds top-level keys this build does not know, reported by
	// Validate rather than refused by the decoder.
	unknown []string
}

// Exclusion names what must never be touched, and why.
type Exclusion struct {
	// Address is provider/kind/name; the name may end in * to match a prefix.
	Address string `json:"address"`
	Why     string `json:"why"`
}

// Resource is one declared resource.
type Resource struct {
	Address string `json:"address"`
	// Region overrides the provider's placement for this resource.
	Region string `json:"region,omitempty"`
	// Spec holds the fields as JSON trees. An absent field is unknown: never
	// compared, never a reason to act.
	Spec map[string]any `json:"spec"`
}

var documentKeys = map[string]bool{
	"apiVersion": true, "fleet": true, "accounts": true, "placement": true,
	"exclusions": true, "resources": true, "forget": true,
}

// DecodeDocument reads a fleet document. Only input that is not a JSON object
// at all, or whose known keys have the wrong JSON shape, is an error; every
// other problem is left for Validate to report with the rest.
func DecodeDocument(data []byte) (*Document, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("the fleet document is not valid JSON: %w", jsonPosition(data, err))
	}
	if top == nil {
		return nil, errors.New("the fleet document is not a JSON object")
	}
	var doc Document
	for _, k := range sortedKeys(top) {
		if !documentKeys[k] {
			doc.unknown = append(doc.unknown, k)
		}
	}
	// Decode the known keys one by one so the error names the key.
	fields := []struct {
		key string
		dst any
	}{
		{"apiVersion", &doc.APIVersion}, {"fleet", &doc.Fleet}, {"accounts", &doc.Accounts},
		{"placement", &doc.Placement}, {"exclusions", &doc.Exclusions},
		{"resources", &doc.Resources}, {"forget", &doc.Forget},
	}
	for _, f := range fields {
		raw, ok := top[f.key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return nil, fmt.Errorf("the fleet document's %q has the wrong shape: %w", f.key, err)
		}
	}
	return &doc, nil
}

// jsonPosition adds line and column to a syntax error.
func jsonPosition(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	line := 1 + bytes.Count(data[:se.Offset], []byte("\n"))
	col := int(se.Offset) - bytes.LastIndexByte(data[:se.Offset], '\n') - 1
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
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

// MarshalJSON writes resources as an empty list rather than null.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document
	p := plain(d)
	if p.Resources == nil {
		p.Resources = []Resource{}
	}
	return json.Marshal(p)
}

// MarshalJSON writes an empty spec as {} rather than null.
func (r Resource) MarshalJSON() ([]byte, error) {
	type plain Resource
	p := plain(r)
	if p.Spec == nil {
		p.Spec = map[string]any{}
	}
	return json.Marshal(p)
}

// UnknownKeys returns the top-level keys this build did not recognise.
func (d *Document) UnknownKeys() []string { return append([]string(nil), d.unknown...) }

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

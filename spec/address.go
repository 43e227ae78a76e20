// Package spec is the pure data of infra: providers, kinds, per-field
// metadata, the values and expressions a field may hold, the infra/v1 fleet
// document and its validation. It does no I/O.
package spec

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Provider names a cloud.
type Provider string

const (
	AWS      Provider = "aws"
	Scaleway Provider = "scaleway"
	GCP      Provider = "gcp"
)

// Providers lists every provider this build knows, in a stable order.
var Providers = []Provider{AWS, Scaleway, GCP}

// Known reports whether p is a provider this build knows.
func (p Provider) Known() bool {
	for _, q := range Providers {
		if p == q {
			return true
		}
	}
	return false
}

// Address names a resource everywhere: plan rows, ledger rows, diagnostics,
// comments and logs. Its text form is provider/kind/name.
type Address struct {
	Provider Provider
	Kind     Kind
	Name     string
}

func (a Address) String() string {
	return string(a.Provider) + "/" + string(a.Kind) + "/" + a.Name
}

// IsZero reports whether a is the zero address.
func (a Address) IsZero() bool { return a == Address{} }

// Less orders addresses by their text form, which is the order every sorted
// output (ledger, diagnostics, plan ties) uses.
func (a Address) Less(b Address) bool { return a.Compare(b) < 0 }

// Compare is -1, 0 or +1 as a's text form sorts before, with or after b's.
// It builds neither text on the heap: sorting and searching a ledger
// compare addresses millions of times at 10,000 rows.
func (a Address) Compare(b Address) int {
	var x, y [128]byte
	return bytes.Compare(a.appendText(x[:0]), b.appendText(y[:0]))
}

func (a Address) appendText(buf []byte) []byte {
	buf = append(buf, a.Provider...)
	buf = append(buf, '/')
	buf = append(buf, a.Kind...)
	buf = append(buf, '/')
	return append(buf, a.Name...)
}

// ParseAddress parses provider/kind/name. It checks the shape only; whether
// the provider and kind are known is Validate's business, so that a document
// with an unknown kind still gets one clear row instead of a parse error.
func ParseAddress(s string) (Address, error) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Address{}, fmt.Errorf("address %q: want provider/kind/name", s)
	}
	if strings.Contains(parts[2], "/") {
		return Address{}, fmt.Errorf("address %q: a name may not contain '/'", s)
	}
	return Address{Provider: Provider(parts[0]), Kind: Kind(parts[1]), Name: parts[2]}, nil
}

// MarshalText makes an Address usable as a JSON string and map key.
func (a Address) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses the text form.
func (a *Address) UnmarshalText(b []byte) error {
	p, err := ParseAddress(string(b))
	if err != nil {
		return err
	}
	*a = p
	return nil
}

// SortedAddresses is as sorted by text form, without repeats: the form a
// set of addresses given on a command line takes in a plan, so that the
// same set in any order is the same plan.
func SortedAddresses(as []Address) []Address {
	if len(as) == 0 {
		return nil
	}
	out := slices.Clone(as)
	slices.SortFunc(out, func(x, y Address) int { return strings.Compare(x.String(), y.String()) })
	return slices.Compact(out)
}

// Package sdk is the narrow door between package fleet and the cloud
// packages (fleet/aws, fleet/scaleway). The cloud packages must create
// handles and expressions whose insides a fleet program cannot touch; Go has
// no "friend" packages, so fleet fills in these function values at init and
// the cloud packages call them. Being internal, nothing outside fleet/... can
// reach them, which keeps the typed constructors the only way in.
package sdk

import "github.com/infra-iac/infra/spec"

// Field is one spec field as a cloud package hands it over: the Go value the
// author wrote (a literal, a fleet type such as fleet.Optional, or an
// already built spec.Value). Package fleet interprets it; an unset optional
// is dropped, so it stays unknown in the document.
type Field struct {
	Name  string
	Value any
}

// OptionalRef is the value of an optional reference field (a spec
// struct's): nil, the field unset, for a zero handle, which there is how
// a program leaves it out, or for a nil fleet.RefField; else the value (a
// handle, or another fleet's export made one with fleet.RefFrom). A zero
// handle where a reference is required stays an error.
func OptionalRef(v any) any {
	if r, isHandle := v.(interface{ Address() spec.Address }); isHandle && r.Address().IsZero() {
		return nil
	}
	return v
}

// Decl is one resource to declare.
type Decl struct {
	Provider spec.Provider
	Kind     spec.Kind
	Name     string
	// Region is the written region ("" means the provider's placement).
	Region string
	Fields []Field
}

// These are set by package fleet's init, which always runs before any
// cloud package's code because every cloud package imports fleet.
var (
	// Declare adds d to f (a *fleet.Fleet, possibly nil) and points ref (a
	// *fleet.Ref[K]) at it.
	Declare func(f any, ref any, d Decl)
	// Use records the account and default region of provider p in f.
	Use func(f any, p spec.Provider, account, region string)
	// Observe points out (a *fleet.Output[T]) at attribute attr of the
	// resource at of, known after that resource is applied.
	Observe func(out any, of spec.Address, attr string)
	// SecretValue points out (a *fleet.SecretValue) at the value of the
	// secret at of.
	SecretValue func(out any, of spec.Address)
	// SecretRef points out (a *fleet.SecretExport) at the reference of the
	// secret at of, to publish through a capability.
	SecretRef func(out any, of spec.Address)
	// LiteralOf returns the string a *fleet.Output[string] holds when it is
	// a literal (fleet.Lit), so a cloud package can write it into a value
	// of its own; false for one known only after apply.
	LiteralOf func(out any) (string, bool)
	// Refuse adds problems to out (a *fleet.Output[T]): mistakes a cloud
	// package found in a value it built, reported at the resource whose
	// field holds it.
	Refuse func(out any, problems []string)
)

// AnyMap turns a typed map into map[string]any so package fleet can
// interpret each value; a nil map stays nil, which means unset.
func AnyMap[V any](m map[string]V) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

package fleet

import (
	"fmt"
	"maps"
	"slices"

	"github.com/infra-iac/infra/fleet/internal/sdk"
	"github.com/infra-iac/infra/spec"
)

// Fleet is a fleet being declared: its name, the account and default region
// of each cloud it uses, its resources, exclusions and forgets. Build one
// with New, add resources with a cloud package's constructors, and turn it
// into the infra/v1 document with Synth (or hand it to Main).
//
// A Fleet records an author's mistakes as diagnostics instead of panicking;
// every method is safe on a nil *Fleet, which declares nothing. It is not
// safe for concurrent use.
type Fleet struct {
	name       string
	accounts   map[spec.Provider]string
	placement  map[spec.Provider]string
	exclusions []spec.Exclusion
	forget     []string
	adopt      []string
	resources  []spec.Resource
	// The wiring (wiring.go): what the fleet provides and uses.
	interfaces map[string]spec.InterfaceDoc
	provides   map[string]spec.Provision
	exposes    []string
	uses       map[string]spec.Use
	wires      map[string]spec.Wire
	// components are the instances (compose.go), for the document's map.
	components map[string]spec.ComponentInstance
	// scope is set on the fleet a component's receive half declares
	// through (Body.Fleet): its declarations go to the real fleet.
	scope *bodyScope
	// diags are the problems only the SDK can see, because the document
	// cannot carry them (a zero Ref has no address to write). Everything the
	// document can carry is left to spec.Validate, so a problem is reported
	// once and in the same words as `infra check`.
	diags []spec.Diagnostic
}

// New starts a fleet. The name is the ownership tag's value on everything
// the fleet creates, so renaming a fleet makes its resources foreign; it is
// 1–63 characters of a-z, 0-9, '-' and '_', starting with a letter
// (checked by Synth).
func New(name string) *Fleet {
	return &Fleet{name: name, accounts: map[spec.Provider]string{}, placement: map[spec.Provider]string{}}
}

// Name returns the fleet's name.
func (f *Fleet) Name() string {
	if f == nil {
		return ""
	}
	return f.name
}

// Forget releases the resource of kind K called name from the fleet's
// ledger without touching the cloud: after the next apply infra no longer
// manages it. Forgetting a resource the fleet still declares is an error
// (reported by Synth), since the two contradict each other.
//
//	fleet.Forget[aws.Queues](f, "old-jobs")
func Forget[K Kind](f *Fleet, name string) {
	if f.inBody("fleet.Forget") {
		return
	}
	f.forget = append(f.forget, addressOf[K](name).String())
}

// Adopt takes over the resource of kind K called name, which the fleet
// declares and which exists in the cloud without any ownership mark: the
// next plan adopts it, and apply writes the mark and records it. A
// resource another fleet's mark claims is never taken; one that does not
// exist is an error, never a create. `infra import` writes these calls
// beside the declarations it generates.
//
//	fleet.Adopt[aws.Queues](f, "mail")
func Adopt[K Kind](f *Fleet, name string) {
	if f.inBody("fleet.Adopt") {
		return
	}
	f.adopt = append(f.adopt, addressOf[K](name).String())
}

// Exclude names resources of kind K that infra must never touch, whoever
// owns them, and says why. A name ending in * covers every name with that
// prefix. An exclusion without a reason is an error (reported by Synth).
//
//	fleet.Exclude[aws.ObjectStore](f, "legacy-*", "owned by the data team")
func Exclude[K Kind](f *Fleet, name, why string) {
	if f.inBody("fleet.Exclude") {
		return
	}
	f.exclusions = append(f.exclusions, spec.Exclusion{Address: addressOf[K](name).String(), Why: why})
}

// Synth returns the fleet's infra/v1 document and every problem with it:
// the SDK's own rows and those of spec.Validate (what `infra check` reports),
// merged and sorted. The document is returned even when there are errors,
// so that all of them can be shown at once.
func (f *Fleet) Synth() (*spec.Document, []spec.Diagnostic) {
	doc, own := f.document()
	return doc, mergeDiagnostics(own, spec.Validate(doc))
}

// document builds the document and returns the SDK-only rows.
func (f *Fleet) document() (*spec.Document, []spec.Diagnostic) {
	if f == nil {
		return &spec.Document{APIVersion: spec.APIVersion},
			[]spec.Diagnostic{spec.Errorf(spec.RowNoFleet, "fleet", "make one with fleet.New", "no fleet (a nil *fleet.Fleet)")}
	}
	doc := &spec.Document{
		APIVersion: spec.APIVersion,
		Fleet:      f.name,
		Resources:  make([]spec.Resource, len(f.resources)),
	}
	// Copies, so that a caller who edits the document cannot change the
	// fleet, and a later declaration cannot change a returned document.
	if len(f.accounts) > 0 {
		doc.Accounts = copyProviderMap(f.accounts)
	}
	if len(f.placement) > 0 {
		doc.Placement = copyProviderMap(f.placement)
	}
	doc.Exclusions = append([]spec.Exclusion(nil), f.exclusions...)
	doc.Forget = append([]string(nil), f.forget...)
	doc.Adopt = append([]string(nil), f.adopt...)
	f.wiringDocument(doc)
	if len(f.components) > 0 {
		doc.Components = maps.Clone(f.components)
	}
	for i, r := range f.resources {
		s := make(map[string]any, len(r.Spec))
		for k, v := range r.Spec {
			s[k] = v
		}
		doc.Resources[i] = spec.Resource{Address: r.Address, Region: r.Region, Spec: s}
	}
	return doc, append([]spec.Diagnostic(nil), f.diags...)
}

func copyProviderMap(m map[spec.Provider]string) map[spec.Provider]string {
	out := make(map[spec.Provider]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mergeDiagnostics(a, b []spec.Diagnostic) []spec.Diagnostic {
	out := make([]spec.Diagnostic, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	return spec.SortDiagnostics(out)
}

// declare is sdk.Declare: it adds a resource and points ref at it.
func (f *Fleet) declare(ref any, d sdk.Decl) {
	addr := spec.Address{Provider: d.Provider, Kind: d.Kind, Name: d.Name}
	if r, ok := ref.(interface{ setAddress(spec.Address) }); ok {
		r.setAddress(addr)
	}
	if f == nil {
		return
	}
	if f.scope != nil {
		f.scope.declare(ref, d)
		return
	}
	where := addr.String()
	res := spec.Resource{Address: where, Region: d.Region, Spec: make(map[string]any, len(d.Fields))}
	for _, field := range d.Fields {
		v, set, problems := value(field.Value)
		for _, p := range problems {
			f.diags = append(f.diags, spec.Errorf(spec.RowInvalidValue, where, "", "field %q: %s", field.Name, p))
		}
		if set {
			res.Spec[field.Name] = spec.Encode(v)
		}
	}
	f.resources = append(f.resources, res)
}

// use is sdk.Use: it records a cloud's account and default region. Saying
// it twice the same way is harmless; saying it two ways is an error, since
// the document holds one of each per cloud.
func (f *Fleet) use(p spec.Provider, account, region string) {
	if f == nil {
		return
	}
	if f.scope != nil {
		if account != "" || region != "" {
			f.scope.root.diags = append(f.scope.root.diags, spec.Errorf(spec.RowComponentBodyWiring, "components."+f.scope.in.name,
				`give "" for both: the fleet chooses its accounts, and fleet.Place places a member`, "a component's receive half gives %s an account or a region", p))
		}
		return
	}
	f.setOnce(f.accounts, "accounts."+string(p), string(p)+" account", p, account)
	f.setOnce(f.placement, "placement."+string(p), string(p)+" placement", p, region)
}

func (f *Fleet) setOnce(m map[spec.Provider]string, where, what string, p spec.Provider, v string) {
	if v == "" {
		return
	}
	if old, ok := m[p]; ok && old != v {
		f.diags = append(f.diags, spec.Errorf(spec.RowGivenTwice, where, "a fleet has one account and one default region per cloud; place single resources elsewhere with In",
			"%s given twice: %q and %q", what, old, v).WithEvidence(old))
		return
	}
	m[p] = v
}

// value turns what a cloud package handed over into a spec.Value.
func value(x any) (spec.Value, bool, []string) {
	switch v := x.(type) {
	case nil:
		return nil, false, nil
	case spec.Value:
		return v, true, nil
	case valuer:
		return v.specValue()
	case string, bool, int, float64:
		lit, p := literal(v)
		if p != "" {
			return nil, false, []string{p}
		}
		return lit, true, nil
	case []string:
		if v == nil {
			return nil, false, nil
		}
		out := make(spec.List, len(v))
		for i, s := range v {
			out[i] = spec.Lit{V: s}
		}
		return out, true, nil
	case map[string]string:
		if v == nil {
			return nil, false, nil
		}
		if set, problems, isSet := tagsSet(v); isSet {
			return set, set != nil, problems // SlotAll.EachTags: the whole field
		}
		out := make(spec.Map, len(v))
		for k, s := range v {
			out[k] = spec.Lit{V: s}
		}
		return out, true, nil
	case map[string]any:
		if v == nil {
			return nil, false, nil
		}
		out := make(spec.Map, len(v))
		var problems []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if v[k] == nil {
				problems = append(problems, fmt.Sprintf("%q: nil", k))
				continue
			}
			w, set, p := value(v[k])
			for _, s := range p {
				problems = append(problems, fmt.Sprintf("%q: %s", k, s))
			}
			if set {
				out[k] = w
			}
		}
		return out, true, problems
	}
	// Only a cloud package can get here, and only through a bug in it.
	return nil, false, []string{fmt.Sprintf("the SDK cannot write a %T (a bug in infra: please report it)", x)}
}

func init() {
	sdk.Declare = func(f any, ref any, d sdk.Decl) {
		fl, _ := f.(*Fleet)
		fl.declare(ref, d)
	}
	sdk.Use = func(f any, p spec.Provider, account, region string) {
		fl, _ := f.(*Fleet)
		fl.use(p, account, region)
	}
	sdk.Observe = func(out any, of spec.Address, attr string) {
		o, ok := out.(interface{ setExpr(spec.Value, []string) })
		if !ok {
			return
		}
		if of.IsZero() {
			o.setExpr(nil, []string{"reads " + attr + " of a resource never declared: " + zeroRef})
			return
		}
		o.setExpr(spec.Observed{Of: of, Attribute: attr}, nil)
	}
	sdk.SecretValue = pointAtSecret("the value")
	sdk.SecretRef = pointAtSecret("the reference")
	sdk.LiteralOf = func(out any) (string, bool) {
		o, ok := out.(*Output[string])
		if !ok || o == nil {
			return "", false
		}
		lit, isLit := o.v.(spec.Lit)
		s, isStr := lit.V.(string)
		return s, isLit && isStr && len(o.problems) == 0
	}
	sdk.Refuse = func(out any, problems []string) {
		if o, ok := out.(interface{ refuse([]string) }); ok {
			o.refuse(problems)
		}
	}
}

// pointAtSecret is sdk.SecretValue or sdk.SecretRef: it points out (a
// *SecretValue or a *SecretExport) at the secret at of; what names what is
// read of it, for the problem of a zero Ref.
func pointAtSecret(what string) func(out any, of spec.Address) {
	return func(out any, of spec.Address) {
		s, ok := out.(interface {
			setSecret(spec.Address, []string)
		})
		if !ok {
			return
		}
		if of.IsZero() {
			s.setSecret(of, []string{what + " of a secret never declared: " + zeroRef})
			return
		}
		s.setSecret(of, nil)
	}
}

// inBody reports whether f is nil or a component's receive half's view of
// a fleet, where only resources are declared; the latter is a row.
func (f *Fleet) inBody(what string) bool {
	if f == nil {
		return true
	}
	if f.scope != nil {
		f.scope.root.diags = append(f.scope.root.diags, bodyWiringRow(what))
		return true
	}
	return false
}

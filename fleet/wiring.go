package fleet

import (
	"fmt"
	"reflect"

	"github.com/infra-iac/infra/spec"
)

// Wiring across fleets (docs/sdk.md#wiring-fleets-together). An interface
// is a Go struct type whose fields are its exports, defined once in a
// package that both the providing and the consuming fleet import:
//
//	type Exports struct {
//		Endpoint fleet.Output[string]
//		Password fleet.SecretExport
//	}
//
//	var Database = fleet.DefineInterface("postgres-database", Exports{
//		Endpoint: fleet.NewExport[string]("endpoint", fleet.AfterApply, fleet.RegionLocal),
//		Password: fleet.NewSecretExport("password", fleet.AfterApply, fleet.AccountLocal),
//	})
//
// The same struct type serves both sides. A provider fills it with values
// of its own fleet (fleet.Provide), so an export it forgets is a row and an
// export of the wrong Go type does not compile; a consumer gets it back from
// its slot (fleet.Use(…).Exports()), each field reading the wired export, so
// a misspelled export does not compile either.

// ExportValue is the Go type of an export that is not secret: string, int
// or float64 (number), bool, or a slice of one of them.
type ExportValue interface {
	string | int | float64 | bool | []string | []int | []float64 | []bool
}

// Lifecycle is a set of moments an export's value may be known at: the
// bound a provider's binding must fall within. Combine them with |.
type Lifecycle uint8

const (
	// AtPlan: known from the document alone (a name, a literal).
	AtPlan Lifecycle = 1 << iota
	// AfterApply: known once the provider has applied (an endpoint).
	AfterApply
	// Observed: may change out of band (an auto-assigned address).
	Observed
)

// Locality is a set of places an export's value may be used in: the bound a
// provider's binding must fall within. Combine them with |.
type Locality uint8

const (
	// Global: the value means the same everywhere (a literal).
	Global Locality = 1 << iota
	// AccountLocal: the value is usable in the provider's account (a
	// secret's reference).
	AccountLocal
	// RegionLocal: the value is usable in the provider's region (an
	// endpoint).
	RegionLocal
)

var lifecycleTags = []struct {
	bit Lifecycle
	tag spec.Lifecycle
}{{AtPlan, spec.LifecyclePlan}, {AfterApply, spec.LifecycleApply}, {Observed, spec.LifecycleObserved}}

var localityTags = []struct {
	bit Locality
	tag spec.ExportLocality
}{{Global, spec.LocalityGlobal}, {AccountLocal, spec.LocalityAccount}, {RegionLocal, spec.LocalityRegion}}

// exportDef is one export's definition, as NewExport or NewSecretExport
// wrote it; iface is set by DefineInterface.
type exportDef struct {
	iface     string
	name      string
	typ       spec.ExportType
	lifecycle Lifecycle
	locality  Locality
	// secret: a value of type typ that travels as a reference to a secret
	// ("secrecy": "secret"); implied by the type secret.
	secret bool
}

// unread is the problem of a definition used as a value.
func (d *exportDef) unread() string {
	return fmt.Sprintf("export %q of interface %q is the interface's definition, not a value: read it through a slot, fleet.Use(f, SLOT, interface).Exports()", d.name, d.iface)
}

// NewExport defines an export of type T for DefineInterface: its name in
// the document, when its value may be known (lifecycle) and where it may be
// used (locality). Both bounds are parameters, so neither can be left out;
// a provider's binding must fall within them, which check verifies.
//
//	fleet.NewExport[string]("endpoint", fleet.AfterApply, fleet.RegionLocal)
func NewExport[T ExportValue](name string, lifecycle Lifecycle, locality Locality) Output[T] {
	var zero T
	return Output[T]{export: &exportDef{name: name, typ: exportTypeOf(any(zero)), lifecycle: lifecycle, locality: locality}}
}

// NewSecretExport defines a secret export for DefineInterface: its value
// travels as a reference to a secret (an ARN or an id), never as its
// bytes.
func NewSecretExport(name string, lifecycle Lifecycle, locality Locality) SecretExport {
	return SecretExport{export: &exportDef{name: name, typ: spec.ExportSecret, lifecycle: lifecycle, locality: locality, secret: true}}
}

// NewSecretStringExport defines a string export whose secrecy is secret
// ("type": "string", "secrecy": "secret"): a string such as a connection
// URL that travels, like a secret export, as a reference to a secret of
// the provider's, never as its bytes. It is a SecretExport on both sides:
// the provider binds it to one of its secrets (aws.SecretRefOf), and a
// consumer reads it only where a secret is taken (Composed, or a
// SecretField through SecretFrom).
//
//	fleet.NewSecretStringExport("url", fleet.AfterApply, fleet.AccountLocal)
func NewSecretStringExport(name string, lifecycle Lifecycle, locality Locality) SecretExport {
	return SecretExport{export: &exportDef{name: name, typ: spec.ExportString, lifecycle: lifecycle, locality: locality, secret: true}}
}

// Raise binds a public string export (an Output[string] field of the
// interface) to one of the provider's secrets, s made by aws.SecretRefOf
// or scaleway.SecretRefOf: the provider raises the export's secrecy, and
// publishes the secret's reference instead of a value ({"secret": ADDR}).
// Only a string export can be raised: a secret holds a string.
//
//	URL: fleet.Raise(aws.SecretRefOf(url)),
//
// The interface still says public, so a consumer's Go type is an
// Output[string] and nothing stops it from reading the export in a plain
// field. What it gets is decided by the provider's published record, which
// says secret: its plan never shows the value, and its apply reads the
// secret's value from the provider's account and hands it to the field,
// so a plain field (an environment variable, a tag) then holds the
// secret's bytes in clear. Raise an export only when its consumers read it
// where a secret is taken (Composed); to make that a compile error for
// every consumer, define the export with NewSecretStringExport instead.
//
// The result is a binding, accepted only as an export of Provide: in a
// field, in Format or in Composed it is reported.
func Raise(s SecretExport) Output[string] {
	switch v := s.v.(type) {
	case spec.SecretRef:
		return Output[string]{v: v, problems: s.problems}
	case nil:
		if len(s.problems) > 0 {
			return Output[string]{problems: s.problems}
		}
	}
	return Output[string]{problems: []string{"fleet.Raise takes one of this fleet's secrets, made by aws.SecretRefOf or scaleway.SecretRefOf"}}
}

// raisedProblem is the problem of a raised binding used as a value.
func raisedProblem(r spec.SecretRef) string {
	return fmt.Sprintf("fleet.Raise(%s) binds an export of fleet.Provide, and is not a value: compose this fleet's own secret with SecretValueOf", r.Of)
}

func exportTypeOf(x any) spec.ExportType {
	switch x.(type) {
	case string:
		return spec.ExportString
	case int, float64:
		return spec.ExportNumber
	case bool:
		return spec.ExportBool
	case []string:
		return spec.ExportStringList
	case []int, []float64:
		return spec.ExportNumberList
	case []bool:
		return spec.ExportBoolList
	}
	return ""
}

// LitList lifts a list known now into an Output, to bind a list export.
func LitList[T string | int | float64 | bool](vs ...T) Output[[]T] {
	out := make(spec.List, len(vs))
	for i, v := range vs {
		out[i], _ = literal(any(v))
	}
	return Output[[]T]{v: out}
}

// SecretExport is a secret export of an interface (NewSecretExport), or a
// string export whose secrecy is secret (NewSecretStringExport). On the
// provider's side
// it is bound to one of the fleet's secrets (aws.SecretRefOf,
// scaleway.SecretRefOf), published as the secret's reference; on the
// consumer's side it reads the wired reference. It is accepted only by
// Composed and, read through a slot, by a field that takes a secret
// (SecretFrom: masterPasswordSecret, secretEnv): it is not an Output and
// not an Arg, so it cannot reach a plain field, an Env or Format. Printing
// one shows "(sensitive)".
type SecretExport struct {
	v        spec.Value
	problems []string
	export   *exportDef
	// inFleet: read through a component slot bound to a sibling member,
	// so v is this fleet's own secret (spec.SecretRef): Composed reads its
	// value and a secret field refers to it.
	inFleet bool
}

func (s *SecretExport) setSecret(of spec.Address, problems []string) {
	s.v, s.problems = spec.SecretRef{Of: of}, problems
}

func (s SecretExport) secretArg() (spec.Value, []string) {
	switch v := s.v.(type) {
	case nil:
		if len(s.problems) > 0 {
			return nil, s.problems
		}
		if s.export != nil {
			return nil, []string{s.export.unread()}
		}
		return nil, []string{"an unset fleet.SecretExport"}
	case spec.SecretRef:
		if s.inFleet {
			return spec.SecretValue{Of: v.Of}, s.problems
		}
		return nil, []string{fmt.Sprintf("the reference of %s is what a capability publishes, not a value: compose this fleet's own secret with SecretValueOf", v.Of)}
	}
	return s.v, s.problems
}

// fieldValue is a slot's secret export in a SecretField: the field reads
// the provider's secret by its reference ({"use": SLOT, "export": E}).
// Which cloud holds that secret is the provider's business, not this
// fleet's: spec and the engine read it with this fleet's credentials for
// the export's provider, so the field's cloud does not bound it here. A
// provider's own binding (aws.SecretRefOf) and an interface's definition
// are not what the field reads, and are reported.
func (s SecretExport) fieldValue() (spec.Value, bool, []string) {
	switch v := s.v.(type) {
	case spec.Import:
		v.SecretField = true
		return v, true, s.problems
	case spec.SecretRef:
		if s.inFleet {
			return spec.Ref{To: v.Of}, true, s.problems
		}
		return nil, false, []string{fmt.Sprintf("%s.SecretRefOf(%s) binds an export of fleet.Provide, and is not a value: give the secret's handle (the fleet.Ref) itself, or a slot's secret export", v.Of.Provider, v.Of)}
	case nil:
		switch {
		case len(s.problems) > 0:
			return nil, false, s.problems
		case s.export != nil:
			return nil, false, []string{s.export.unread()}
		}
		return nil, false, []string{"an unset fleet.SecretExport"}
	}
	return nil, false, []string{fmt.Sprintf("the SDK cannot write a %T in a secret field (a bug in infra: please report it)", s.v)}
}

// Format prints "(sensitive)": a secret is never shown.
func (s SecretExport) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(spec.Redacted)) }

// exportField is what every field of an interface's struct is: an
// Output[T] or a SecretExport.
type exportField interface {
	definition() *exportDef
	setDefinition(*exportDef)
	// readFrom makes the field read its export through slot.
	readFrom(slot string)
	// binding is the field's value as a provider bound it.
	binding() (v spec.Value, set bool, problems []string)
	// global: the provider narrowed the binding to global (Anywhere).
	global() bool
}

func (o *Output[T]) global() bool               { return o.anywhere }
func (s *SecretExport) global() bool            { return false }
func (o *Output[T]) definition() *exportDef     { return o.export }
func (o *Output[T]) setDefinition(d *exportDef) { o.export = d }
func (o *Output[T]) readFrom(slot string) {
	o.v, o.problems = spec.Import{Slot: slot, Export: o.export.name}, nil
}
func (o *Output[T]) binding() (spec.Value, bool, []string) {
	if r, raised := o.v.(spec.SecretRef); raised {
		return r, true, o.problems
	}
	return o.specValue()
}

func (s *SecretExport) definition() *exportDef     { return s.export }
func (s *SecretExport) setDefinition(d *exportDef) { s.export = d }
func (s *SecretExport) readFrom(slot string) {
	s.v, s.problems = spec.Import{Slot: slot, Export: s.export.name}, nil
}
func (s *SecretExport) binding() (spec.Value, bool, []string) {
	if s.v == nil && len(s.problems) == 0 && s.export != nil {
		return nil, false, []string{s.export.unread()}
	}
	return s.v, s.v != nil, s.problems
}

// Interface is an interface between fleets: a name and the exports of E, a
// struct type whose exported fields are Output[T] or SecretExport values.
// Define one with DefineInterface in a package both fleets import; its
// document form, with its content hash, is written under interfaces by
// every fleet that provides or uses it.
type Interface[E any] struct {
	name     string
	exports  E
	fields   []int // the struct's field indexes that are exports
	doc      spec.InterfaceDoc
	problems []string
}

// DefineInterface defines the interface name with the exports in E, each
// field made with NewExport, NewSecretExport or NewSecretStringExport.
// What is wrong with the
// definition (a field that is not an export, an export without a
// definition, two exports of one name) is reported by the Synth of every
// fleet that provides or uses the interface.
func DefineInterface[E any](name string, exports E) Interface[E] {
	in := Interface[E]{name: name, doc: spec.InterfaceDoc{Exports: map[string]spec.ExportDoc{}}}
	rv := reflect.ValueOf(&in.exports).Elem()
	rv.Set(reflect.ValueOf(&exports).Elem())
	if rv.Kind() != reflect.Struct {
		in.problems = append(in.problems, fmt.Sprintf("the exports are a %s, not a struct of fleet.Output and fleet.SecretExport fields", rv.Type()))
		return in
	}
	defs := map[string]spec.ExportDef{}
	for i := 0; i < rv.NumField(); i++ {
		sf := rv.Type().Field(i)
		if !sf.IsExported() {
			in.problems = append(in.problems, fmt.Sprintf("field %s is unexported: an export is an exported field, so the consumer can read it", sf.Name))
			continue
		}
		ef, ok := rv.Field(i).Addr().Interface().(exportField)
		if !ok {
			in.problems = append(in.problems, fmt.Sprintf("field %s is a %s, not an export (a fleet.Output made with fleet.NewExport, or a fleet.SecretExport)", sf.Name, sf.Type))
			continue
		}
		d := ef.definition()
		if d == nil || d.typ == "" {
			in.problems = append(in.problems, fmt.Sprintf("field %s has no definition: set it with fleet.NewExport or fleet.NewSecretExport", sf.Name))
			continue
		}
		if _, dup := defs[d.name]; dup {
			in.problems = append(in.problems, fmt.Sprintf("field %s defines export %q, which another field defines too", sf.Name, d.name))
			continue
		}
		// A copy, so that the caller's value cannot change the interface.
		own := *d
		own.iface = name
		ef.setDefinition(&own)
		in.fields = append(in.fields, i)
		doc, def, problems := exportDocOf(own)
		in.problems = append(in.problems, problems...)
		in.doc.Exports[own.name] = doc
		defs[own.name] = def
	}
	in.doc.Hash = spec.InterfaceHash(defs)
	return in
}

// exportDocOf is an export's document form and the definition it hashes.
func exportDocOf(d exportDef) (spec.ExportDoc, spec.ExportDef, []string) {
	doc := spec.ExportDoc{Type: string(d.typ)}
	def := spec.ExportDef{Type: d.typ, Secret: d.secret || d.typ == spec.ExportSecret}
	if def.Secret && d.typ != spec.ExportSecret {
		doc.Secrecy = "secret"
	}
	var problems []string
	for _, t := range lifecycleTags {
		if d.lifecycle&t.bit != 0 {
			doc.Lifecycle = append(doc.Lifecycle, string(t.tag))
			def.Lifecycle = append(def.Lifecycle, t.tag)
		}
	}
	if rest := d.lifecycle &^ (AtPlan | AfterApply | Observed); rest != 0 {
		problems = append(problems, fmt.Sprintf("export %q: lifecycle bits %#x are not fleet.AtPlan, fleet.AfterApply or fleet.Observed", d.name, uint8(rest)))
	}
	for _, t := range localityTags {
		if d.locality&t.bit != 0 {
			doc.Locality = append(doc.Locality, string(t.tag))
			def.Locality = append(def.Locality, t.tag)
		}
	}
	if rest := d.locality &^ (Global | AccountLocal | RegionLocal); rest != 0 {
		problems = append(problems, fmt.Sprintf("export %q: locality bits %#x are not fleet.Global, fleet.AccountLocal or fleet.RegionLocal", d.name, uint8(rest)))
	}
	return doc, def, problems
}

// Name is the interface's name in the document.
func (in Interface[E]) Name() string { return in.name }

// Hash is the content hash of the interface's exports (spec.InterfaceHash),
// as the document carries it.
func (in Interface[E]) Hash() string { return in.doc.Hash }

// Exports returns the interface's definitions. They are not values (a
// field that reads one is reported); they name exports, for a requirement
// of Use.
func (in Interface[E]) Exports() E { return in.exports }

// each calls fn with every export field of e (a copy of which it makes
// addressable) and returns the copy.
func (in Interface[E]) each(e E, fn func(def *exportDef, field exportField)) E {
	rv := reflect.ValueOf(&e).Elem()
	defs := reflect.ValueOf(&in.exports).Elem()
	for _, i := range in.fields {
		def := defs.Field(i).Addr().Interface().(exportField).definition()
		fn(def, rv.Field(i).Addr().Interface().(exportField))
	}
	return e
}

// Capability is a handle on a capability the fleet provides, for Expose.
type Capability struct{ name string }

// Name is the capability's name.
func (c Capability) Name() string { return c.name }

// ProvideOption changes how Provide writes a capability.
type ProvideOption int

// OneConsumer: the capability serves a single consumer ("consumers":
// "one"); by default it serves many.
const OneConsumer ProvideOption = 1

// Provide declares that f provides the capability name, an instance of
// interface in, with each export bound to the value of the same field of
// exports: a literal (Lit, LitList), an attribute of one of the fleet's
// resources (aws.EndpointOf(db) …) or, for a SecretExport, one of the
// fleet's secrets (aws.SecretRefOf); a public string export may be raised
// to a secret (Raise). A field of the wrong Go type does not
// compile; a field left unset is an unbound export, and a binding outside
// the export's bounds is reported by check.
//
// Other fleets can wire to the capability once it is exposed (Expose).
func Provide[E any](f *Fleet, name string, in Interface[E], exports E, opts ...ProvideOption) Capability {
	c := Capability{name: name}
	if f.inBody("fleet.Provide") {
		return c
	}
	where := "provides." + name
	f.addInterface(in.name, in.doc, in.problems)
	if _, dup := f.provides[name]; dup {
		f.diags = append(f.diags, spec.Errorf(spec.RowGivenTwice, where, "a fleet provides each capability once; give the other one another name", "capability %q provided twice", name))
		return c
	}
	p := spec.Provision{Interface: in.name, Exports: map[string]any{}}
	for _, o := range opts {
		if o == OneConsumer {
			p.Consumers = "one"
		}
	}
	in.each(exports, func(def *exportDef, field exportField) {
		v, set, problems := field.binding()
		for _, s := range problems {
			f.diags = append(f.diags, spec.Errorf(spec.RowInvalidValue, where+".exports."+def.name, "", "export %q: %s", def.name, s))
		}
		if !set {
			return // unbound: check reports it
		}
		if r, ok := v.(spec.SecretRef); ok {
			p.Exports[def.name] = map[string]any{"secret": r.Of.String()}
			return
		}
		enc := spec.Encode(v)
		if m, ok := enc.(map[string]any); ok && field.global() {
			m["locality"] = string(spec.LocalityGlobal)
		}
		p.Exports[def.name] = enc
	})
	if f.provides == nil {
		f.provides = map[string]spec.Provision{}
	}
	f.provides[name] = p
	return c
}

// Expose lets other fleets wire to capability c (the document's exposes).
// Exposing it twice is harmless.
func Expose(f *Fleet, c Capability) {
	if f.inBody("fleet.Expose") {
		return
	}
	if c.name == "" {
		f.diags = append(f.diags, spec.Errorf(spec.RowExposeUnknown, "exposes", "expose the handle fleet.Provide returned", "exposes a zero fleet.Capability"))
		return
	}
	for _, e := range f.exposes {
		if e == c.name {
			return
		}
	}
	f.exposes = append(f.exposes, c.name)
}

// PredicateValue is what a requirement compares an export with.
type PredicateValue interface{ string | int | float64 | bool }

// Requirement is a predicate on a wired export's published value, checked
// at plan: made with AtLeast, Equals … on an export of the interface, and
// given to Use. A failed one refuses the plan; Want makes it a warning.
type Requirement struct {
	export *exportDef
	op     string
	value  any
	want   bool
}

// Want returns r as a wish: when the wired value fails it, plan warns
// instead of refusing.
func (r Requirement) Want() Requirement { r.want = true; return r }

func require[T any](e Output[T], op string, v any) Requirement {
	return Requirement{export: e.export, op: op, value: v}
}

func predicateValue[V PredicateValue](v V) any {
	lit, _ := literal(any(v))
	return lit.(spec.Lit).V
}

// Equals requires export e to be v. e is a field of the interface's
// exports (Interface.Exports() or a slot's), so a misspelled export does
// not compile; a secret export has no requirement.
func Equals[T any, V PredicateValue](e Output[T], v V) Requirement {
	return require(e, "==", predicateValue(v))
}

// NotEquals requires export e not to be v.
func NotEquals[T any, V PredicateValue](e Output[T], v V) Requirement {
	return require(e, "!=", predicateValue(v))
}

// AtLeast requires export e to be v or more (versions compare by their
// numeric parts: "16.4" is at least 16).
func AtLeast[T any, V PredicateValue](e Output[T], v V) Requirement {
	return require(e, ">=", predicateValue(v))
}

// Above requires export e to be more than v.
func Above[T any, V PredicateValue](e Output[T], v V) Requirement {
	return require(e, ">", predicateValue(v))
}

// AtMost requires export e to be v or less.
func AtMost[T any, V PredicateValue](e Output[T], v V) Requirement {
	return require(e, "<=", predicateValue(v))
}

// Below requires export e to be less than v.
func Below[T any, V PredicateValue](e Output[T], v V) Requirement {
	return require(e, "<", predicateValue(v))
}

// OneOf requires export e to be one of vs.
func OneOf[T any, V PredicateValue](e Output[T], vs ...V) Requirement {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = predicateValue(v)
	}
	return require(e, "in", out)
}

// Slot is a slot of a fleet: an interface it uses, to be filled by a
// capability of another fleet (Wire). Its Exports are the only way to read
// what that fleet publishes.
type Slot[E any] struct {
	name string
	in   Interface[E]
	// decl is set on a component's slot (Need): what it resolved to.
	decl *slotDecl
}

func (s Slot[E]) componentSlot() *slotDecl { return s.decl }

// Name is the slot's name.
func (s Slot[E]) Name() string { return s.name }

// Exports returns the interface's exports as read through the slot: each
// field is a value known once the provider has applied, accepted wherever
// an Output is (a SecretExport only by Composed and by SecretFrom). The
// zero Slot's are unset.
func (s Slot[E]) Exports() E {
	if s.decl != nil {
		return s.componentExports()
	}
	if s.name == "" {
		var zero E
		return zero
	}
	return s.in.each(s.in.exports, func(_ *exportDef, field exportField) { field.readFrom(s.name) })
}

// Use declares that f uses a capability of interface in through the slot
// name, with requirements on what the capability publishes. It is declared
// before any value is read: the fleet says what it needs, and Wire says
// who gives it.
//
//	db := fleet.Use(f, "db", pgdb.Database, fleet.AtLeast(pgdb.Database.Exports().Version, 16))
func Use[E any](f *Fleet, name string, in Interface[E], requires ...Requirement) Slot[E] {
	s := Slot[E]{name: name, in: in}
	if f.inBody("fleet.Use") {
		return s
	}
	where := "uses." + name
	f.addInterface(in.name, in.doc, in.problems)
	if _, dup := f.uses[name]; dup {
		f.diags = append(f.diags, spec.Errorf(spec.RowGivenTwice, where, "a fleet uses each slot once; read the first slot's exports", "slot %q used twice", name))
		return s
	}
	u := spec.Use{Interface: in.name}
	for i, r := range requires {
		at := fmt.Sprintf("%s.requires[%d]", where, i)
		switch {
		case r.export == nil:
			f.diags = append(f.diags, spec.Errorf(spec.RowExportUnknown, at, "require a field of the interface's exports: fleet.AtLeast(Interface.Exports().Version, 16)",
				"the requirement reads a value that is not an export of interface %q", in.name))
			continue
		case r.export.iface != in.name:
			f.diags = append(f.diags, spec.Errorf(spec.RowExportUnknown, at, "require an export of the slot's own interface",
				"the requirement reads export %q of interface %q, and slot %q uses interface %q", r.export.name, r.export.iface, name, in.name))
			continue
		}
		req := spec.Requirement{Export: r.export.name, Op: r.op, Value: r.value}
		if r.want {
			req.Severity = "want"
		}
		u.Requires = append(u.Requires, req)
	}
	if f.uses == nil {
		f.uses = map[string]spec.Use{}
	}
	f.uses[name] = u
	return s
}

// WireOption changes how Wire writes a wire.
type WireOption struct{ state string }

// StateAt says where the providing fleet's state is kept, when it is not
// beside this fleet's (the wire's state).
func StateAt(location string) WireOption { return WireOption{state: location} }

// Wire fills slot s of f with the capability provides of fleet
// providerFleet, which that fleet must expose. A slot is wired once.
func Wire[E any](f *Fleet, s Slot[E], providerFleet, provides string, opts ...WireOption) {
	if f.inBody("fleet.Wire") {
		return
	}
	if s.name == "" {
		f.diags = append(f.diags, spec.Errorf(spec.RowWireUnknownSlot, "wires", "wire the slot fleet.Use returned", "wires a zero fleet.Slot"))
		return
	}
	where := "wires." + s.name
	if _, dup := f.wires[s.name]; dup {
		f.diags = append(f.diags, spec.Errorf(spec.RowGivenTwice, where, "a slot is filled by one capability", "slot %q wired twice", s.name))
		return
	}
	w := spec.Wire{Fleet: providerFleet, Provides: provides}
	for _, o := range opts {
		if o.state != "" {
			w.State = o.state
		}
	}
	if f.wires == nil {
		f.wires = map[string]spec.Wire{}
	}
	f.wires[s.name] = w
}

// addInterface records an interface the fleet provides or uses, and its
// definition's problems the first time.
func (f *Fleet) addInterface(name string, doc spec.InterfaceDoc, problems []string) {
	where := "interfaces." + name
	if old, ok := f.interfaces[name]; ok {
		if old.Hash != doc.Hash {
			f.diags = append(f.diags, spec.Errorf(spec.RowInterfaceMismatch, where, "define each interface once, in one package, and import it",
				"two definitions of interface %q in one fleet", name).WithEvidence(old.Hash+" "+doc.Hash))
		}
		return
	}
	if f.interfaces == nil {
		f.interfaces = map[string]spec.InterfaceDoc{}
	}
	f.interfaces[name] = doc
	for _, p := range problems {
		f.diags = append(f.diags, spec.Errorf(spec.RowInvalidValue, where, "", "%s", p))
	}
}

// wiringDocument writes the wiring into doc, as copies.
func (f *Fleet) wiringDocument(doc *spec.Document) {
	if len(f.interfaces) > 0 {
		doc.Interfaces = make(map[string]spec.InterfaceDoc, len(f.interfaces))
		for k, in := range f.interfaces {
			exports := make(map[string]spec.ExportDoc, len(in.Exports))
			for e, x := range in.Exports {
				x.Lifecycle = append(spec.Tags(nil), x.Lifecycle...)
				x.Locality = append(spec.Tags(nil), x.Locality...)
				exports[e] = x
			}
			doc.Interfaces[k] = spec.InterfaceDoc{Hash: in.Hash, Exports: exports}
		}
	}
	if len(f.provides) > 0 {
		doc.Provides = make(map[string]spec.Provision, len(f.provides))
		for k, p := range f.provides {
			exports := make(map[string]any, len(p.Exports))
			for e, v := range p.Exports {
				exports[e] = v
			}
			doc.Provides[k] = spec.Provision{Interface: p.Interface, Consumers: p.Consumers, Exports: exports}
		}
	}
	doc.Exposes = append([]string(nil), f.exposes...)
	if len(f.uses) > 0 {
		doc.Uses = make(map[string]spec.Use, len(f.uses))
		for k, u := range f.uses {
			doc.Uses[k] = spec.Use{Interface: u.Interface, Reach: u.Reach, Requires: append([]spec.Requirement(nil), u.Requires...)}
		}
	}
	if len(f.wires) > 0 {
		doc.Wires = make(map[string]spec.Wire, len(f.wires))
		for k, w := range f.wires {
			if w.List {
				w.Entries = append([]spec.Wire{}, w.Entries...)
			}
			doc.Wires[k] = w
		}
	}
}

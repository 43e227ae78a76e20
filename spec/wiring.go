package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Wiring across fleets (docs/wiring.md). A fleet provides capabilities,
// each an interface with its exports bound to values of the fleet; it
// exposes some of them to other fleets. A consumer uses slots, each an
// interface, and wires each slot to a fleet's exposed capability. The
// document carries the interfaces both sides were built with, so that
// each side can be checked on its own, and against the other's published
// record (Published).

// ExportType is the type of an export's value.
type ExportType string

const (
	ExportString     ExportType = "string"
	ExportNumber     ExportType = "number"
	ExportBool       ExportType = "bool"
	ExportStringList ExportType = "list<string>"
	ExportNumberList ExportType = "list<number>"
	ExportBoolList   ExportType = "list<bool>"
	// ExportSecret is a reference to a secret (an ARN or an id): the value
	// travels as the reference, never as its bytes.
	ExportSecret ExportType = "secret"
)

var exportTypes = []ExportType{ExportString, ExportNumber, ExportBool, ExportStringList, ExportNumberList, ExportBoolList, ExportSecret}

// Lifecycle is when an export's value is known.
type Lifecycle string

const (
	// LifecyclePlan: known from the document alone (a name, a constructed ARN).
	LifecyclePlan Lifecycle = "plan"
	// LifecycleApply: known once the provider has applied (an endpoint).
	LifecycleApply Lifecycle = "apply"
	// Observed: may change out of band (an auto-assigned address).
	LifecycleObserved Lifecycle = "observed"
)

var lifecycles = []Lifecycle{LifecyclePlan, LifecycleApply, LifecycleObserved}

// ExportLocality is where an export's value may be used.
type ExportLocality string

const (
	LocalityGlobal  ExportLocality = "global"
	LocalityAccount ExportLocality = "account"
	LocalityRegion  ExportLocality = "region"
)

var localities = []ExportLocality{LocalityGlobal, LocalityAccount, LocalityRegion}

// ExportDef is one export of an interface: its type and its bounds. A
// bound is the set of tags a provider may feed the export from; a
// provider's binding has exactly one.
type ExportDef struct {
	Type      ExportType       `json:"type"`
	Lifecycle []Lifecycle      `json:"lifecycle"`
	Locality  []ExportLocality `json:"locality"`
	// Secret is the secrecy floor: the value travels as a reference to a
	// secret. A provider may raise it; nobody may lower it.
	Secret bool `json:"secret,omitempty"`
}

// Interface is a name plus a set of exports. Its Hash is the content hash
// of the exports, so that two copies under one name can be compared.
type Interface struct {
	Name    string
	Hash    string
	Exports map[string]ExportDef
}

// Capability is one entry of provides: an interface with each export bound
// to a value of this fleet.
type Capability struct {
	Name      string
	Interface string
	// One: the capability serves a single consumer (consumers: "one").
	One      bool
	Exposed  bool
	Bindings map[string]Binding
}

// Binding is what a capability feeds one export from, with the tags the
// value has.
type Binding struct {
	// Value is a Lit, an Observed attribute, or a SecretRef.
	Value     Value
	Lifecycle Lifecycle
	Locality  ExportLocality
	Secret    bool
}

// SecretRef is {"secret": ADDR} in a binding: the export is that secret's
// reference.
type SecretRef struct{ Of Address }

func (SecretRef) isValue() {}

// Slot is one entry of uses, with its wire.
type Slot struct {
	Name      string
	Interface string
	Requires  []Predicate
	// All: the slot reaches all the capabilities its wire lists ("reach":
	// "all"), and an export read through it is a set keyed by fleet and
	// region (docs/wiring.md#reach).
	All bool
	// Wire is where the slot is filled from; nil when the document wires
	// nothing to it (a row).
	Wire *Wire
}

// Wire names the far end of a slot: a fleet and the capability it
// provides. State, when set, is where that fleet's state is kept, if not
// beside this fleet's.
type Wire struct {
	Fleet    string `json:"fleet"`
	Provides string `json:"provides"`
	State    string `json:"state,omitempty"`
	// List: the wire is written as a list (a reach-all slot's), of
	// Entries, each one capability; Fleet, Provides and State are then
	// unset.
	List    bool   `json:"-"`
	Entries []Wire `json:"-"`

	extra map[string]json.RawMessage
}

// Each is the capabilities the wire names: its entries for a list, or the
// wire itself.
func (w Wire) Each() []Wire {
	if w.List {
		return w.Entries
	}
	return []Wire{w}
}

// Predicate is a requirement on a wired export's published value.
type Predicate struct {
	Export string
	Op     string
	Value  any
	// Want: a failed predicate is a warning; otherwise it refuses the plan.
	Want bool
}

// String is the predicate as the document reads, such as "version >= 16".
func (p Predicate) String() string {
	v, _ := json.Marshal(p.Value)
	return fmt.Sprintf("%s %s %s", p.Export, p.Op, v)
}

// Import is {"use": SLOT, "export": E}: a value another fleet publishes,
// read through one of this fleet's slots.
type Import struct {
	Slot   string
	Export string
	// InSecret: the expression sits inside a secret's composed value, or
	// is the whole value of a field that takes a secret: where a secret
	// export may be read.
	InSecret bool
	// SecretField: it is the whole value of a field that takes a secret
	// (masterPasswordSecret, secretEnv), which a secret export must fill.
	SecretField bool
	// RefField: it is the whole value of a Wired reference field (or of one
	// entry of it), standing for the referent by its identity, which the
	// export must be: a public string.
	RefField bool
}

func (Import) isValue() {}

// predicateOps are the operators a requirement may use.
var predicateOps = []string{"==", "!=", ">=", ">", "<=", "<", "in"}

var wireNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// InterfaceHash is the content hash of an interface's exports: the same
// definition always gives the same hash, whatever the order it was written
// in.
func InterfaceHash(exports map[string]ExportDef) string {
	canon := map[string]ExportDef{}
	for name, e := range exports {
		e.Lifecycle = sortedTags(e.Lifecycle)
		e.Locality = sortedTags(e.Locality)
		if e.Type == ExportSecret {
			e.Secret = true
		}
		canon[name] = e
	}
	b, _ := json.Marshal(canon) // map keys sort; the values are plain
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:12])
}

func sortedTags[T ~string](tags []T) []T {
	out := append([]T{}, tags...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// wiring checks interfaces, provides, exposes, uses and wires, and puts
// them in the model.
func (c *compiler) wiring() {
	c.interfaces()
	c.provides()
	c.exposes()
	c.uses()
}

func (c *compiler) interfaces() {
	c.m.Interfaces = map[string]Interface{}
	for _, name := range sortedKeys(c.doc.Interfaces) {
		doc := c.doc.Interfaces[name]
		where := "interfaces." + name
		if !wireNameRE.MatchString(name) {
			c.add(Errorf(RowInterfaceName, where, "1–63 characters of a-z, 0-9, '-' and '_', starting with a letter", "invalid interface name %q", name))
		}
		for _, k := range sortedKeys(doc.extra) {
			c.add(Errorf(RowUnknownKey, where, "an interface's keys are hash and exports", "unknown key %q", k))
		}
		if len(doc.Exports) == 0 {
			c.add(Errorf(RowInterfaceEmpty, where, `list its exports: "exports": {"endpoint": {"type": "string", "lifecycle": "apply", "locality": "region"}}`, "interface %q has no exports", name))
		}
		in := Interface{Name: name, Exports: map[string]ExportDef{}}
		for _, e := range sortedKeys(doc.Exports) {
			if !wireNameRE.MatchString(e) {
				// quoted, not %q: the row reads the name as Printable
				// writes it everywhere else, and never raw.
				c.add(Errorf(RowExportName, where+".exports."+e, "1–63 characters of a-z, 0-9, '-' and '_', starting with a letter",
					"invalid export name %s", quoted(e)))
			}
			if def, ok := c.exportDef(where+".exports."+e, doc.Exports[e]); ok {
				in.Exports[e] = def
			}
		}
		in.Hash = InterfaceHash(in.Exports)
		if doc.Hash != "" && doc.Hash != in.Hash && len(in.Exports) == len(doc.Exports) {
			c.add(Errorf(RowInterfaceHash, where, "the exports were edited after the hash was computed: regenerate the document from the package that defines the interface, or remove the hash",
				"interface %q is written with hash %s, but its exports hash to %s", name, doc.Hash, in.Hash))
		}
		c.m.Interfaces[name] = in
	}
}

// exportDef checks one export's definition. A missing bound is a row: a
// bound is a permission, and a missing permission is not a default.
func (c *compiler) exportDef(where string, doc ExportDoc) (ExportDef, bool) {
	ok := true
	bad := func(id RowID, hint, format string, args ...any) {
		c.add(Errorf(id, where, hint, format, args...))
		ok = false
	}
	for _, k := range sortedKeys(doc.extra) {
		bad(RowUnknownKey, "an export's keys are type, lifecycle, locality and secrecy", "unknown key %q", k)
	}
	def := ExportDef{Type: ExportType(doc.Type)}
	if !containsTag(exportTypes, def.Type) {
		bad(RowExportType, "the types are "+tagList(exportTypes), "unknown export type %q", doc.Type)
	}
	if len(doc.Lifecycle) == 0 {
		bad(RowBoundMissing, `say when the value is known: "lifecycle": "plan", "apply" or "observed" (or a list of them)`, "the export has no lifecycle bound")
	}
	for _, t := range doc.Lifecycle {
		if !containsTag(lifecycles, Lifecycle(t)) {
			bad(RowBoundUnknown, "the lifecycle tags are "+tagList(lifecycles), "unknown lifecycle %q", t)
		}
		def.Lifecycle = append(def.Lifecycle, Lifecycle(t))
	}
	if len(doc.Locality) == 0 {
		bad(RowBoundMissing, `say where the value may be used: "locality": "global", "account" or "region" (or a list of them)`, "the export has no locality bound")
	}
	for _, t := range doc.Locality {
		if !containsTag(localities, ExportLocality(t)) {
			bad(RowBoundUnknown, "the locality tags are "+tagList(localities), "unknown locality %q", t)
		}
		def.Locality = append(def.Locality, ExportLocality(t))
	}
	switch doc.Secrecy {
	case "", "public":
		if def.Type == ExportSecret && doc.Secrecy == "public" {
			bad(RowSecrecyLowered, `a secret reference is secret: drop "secrecy": "public"`, "an export of type secret cannot be public")
		}
	case "secret":
		def.Secret = true
	default:
		bad(RowSecrecyUnknown, `secrecy is "public" (the default) or "secret"`, "unknown secrecy %q", doc.Secrecy)
	}
	if def.Type == ExportSecret {
		def.Secret = true
	}
	return def, ok
}

func (c *compiler) provides() {
	c.m.Provides = map[string]Capability{}
	for _, name := range sortedKeys(c.doc.Provides) {
		doc := c.doc.Provides[name]
		where := "provides." + name
		if !wireNameRE.MatchString(name) {
			c.add(Errorf(RowCapabilityName, where, "1–63 characters of a-z, 0-9, '-' and '_', starting with a letter", "invalid capability name %q", name))
		}
		for _, k := range sortedKeys(doc.extra) {
			c.add(Errorf(RowUnknownKey, where, "a capability's keys are interface, consumers and exports", "unknown key %q", k))
		}
		capab := Capability{Name: name, Interface: doc.Interface, Bindings: map[string]Binding{}}
		switch doc.Consumers {
		case "", "many":
		case "one":
			capab.One = true
		default:
			c.add(Errorf(RowConsumersUnknown, where, `consumers is "one" or "many" (the default)`, "unknown consumers %q", doc.Consumers))
		}
		in, ok := c.m.Interfaces[doc.Interface]
		if !ok {
			c.add(Errorf(RowInterfaceUnknown, where, "declare it under interfaces: "+declaredList(sortedKeys(c.m.Interfaces)), "capability %q provides interface %q, which the document does not define", name, doc.Interface))
			c.m.Provides[name] = capab
			continue
		}
		for _, e := range sortedKeys(in.Exports) {
			raw, bound := doc.Exports[e]
			if !bound {
				c.add(Errorf(RowExportUnbound, where, fmt.Sprintf(`bind it under "exports": {%q: …}`, e), "capability %q does not bind export %q of interface %q", name, e, in.Name))
				continue
			}
			if b, ok := c.binding(where+".exports."+e, in.Exports[e], raw); ok {
				capab.Bindings[e] = b
			}
		}
		for _, e := range sortedKeys(doc.Exports) {
			if _, ok := in.Exports[e]; !ok {
				c.add(Errorf(RowExportUnknown, where, "interface "+in.Name+" exports: "+strings.Join(sortedKeys(in.Exports), ", "), "capability %q binds %q, which interface %q does not export", name, e, in.Name))
			}
		}
		c.m.Provides[name] = capab
	}
}

// binding reads one export's binding and checks it against the export's
// definition: its type, its bounds (a provider may narrow them, never
// widen) and its secrecy (a provider may raise it, never lower).
func (c *compiler) binding(where string, def ExportDef, raw any) (Binding, bool) {
	b, err := c.bindingValue(raw)
	if err != nil {
		c.add(Errorf(RowBindingInvalid, where, `bind a literal, {"observed": ADDR, "attribute": A} or {"secret": ADDR}`, "%v", err))
		return b, false
	}
	ok := true
	bad := func(id RowID, hint, format string, args ...any) {
		c.add(Errorf(id, where, hint, format, args...))
		ok = false
	}
	switch {
	case def.Secret && !b.Secret:
		bad(RowSecrecyLowered, `bind a secret of this fleet: {"secret": "aws/secrets/NAME"}; its value travels as the secret's reference`, "the export is secret, and this binding is public")
	case def.Type == ExportSecret:
	case b.Secret && def.Type != ExportString:
		bad(RowExportType, "a secret holds a string: bind a value of type "+string(def.Type), "the export is of type %s, and a secret holds a string", def.Type)
	case !b.Secret:
		if got, known := literalType(b.Value); known && got != def.Type {
			bad(RowExportType, "bind a value of type "+string(def.Type), "the export is of type %s, and this binding is a %s", def.Type, got)
		}
	}
	if !containsTag(def.Lifecycle, b.Lifecycle) {
		bad(RowBoundWidened, "the interface allows "+tagList(def.Lifecycle)+"; bind a value that is known by then, or widen the interface itself", "the binding is known at %s, which the export's lifecycle bound does not allow", b.Lifecycle)
	}
	if !containsTag(def.Locality, b.Locality) {
		bad(RowBoundWidened, "the interface allows "+tagList(def.Locality)+"; bind another value, or widen the interface itself", "the binding's locality is %s, which the export's locality bound does not allow", b.Locality)
	}
	return b, ok
}

// bindingValue decodes a binding and gives it its tags: a literal is known
// at plan everywhere; an observed attribute after apply, in its resource's
// region unless the kind is global; a secret's reference after apply, in
// its account.
func (c *compiler) bindingValue(raw any) (Binding, error) {
	m, isObj := raw.(map[string]any)
	declared, narrowed := m["locality"]
	if !isObj || !narrowed {
		return c.inferBinding(raw)
	}
	// The provider narrows the locality to one tag of the export's bound:
	// a bucket's url is regional by inference, and usable anywhere.
	tag, ok := declared.(string)
	if !ok || !containsTag(localities, ExportLocality(tag)) {
		return Binding{}, fmt.Errorf(`"locality" of a binding is one of %s`, tagList(localities))
	}
	rest := map[string]any{}
	for k, v := range m {
		if k != "locality" {
			rest[k] = v
		}
	}
	b, err := c.inferBinding(rest)
	b.Locality = ExportLocality(tag)
	return b, err
}

// inferBinding decodes a binding and infers its tags.
func (c *compiler) inferBinding(raw any) (Binding, error) {
	m, isObj := raw.(map[string]any)
	switch {
	case !isObj:
		if _, err := literalOf(raw); err != nil {
			return Binding{}, err
		}
		v, _ := literalOf(raw)
		return Binding{Value: v, Lifecycle: LifecyclePlan, Locality: LocalityGlobal}, nil
	case has(m, "secret"):
		s, _ := m["secret"].(string)
		a, err := ParseAddress(s)
		if err != nil || len(m) != 1 {
			return Binding{}, fmt.Errorf(`want {"secret": "provider/secrets/name"}`)
		}
		d, ok := c.m.Lookup(a)
		switch {
		case !ok:
			return Binding{}, fmt.Errorf("the binding reads %s, which is not in the document", a)
		case d.Address.Kind != Secrets:
			return Binding{}, fmt.Errorf("the binding's secret %s is of kind %s, not secrets", a, a.Kind)
		}
		return Binding{Value: SecretRef{a}, Lifecycle: LifecycleApply, Locality: LocalityAccount, Secret: true}, nil
	}
	v, ok, err := decodeExpr(raw, false)
	if err != nil {
		return Binding{}, err
	}
	o, isObserved := v.(Observed)
	if !ok || !isObserved {
		return Binding{}, fmt.Errorf("want a literal, an observed attribute or a secret, got %s", describe(raw))
	}
	d, declared := c.m.Lookup(o.Of)
	if !declared {
		return Binding{}, fmt.Errorf("the binding reads %s, which is not in the document", o.Of)
	}
	info, _ := Lookup(o.Of.Kind)
	if !info.HasAttribute(o.Attribute) {
		return Binding{}, fmt.Errorf("the binding reads attribute %q, which %s does not publish (it publishes: %s)", o.Attribute, o.Of, strings.Join(info.Attributes, ", "))
	}
	loc := LocalityRegion
	if info.Global || d.Region == "" {
		loc = LocalityGlobal
	}
	return Binding{Value: o, Lifecycle: LifecycleApply, Locality: loc}, nil
}

// literalOf reads a literal binding: a string, number, bool or a list of
// one of them.
func literalOf(raw any) (Value, error) {
	switch x := raw.(type) {
	case string, float64, bool:
		return Lit{x}, nil
	case []any:
		out := make(List, 0, len(x))
		for _, y := range x {
			switch y.(type) {
			case string, float64, bool:
				out = append(out, Lit{y})
			default:
				return nil, fmt.Errorf("a list binding holds strings, numbers or bools, not %s", describe(y))
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a literal, an observed attribute or a secret, got %s", describe(raw))
}

// literalType is the export type of a literal value; known is false for an
// observed attribute (a string, whatever the export says) or an empty list.
func literalType(v Value) (ExportType, bool) {
	typeOf := func(x any) ExportType {
		switch x.(type) {
		case float64:
			return ExportNumber
		case bool:
			return ExportBool
		}
		return ExportString
	}
	switch x := v.(type) {
	case Lit:
		return typeOf(x.V), true
	case List:
		if len(x) == 0 {
			return "", false
		}
		return "list<" + typeOf(x[0].(Lit).V) + ">", true
	case Observed:
		return ExportString, true
	}
	return "", false
}

func (c *compiler) exposes() {
	for _, name := range c.doc.Exposes {
		capab, ok := c.m.Provides[name]
		if !ok {
			c.add(Errorf(RowExposeUnknown, "exposes", "the fleet provides: "+declaredList(sortedKeys(c.m.Provides)), "exposes %q, which the fleet does not provide", name))
			continue
		}
		capab.Exposed = true
		c.m.Provides[name] = capab
	}
}

func (c *compiler) uses() {
	c.m.Uses = map[string]Slot{}
	for _, name := range sortedKeys(c.doc.Uses) {
		doc := c.doc.Uses[name]
		where := "uses." + name
		if !wireNameRE.MatchString(name) {
			c.add(Errorf(RowSlotName, where, "1–63 characters of a-z, 0-9, '-' and '_', starting with a letter", "invalid slot name %q", name))
		}
		for _, k := range sortedKeys(doc.extra) {
			c.add(Errorf(RowUnknownKey, where, "a use's keys are interface, reach and requires", "unknown key %q", k))
		}
		slot := Slot{Name: name, Interface: doc.Interface, All: c.reach(where, doc.Reach)}
		in, ok := c.m.Interfaces[doc.Interface]
		if !ok {
			c.add(Errorf(RowInterfaceUnknown, where, "declare it under interfaces: "+declaredList(sortedKeys(c.m.Interfaces)), "slot %q uses interface %q, which the document does not define", name, doc.Interface))
		}
		for i, r := range doc.Requires {
			if p, ok := c.predicate(fmt.Sprintf("%s.requires[%d]", where, i), in, r); ok {
				slot.Requires = append(slot.Requires, p)
			}
		}
		if w, wired := c.doc.Wires[name]; wired {
			w := w
			slot.Wire = &w
			c.wireShape(slot, w)
		} else {
			hint := fmt.Sprintf(`wire it: "wires": {%q: {"fleet": "…", "provides": "…"}}`, name)
			if slot.All {
				hint = fmt.Sprintf(`wire it to a list: "wires": {%q: [{"fleet": "…", "provides": "…"}, …]}`, name)
			}
			c.add(Errorf(RowWireUnfilled, where, hint, "slot %q is wired to nothing", name))
		}
		c.m.Uses[name] = slot
	}
	for _, name := range sortedKeys(c.doc.Wires) {
		if _, ok := c.doc.Uses[name]; !ok {
			c.add(Errorf(RowWireUnknownSlot, "wires."+name, "the fleet uses: "+declaredList(sortedKeys(c.doc.Uses)), "wires slot %q, which the fleet does not use", name))
		}
	}
}

func (c *compiler) wire(where, slot string, w Wire) {
	for _, k := range sortedKeys(w.extra) {
		c.add(Errorf(RowUnknownKey, where, "a wire's keys are fleet, provides and state", "unknown key %q", k))
	}
	switch {
	case !ValidFleetName(w.Fleet):
		c.add(Errorf(RowWireFleet, where, "name the fleet that provides the capability", "invalid fleet name %q", w.Fleet))
	case w.Fleet == c.doc.Fleet:
		c.add(Errorf(RowWireSelf, where, `read this fleet's own values with {"observed": ADDR, "attribute": A}`, "slot %q is wired to this fleet itself", slot))
	}
	if w.Provides == "" {
		c.add(Errorf(RowWireCapability, where, "name the capability the fleet provides and exposes", "the wire names no capability"))
	}
}

// predicate checks one requirement of a use.
func (c *compiler) predicate(where string, in Interface, r Requirement) (Predicate, bool) {
	p := Predicate{Export: r.Export, Op: r.Op, Value: r.Value}
	ok := true
	bad := func(id RowID, hint, format string, args ...any) {
		c.add(Errorf(id, where, hint, format, args...))
		ok = false
	}
	for _, k := range sortedKeys(r.extra) {
		bad(RowUnknownKey, "a requirement's keys are export, op, value and severity", "unknown key %q", k)
	}
	if def, found := in.Exports[r.Export]; in.Exports != nil && !found {
		bad(RowExportUnknown, "interface "+in.Name+" exports: "+strings.Join(sortedKeys(in.Exports), ", "), "the requirement reads %q, which interface %q does not export", r.Export, in.Name)
	} else if found && def.Secret {
		bad(RowSecretPredicate, "a secret's value is never compared; require something public", "the requirement reads %q, which is secret", r.Export)
	}
	if !containsString(predicateOps, r.Op) {
		bad(RowPredicateOp, "the operators are "+strings.Join(predicateOps, " "), "unknown operator %q", r.Op)
	} else if err := checkPredicateValue(r.Op, r.Value); err != nil {
		bad(RowPredicateValue, `compare with a string or a number; "in" takes a list`, "%v", err)
	}
	switch r.Severity {
	case "", "require":
	case "want":
		p.Want = true
	default:
		bad(RowPredicateSeverity, `severity is "require" (the default: a failure refuses the plan) or "want" (a warning)`, "unknown severity %q", r.Severity)
	}
	return p, ok
}

func checkPredicateValue(op string, v any) error {
	if op == "in" {
		xs, ok := v.([]any)
		if !ok || len(xs) == 0 {
			return fmt.Errorf(`"in" wants a non-empty list of values, got %s`, describe(v))
		}
		return nil
	}
	switch v.(type) {
	case string, float64, bool:
		return nil
	}
	return fmt.Errorf("%q wants a string, a number or a bool, got %s", op, describe(v))
}

// importRow checks a field's {"use": SLOT, "export": E}; whole says it is
// the field's whole value, which is how a map field reads a reach-all set.
func (c *compiler) importRow(at Address, f Field, e Import, whole bool) {
	where, field := at.String(), f.Name
	slot, ok := c.m.Uses[e.Slot]
	if !ok {
		c.add(Errorf(RowUseUnknownSlot, where, "the fleet uses: "+declaredList(sortedKeys(c.m.Uses)), "field %q reads slot %q, which the fleet does not use", field, e.Slot))
		return
	}
	if row := reachFieldRow(at, f, slot, e, whole); row != nil {
		c.add(*row)
		return
	}
	in, ok := c.m.Interfaces[slot.Interface]
	if !ok {
		return // reported at the slot
	}
	def, ok := in.Exports[e.Export]
	switch {
	case !ok:
		c.add(Errorf(RowExportUnknown, where, "interface "+in.Name+" exports: "+strings.Join(sortedKeys(in.Exports), ", "), "field %q reads %s.%s, which interface %q does not export", field, e.Slot, e.Export, in.Name))
	case e.SecretField && !def.Secret:
		c.add(Errorf(RowSecretExportExpected, where, "read a secret export here, or compose a secret of this fleet from the public one",
			"field %q reads %s.%s, which is public, where it takes a secret", field, e.Slot, e.Export))
	case e.RefField && (def.Secret || def.Type != ExportString):
		target := f.RefKinds[0]
		id := ""
		if info, ok := Lookup(target); ok {
			id = info.Identity
		}
		c.add(Errorf(RowWiredIdentity, where, fmt.Sprintf("export the %s's %s from the providing fleet as a public string, and read that export here", target, id),
			"field %q reads %s.%s, a %s export, where it takes a %s's identity (its %s), a public string", field, e.Slot, e.Export, exportKind(def), target, id))
	case def.Secret && !e.InSecret:
		c.add(Errorf(RowSecretExportMisused, where, `a secret export feeds only a secret: compose it into a secrets resource's value ({"composed": {"format": …, "args": [{"use": …}]}})`,
			"field %q reads %s.%s, which is secret, into a field that does not take a secret", field, e.Slot, e.Export))
	}
}

// Imports returns the exports the model's fields read, by slot and
// export, sorted.
func (m *Model) Imports() []Import {
	seen := map[[2]string]bool{}
	var out []Import
	for _, d := range m.Resources {
		for _, name := range sortedKeys(d.Fields) {
			walk(d.Fields[name], func(v Value) {
				if im, ok := v.(Import); ok && !seen[[2]string{im.Slot, im.Export}] {
					seen[[2]string{im.Slot, im.Export}] = true
					out = append(out, Import{Slot: im.Slot, Export: im.Export})
				}
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Slot != out[j].Slot {
			return out[i].Slot < out[j].Slot
		}
		return out[i].Export < out[j].Export
	})
	return out
}

// ImportsIn lists the imports v reads.
func ImportsIn(v Value) []Import { return exprsIn[Import](v) }

func containsTag[T ~string](tags []T, t T) bool {
	for _, x := range tags {
		if x == t {
			return true
		}
	}
	return false
}

func containsString(xs []string, s string) bool { return containsTag(xs, s) }

func tagList[T ~string](tags []T) string {
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = string(t)
	}
	return strings.Join(parts, ", ")
}

func declaredList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// exportKind names an export's type for a diagnostic: "secret" for any
// secret one, as the reader of the document sees it.
func exportKind(def ExportDef) string {
	if def.Secret {
		return "secret"
	}
	return string(def.Type)
}

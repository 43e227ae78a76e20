package spec

// Type is the shape of a field's value.
type Type int

const (
	TypeString       Type = iota // a JSON string
	TypeInt                      // a JSON number with no fraction
	TypeNumber                   // any JSON number
	TypeBool                     // true or false
	TypeStringList               // a list of strings
	TypeStringMap                // an object of string values (tags, env)
	TypeRef                      // {"ref": ADDR}
	TypeSecretSource             // {"fromEnv": VAR} or {"composed": {...}}
	TypeIngress                  // a list of {"port": int, "cidr": string}
	TypeRefMap                   // an object of {"ref": ADDR} values (secretEnv)
	TypeObjects                  // an object of objects, each item's fields Field.Of (a table's indexes)
)

func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeInt:
		return "integer"
	case TypeNumber:
		return "number"
	case TypeBool:
		return "boolean"
	case TypeStringList:
		return "list of strings"
	case TypeStringMap:
		return "object of strings"
	case TypeRef:
		return `reference ({"ref": ADDRESS})`
	case TypeSecretSource:
		return `secret source ({"fromEnv": VAR} or {"composed": …})`
	case TypeIngress:
		return `list of {"port": N, "cidr": "a.b.c.d/n"}`
	case TypeRefMap:
		return `object of references ({"VAR": {"ref": ADDRESS}})`
	case TypeObjects:
		return `object of objects ({"NAME": {FIELD: VALUE, …}})`
	}
	return "unknown type"
}

// Compare says how a present field is compared with what the cloud reports.
type Compare int

const (
	// CompareExact: the observed value must equal the target.
	CompareExact Compare = iota
	// CompareSet: lists the service may reorder compare as sets; objects
	// compare as sets of pairs.
	CompareSet
	// CompareVersion: a declared version matches any reported version it
	// is a dot-prefix of: "16" is satisfied by "16.6", since the cloud runs
	// the newest minor of the major asked for and reports that.
	CompareVersion
	// CompareNever: the field shapes creation only (a secret's value, a
	// password reference, a behaviour flag such as forceDestroy). It is never
	// a reason to act.
	CompareNever
	// ComparePolicy: the values are JSON documents in IAM's policy grammar
	// (a policy, a role's trust), compared by meaning, as IAM reads them:
	// whitespace and key order never matter, every list is a set (IAM
	// evaluates statements, actions, resources, principals and condition
	// values without regard to order), a list of one value equals the value,
	// and a number or a boolean equals its text. IAM hands documents back
	// URL-encoded and as it stored them, which is not as they were sent. A
	// value that is not JSON compares exactly.
	ComparePolicy
	// CompareValues: an object whose keys are the declaration's own labels,
	// which the cloud does not keep (an ALB's security groups), compares as
	// the set of its values: the cloud reports the values under keys of its
	// choosing.
	CompareValues
	// CompareJSON: a string holding JSON compares by what it means, not
	// how it is written: the cloud keeps a JSON document in its own
	// spacing and key order. Lists keep their order (an SNS filter's
	// numeric range is a list whose order is its meaning). A string that
	// is not JSON compares exactly.
	CompareJSON
)

// Field is one field of a kind's spec, with everything the engine and check
// need to know about it.
type Field struct {
	Name     string
	Type     Type
	Required bool
	// Default is what the engine sends at create when the field is unset.
	// An unset field stays unknown for comparison: the default is never
	// drift.
	Default any
	// Replace: a change forces replacement (delete, then create).
	Replace bool
	Compare Compare
	// Expr: the field (or, for objects and lists, each value) may hold an
	// observed or composed expression.
	Expr bool
	// Secret: the value is never stored, diffed or printed. For a reference
	// field it means the engine hands the driver the referenced secret's
	// value at create.
	Secret bool
	// RunTime: the workload resolves the field's references itself, each
	// time it runs (a container's secretEnv reads the secret's current
	// value at start), so the engine sends nothing when what it references
	// changes. A plan that updates or replaces a referenced resource lists
	// a contract for this one instead of an action (engine.Contract).
	RunTime bool
	// RefKinds are the kinds a reference field may point at.
	RefKinds []Kind
	// Of are the fields of each item of a TypeObjects field, keyed by the
	// item's name: literals of the plain types (string, integer, number,
	// boolean, list of strings), each Required or not, with Replace when a
	// change of it cannot be made to the item in place (the driver then
	// remakes the item, not the resource). An unset optional one is never
	// compared, as a resource's own fields.
	Of []Field
	// Item names one item of a TypeObjects field, singular
	// ("globalSecondaryIndex"): the typed SDK's struct for it.
	Item string
	// Wired: the cloud records the reference by the referent's identity
	// (KindInfo.Identity: a subnet's subnetId), and the driver takes it from
	// Target.Identities, so another fleet's public string export of that
	// identity, {"use": SLOT, "export": E}, may stand in for a reference:
	// an ALB in the subnets a network fleet publishes.
	Wired bool
	// RegionLocal: a reference that must stay within one region.
	RegionLocal bool
	// Holds: the cloud records the reference as an attachment, so the
	// referenced resource cannot be deleted while this one points at it (an
	// instance's security group, a container's namespace). Replacing the
	// referenced resource then replaces this one around it: deleted before
	// it, created after.
	Holds bool
	// SameProvider: the reference must stay within one provider.
	SameProvider bool
	// OnlyOn, when set, lists the providers that can express the field;
	// setting it elsewhere is a named error, never a silent no-op. This is
	// where portability stops, stated once for check, the SDK generator and
	// docs/providers.md.
	OnlyOn []Provider
	// RequiredOn lists the providers on which an optional field is required.
	RequiredOn []Provider
	// IgnoredOn lists the providers whose product has no use for the field:
	// setting it there is a warning (a portable spec may carry it), and it
	// is neither sent nor compared.
	IgnoredOn []Provider
	// Finish: a create-time field, never compared, that the product writes
	// in a step after the one that makes (and marks) the resource: a
	// secret's value, its first version; a database's master password,
	// with its user. A create that stopped between the two leaves the
	// resource marked but without it, and no comparison can tell, so the
	// update that finishes such a create writes it again
	// (KindInfo.Finishing).
	Finish bool
	// CIDR: the value is an IPv4 CIDR block in its canonical form (no
	// host bits set, as EC2 stores it); check refuses anything else.
	CIDR bool
	// Within, on a CIDR field, names the block the value must lie inside:
	// a CIDR field of the resource another field of this kind refers to
	// (a subnet's cidr, inside its VPC's). Check holds literals to it.
	Within *Within
	// Instructions are literal values that say what to do at create rather
	// than what must stay true (an imageId of "latest"): the cloud reports
	// what it made of them, which never equals them, so a target holding
	// one is never drift.
	Instructions []string
	Doc          string
}

// Within is where a CIDR field's block must lie: inside the CIDR field
// Field of the resource that this kind's reference field Ref names.
type Within struct {
	Ref   string
	Field string
}

// IsInstruction reports whether v is one of the field's instructions.
func (f Field) IsInstruction(v Value) bool {
	lit, ok := v.(Lit)
	if !ok {
		return false
	}
	for _, s := range f.Instructions {
		if lit.V == s {
			return true
		}
	}
	return false
}

// UsedOn reports whether provider p sends and compares the field.
func (f Field) UsedOn(p Provider) bool {
	return f.ExpressibleOn(p) && !containsProvider(f.IgnoredOn, p)
}

// ExpressibleOn reports whether provider p can express the field.
func (f Field) ExpressibleOn(p Provider) bool {
	return len(f.OnlyOn) == 0 || containsProvider(f.OnlyOn, p)
}

// RequiredFor reports whether the field must be set on provider p.
func (f Field) RequiredFor(p Provider) bool {
	return f.UsedOn(p) && (f.Required || containsProvider(f.RequiredOn, p))
}

func containsProvider(ps []Provider, p Provider) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// IsRef reports whether the field holds references.
func (f Field) IsRef() bool { return f.Type == TypeRef || f.Type == TypeRefMap }

// ItemField returns the named field of a TypeObjects field's items.
func (f Field) ItemField(name string) (Field, bool) {
	for _, sub := range f.Of {
		if sub.Name == name {
			return sub, true
		}
	}
	return Field{}, false
}

func (f Field) itemNames() []string {
	out := make([]string, len(f.Of))
	for i, sub := range f.Of {
		out[i] = sub.Name
	}
	return out
}

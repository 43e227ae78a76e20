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
	// CompareJSON: a string holding JSON compares by what it means, not
	// how it is written: the cloud keeps a JSON document in its own
	// spacing and key order. A string that is not JSON compares exactly.
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
	// Expr: the field (or, for objects, each value) may hold an observed or
	// composed expression.
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
	// Instructions are literal values that say what to do at create rather
	// than what must stay true (an imageId of "latest"): the cloud reports
	// what it made of them, which never equals them, so a target holding
	// one is never drift.
	Instructions []string
	Doc          string
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

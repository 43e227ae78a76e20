package sdkshape

import (
	"regexp"
	"strings"

	"github.com/infra-iac/infra/spec"
)

var xlarge = regexp.MustCompile(`^([0-9]*)xlarge$`)
var xl = regexp.MustCompile(`^([0-9]+)xl$`)

// Form is what kind of Go value a field takes, for a writer of values.
type Form int

const (
	Plain        Form = iota // the Go type as it is: string, int, float64, bool, []string, map[string]string
	Optional                 // fleet.Optional[Elem], made with fleet.Set
	Output                   // fleet.Output[string], a literal made with fleet.Lit
	Env                      // fleet.Env, literals lifted with fleet.Literals
	InstanceType             // aws.InstanceType, family then size
	SecretSource             // fleet.SecretSource
	Ingress                  // []aws.Ingress
	Ref                      // fleet.Ref[Elem]
	SecretField              // fleet.SecretField[Elem], which a fleet.Ref[Elem] is
	RefMap                   // map[string] of fleet.Ref[Elem], or of fleet.SecretField[Elem] when Secret
	BucketRef                // fleet.BucketRef, made with fleet.Bucket
	Objects                  // map[string] of the field's item struct (Elem), generated beside the kind
	Outputs                  // fleet.Outputs, literals made with fleet.Lit
)

// Type is the Go type of a field in one package.
type Type struct {
	// Name is the type as written in that package.
	Name string
	// Expr is how a constructor hands the value $ to fleet.
	Expr string
	Form Form
	// Elem is Optional's type argument, or the kind type a reference
	// names, as written in that package.
	Elem string
	// Secret: a RefMap's values are SecretFields.
	Secret bool
}

// GoType is the Go type of field f as written in package pkgName (fleet,
// a cloud's package, or any other, which qualifies both), for provider p;
// param says whether it is a constructor parameter rather than an option.
func GoType(pkgName string, p spec.Provider, info *spec.KindInfo, f spec.Field, param bool) (Type, error) {
	q := "fleet."
	if pkgName == "fleet" {
		q = ""
	}
	c := string(p) + "."
	if pkgName == string(p) {
		c = ""
	}
	basic := func(t string) (Type, error) {
		if param {
			return Type{Name: t, Expr: "$", Form: Plain}, nil
		}
		return Type{Name: q + "Optional[" + t + "]", Expr: "$", Form: Optional, Elem: t}, nil
	}
	switch f.Type {
	case spec.TypeString:
		if f.Expr {
			return Type{Name: q + "Output[string]", Expr: "$", Form: Output, Elem: "string"}, nil
		}
		if f.Name == "instanceType" {
			if p != spec.AWS || pkgName == "fleet" {
				return Type{}, errorf(info, f, "instance types exist on AWS only")
			}
			return Type{Name: c + "InstanceType", Expr: "$.value()", Form: InstanceType}, nil
		}
		return basic("string")
	case spec.TypeInt:
		return basic("int")
	case spec.TypeNumber:
		return basic("float64")
	case spec.TypeBool:
		return basic("bool")
	case spec.TypeStringList:
		if f.Expr {
			return Type{Name: q + "Outputs", Expr: "$", Form: Outputs, Elem: "string"}, nil
		}
		return Type{Name: "[]string", Expr: "$", Form: Plain}, nil
	case spec.TypeStringMap:
		if f.Expr {
			return Type{Name: q + "Env", Expr: "$", Form: Env}, nil
		}
		return Type{Name: "map[string]string", Expr: "$", Form: Plain}, nil
	case spec.TypeSecretSource:
		return Type{Name: q + "SecretSource", Expr: "$", Form: SecretSource}, nil
	case spec.TypeIngress:
		if p != spec.AWS || pkgName == "fleet" {
			return Type{}, errorf(info, f, "ingress rules are a security-group setting, AWS only")
		}
		return Type{Name: "[]" + c + "Ingress", Expr: "ingressValue($)", Form: Ingress}, nil
	case spec.TypeRef, spec.TypeRefMap:
		t, err := refType(q, c, pkgName, p, info, f)
		if err == nil && !param && t.Form == Ref {
			// An optional reference in a spec struct: its zero handle
			// leaves the field unset, as an unset Optional does.
			t.Expr = "sdk.OptionalRef($)"
		}
		return t, err
	case spec.TypeObjects:
		if pkgName == "fleet" {
			return Type{}, errorf(info, f, "an object of items is one cloud's setting; its item struct is generated in the cloud's package")
		}
		item := ItemType(p, info, f)
		return Type{Name: "map[string]" + c + item, Expr: ItemValues(p, info, f) + "($)", Form: Objects, Elem: c + item}, nil
	}
	return Type{}, errorf(info, f, "the generator has no Go type for %s", f.Type)
}

// refType is GoType for a reference field; q and c qualify fleet's and the
// cloud's names.
func refType(q, c, pkgName string, p spec.Provider, info *spec.KindInfo, f spec.Field) (Type, error) {
	if f.SameProvider && len(f.RefKinds) == 1 {
		if pkgName == "fleet" {
			return Type{}, errorf(info, f, "a portable spec cannot hold a reference to one cloud's kind; make it a parameter with an override")
		}
		target, ok := spec.Lookup(f.RefKinds[0])
		if !ok || !target.OfferedBy(p) {
			return Type{}, errorf(info, f, "refers to %s, which %s does not offer; add an override", f.RefKinds[0], p)
		}
		elem := c + KindType(p, f.RefKinds[0])
		t := Type{Name: q + "Ref[" + elem + "]", Expr: "$", Form: Ref, Elem: elem}
		if f.Secret {
			// A field that takes a secret takes a slot's secret export
			// too (fleet.SecretFrom), and still only this cloud's
			// secrets kind.
			t = Type{Name: q + "SecretField[" + elem + "]", Expr: "$", Form: SecretField, Elem: elem}
		}
		if f.Wired {
			// A field that takes its referent by identity takes a slot's
			// export of one too (fleet.RefFrom), still of this kind.
			t.Name = q + "RefField[" + elem + "]"
		}
		if f.Type == spec.TypeRefMap {
			return Type{Name: "map[string]" + t.Name, Expr: "sdk.AnyMap($)", Form: RefMap, Elem: elem, Secret: f.Secret}, nil
		}
		return t, nil
	}
	if f.Type == spec.TypeRef && allBuckets(f.RefKinds) {
		return Type{Name: q + "BucketRef", Expr: "$", Form: BucketRef}, nil
	}
	return Type{}, errorf(info, f, "the generator has no Go type for a reference to %v (same provider: %v); teach it one", f.RefKinds, f.SameProvider)
}

// ItemType is the Go name of the struct of one item of TypeObjects field f:
// the field's Item, or the kind's type and the field's name.
func ItemType(p spec.Provider, info *spec.KindInfo, f spec.Field) string {
	if f.Item != "" {
		return GoName(f.Item)
	}
	return KindType(p, info.Kind) + GoName(f.Name) + "Item"
}

// ItemValues is the name of the generated function that hands a
// TypeObjects field's items to fleet.
func ItemValues(p spec.Provider, info *spec.KindInfo, f spec.Field) string {
	t := ItemType(p, info, f)
	return strings.ToLower(t[:1]) + t[1:] + "Values"
}

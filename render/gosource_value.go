package render

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/infra-iac/infra/internal/sdkshape"
	"github.com/infra-iac/infra/spec"
)

// declaration is the constructor call declaring r, named name.
func (w *goWriter) declaration(g *kindGroup, r spec.Resource, name string) (string, error) {
	params, options := sdkshape.FieldsOf(g.p, g.info)
	for k := range r.Spec {
		if !slices.ContainsFunc(params, named(k)) && !slices.ContainsFunc(options, named(k)) {
			return "", fmt.Errorf("go source: %s: field %s: %s's %s constructor has no place for it", r.Address, k, sdkshape.ProviderName(g.p), g.k)
		}
	}
	args := []string{strconv.Quote(name)}
	for _, f := range params {
		raw, ok := r.Spec[f.Name]
		if !ok {
			return "", fmt.Errorf("go source: %s: field %s: the constructor takes it as a parameter, and the spec has none", r.Address, f.Name)
		}
		x, err := w.fieldExpr(g, f, raw, true)
		if err != nil {
			return "", fmt.Errorf("go source: %s: field %s: %v", r.Address, f.Name, err)
		}
		args = append(args, x)
	}
	specPkg, specName := sdkshape.SpecStruct(g.p, g.info)
	opts := specPkg + "." + specName + "{"
	for _, f := range options {
		raw, ok := r.Spec[f.Name]
		if !ok {
			continue // unknown, never compared: left out
		}
		x, err := w.fieldExpr(g, f, raw, false)
		if err != nil {
			return "", fmt.Errorf("go source: %s: field %s: %v", r.Address, f.Name, err)
		}
		opts += "\n" + sdkshape.GoName(f.Name) + ": " + x + ","
	}
	if strings.HasSuffix(opts, ",") {
		opts += "\n"
	}
	args = append(args, opts+"}")
	cloud := "cloud"
	if r.Region != "" && r.Region != w.in.Placement[g.p] {
		cloud += ".In(" + regionExpr(g.p, r.Region) + ")"
	}
	return cloud + "." + sdkshape.KindType(g.p, g.k) + "(" + strings.Join(args, ", ") + ")", nil
}

func named(name string) func(spec.Field) bool {
	return func(f spec.Field) bool { return f.Name == name }
}

// fieldExpr is the Go expression of field f's JSON tree raw, as the
// constructor's parameter or its spec struct's field takes it.
func (w *goWriter) fieldExpr(g *kindGroup, f spec.Field, raw any, param bool) (string, error) {
	t, err := sdkshape.GoType("main", g.p, g.info, f, param)
	if err != nil {
		return "", err
	}
	v, err := spec.Decode(f, raw)
	if err != nil {
		return "", err
	}
	switch t.Form {
	case sdkshape.Plain:
		return literalExpr(f.Type, v)
	case sdkshape.Optional:
		x, err := literalExpr(f.Type, v)
		if f.Type == spec.TypeNumber && !strings.ContainsAny(x, ".eE") {
			x += ".0" // else fleet.Set infers an int, not a float64
		}
		return "fleet.Set(" + x + ")", err
	case sdkshape.Output:
		x, err := literalExpr(spec.TypeString, v)
		return "fleet.Lit(" + x + ")", err
	case sdkshape.Env:
		x, err := literalExpr(spec.TypeStringMap, v)
		return "fleet.Literals(" + x + ")", err
	case sdkshape.Outputs:
		l, ok := v.(spec.List)
		if !ok {
			return "", fmt.Errorf("want a list: %s", describeValue(v))
		}
		out := t.Name + "{"
		for _, x := range l {
			s, err := literalExpr(spec.TypeString, x)
			if err != nil {
				return "", err
			}
			out += "\nfleet.Lit(" + s + "),"
		}
		return closeLiteral(out), nil
	case sdkshape.InstanceType:
		return instanceTypeExpr(v)
	case sdkshape.SecretSource:
		if e, ok := v.(spec.FromEnv); ok {
			return "fleet.FromEnv(" + strconv.Quote(e.Var) + ")", nil
		}
		return "", fmt.Errorf("only fromEnv is written: %s", describeValue(v))
	case sdkshape.Ingress:
		return ingressExpr(t, v)
	case sdkshape.Ref, sdkshape.SecretField, sdkshape.BucketRef:
		return w.refExpr(g, f, t, v)
	case sdkshape.RefMap:
		m, ok := v.(spec.Map)
		if !ok {
			return "", fmt.Errorf("want an object of references: %s", describeValue(v))
		}
		out := t.Name + "{"
		for _, k := range slices.Sorted(maps.Keys(m)) {
			x, err := w.refExpr(g, f, t, m[k])
			if err != nil {
				return "", fmt.Errorf("%q: %v", k, err)
			}
			out += "\n" + strconv.Quote(k) + ": " + x + ","
		}
		return closeLiteral(out), nil
	case sdkshape.Objects:
		return w.objectsExpr(g, f, t, raw)
	}
	return "", fmt.Errorf("the Go writer has no expression for %s", t.Name)
}

// objectsExpr writes a TypeObjects field's items as a map of its item
// struct, each field as a constructor's parameter (required) or option.
func (w *goWriter) objectsExpr(g *kindGroup, f spec.Field, t sdkshape.Type, raw any) (string, error) {
	items, ok := raw.(map[string]any)
	if !ok {
		return "", fmt.Errorf("want an object of items, got %T", raw)
	}
	out := t.Name + "{"
	for _, name := range slices.Sorted(maps.Keys(items)) {
		item, _ := items[name].(map[string]any)
		x := "{"
		for _, sub := range f.Of {
			v, ok := item[sub.Name]
			if !ok {
				continue
			}
			e, err := w.fieldExpr(g, sub, v, sub.Required)
			if err != nil {
				return "", fmt.Errorf("%q: %s: %v", name, sub.Name, err)
			}
			x += "\n" + sdkshape.GoName(sub.Name) + ": " + e + ","
		}
		out += "\n" + strconv.Quote(name) + ": " + closeLiteral(x) + ","
	}
	return closeLiteral(out), nil
}

// refExpr is the handle a reference names, from the map of handles its
// kind's function returned.
func (w *goWriter) refExpr(g *kindGroup, f spec.Field, t sdkshape.Type, v spec.Value) (string, error) {
	ref, ok := v.(spec.Ref)
	if !ok {
		return "", fmt.Errorf("only a reference to an imported resource is written: %s", describeValue(v))
	}
	if !slices.Contains(f.RefKinds, ref.To.Kind) || (f.SameProvider && ref.To.Provider != g.p) {
		return "", fmt.Errorf("refers to %s, which this field cannot hold", ref.To)
	}
	x := refsVar(kindKey{ref.To.Provider, ref.To.Kind}) + "[" + strconv.Quote(ref.To.Name) + "]"
	if t.Form == sdkshape.BucketRef {
		x = "fleet.Bucket(" + x + ")"
	}
	return x, nil
}

// literalExpr writes a literal value of a field of type typ.
func literalExpr(typ spec.Type, v spec.Value) (string, error) {
	switch typ {
	case spec.TypeStringList:
		l, ok := v.(spec.List)
		if !ok {
			return "", fmt.Errorf("want a list: %s", describeValue(v))
		}
		out := "[]string{"
		for _, x := range l {
			s, err := literalExpr(spec.TypeString, x)
			if err != nil {
				return "", err
			}
			out += "\n" + s + ","
		}
		return closeLiteral(out), nil
	case spec.TypeStringMap:
		m, ok := v.(spec.Map)
		if !ok {
			return "", fmt.Errorf("want an object: %s", describeValue(v))
		}
		out := "map[string]string{"
		for _, k := range slices.Sorted(maps.Keys(m)) {
			s, err := literalExpr(spec.TypeString, m[k])
			if err != nil {
				return "", fmt.Errorf("%q: %v", k, err)
			}
			out += "\n" + strconv.Quote(k) + ": " + s + ","
		}
		return closeLiteral(out), nil
	}
	lit, ok := v.(spec.Lit)
	if !ok {
		return "", fmt.Errorf("only literals are written: %s", describeValue(v))
	}
	return scalarExpr(typ, lit.V)
}

func scalarExpr(typ spec.Type, x any) (string, error) {
	switch y := x.(type) {
	case string:
		return strconv.Quote(y), nil
	case bool:
		return strconv.FormatBool(y), nil
	case float64:
		if typ != spec.TypeInt {
			return strconv.FormatFloat(y, 'g', -1, 64), nil
		}
		// An int field's value must be a Go int constant, or it does not
		// compile.
		if y != math.Trunc(y) || y < math.MinInt64 || y >= math.MaxInt64 {
			return "", fmt.Errorf("%v is not an int", y)
		}
		return strconv.FormatInt(int64(y), 10), nil
	}
	return "", fmt.Errorf("want a literal, got %T", x)
}

// closeLiteral ends a composite literal whose elements are one a line.
func closeLiteral(s string) string {
	if strings.HasSuffix(s, ",") {
		s += "\n"
	}
	return s + "}"
}

func ingressExpr(t sdkshape.Type, v spec.Value) (string, error) {
	l, ok := v.(spec.List)
	if !ok {
		return "", fmt.Errorf("want a list of rules: %s", describeValue(v))
	}
	out := t.Name + "{"
	for i, x := range l {
		rule, _ := x.(spec.Map)
		port, perr := literalExpr(spec.TypeInt, rule["port"])
		cidr, cerr := literalExpr(spec.TypeString, rule["cidr"])
		if perr != nil || cerr != nil {
			return "", fmt.Errorf("rule %d: want a port and a cidr", i)
		}
		out += "\n{Port: " + port + ", CIDR: " + cidr + "},"
	}
	return closeLiteral(out), nil
}

// instanceTypeExpr writes a type the table knows as family then size
// (aws.T3.Micro()), and any other with InstanceTypeRaw.
func instanceTypeExpr(v spec.Value) (string, error) {
	lit, _ := v.(spec.Lit)
	s, ok := lit.V.(string)
	if !ok {
		return "", fmt.Errorf("want an instance type: %s", describeValue(v))
	}
	if raw, isRaw := strings.CutPrefix(s, spec.RawPrefix); isRaw {
		return "aws.InstanceTypeRaw(" + strconv.Quote(raw) + ")", nil
	}
	family, size, _ := strings.Cut(s, ".")
	if fam, ok := spec.LookupInstanceFamily(family); ok && fam.Has(size) {
		return "aws." + sdkshape.FamilyName(family) + "." + sdkshape.SizeMethod(size) + "()", nil
	}
	return "aws.InstanceTypeRaw(" + strconv.Quote(s) + ")", nil
}

// regionExpr writes a region of provider p: the table's constant for a
// code it knows, RegionRaw for a raw one, else the code as it is, which
// synthesizes the same and which check then names.
func regionExpr(p spec.Provider, code string) string {
	if code == "" {
		return `""` // no placement given
	}
	if raw, isRaw := strings.CutPrefix(code, spec.RawPrefix); isRaw && raw != "" {
		return string(p) + ".RegionRaw(" + strconv.Quote(raw) + ")"
	}
	if l, ok := spec.LocalityOf(p, code); ok {
		return string(p) + "." + sdkshape.RegionName(l)
	}
	return string(p) + ".Region(" + strconv.Quote(code) + ")"
}

// describeValue says what kind of value v is, for an error.
func describeValue(v spec.Value) string {
	switch v.(type) {
	case spec.Lit:
		return "a literal"
	case spec.Ref:
		return "a reference"
	case spec.Observed:
		return "an observed value"
	case spec.Composed:
		return "a composed value"
	case spec.FromEnv:
		return "fromEnv"
	case spec.Import:
		return "another fleet's export"
	}
	return fmt.Sprintf("a %T", v)
}

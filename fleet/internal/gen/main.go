// Command gen writes the generated files of the fleet SDK from spec's
// tables: the portable spec structs (fleet/specs_gen.go), and per cloud the
// kind types, constructors and attribute accessors (kinds_gen.go), the
// region constants (regions_gen.go) and, for AWS, the instance types
// (instancetypes_gen.go). spec is the source of truth; generating from it is
// what keeps "the SDK offers exactly what the cloud has" true as the tables
// grow. Run it with `go generate ./fleet`; a test fails when the committed
// output is stale.
//
// What to generate (names, types, docs, collisions) is decided here in Go;
// the .tmpl files beside it only lay that data out as source.
package main

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/infra-iac/infra/internal/sdkshape"
	"github.com/infra-iac/infra/spec"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	files, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

// handWritten are the identifiers each package declares by hand, so a
// generated name can never collide with one.
var handWritten = map[string][]string{
	"fleet": {"Kind", "BucketKind", "Ref", "BucketRef", "Bucket", "Optional", "Set", "Output", "Lit", "Arg", "SecretArg", "Format", "Join", "Env", "Literals", "SecretSource", "FromEnv", "Composed", "SecretValue", "Fleet", "New", "Forget", "Adopt", "Exclude", "Main", "Run",
		"Interface", "DefineInterface", "ExportValue", "NewExport", "SecretExport", "SecretField", "SecretFrom", "RefField", "RefFrom", "NewSecretExport", "NewSecretStringExport", "Raise", "LitList", "Lifecycle", "AtPlan", "AfterApply", "Observed",
		"Outputs", "Locality", "Global", "AccountLocal", "RegionLocal", "Capability", "ProvideOption", "OneConsumer", "Provide", "Expose", "Slot", "Use", "Wire", "WireOption", "StateAt",
		"Requirement", "PredicateValue", "Equals", "NotEquals", "AtLeast", "Above", "AtMost", "Below", "OneOf", "Anywhere"},
	"aws": {"InstanceType", "InstanceTypeRaw", "Ingress", "PolicyDocument", "Statement", "Effect", "Allow", "Deny",
		"Principal", "PrincipalType", "ServicePrincipal", "AWSPrincipal", "FederatedPrincipal", "AnyPrincipal", "Condition", "AssumedBy", "PolicyVersion"},
}

// pkg is one generated file's package: the names declared in it so far,
// so that two tables producing the same Go name fail here, not in the
// compiler.
type pkg struct {
	name  string
	names map[string]string // identifier -> what declared it, for collisions
}

func newPkg(name string) *pkg {
	p := &pkg{name: name, names: map[string]string{}}
	for _, n := range handWritten[name] {
		p.names[n] = "hand-written"
	}
	return p
}

func (p *pkg) claim(name, what string) error {
	if !token.MatchString(name) {
		return fmt.Errorf("%s: %q is not a Go identifier", what, name)
	}
	if other, ok := p.names[name]; ok {
		return fmt.Errorf("package %s: %s and %s are both named %s", p.name, other, what, name)
	}
	p.names[name] = what
	return nil
}

// token is an identifier the generator may declare: exported, or
// unexported for a helper such as an item's values function.
var token = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// The templates only lay out what the gen* functions below decided: each
// gets plain data (strings, slices, the odd bool) and never consults spec.
//
//go:embed *.tmpl
var templateFiles embed.FS

var templates = parseTemplates()

func parseTemplates() *template.Template {
	t := template.New("gen").Funcs(template.FuncMap{
		"comment": sdkshape.Comment,
		"lines":   sdkshape.Wrap,
		"quote":   strconv.Quote,
		"render":  func(string, any) (string, error) { return "", nil }, // bound below
	})
	t = template.Must(t.ParseFS(templateFiles, "*.tmpl"))
	// render runs a named template to a string, so prose written in a
	// template can still be wrapped into a comment. It needs the parsed set,
	// hence the late binding.
	return t.Funcs(template.FuncMap{"render": func(name string, data any) (string, error) {
		var b strings.Builder
		err := t.ExecuteTemplate(&b, name, data)
		return b.String(), err
	}})
}

// source renders template name over data as package p's file, with its
// header and imports, and gofmts it.
func (p *pkg) source(name string, data any, imports ...string) ([]byte, error) {
	var body, out bytes.Buffer
	if err := templates.ExecuteTemplate(&body, name, data); err != nil {
		return nil, fmt.Errorf("package %s: %v", p.name, err)
	}
	file := struct {
		Package string
		Imports []string
		Body    string
	}{p.name, imports, body.String()}
	if err := templates.ExecuteTemplate(&out, "file.tmpl", file); err != nil {
		return nil, fmt.Errorf("package %s: %v", p.name, err)
	}
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("package %s: %v\n%s", p.name, err, out.Bytes())
	}
	return src, nil
}

// sdkImports are what kinds_gen.go and cloud_gen.go refer to.
var sdkImports = []string{"github.com/infra-iac/infra/fleet", "github.com/infra-iac/infra/fleet/internal/sdk", "github.com/infra-iac/infra/spec"}

func generate() (map[string][]byte, error) {
	files := map[string][]byte{}
	portable, err := genPortable()
	if err != nil {
		return nil, err
	}
	files["specs_gen.go"] = portable
	for _, prov := range spec.Providers {
		dir := string(prov)
		kinds, err := genKinds(prov)
		if err != nil {
			return nil, err
		}
		files[dir+"/kinds_gen.go"] = kinds
		regions, err := genRegions(prov)
		if err != nil {
			return nil, err
		}
		files[dir+"/regions_gen.go"] = regions
		cloud, err := genCloud(prov)
		if err != nil {
			return nil, err
		}
		files[dir+"/cloud_gen.go"] = cloud
	}
	types, err := genInstanceTypes()
	if err != nil {
		return nil, err
	}
	files["aws/instancetypes_gen.go"] = types
	return files, nil
}

// fieldDoc documents a spec field: the table's doc, then what leaving it
// unset means, since that is the question an author has.
const replacesResource = "Changing it replaces the resource."

func fieldDoc(f spec.Field, param bool) string {
	var parts []string
	if f.Doc != "" {
		parts = append(parts, strings.ToUpper(f.Doc[:1])+f.Doc[1:]+".")
	}
	if f.IsRef() && len(f.RefKinds) > 0 {
		var ks []string
		for _, k := range f.RefKinds {
			ks = append(ks, string(k))
		}
		parts = append(parts, "A handle on the "+strings.Join(ks, " or ")+" it uses; the reference is also an ordering edge.")
		if f.Secret {
			parts = append(parts, "It takes a fleet.Ref of this cloud's Secrets kind, or another fleet's secret export read through a slot, given as fleet.SecretFrom[Secrets](export).")
		}
		if f.Wired {
			parts = append(parts, "It takes a fleet.Ref, or another fleet's export of the resource's identity read through a slot, given as fleet.RefFrom[K](export) with K the handle's kind.")
		}
	}
	if f.RegionLocal {
		parts = append(parts, "It must be in the same region as this resource.")
	}
	switch {
	case f.Expr && f.Type == spec.TypeStringMap:
		parts = append(parts, "Each value may be known only after apply (an Output); fleet.Literals lifts a plain map.")
	case f.Expr && f.Type == spec.TypeStringList:
		parts = append(parts, "Each value may be known only after apply (an Output, such as another resource's ARNOf); fleet.Lit gives a value you have.")
	case f.Expr:
		parts = append(parts, "It may be known only after apply (an Output); fleet.Lit gives a value you have.")
	case f.Name == "instanceType":
		parts = append(parts, "Written family then size, such as T3.Micro(); InstanceTypeRaw reaches a type the table lacks.")
	}
	if f.Replace {
		parts = append(parts, replacesResource)
	}
	if f.Compare == spec.CompareNever {
		parts = append(parts, "It shapes creation only and is never compared.")
	} else if f.Compare == spec.CompareSet && (f.Type == spec.TypeStringList || f.Type == spec.TypeIngress) {
		parts = append(parts, "Order does not matter.")
	}
	if !param {
		if f.Default != nil {
			parts = append(parts, fmt.Sprintf("Unset, it stays unknown (never compared) and is created as %s.", showDefault(f.Default)))
		} else {
			parts = append(parts, "Unset, it stays unknown (never compared) and the cloud picks at create.")
		}
	}
	return strings.Join(parts, " ")
}

func showDefault(v any) string {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return "empty"
		}
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// structData is a spec struct: the portable fleet.<Kind>Spec or a cloud's
// own <Kind>Spec. Kind, KindDoc, Cloud and Constructor feed its doc.
type structData struct {
	Name, Kind, KindDoc, Cloud, Constructor string
	Fields                                  []fieldData
}

// fieldData is one field of a spec struct.
type fieldData struct {
	Name, Field, Type, Doc string
}

// structFields are the struct fields of options, typed for package pkgName.
func structFields(pkgName string, prov spec.Provider, info *spec.KindInfo, options []spec.Field) ([]fieldData, error) {
	var out []fieldData
	for _, f := range options {
		typ, err := sdkshape.GoType(pkgName, prov, info, f, false)
		if err != nil {
			return nil, err
		}
		out = append(out, fieldData{Name: sdkshape.GoName(f.Name), Field: f.Name, Type: typ.Name, Doc: fieldDoc(f, false)})
	}
	return out, nil
}

func genPortable() ([]byte, error) {
	p := newPkg("fleet")
	var specs []structData
	for _, info := range spec.Kinds() {
		if !info.Portable {
			continue
		}
		_, name := sdkshape.SpecStruct("", info)
		s := structData{Name: name, Kind: string(info.Kind), KindDoc: info.Doc, Constructor: sdkshape.KindType("", info.Kind)}
		if err := p.claim(s.Name, "the spec of "+string(info.Kind)); err != nil {
			return nil, err
		}
		fields, err := structFields("fleet", "", info, sdkshape.PortableOptions(info))
		if err != nil {
			return nil, err
		}
		s.Fields = fields
		specs = append(specs, s)
	}
	return p.source("specs.tmpl", specs)
}

// kindsData is a cloud's kinds_gen.go.
type kindsData struct {
	Kinds        []kindData
	Constructors []ctorData
	Attributes   []attrData
}

// kindData is a kind's type; Attrs are the Go names of its attributes.
type kindData struct {
	Type, Kind, KindDoc, Cloud, Provider string
	Bucket                               bool
	Attrs                                []string
}

// attrData is an attribute's constraint and accessor; Kinds lists the kind
// types publishing it, for the docs.
type attrData struct {
	Attr, Name, Constraint, Accessor, Cloud, Kinds, Out string
}

func genKinds(prov spec.Provider) ([]byte, error) {
	p := newPkg(string(prov))
	var d kindsData
	attrs := map[string][]string{} // attribute -> kind types publishing it
	kinds := spec.KindsOf(prov)
	for _, info := range kinds {
		k := kindData{Type: sdkshape.KindType(prov, info.Kind), Kind: string(info.Kind), KindDoc: info.Doc,
			Cloud: sdkshape.ProviderName(prov), Provider: string(prov), Bucket: info.Physical == "bucket"}
		if err := p.claim(k.Type, "the kind "+string(info.Kind)); err != nil {
			return nil, err
		}
		for _, a := range info.Attributes {
			attrs[a] = append(attrs[a], k.Type)
			k.Attrs = append(k.Attrs, sdkshape.GoName(a))
		}
		d.Kinds = append(d.Kinds, k)
	}
	for _, info := range kinds {
		c, err := constructorOf(p, prov, info)
		if err != nil {
			return nil, err
		}
		d.Constructors = append(d.Constructors, c)
	}
	for _, a := range slices.Sorted(maps.Keys(attrs)) {
		an := sdkshape.GoName(a)
		ad := attrData{Attr: a, Name: an, Constraint: "Has" + an, Accessor: an + "Of",
			Cloud: sdkshape.ProviderName(prov), Kinds: strings.Join(attrs[a], ", "), Out: "string"}
		if err := p.claim(ad.Constraint, "the constraint of attribute "+a); err != nil {
			return nil, err
		}
		if err := p.claim(ad.Accessor, "the accessor of attribute "+a); err != nil {
			return nil, err
		}
		if a == "port" {
			ad.Out = "int"
		}
		d.Attributes = append(d.Attributes, ad)
	}
	return p.source("kinds.tmpl", d, sdkImports...)
}

// ctorData is a kind's constructor and, when the kind is not portable, the
// spec struct it takes (Spec; nil otherwise).
type ctorData struct {
	Type, Kind, KindDoc, Cloud, Provider, SpecType string
	Spec                                           *structData
	// Items are the item structs of the kind's TypeObjects fields.
	Items  []itemData
	Params []fieldData // Name is the parameter's
	Values []valueData
}

// itemData is the struct of one item of a TypeObjects field, and the
// function that hands a map of them to fleet.
type itemData struct {
	Name, Func, Field, Kind string
	Fields                  []fieldData
}

// itemsOf are the item structs of info's TypeObjects fields on prov.
func itemsOf(p *pkg, prov spec.Provider, info *spec.KindInfo) ([]itemData, error) {
	var out []itemData
	for _, f := range info.Fields {
		if f.Type != spec.TypeObjects || !f.UsedOn(prov) {
			continue
		}
		it := itemData{Name: sdkshape.ItemType(prov, info, f), Func: sdkshape.ItemValues(prov, info, f), Field: f.Name, Kind: string(info.Kind)}
		for _, id := range []string{it.Name, it.Func} {
			if err := p.claim(id, "the items of "+string(info.Kind)+"."+f.Name); err != nil {
				return nil, err
			}
		}
		for _, sub := range f.Of {
			t, err := sdkshape.GoType(p.name, prov, info, sub, sub.Required)
			if err != nil {
				return nil, err
			}
			doc := fieldDoc(sub, sub.Required)
			// A forcing item field remakes the item, not the resource.
			doc = strings.Replace(doc, replacesResource, "Changing it deletes the item and makes it again; the resource stays.", 1)
			it.Fields = append(it.Fields, fieldData{Name: sdkshape.GoName(sub.Name), Field: sub.Name, Type: t.Name, Doc: doc})
		}
		out = append(out, it)
	}
	return out, nil
}

// valueData is one sdk.Field the constructor hands to fleet: Expr is the Go
// expression of its value.
type valueData struct {
	Field, Expr string
}

func constructorOf(p *pkg, prov spec.Provider, info *spec.KindInfo) (ctorData, error) {
	typ := sdkshape.KindType(prov, info.Kind)
	specPkg, specName := sdkshape.SpecStruct(prov, info)
	c := ctorData{Type: typ, Kind: string(info.Kind), KindDoc: info.Doc, Cloud: sdkshape.ProviderName(prov),
		Provider: string(prov), SpecType: specPkg + "." + specName}
	params, options := sdkshape.FieldsOf(prov, info)
	items, err := itemsOf(p, prov, info)
	if err != nil {
		return c, err
	}
	c.Items = items
	if info.Portable {
		if err := samePortableOptions(prov, info, options); err != nil {
			return c, err
		}
	} else {
		c.SpecType = specName // declared in this package
		if err := p.claim(c.SpecType, "the spec of "+string(info.Kind)); err != nil {
			return c, err
		}
		fields, err := structFields(p.name, prov, info, options)
		if err != nil {
			return c, err
		}
		c.Spec = &structData{Name: c.SpecType, Kind: c.Kind, Cloud: c.Cloud, Fields: fields}
	}
	for _, f := range params {
		t, err := sdkshape.GoType(p.name, prov, info, f, true)
		if err != nil {
			return c, err
		}
		pn := sdkshape.ParamName(f.Name)
		c.Params = append(c.Params, fieldData{Name: pn, Field: f.Name, Type: t.Name, Doc: fieldDoc(f, true)})
		c.Values = append(c.Values, valueData{Field: f.Name, Expr: strings.ReplaceAll(t.Expr, "$", pn)})
	}
	for _, f := range options {
		t, err := sdkshape.GoType(p.name, prov, info, f, false)
		if err != nil {
			return c, err
		}
		c.Values = append(c.Values, valueData{Field: f.Name, Expr: strings.ReplaceAll(t.Expr, "$", "opts."+sdkshape.GoName(f.Name))})
	}
	return c, nil
}

// samePortableOptions refuses a cloud whose options for a portable kind are
// not the portable spec's fields: the constructor takes fleet.<Kind>Spec,
// so an override must apply to every cloud.
func samePortableOptions(prov spec.Provider, info *spec.KindInfo, options []spec.Field) error {
	var want, got []string
	for _, f := range sdkshape.PortableOptions(info) {
		want = append(want, f.Name)
	}
	for _, f := range options {
		got = append(got, f.Name)
	}
	if strings.Join(want, ",") != strings.Join(got, ",") {
		return fmt.Errorf("%s on %s: options %v differ from the portable spec's %v; an override must apply to every cloud", info.Kind, prov, got, want)
	}
	return nil
}

// accountWords says what a cloud's account is, for Use's doc.
var accountWords = map[spec.Provider][2]string{
	spec.AWS:      {"account", "the AWS account id (12 digits)"},
	spec.Scaleway: {"project", "the Scaleway project id (a lowercase UUID)"},
	spec.GCP:      {"project", "the GCP project id (6 to 30 lowercase letters, digits and hyphens)"},
}

// genCloud writes what every cloud package has: its Cloud, Use, In, Region,
// RegionRaw and SecretValueOf. Generated rather than written twice, so the
// clouds cannot drift apart in how they place and declare.
func genCloud(prov spec.Provider) ([]byte, error) {
	p := newPkg(string(prov))
	words, ok := accountWords[prov]
	if !ok {
		return nil, fmt.Errorf("%s: say what its account is in accountWords", prov)
	}
	// Other names another cloud's package, whose Region does not compile here.
	other := "scaleway"
	if prov != spec.AWS {
		other = "aws"
	}
	for _, n := range []string{"Cloud", "Use", "Region", "RegionRaw", "SecretValueOf"} {
		if err := p.claim(n, "the cloud scaffolding"); err != nil {
			return nil, err
		}
	}
	data := struct{ Cloud, Account, AccountDoc, Provider, Other string }{
		sdkshape.ProviderName(prov), words[0], words[1], string(prov), other}
	return p.source("cloud.tmpl", data, sdkImports...)
}

// regionData is one region constant.
type regionData struct {
	Name, Locality, Code string
}

func genRegions(prov spec.Provider) ([]byte, error) {
	p := newPkg(string(prov))
	var regions []regionData
	for _, l := range spec.Localities() {
		code, ok := spec.RegionAt(prov, l)
		if !ok {
			continue
		}
		name := sdkshape.RegionName(l)
		if err := p.claim(name, "the locality "+string(l)); err != nil {
			return nil, err
		}
		regions = append(regions, regionData{Name: name, Locality: string(l), Code: code})
	}
	data := struct {
		Cloud   string
		Regions []regionData
	}{sdkshape.ProviderName(prov), regions}
	return p.source("regions.tmpl", data)
}

// familyData is an instance family: its type Type, its constant Name, and
// a method per size.
type familyData struct {
	Name, Type, Family, SizeList string
	Sizes                        []sizeData
}

// sizeData is one size's method on its family's Type; Name is the instance
// type it returns.
type sizeData struct {
	Method, Family, Size, Type, Name string
}

func genInstanceTypes() ([]byte, error) {
	p := newPkg("aws")
	var families []familyData
	for _, fam := range spec.InstanceFamilies() {
		name := sdkshape.FamilyName(fam.Name)
		d := familyData{Name: name, Type: "Family" + name, Family: fam.Name, SizeList: strings.Join(fam.Sizes, ", ")}
		if err := p.claim(d.Name, "the instance family "+fam.Name); err != nil {
			return nil, err
		}
		if err := p.claim(d.Type, "the type of instance family "+fam.Name); err != nil {
			return nil, err
		}
		methods := map[string]string{} // method -> the size it names, for collisions
		for _, size := range fam.Sizes {
			m := sdkshape.SizeMethod(size)
			if !token.MatchString(m) {
				return nil, fmt.Errorf("instance size %q: %q is not a Go identifier; teach sizeMethod", size, m)
			}
			if other, ok := methods[m]; ok {
				return nil, fmt.Errorf("instance family %s: sizes %q and %q are both %s", fam.Name, other, size, m)
			}
			methods[m] = size
			d.Sizes = append(d.Sizes, sizeData{Method: m, Family: fam.Name, Size: size, Type: d.Type, Name: fam.Name + "." + size})
		}
		families = append(families, d)
	}
	return p.source("instancetypes.tmpl", families)
}

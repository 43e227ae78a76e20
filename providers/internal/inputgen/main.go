// Command inputgen writes providers/inputs_gen.go from spec's field table:
// per kind a <Kind>Input struct with one Go field per spec field, its
// Has<Field> methods, a Decode<Kind> function, and a constant per field name
// for comparing Update's changed list. Drivers read their targets through
// these, so a misspelled field fails to compile instead of reading
// nothing. Run it with `go generate ./providers`; a test fails when the
// committed file is stale.
//
// Names and types are decided here; inputs.tmpl only lays them out.
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/format"
	"os"
	"strconv"
	"text/template"

	"github.com/infra-iac/infra/internal/goname"
	"github.com/infra-iac/infra/spec"
)

const outFile = "inputs_gen.go"

func main() {
	src, err := generate()
	if err == nil {
		err = os.WriteFile(outFile, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "inputgen:", err)
		os.Exit(1)
	}
}

//go:embed inputs.tmpl
var tmplText string

var tmpl = template.Must(template.New("inputs").Parse(tmplText))

// kindData is one kind's input struct, and the structs of its fields'
// items (a TypeObjects field's).
type kindData struct {
	Kind, Type, Decode string
	Fields             []fieldData
	Items              []itemData
}

// itemData is the struct of one item of a TypeObjects field.
type itemData struct {
	Field, Type, Decode string
	Fields              []fieldData
}

// fieldData is one spec field: its Go field, its name constant, the Go
// type, the decoder method that reads it, and its bit in the set mask.
type fieldData struct {
	Name, GoName, Const, GoType, Method, Spec string
	Bit                                       int
	// ItemDecode decodes one item of a TypeObjects field.
	ItemDecode string
}

func generate() ([]byte, error) {
	names := map[string]string{} // identifier -> what declared it
	claim := func(id, what string) error {
		if other, ok := names[id]; ok {
			return fmt.Errorf("%s and %s are both named %s", other, what, id)
		}
		names[id] = what
		return nil
	}
	var file struct {
		Kinds []kindData
		Spec  bool // a field's type is spec's (spec.Sensitive)
	}
	for _, info := range spec.Kinds() {
		k, err := kindOf(info, claim)
		if err != nil {
			return nil, err
		}
		for _, f := range k.Fields {
			file.Spec = file.Spec || f.Method == "secret"
		}
		file.Kinds = append(file.Kinds, k)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, file); err != nil {
		return nil, err
	}
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%v\n%s", err, out.Bytes())
	}
	return src, nil
}

func kindOf(info *spec.KindInfo, claim func(id, what string) error) (kindData, error) {
	base := goname.Of(string(info.Kind))
	k := kindData{Kind: string(info.Kind), Type: base + "Input", Decode: "Decode" + base}
	if len(info.Fields) > 64 {
		return k, fmt.Errorf("%s: %d fields do not fit the 64-bit set mask", info.Kind, len(info.Fields))
	}
	for _, id := range []string{k.Type, k.Decode} {
		if err := claim(id, "the kind "+k.Kind); err != nil {
			return k, err
		}
	}
	for i, f := range info.Fields {
		typ, method, err := goType(f)
		if err != nil {
			return k, fmt.Errorf("%s field %s: %v", info.Kind, f.Name, err)
		}
		fd := fieldData{Name: f.Name, GoName: goname.Of(f.Name), GoType: typ, Method: method, Spec: describe(f), Bit: i}
		fd.Const = base + fd.GoName
		if err := claim(fd.Const, "field "+f.Name+" of "+k.Kind); err != nil {
			return k, err
		}
		if f.Type == spec.TypeObjects {
			item, err := itemOf(base+fd.GoName, k.Kind+"."+f.Name, f, claim)
			if err != nil {
				return k, err
			}
			fd.GoType, fd.ItemDecode = "map[string]"+item.Type, item.Decode
			k.Items = append(k.Items, item)
		}
		k.Fields = append(k.Fields, fd)
	}
	return k, nil
}

// itemOf is the struct of the items of TypeObjects field f, named base.
func itemOf(base, what string, f spec.Field, claim func(id, what string) error) (itemData, error) {
	item := itemData{Field: what, Type: base + "Item", Decode: "decode" + base + "Item"}
	if len(f.Of) == 0 || len(f.Of) > 64 {
		return item, fmt.Errorf("%s: %d item fields, want 1 to 64", what, len(f.Of))
	}
	for _, id := range []string{item.Type, item.Decode} {
		if err := claim(id, "the items of "+what); err != nil {
			return item, err
		}
	}
	for i, sub := range f.Of {
		typ, method, err := goType(sub)
		if err != nil || sub.Type == spec.TypeObjects || sub.IsRef() || sub.Secret {
			return item, fmt.Errorf("%s item field %s: want a plain type, got %s", what, sub.Name, sub.Type)
		}
		fd := fieldData{Name: sub.Name, GoName: goname.Of(sub.Name), GoType: typ, Method: method, Spec: describe(sub), Bit: i}
		fd.Const = strconv.Quote(sub.Name)
		item.Fields = append(item.Fields, fd)
	}
	return item, nil
}

// goType is the Go type of a field's resolved value, as the engine hands it
// (references are the referenced name; a secret is a spec.Sensitive), and
// the decoder method that reads it.
func goType(f spec.Field) (typ, method string, err error) {
	switch {
	case f.Secret && (f.Type == spec.TypeRef || f.Type == spec.TypeSecretSource || f.Type == spec.TypeString):
		return "spec.Sensitive", "secret", nil
	case f.Type == spec.TypeString, f.Type == spec.TypeRef:
		return "string", "str", nil
	case f.Type == spec.TypeInt, f.Type == spec.TypeNumber:
		return "float64", "number", nil
	case f.Type == spec.TypeBool:
		return "bool", "boolean", nil
	case f.Type == spec.TypeStringList:
		return "[]string", "strings", nil
	case f.Type == spec.TypeStringMap, f.Type == spec.TypeRefMap:
		// A secretEnv's references arrive as the secrets' values, which
		// FieldStringMap reveals.
		return "map[string]string", "stringMap", nil
	case f.Type == spec.TypeIngress:
		// The driver checks each rule, naming the rule in its errors.
		return "[]any", "list", nil
	case f.Type == spec.TypeObjects:
		// kindOf names the item struct.
		return "", "objects", nil
	}
	return "", "", fmt.Errorf("the generator has no Go type for %s; teach goType one", f.Type)
}

// describe says what the field's value is once resolved.
func describe(f spec.Field) string {
	switch {
	case f.Secret && f.Type != spec.TypeRefMap:
		return "a secret's value"
	case f.Secret:
		return "an object of secrets' values"
	case f.Type == spec.TypeRef:
		return "a reference, resolved to the referenced resource's name"
	case f.Type == spec.TypeRefMap:
		return "an object of references, each resolved to the referenced resource's name"
	}
	return f.Type.String()
}

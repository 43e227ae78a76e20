package spec

import (
	"strings"
	"testing"
)

var indexes = Field{Name: "indexes", Type: TypeObjects, Item: "index", Of: []Field{
	{Name: "hashKey", Type: TypeString, Required: true, Replace: true},
	{Name: "readCapacity", Type: TypeInt},
	{Name: "nonKeyAttributes", Type: TypeStringList, Compare: CompareSet},
}}

func TestObjectsDecode(t *testing.T) {
	v, err := Decode(indexes, map[string]any{"by-user": map[string]any{"hashKey": "user", "readCapacity": 5.0}})
	if err != nil {
		t.Fatal(err)
	}
	want := Map{"by-user": Map{"hashKey": Lit{"user"}, "readCapacity": Lit{5.0}}}
	if Encode(v) == nil || !Equal(indexes, Encode(v), Encode(want)) {
		t.Errorf("Decode = %#v, want %#v", v, want)
	}
	for _, tc := range []struct {
		raw  any
		want string
	}{
		{[]any{}, "want an object of objects"},
		{map[string]any{"a": "x"}, `"a": want an object, got the string "x"`},
		{map[string]any{"a": map[string]any{}}, `"a": missing required field "hashKey"`},
		{map[string]any{"a": map[string]any{"hashKey": "k", "hashkey": "k"}}, `"a": unknown field "hashkey" (known: hashKey, readCapacity, nonKeyAttributes)`},
		{map[string]any{"a": map[string]any{"hashKey": "k", "readCapacity": 1.5}}, `"a": field "readCapacity": want an integer`},
		{map[string]any{"a": map[string]any{"hashKey": map[string]any{"ref": "aws/x/y"}}}, `"a": field "hashKey": want a string`},
	} {
		_, err := Decode(indexes, tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%v) = %v, want an error with %q", tc.raw, err, tc.want)
		}
	}
}

// Items compare by name, and within an item only the fields the target
// sets, each under its own rule.
func TestObjectsEqual(t *testing.T) {
	target := map[string]any{"a": map[string]any{"hashKey": "k", "nonKeyAttributes": []any{"x", "y"}}}
	for _, tc := range []struct {
		reported any
		equal    bool
	}{
		{map[string]any{"a": map[string]any{"hashKey": "k", "nonKeyAttributes": []any{"y", "x"}, "readCapacity": 5}}, true},
		{map[string]any{"a": map[string]any{"hashKey": "j", "nonKeyAttributes": []any{"x", "y"}}}, false},
		{map[string]any{"a": map[string]any{"hashKey": "k"}}, false},
		{map[string]any{"b": map[string]any{"hashKey": "k", "nonKeyAttributes": []any{"x", "y"}}}, false},
		{map[string]any{}, false},
		{nil, false},
		{"a", false},
	} {
		if got := Equal(indexes, target, tc.reported); got != tc.equal {
			t.Errorf("Equal(%v, %v) = %v, want %v", target, tc.reported, got, tc.equal)
		}
	}
	if !Equal(indexes, map[string]any{}, map[string]any{}) {
		t.Error("no items equal no items")
	}
}

// A field of items names its item fields and nothing else does; they are
// of the plain types.
func TestObjectsFieldsInTheTable(t *testing.T) {
	for _, info := range Kinds() {
		for _, f := range info.Fields {
			if (f.Type == TypeObjects) != (len(f.Of) > 0) {
				t.Errorf("%s.%s: Of is for a field of type %s only", info.Kind, f.Name, TypeObjects)
			}
			if f.Type == TypeObjects && f.Item == "" {
				t.Errorf("%s.%s: a field of items names one (Item)", info.Kind, f.Name)
			}
			for _, sub := range f.Of {
				switch sub.Type {
				case TypeString, TypeInt, TypeNumber, TypeBool, TypeStringList:
				default:
					t.Errorf("%s.%s.%s: item fields are of the plain types, not %s", info.Kind, f.Name, sub.Name, sub.Type)
				}
				if sub.Expr || sub.Secret || len(sub.RefKinds) > 0 {
					t.Errorf("%s.%s.%s: item fields are literals", info.Kind, f.Name, sub.Name)
				}
			}
		}
	}
}

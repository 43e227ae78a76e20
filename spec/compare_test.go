package spec

import "testing"

func TestEqualRules(t *testing.T) {
	version := Field{Name: "engineVersion", Type: TypeString, Compare: CompareVersion}
	set := Field{Name: "policies", Type: TypeStringList, Compare: CompareSet}
	exact := Field{Name: "visibilityTimeoutSec", Type: TypeInt}
	values := Field{Name: "securityGroups", Type: TypeRefMap, Compare: CompareValues}
	doc := Field{Name: "filterPolicy", Type: TypeString, Compare: CompareJSON}
	for _, c := range []struct {
		f    Field
		a, b any
		want bool
	}{
		{version, "16", "16.6", true},
		{version, "16", "16", true},
		{version, "16", "160.1", false},
		{version, "16.6", "16.4", false},
		{set, []any{"a", "b"}, []string{"b", "a"}, true},
		{set, []any{"a"}, []any{"a", "a"}, false},
		{exact, 30.0, int32(30), true},
		{exact, 30.0, 31, false},
		{values, map[string]any{"web": "sg-1", "db": "sg-2"}, map[string]any{"sg-2": "sg-2", "sg-1": "sg-1"}, true},
		{values, map[string]any{"web": "sg-1"}, map[string]any{"sg-1": "sg-1", "sg-2": "sg-2"}, false},
		{values, map[string]any{"web": "sg-1", "db": "sg-1"}, map[string]any{"sg-1": "sg-1"}, false},
		{values, map[string]any{"web": "sg-1"}, "sg-1", false},
		{doc, `{"event": ["created"], "n": [{"numeric": [">", 1]}]}`, `{"n":[{"numeric":[">",1.0]}],"event":["created"]}`, true},
		{doc, `{"event": ["created"]}`, `{"event": ["deleted"]}`, false},
		{doc, `{"event": ["a", "b"]}`, `{"event": ["b", "a"]}`, false},
		{doc, "", "", true},
		{doc, "", `{}`, false},
		{doc, "{not json", "{not json", true},
	} {
		if got := Equal(c.f, c.a, c.b); got != c.want {
			t.Errorf("%s: Equal(%v, %v) = %v, want %v", c.f.Name, c.a, c.b, got, c.want)
		}
	}
}

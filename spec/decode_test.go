package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// decodeErr decodes data and returns the error's text, failing the test
// when the document decodes.
func decodeErr(t *testing.T, data string) string {
	t.Helper()
	_, err := DecodeDocument([]byte(data))
	if err == nil {
		t.Fatalf("decoded without error:\n%s", data)
	}
	return err.Error()
}

// A key written twice in one object is refused wherever the object is:
// otherwise the last one silently wins, and the fleet's name becomes the
// ownership tag. The error names the key and both places.
func TestDecodeRefusesDuplicateKeys(t *testing.T) {
	for name, c := range map[string]struct{ doc, want string }{
		"top level": {"{\"apiVersion\": \"infra/v1\",\n  \"fleet\": \"x\",\n  \"fleet\": \"y\"}",
			`line 3, column 3: duplicate key "fleet" (first at line 2, column 3)`},
		"escaped spelling": {`{"fleet": "x", "fl\u0065et": "y"}`,
			`line 1, column 16: duplicate key "fleet" (first at line 1, column 2)`},
		"resource": {"{\"resources\": [\n {\"address\": \"aws/queues/a\",\n  \"address\": \"aws/queues/b\"}]}",
			`line 3, column 3: duplicate key "address" (first at line 2, column 3)`},
		"spec field": {"{\"resources\": [{\"address\": \"aws/object-store/a\", \"spec\": {\n \"versioning\": true,\n \"versioning\": false}}]}",
			`line 3, column 2: duplicate key "versioning" (first at line 2, column 2)`},
		"inside a field value": {"{\"resources\": [{\"address\": \"aws/queues/a\", \"spec\": {\"tags\": {\"team\": \"a\",\n \"team\": \"b\"}}}]}",
			`line 2, column 2: duplicate key "team" (first at line 1, column 62)`},
		"exclusion":    {`{"exclusions": [{"address": "aws/queues/x", "why": "a", "why": "b"}]}`, `duplicate key "why"`},
		"accounts":     {`{"accounts": {"aws": "123456789012", "aws": "210987654321"}}`, `duplicate key "aws"`},
		"placement":    {`{"placement": {"aws": "eu-west-3", "aws": "eu-west-1"}}`, `duplicate key "aws"`},
		"unknown key":  {`{"wiring": {"a": 1, "a": 2}}`, `duplicate key "a"`},
		"in a list":    {`{"resources": [{"address": "aws/iam/a", "spec": {"policies": [{"x": 1, "x": 1}]}}]}`, `duplicate key "x"`},
		"control char": {`{"a\u001b[2J": 1, "a\u001b[2J": 2}`, `duplicate key "a\u001b[2J"`},
	} {
		t.Run(name, func(t *testing.T) {
			got := decodeErr(t, c.doc)
			if !strings.Contains(got, c.want) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if strings.ContainsRune(got, 0x1b) {
				t.Errorf("the error holds a raw escape: %q", got)
			}
		})
	}
	// Keys that differ only in case are two keys: a document's keys are
	// exact, so "Address" is an unknown key, not a second address.
	d, err := DecodeDocument([]byte(`{"resources": [{"address": "aws/queues/a", "Address": "aws/queues/b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Resources[0].Address != "aws/queues/a" || !reflect.DeepEqual(d.Resources[0].UnknownKeys(), []string{"Address"}) {
		t.Errorf("address %q, unknown keys %v", d.Resources[0].Address, d.Resources[0].UnknownKeys())
	}
}

// A known key of the wrong JSON shape is refused in the document's own
// words, with its line and column: never a Go type.
func TestDecodeShapeErrorsInTheDocumentsTerms(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"[1, 2]", `line 1, column 1: a fleet document must be an object ({…}), not a list`},
		{`"fleet"`, `line 1, column 1: a fleet document must be an object ({…}), not a string`},
		{"{\n  \"apiVersion\": \"infra/v1\",\n  \"resources\": {}}", `line 3, column 16: "resources" must be a list of resources, not an object`},
		{`{"resources": [1]}`, `line 1, column 16: resource 1 must be an object with "address", "region" and "spec", not a number`},
		{`{"resources": [{}, {"address": 7}]}`, `line 1, column 32: "address" of resource 2 must be a string, not a number`},
		{`{"resources": [{"address": "a", "region": true}]}`, `line 1, column 43: "region" of resource 1 must be a string, not true`},
		{`{"resources": [{"spec": []}]}`, `line 1, column 25: "spec" of resource 1 must be an object of fields, not a list`},
		{`{"accounts": []}`, `line 1, column 14: "accounts" must be an object of provider to account id, such as {"aws": "123456789012"}, not a list`},
		{`{"accounts": {"aws": 1}}`, `line 1, column 22: the account of "aws" in "accounts" must be a string, not a number`},
		{`{"placement": "eu-west-3"}`, `line 1, column 15: "placement" must be an object of provider to region, such as {"aws": "eu-west-3"}, not a string`},
		{`{"exclusions": {}}`, `line 1, column 16: "exclusions" must be a list of exclusions, not an object`},
		{`{"exclusions": [{"why": 1}]}`, `line 1, column 25: "why" of exclusion 1 must be a string, not a number`},
		{`{"forget": "aws/queues/x"}`, `line 1, column 12: "forget" must be a list of addresses, not a string`},
		{`{"forget": ["a", false]}`, `line 1, column 18: item 2 of "forget" must be a string (an address), not false`},
		{`{"fleet": 3}`, `line 1, column 11: "fleet" must be a string, not a number`},
		{`{"apiVersion": {}}`, `line 1, column 16: "apiVersion" must be a string, such as "infra/v1", not an object`},
		{`{"resources": [{"spec": {"a": 1e400}}]}`, `line 1, column 31: the number 1e400 is too large`},
	} {
		got := decodeErr(t, c.doc)
		if !strings.HasSuffix(got, c.want) {
			t.Errorf("%s\ngot  %s\nwant %s", c.doc, got, c.want)
		}
		for _, goism := range []string{"Go value", "Go struct", "spec.", "json:", "map[", "[]", "interface", "unmarshal", "RawMessage"} {
			if strings.Contains(got, goism) {
				t.Errorf("%s: the error speaks Go (%q): %s", c.doc, goism, got)
			}
		}
		var de *DecodeError
		if _, err := DecodeDocument([]byte(c.doc)); !errors.As(err, &de) || de.Line < 1 || de.Column < 1 {
			t.Errorf("%s: %v is not a DecodeError with a position", c.doc, err)
		}
	}
}

// A syntax error says where and what, in words.
func TestDecodeSyntaxErrorsInWords(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"", `line 1, column 1: the document is empty`},
		{"{\"apiVersion\": \"infra/v1\",\n  \"fleet\": ]", `line 2, column 12: expected a value (an object, a list, a string, a number, true, false or null), found ']'`},
		{`{"fleet": "a",}`, `line 1, column 15: expected a key in double quotes, found '}': JSON allows no comma before '}'`},
		{`{"forget": ["a",]}`, `line 1, column 17: expected a value (an object, a list, a string, a number, true, false or null), found ']': JSON allows no comma before ']'`},
		{`{"fleet" "a"}`, `line 1, column 10: expected ':' after the key "fleet", found '"'`},
		{`{"fleet": "a" "b"}`, `line 1, column 15: expected ',' or '}' after the value of "fleet", found '"'`},
		{`{"forget": ["a" "b"]}`, `line 1, column 17: expected ',' or ']' after item 1 of the list, found '"'`},
		{"{\"fleet\": \"a\n\"}", `line 1, column 13: a string may not hold a raw control character (\u000a); write it as an escape, such as \n`},
		{`{"fleet": "a\qb"}`, `line 1, column 13: invalid escape '\q' in a string; the escapes are \" \\ \/ \b \f \n \r \t and \uXXXX`},
		{`{"fleet": "abc`, `line 1, column 11: the string that starts here is not closed`},
		{"{\"resources\": [\n  {\"address\": \"a\"}", `line 1, column 15: the document ends before the list that starts here is closed`},
		{`{"a": -}`, `line 1, column 8: a number needs a digit after '-'`},
		{`{"a": 1.}`, `line 1, column 9: a number needs a digit after its '.'`},
		{`{"a": tru}`, `line 1, column 7: expected a value (an object, a list, a string, a number, true, false or null), found 't'`},
		{`{} {}`, `line 1, column 4: unexpected '{' after the end of the document; a file holds one document`},
		{"{\"a\": \x1b[2J}", `line 1, column 7: expected a value (an object, a list, a string, a number, true, false or null), found '\u001b'`},
	} {
		got := decodeErr(t, c.doc)
		if !strings.HasSuffix(got, c.want) {
			t.Errorf("%q\ngot  %s\nwant %s", c.doc, got, c.want)
		}
		if !strings.HasPrefix(got, "the fleet document is not valid JSON: ") {
			t.Errorf("%q: a syntax error should say so: %s", c.doc, got)
		}
		if strings.Contains(got, "invalid character") || strings.ContainsRune(got, 0x1b) {
			t.Errorf("%q: %q", c.doc, got)
		}
	}
}

// The depth limit is said in words, at the place it is passed; a document
// exactly at the limit decodes.
func TestDecodeDepthLimit(t *testing.T) {
	// The document is one level, resources two, a resource three, its spec
	// four, a field's value five and deeper.
	deep := func(levels int) string {
		inner := strings.Repeat("[", levels-4) + strings.Repeat("]", levels-4)
		return `{"resources": [{"address": "aws/iam/a", "spec": {"policies": ` + inner + `}}]}`
	}
	if _, err := DecodeDocument([]byte(deep(MaxDepth))); err != nil {
		t.Fatalf("a document %d levels deep: %v", MaxDepth, err)
	}
	got := decodeErr(t, deep(MaxDepth+1))
	want := "line 1, column 158: the document is nested more than 100 levels deep (objects and lists within one another); infra reads at most 100"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Far deeper input fails the same way, without exhausting anything.
	if got := decodeErr(t, strings.Repeat(`{"a":`, 1_000_000)); !strings.Contains(got, "nested more than 100 levels deep") {
		t.Errorf("got %s", got)
	}
}

// A UTF-8 byte order mark, which some editors write, is accepted and
// ignored; UTF-16 is refused with what to do.
func TestDecodeByteOrderMark(t *testing.T) {
	plain := `{"apiVersion": "infra/v1", "fleet": "shop", "resources": []}`
	want, err := DecodeDocument([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDocument(append([]byte("\xef\xbb\xbf"), plain...))
	if err != nil {
		t.Fatalf("a UTF-8 byte order mark: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with a byte order mark: %#v, want %#v", got, want)
	}
	for _, data := range []string{"\xff\xfe{\x00}\x00", "\xfe\xff\x00{\x00}", "{\x00}\x00"} {
		msg := decodeErr(t, data)
		if !strings.Contains(msg, "UTF-16") || !strings.Contains(msg, "save it as UTF-8") {
			t.Errorf("%q: %s", data, msg)
		}
	}
	// Elsewhere it is not white space.
	if msg := decodeErr(t, "{\xef\xbb\xbf}"); !strings.Contains(msg, `found '\ufeff'`) {
		t.Errorf("%s", msg)
	}
}

// Values decode as encoding/json decodes them into any: a document means
// the same whichever decoder reads it.
func TestDecodeValuesAsJSONDoes(t *testing.T) {
	spec := `{"s": "a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude80\ud800x", "bad": "` + "\xff" + `", "n": [0, -0.5, 1e3, 12345678901234567890],
		"t": true, "f": false, "z": null, "o": {"k": [{}, []]}}`
	d, err := DecodeDocument([]byte(`{"resources": [{"address": "aws/iam/a", "spec": ` + spec + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(spec), &want); err != nil {
		t.Fatal(err)
	}
	if got := d.Resources[0].Spec; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}

// An object with many keys is checked as one with few.
func TestDecodeDuplicateAmongManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"resources": [{"address": "aws/queues/a", "spec": {"tags": {`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, `"k%d": "v", `, i)
	}
	b.WriteString(`"k7": "again"}}}]}`)
	if got := decodeErr(t, b.String()); !strings.Contains(got, `duplicate key "k7" (first at line 1, column 139)`) {
		t.Errorf("got %s", got)
	}
}

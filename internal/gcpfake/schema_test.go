package gcpfake

import (
	"encoding/json"
	"strings"
	"testing"

	// The descriptors enum numbers come from, as any GAPIC client links them.
	_ "cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
)

// testDoc is a small discovery document with one schema per rule.
const testDoc = `{
 "name": "testapi", "version": "v1", "rootUrl": "https://testapi.googleapis.com/", "servicePath": "",
 "resources": {"things": {"methods": {"get": {"id": "testapi.things.get", "httpMethod": "GET",
   "path": "v1/{+name}", "flatPath": "v1/things/{thingsId}", "response": {"$ref": "Thing"}}}}},
 "schemas": {
  "Thing": {"id": "Thing", "type": "object", "properties": {
   "name": {"type": "string"},
   "count": {"type": "integer", "format": "int32"},
   "unsigned": {"type": "integer", "format": "uint32"},
   "ratio": {"type": "number", "format": "double"},
   "on": {"type": "boolean"},
   "size": {"type": "string", "format": "int64"},
   "usize": {"type": "string", "format": "uint64"},
   "at": {"type": "string", "format": "google-datetime"},
   "day": {"type": "string", "format": "date"},
   "ttl": {"type": "string", "format": "google-duration"},
   "blob": {"type": "string", "format": "byte"},
   "mask": {"type": "string", "format": "google-fieldmask"},
   "kind": {"type": "string", "enum": ["KIND_UNSPECIFIED", "SMALL", "LARGE"]},
   "kinds": {"type": "array", "items": {"type": "string", "enum": ["KIND_UNSPECIFIED", "SMALL", "LARGE"]}},
   "tags": {"type": "array", "items": {"type": "string"}},
   "labels": {"type": "object", "additionalProperties": {"type": "string"}},
   "parts": {"type": "array", "items": {"$ref": "Part"}},
   "extra": {"type": "object", "additionalProperties": {"type": "any"}},
   "missing": {"$ref": "Nowhere"}
  }},
  "Part": {"id": "Part", "type": "object", "properties": {"size": {"type": "string", "format": "int64"}}}
 }
}`

func loadTestDoc(t *testing.T) *Doc {
	t.Helper()
	d, err := parseDoc([]byte(testDoc))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decode reads JSON as the server does: numbers kept as written.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := decodeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheckTypeRules(t *testing.T) {
	d := loadTestDoc(t)
	for _, tc := range []struct {
		json string
		want string // "" for valid
	}{
		{`{"name": "x", "on": true, "count": 3, "ratio": 0.5, "tags": ["a"]}`, ""},
		{`{"name": 3}`, "Thing.name: want string, got number"},
		{`{"on": "true"}`, "Thing.on: want boolean, got string"},
		{`{"count": 1.5}`, "Thing.count: want integer, got 1.5"},
		{`{"count": 2147483648}`, "Thing.count: 2147483648 out of int32 range"},
		{`{"count": "3"}`, "Thing.count: want integer (int32), got string"},
		{`{"unsigned": -1}`, "Thing.unsigned: -1 out of uint32 range"},
		{`{"unsigned": 4294967295}`, ""},
		{`{"ratio": "NaN"}`, ""},
		{`{"ratio": "half"}`, "Thing.ratio: want number, got string"},
		{`{"tags": "a"}`, "Thing.tags: want array, got string"},
		{`{"tags": ["a", 2]}`, "Thing.tags[1]: want string, got number"},
		{`{"labels": {"team": "a"}}`, ""},
		{`{"labels": {"team": 7}}`, "Thing.labels.team: want string, got number"},
		{`{"labels": ["a"]}`, "Thing.labels: want object, got array"},
		{`{"extra": {"x": [1, {"y": null}]}}`, ""},
		{`{"nme": "x"}`, `Thing: unknown property "nme" (not in schema Thing)`},
		{`{"parts": [{"size": "1"}, {"size": 2}]}`, "Thing.parts[1].size: want string (int64), got number"},
		{`{"parts": [{"sise": "1"}]}`, `Thing.parts[0]: unknown property "sise" (not in schema Part)`},
		{`{"missing": {}}`, `Thing.missing: no schema "Nowhere" in the testapi discovery document`},
	} {
		if got := strings.Join(d.Check("Thing", decode(t, tc.json), CheckOptions{}), "; "); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.json, got, tc.want)
		}
	}
}

func TestCheckFormats(t *testing.T) {
	d := loadTestDoc(t)
	for _, tc := range []struct {
		json string
		want string
	}{
		{`{"size": "-9223372036854775808", "usize": "18446744073709551615"}`, ""},
		{`{"size": "9223372036854775808"}`, `Thing.size: want int64 in a string: "9223372036854775808"`},
		{`{"size": 5}`, "Thing.size: want string (int64), got number"},
		{`{"usize": "-1"}`, `Thing.usize: want uint64 in a string: "-1"`},
		{`{"at": "2024-05-06T07:08:09.123456Z"}`, ""},
		{`{"at": "2024-05-06T07:08:09+02:00"}`, ""},
		{`{"at": "2024-05-06 07:08:09"}`, `Thing.at: want an RFC 3339 timestamp: "2024-05-06 07:08:09"`},
		{`{"day": "2024-05-06"}`, ""},
		{`{"day": "06/05/2024"}`, `Thing.day: want a date YYYY-MM-DD: "06/05/2024"`},
		{`{"ttl": "3.5s"}`, ""},
		{`{"ttl": "-86400s"}`, ""},
		{`{"ttl": "3.5"}`, `Thing.ttl: want a duration like "3.5s": "3.5"`},
		{`{"ttl": "1h"}`, `Thing.ttl: want a duration like "3.5s": "1h"`},
		{`{"blob": "aGk="}`, ""},
		{`{"blob": "aGk"}`, ""},
		{`{"blob": "_-8"}`, ""},
		{`{"blob": "not base64!"}`, `Thing.blob: want base64: "not base64!"`},
		{`{"mask": "labels,versionAliases,rotation.rotationPeriod"}`, ""},
		{`{"mask": "labels,,x"}`, `Thing.mask: want a field mask (comma-separated field paths): "labels,,x"`},
	} {
		if got := strings.Join(d.Check("Thing", decode(t, tc.json), CheckOptions{}), "; "); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.json, got, tc.want)
		}
	}
}

func TestCheckEnums(t *testing.T) {
	d := loadTestDoc(t)
	ints := CheckOptions{EnumInts: true}
	for _, tc := range []struct {
		json string
		opts CheckOptions
		want string
	}{
		{`{"kind": "SMALL", "kinds": ["LARGE"]}`, CheckOptions{}, ""},
		{`{"kind": "MEDIUM"}`, CheckOptions{}, `Thing.kind: "MEDIUM" is not one of KIND_UNSPECIFIED, SMALL, LARGE`},
		{`{"kinds": ["SMALL", "HUGE"]}`, CheckOptions{}, `Thing.kinds[1]: "HUGE" is not one of KIND_UNSPECIFIED, SMALL, LARGE`},
		{`{"kind": 1}`, CheckOptions{}, "Thing.kind: enum as number 1, but the request did not ask for enum-encoding=int"},
		// No descriptor names testapi's Thing: the index is the fallback.
		{`{"kind": 2, "kinds": [0, "SMALL"]}`, ints, ""},
		{`{"kind": 3}`, ints, "Thing.kind: enum number 3 is none of KIND_UNSPECIFIED=0, SMALL=1, LARGE=2"},
		{`{"kind": true}`, ints, "Thing.kind: want enum string, got boolean"},
	} {
		if got := strings.Join(d.Check("Thing", decode(t, tc.json), tc.opts), "; "); got != tc.want {
			t.Errorf("%s %+v:\n got %q\nwant %q", tc.json, tc.opts, got, tc.want)
		}
	}
}

// TestCheckNulls: protojson reads null as unset, so a request may send
// it; an API never writes one.
func TestCheckNulls(t *testing.T) {
	d := loadTestDoc(t)
	v := decode(t, `{"name": null, "labels": {"a": null}}`)
	if errs := d.Check("Thing", v, CheckOptions{}); len(errs) != 0 {
		t.Errorf("request: %q", errs)
	}
	errs := d.Check("Thing", v, CheckOptions{Response: true})
	if strings.Join(errs, "; ") != "Thing.labels.a: null (the API omits an unset field); Thing.name: null (the API omits an unset field)" {
		t.Errorf("response: %q", errs)
	}
}

// TestEnumNumbersFromDescriptors: Secret Manager's enum numbers are the
// protobuf ones, not indices: Secret.secretType OTHER is 50. Every enum of
// the document resolves to a linked descriptor.
func TestEnumNumbersFromDescriptors(t *testing.T) {
	d, err := LoadDoc("secretmanager", "v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range sortedKeys(d.Schemas) {
		s := d.Schemas[id]
		for _, prop := range sortedKeys(s.Properties) {
			p := s.Properties[prop]
			if p.Items != nil {
				p = p.Items
			}
			if len(p.Enum) == 0 {
				continue
			}
			if _, fromProto := enumNumbers(d, field{id, prop}, p.Enum); !fromProto {
				t.Errorf("%s.%s: no protobuf enum found", id, prop)
			}
		}
	}
	ints := CheckOptions{EnumInts: true}
	if errs := d.Check("Secret", decode(t, `{"secretType": 50}`), ints); len(errs) != 0 {
		t.Errorf("OTHER as 50: %q", errs)
	}
	if errs := d.Check("Secret", decode(t, `{"secretType": 5}`), ints); len(errs) != 1 || !strings.Contains(errs[0], "OTHER=50") {
		t.Errorf("5 (OTHER's index) was not refused: %q", errs)
	}
	enc, _ := json.Marshal(d.encodeEnums("Secret", decode(t, `{"secretType": "OTHER"}`)))
	dec, _ := json.Marshal(d.decodeEnums("Secret", decode(t, `{"secretType": 50}`)))
	if string(enc) != `{"secretType":50}` || string(dec) != `{"secretType":"OTHER"}` {
		t.Errorf("encoded %s, decoded %s", enc, dec)
	}
}

func TestParseFields(t *testing.T) {
	paths, err := parseFields("secrets(name,labels/team),nextPageToken")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paths {
		got = append(got, strings.Join(p, "/"))
	}
	if strings.Join(got, " ") != "secrets/name secrets/labels/team nextPageToken" {
		t.Fatalf("paths %q", got)
	}
	for _, bad := range []string{"secrets(name", "a,,b", "a)"} {
		if _, err := parseFields(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

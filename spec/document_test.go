package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

var codecFixtures = []string{
	"../examples/quickstart/fleet.json",
	"testdata/check-fixed.json",
	"testdata/check-broken.json",
}

// roundTrip asserts decode→encode→decode gives an equal document and that
// encoding is byte-stable: the second encoding is the first.
func roundTrip(t *testing.T, data []byte) {
	t.Helper()
	d, err := DecodeDocument(data)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	checkRoundTrip(t, d)
}

// checkRoundTrip encodes a decoded document, decodes the encoding, and
// asserts both are equal and that encoding again gives the same bytes. It
// returns the re-decoded document.
func checkRoundTrip(t testing.TB, d1 *Document) *Document {
	t.Helper()
	enc1, err := EncodeDocument(d1)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	d2, err := DecodeDocument(enc1)
	if err != nil {
		t.Fatalf("decode of the encoding: %v\n%s", err, enc1)
	}
	if !reflect.DeepEqual(d1, d2) {
		t.Fatalf("decode(encode(d)) != d:\n%#v\n%#v", d1, d2)
	}
	enc2, err := EncodeDocument(d2)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if !bytes.Equal(enc1, enc2) {
		t.Fatalf("encoding is not stable:\n%s\n%s", enc1, enc2)
	}
	return d2
}

func TestDocumentRoundTripsFixtures(t *testing.T) {
	for _, path := range codecFixtures {
		t.Run(path, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, data)
		})
	}
}

// The fixtures are stored in the encoder's own form, so encoding them gives
// them back byte for byte: what synth prints for them is what is on disk.
func TestFixturesAreCanonical(t *testing.T) {
	for _, path := range codecFixtures {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodeDocument(data)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := EncodeDocument(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, data) {
			t.Errorf("%s is not in canonical form; encode it with EncodeDocument", path)
		}
	}
}

// Keys this build does not know are reported by Validate, and kept by the
// codec: decoding and encoding never drops what was written.
func TestDocumentKeepsUnknownKeys(t *testing.T) {
	data := []byte(`{"apiVersion": "infra/v1", "fleet": "shop", "wiring": [{"from": 1}],
		"exclusions": [{"address": "aws/queues/x*", "why": "theirs", "owner": "data"}],
		"resources": [{"address": "aws/queues/jobs", "spec": {}, "regoin": "eu-west-3"}]}`)
	roundTrip(t, data)
	d, err := DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.UnknownKeys(); !reflect.DeepEqual(got, []string{"wiring"}) {
		t.Errorf("document unknown keys: %v", got)
	}
	if got := d.Resources[0].UnknownKeys(); !reflect.DeepEqual(got, []string{"regoin"}) {
		t.Errorf("resource unknown keys: %v", got)
	}
	if got := d.Exclusions[0].UnknownKeys(); !reflect.DeepEqual(got, []string{"owner"}) {
		t.Errorf("exclusion unknown keys: %v", got)
	}
	enc, err := EncodeDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"wiring"`, `"regoin"`, `"owner"`} {
		if !bytes.Contains(enc, []byte(k)) {
			t.Errorf("encoding lost %s:\n%s", k, enc)
		}
	}
}

// An unknown key is kept, but never shadows a key this build writes.
func TestMarshalKnownKeyWins(t *testing.T) {
	b, err := marshalWithExtra(struct {
		A string `json:"a"`
	}{"known"}, map[string]json.RawMessage{"a": json.RawMessage(`"unknown"`), "b": json.RawMessage(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a":"known","b":1}` {
		t.Errorf("got %s", b)
	}
}

func TestDecodeDocumentErrors(t *testing.T) {
	cases := map[string]string{
		"not json":      `{"apiVersion": `,
		"not an object": `[1, 2]`,
		"null":          `null`,
		"bad shape":     `{"resources": {"address": "x"}}`,
		"bad resource":  `{"resources": [{"address": 7}]}`,
	}
	for name, data := range cases {
		if _, err := DecodeDocument([]byte(data)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	_, err := DecodeDocument([]byte("{\n  \"fleet\": \"a\",\n  oops\n}"))
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("line 3")) {
		t.Errorf("a syntax error should name its line: %v", err)
	}
}

// A document is not HTML: "&", "<" and ">" stay as written, in spec values
// and in unknown keys alike.
func TestEncodeDoesNotEscapeHTML(t *testing.T) {
	d, err := DecodeDocument([]byte(`{"apiVersion": "infra/v1", "note": "a&b", "resources": [
		{"address": "aws/queues/jobs", "spec": {"tags": {"owner": "<ops&web>"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(enc, []byte(`"<ops&web>"`)) || !bytes.Contains(enc, []byte(`"a&b"`)) {
		t.Errorf("HTML-escaped:\n%s", enc)
	}
}

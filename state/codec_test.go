package state

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/spec"
)

func row(p spec.Provider, k spec.Kind, name, region string) Row {
	return Row{Provider: p, Kind: k, Name: name, Region: region}
}

func TestLedgerRoundTrip(t *testing.T) {
	l := NewLedger()
	l.Put(row(spec.Scaleway, spec.ObjectStore, "assets", "fr-par"))
	l.Put(row(spec.AWS, spec.Queues, "jobs", "eu-west-3"))
	l.Put(row(spec.AWS, spec.ObjectStore, "assets", "eu-west-3"))
	roundTrip(t, l, EncodeLedger, DecodeLedger)
}

// roundTrip encodes v, decodes it, checks nothing changed and that encoding
// again gives the same bytes, and returns the bytes.
func roundTrip[T any](t *testing.T, v *T, encode func(*T) ([]byte, error), decode func([]byte) (*T, error)) []byte {
	t.Helper()
	data, err := encode(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("round trip changed the value:\n got %+v\nwant %+v", back, v)
	}
	again, err := encode(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Fatalf("encoding is not stable:\n%s\n%s", data, again)
	}
	return data
}

func TestLedgerEncodingIsSortedPrettyAndVersioned(t *testing.T) {
	// Rows out of order, as a hand-built ledger might hold them.
	l := &Ledger{Rows: []Row{
		row(spec.Scaleway, spec.ObjectStore, "b", "fr-par"),
		row(spec.AWS, spec.Queues, "z", "eu-west-3"),
		row(spec.AWS, spec.ObjectStore, "a", "eu-west-3"),
	}}
	data, err := EncodeLedger(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "rows": [
    {
      "provider": "aws",
      "kind": "object-store",
      "name": "a",
      "region": "eu-west-3"
    },
    {
      "provider": "aws",
      "kind": "queues",
      "name": "z",
      "region": "eu-west-3"
    },
    {
      "provider": "scaleway",
      "kind": "object-store",
      "name": "b",
      "region": "fr-par"
    }
  ]
}
`
	if string(data) != want {
		t.Fatalf("got\n%s\nwant\n%s", data, want)
	}
	if l.Rows[0].Name != "b" {
		t.Fatal("EncodeLedger reordered the caller's rows")
	}
}

func TestEmptyLedgerIsWrittenWithEmptyRows(t *testing.T) {
	for name, l := range map[string]*Ledger{"new": NewLedger(), "zero": {}, "nil": nil} {
		data, err := EncodeLedger(l)
		if err != nil {
			t.Fatal(name, err)
		}
		if want := "{\n  \"version\": 1,\n  \"rows\": []\n}\n"; string(data) != want {
			t.Fatalf("%s: got %q, want %q", name, data, want)
		}
	}
}

func TestDecodedLedgerIsSorted(t *testing.T) {
	data := `{"version": 1, "rows": [
		{"provider": "aws", "kind": "queues", "name": "z", "region": "eu-west-3"},
		{"provider": "aws", "kind": "iam", "name": "a", "region": "eu-west-3"}]}`
	l, err := DecodeLedger([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if l.Rows[0].Name != "a" {
		t.Fatalf("rows not sorted: %+v", l.Rows)
	}
	if _, ok := l.Get(spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "z"}); !ok {
		t.Fatal("Get cannot find a decoded row")
	}
}

func TestLedgerToleratesFieldsAddedLater(t *testing.T) {
	data := `{"version": 1, "writer": "infra 9", "rows": [
		{"provider": "aws", "kind": "iam", "name": "a", "region": "eu-west-3", "note": "x"}]}`
	if _, err := DecodeLedger([]byte(data)); err != nil {
		t.Fatal(err)
	}
}

// refusal is one file a decoder must refuse and what its message must say.
type refusal struct {
	name string
	data string
	want []string
}

func checkRefusals(t *testing.T, record string, decode func([]byte) error, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := decode([]byte(c.data))
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("want a *FormatError, got %v", err)
			}
			if fe.Record != record {
				t.Errorf("Record = %q, want %q", fe.Record, record)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "the "+record+" ") {
				t.Errorf("message does not name the %s: %s", record, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

const rebuild = "move it aside and run `infra discover --write` to rebuild the ledger from the ownership tags"

func TestLedgerRefusals(t *testing.T) {
	aws := func(kind, name string) string {
		return `{"provider": "aws", "kind": "` + kind + `", "name": "` + name + `", "region": "eu-west-3"}`
	}
	checkRefusals(t, "ledger", func(b []byte) error { _, err := DecodeLedger(b); return err }, []refusal{
		{"not json", `{"version": 1, "rows": [`, []string{"is not a file infra wrote: ", rebuild}},
		{"syntax error position", "{\n  \"version\": 1,\n  \"rows\": x\n}", []string{"line 3, column 11", rebuild}},
		{"empty file", ``, []string{"is not a file infra wrote", rebuild}},
		{"not an object", `[1, 2]`, []string{"is not a file infra wrote", rebuild}},
		{"missing version", `{"rows": []}`, []string{"has no format version", rebuild}},
		{"null version", `{"version": null, "rows": []}`, []string{"has no format version", rebuild}},
		{"version not a number", `{"version": "1", "rows": []}`, []string{`format version "1"`, rebuild}},
		{"newer version", `{"version": 2, "rows": {"a": 1}}`, []string{"format version 2, but this build understands 1: upgrade infra"}},
		{"version zero", `{"version": 0, "rows": []}`, []string{"format version 0", rebuild}},
		{"rows wrong type", `{"version": 1, "rows": {}}`, []string{"is not a file infra wrote", rebuild}},
		{"unknown provider", `{"version": 1, "rows": [{"provider": "azure", "kind": "object-store", "name": "a", "region": "x"}]}`,
			[]string{`azure/object-store/a (row 1)`, `provider "azure"`, "aws, scaleway, gcp", "upgrade infra if a newer build wrote it", rebuild}},
		{"unknown kind", `{"version": 1, "rows": [` + aws("iam", "a") + `, ` + aws("dns-zone", "b") + `]}`,
			[]string{`aws/dns-zone/b (row 2)`, `kind "dns-zone"`, "upgrade infra", rebuild}},
		{"kind not offered", `{"version": 1, "rows": [` + aws("scaleway-function", "f") + `]}`,
			[]string{`aws/scaleway-function/f`, `does not offer on "aws"`, rebuild}},
		{"empty name", `{"version": 1, "rows": [` + aws("iam", "") + `]}`, []string{"not a resource name", rebuild}},
		{"duplicate row", `{"version": 1, "rows": [` + aws("iam", "a") + `, ` + aws("queues", "q") + `, ` + aws("iam", "a") + `]}`,
			[]string{"two rows for aws/iam/a (rows 1 and 3)", rebuild}},
	})
}

func TestLedgerRefusalNamesTheFile(t *testing.T) {
	_, err := DecodeLedger([]byte(`{`))
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatal(err)
	}
	fe.File = ".infra/web/ledger.json"
	if !strings.HasPrefix(err.Error(), ".infra/web/ledger.json is not a file infra wrote: ") {
		t.Fatal(err)
	}
}

func TestEncodeLedgerRefusesWhatDecodeWouldRefuse(t *testing.T) {
	for name, rows := range map[string][]Row{
		"unknown kind": {row(spec.AWS, "dns-zone", "a", "eu-west-3")},
		"duplicate":    {row(spec.AWS, spec.IAM, "a", "eu-west-3"), row(spec.AWS, spec.IAM, "a", "eu-west-1")},
	} {
		if _, err := EncodeLedger(&Ledger{Rows: rows}); err == nil || !strings.HasPrefix(err.Error(), "refusing to write the ledger: it ") {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func sampleCache() *Cache {
	c := NewCache()
	seen := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	c.Resources["aws/object-store/assets"] = Observed{
		Region:     "eu-west-3",
		Fields:     map[string]any{"versioning": true, "tags": map[string]any{"team": "web"}},
		Attributes: map[string]string{"arn": "arn:aws:s3:::assets"},
		Owner:      "web",
		Seen:       seen,
	}
	c.Resources["scaleway/queues/jobs"] = Observed{Region: "fr-par", Seen: seen}
	return c
}

func TestCacheRoundTrip(t *testing.T) {
	data := roundTrip(t, sampleCache(), EncodeCache, DecodeCache)
	if i, j := strings.Index(string(data), "aws/object-store/assets"), strings.Index(string(data), "scaleway/queues/jobs"); i < 0 || j < i {
		t.Fatalf("resources not sorted by address:\n%s", data)
	}
	if !strings.Contains(string(data), "\n  \"version\": 1,\n") {
		t.Fatalf("not pretty-printed and versioned:\n%s", data)
	}
}

func TestEmptyCache(t *testing.T) {
	for _, c := range []*Cache{NewCache(), {}, nil} {
		data, err := EncodeCache(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := "{\n  \"version\": 1,\n  \"resources\": {}\n}\n"; string(data) != want {
			t.Fatalf("got %q", data)
		}
		back, err := DecodeCache(data)
		if err != nil || len(back.Resources) != 0 || back.Resources == nil {
			t.Fatalf("got %+v, %v", back, err)
		}
	}
}

// The cache must never carry a secret, wherever in Fields one is put.
func TestCacheNeverHoldsASecret(t *testing.T) {
	const canary = "canary-7f3a9c-do-not-leak"
	secret := spec.NewSensitive(canary)
	c := NewCache()
	c.Resources["aws/secrets/db"] = Observed{
		Region: "eu-west-3",
		Fields: map[string]any{
			"value":  secret,
			"nested": map[string]any{"password": secret},
			"list":   []any{"a", secret},
			"ptr":    &secret,
		},
	}
	data, err := EncodeCache(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), canary) {
		t.Fatalf("the encoded cache holds the secret:\n%s", data)
	}
	if n := strings.Count(string(data), spec.Redacted); n != 4 {
		t.Fatalf("want 4 redactions, got %d:\n%s", n, data)
	}
}

func TestCacheRefusals(t *testing.T) {
	const remedy = "delete it: the cache only records what was last seen, and the next `infra refresh` writes it again"
	obs := `{"region": "eu-west-3", "seen": "2025-03-01T12:00:00Z"}`
	checkRefusals(t, "cache", func(b []byte) error { _, err := DecodeCache(b); return err }, []refusal{
		{"not json", `{"version": 1, "resources": {`, []string{"is not a file infra wrote: ", remedy}},
		{"missing version", `{"resources": {}}`, []string{"has no format version", remedy}},
		{"newer version", `{"version": 3, "resources": []}`, []string{"format version 3, but this build understands 1: upgrade infra"}},
		{"resources not an object", `{"version": 1, "resources": [1]}`, []string{`"resources" is not an object`, remedy}},
		{"bad observed", `{"version": 1, "resources": {"aws/iam/a": {"region": 3}}}`, []string{`resource "aws/iam/a"`, remedy}},
		{"not an address", `{"version": 1, "resources": {"assets": ` + obs + `}}`, []string{`"assets"`, "not an address", remedy}},
		{"unknown provider", `{"version": 1, "resources": {"azure/iam/a": ` + obs + `}}`, []string{`provider "azure"`, "upgrade infra", remedy}},
		{"unknown kind", `{"version": 1, "resources": {"aws/dns-zone/a": ` + obs + `}}`, []string{`kind "dns-zone"`, "upgrade infra", remedy}},
		{"duplicate", `{"version": 1, "resources": {"aws/iam/a": ` + obs + `, "aws/iam/b": ` + obs + `, "aws/iam/a": ` + obs + `}}`,
			[]string{"two entries for aws/iam/a", remedy}},
	})
}

func TestEncodeCacheRefusesABadKey(t *testing.T) {
	c := NewCache()
	c.Resources["azure/iam/a"] = Observed{}
	if _, err := EncodeCache(c); err == nil || !strings.Contains(err.Error(), `refusing to write the cache: resource "azure/iam/a"`) {
		t.Fatal(err)
	}
}

// Whatever the bytes, the decoders answer with a value or an error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"version":1,"rows":[]}`, `{"version":1,"resources":{}}`, `{`, `null`, `{"version":1,"resources":{"a":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if l, err := DecodeLedger(data); err == nil {
			if _, err := EncodeLedger(l); err != nil {
				t.Fatalf("accepted a ledger it cannot write: %v", err)
			}
		}
		if c, err := DecodeCache(data); err == nil {
			if _, err := EncodeCache(c); err != nil {
				t.Fatalf("accepted a cache it cannot write: %v", err)
			}
		}
	})
}

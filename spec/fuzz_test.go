package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// FuzzValidate feeds arbitrary bytes to DecodeDocument and Validate. Neither
// may panic on any input: a document is user input. A refusal is a
// DecodeError with a place, in printable words. Where the bytes decode,
// they are JSON, the spec values are what encoding/json reads, the codec
// must round-trip, and the rows must be sorted and the same for the
// document and its re-encoding. CI runs it for a bounded time:
//
//	go test ./spec -run '^$' -fuzz '^FuzzValidate$' -fuzztime 60s
func FuzzValidate(f *testing.F) {
	for _, path := range codecFixtures {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(docJSON(nil, sgWeb, queueJobs, dbSecret, instance("web-1", `"region": "eu-west-1", `))))
	f.Add([]byte(`{"apiVersion": "infra/v1", "resources": [{"address": "aws/secrets/a", "spec": {"value":
		{"composed": {"format": "{0}{{}}{1}", "args": [{"secretValue": "aws/secrets/a"}, {"observed": "x/y/z", "attribute": ""}]}}}}]}`))
	f.Add([]byte(`{"resources": [null, {}, {"address": "aws/aws-instance/x", "spec": {"instanceType": "raw:"}}], "forget": ["a"]}`))
	f.Add([]byte(`{"exclusions": [{"address": "a/b/*c*"}], "placement": {"aws": ""}, "accounts": {"azure": ""}}`))
	f.Add([]byte(`{"fleet": "x", "fleet": "y", "resources": [{"address": "a", "spec": {"tags": {"k": 1, "k": 2}}}]}`))
	f.Add([]byte("\xef\xbb\xbf{\"resources\": {}, \"accounts\": [], \"forget\": [1]}"))
	f.Add([]byte(`{"resources": [{"address": "aws/aws-instance/x", "spec": {"instanceType": "\u001b[2J\u009b31m\u202eEVIL"}}]}`))
	f.Add([]byte(`{"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeDocument(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Line < 1 || de.Column < 1 || de.Problem == "" {
				t.Fatalf("not a DecodeError with a place: %v", err)
			}
			if msg := err.Error(); Printable(msg) != msg || strings.Contains(msg, "Go ") {
				t.Fatalf("the error is not printable words: %q", msg)
			}
			return
		}
		body := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		var generic map[string]any
		if err := json.Unmarshal(body, &generic); err != nil {
			t.Fatalf("decoded what encoding/json refuses (%v): %q", err, data)
		}
		if list, ok := generic["resources"].([]any); ok {
			for i, item := range list {
				if m, ok := item.(map[string]any); ok {
					if want, ok := m["spec"].(map[string]any); ok && !reflect.DeepEqual(d.Resources[i].Spec, want) {
						t.Fatalf("resource %d: spec %#v, encoding/json reads %#v", i, d.Resources[i].Spec, want)
					}
				}
			}
		}
		rows := Validate(d)
		if !sort.SliceIsSorted(rows, func(i, j int) bool { return diagnosticLess(rows[i], rows[j]) }) {
			t.Fatalf("rows not sorted: %v", rows)
		}
		for _, r := range rows {
			if r.Subject == "" || r.Message == "" || !rowIDRE.MatchString(string(r.ID)) {
				t.Fatalf("row without subject, message or id: %#v", r)
			}
		}
		d2 := checkRoundTrip(t, d)
		if rows2 := Validate(d2); !reflect.DeepEqual(rows, rows2) {
			t.Fatalf("re-encoded document validates differently:\n%v\n%v", rows, rows2)
		}
	})
}

// FuzzValidateResource reaches further than raw bytes usually do: it puts an
// arbitrary address, region, field name and field value into an otherwise
// valid document, so the fuzzer spends its time in Decode, the expression
// checks and the region and instance-type tables rather than in JSON syntax.
func FuzzValidateResource(f *testing.F) {
	f.Add("aws/aws-instance/x", "", "instanceType", []byte(`"t3.32xlarge"`))
	f.Add("aws/secrets/x", "raw:", "value", []byte(`{"composed": {"format": "{0}{{", "args": [{"secretValue": "aws/secrets/x"}]}}`))
	f.Add("scaleway/compute/x", "eu-west-3", "namespace", []byte(`{"ref": "aws/security-group/web"}`))
	f.Add("aws/compute/x", "eu-west-1", "env", []byte(`{"A": {"observed": "aws/queues/jobs", "attribute": "url"}}`))
	f.Add("aws/security-group/x", "", "ingress", []byte(`[{"port": 65536, "cidr": "x"}]`))
	f.Add("scaleway/scaleway-container/x", "fr-par", "secretEnv", []byte(`{"K": {"ref": "scaleway/secrets/k"}}`))
	f.Fuzz(func(t *testing.T, addr, region, field string, value []byte) {
		var v any
		if json.Unmarshal(value, &v) != nil {
			return
		}
		r := map[string]any{"address": addr, "region": region, "spec": map[string]any{field: v}}
		rb, err := json.Marshal(r)
		if err != nil {
			return
		}
		d, err := DecodeDocument([]byte(docJSON(nil, sgWeb, queueJobs, dbSecret, string(rb))))
		if err != nil {
			t.Fatalf("a document built from valid JSON failed to decode: %v", err)
		}
		m, rows := Compile(d)
		for _, r := range rows {
			if r.Subject == "" || r.Message == "" || r.Resolution == "" || !rowIDRE.MatchString(string(r.ID)) {
				t.Fatalf("row without subject, message, resolution or id: %#v", r)
			}
		}
		if !HasErrors(rows) && len(m.Resources) != len(d.Resources) {
			t.Fatalf("no error, but the model holds %d of %d resources", len(m.Resources), len(d.Resources))
		}
	})
}

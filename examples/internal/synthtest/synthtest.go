// Package synthtest holds the examples to the documents of spec/testdata
// (wiring/, components/), which spec's and operations' tests are written
// against: each Go fleet synthesizes its document.
package synthtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/spec"
)

// SameDocument fails t unless f, synthesized, is the document
// spec/testdata/<name>.json (name is "wiring/shop-eu" …) (both decoded and encoded again), and
// f has no diagnostic. The interface hash the SDK writes must also be the
// one spec computes for the document's own exports.
func SameDocument(t *testing.T, f *fleet.Fleet, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "spec", "testdata", filepath.FromSlash(name)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	want := decode(t, data)
	var out, errs bytes.Buffer
	if code := fleet.Run(f, []string{"synth"}, &out, &errs); code != 0 {
		t.Fatalf("synth exited %d: %s", code, errs.String())
	}
	got := decode(t, out.Bytes())

	model, diags := spec.Compile(want)
	if spec.HasErrors(diags) {
		t.Fatalf("%s.json does not compile: %v", name, diags)
	}
	for iface, in := range got.Interfaces {
		if w := model.Interfaces[iface].Hash; in.Hash != w {
			t.Errorf("interface %s: the SDK writes hash %q, spec computes %q for %s.json's exports", iface, in.Hash, w, name)
		}
	}
	if g, w := encode(t, got), encode(t, want); !bytes.Equal(g, w) {
		t.Errorf("synth printed\n%s\nwhich differs from %s.json:\n%s", g, name, w)
	}
	if _, diags := f.Synth(); len(diags) != 0 {
		t.Errorf("the fleet has diagnostics: %v", diags)
	}
}

func decode(t *testing.T, data []byte) *spec.Document {
	t.Helper()
	doc, err := spec.DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func encode(t *testing.T, doc *spec.Document) []byte {
	t.Helper()
	b, err := spec.EncodeDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

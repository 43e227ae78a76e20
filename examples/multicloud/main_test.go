package main

import (
	"reflect"
	"testing"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
)

func TestMulticloud(t *testing.T) {
	doc, diags := multicloud().Synth()
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if got := doc.ProvidersUsed(); !reflect.DeepEqual(got, []spec.Provider{spec.AWS, spec.Scaleway}) {
		t.Errorf("providers = %v", got)
	}
	a, _ := doc.Lookup("aws/object-store/multicloud-assets-aws")
	s, _ := doc.Lookup("scaleway/object-store/multicloud-assets-scw")
	if a == nil || s == nil || !reflect.DeepEqual(a.Spec, s.Spec) {
		t.Errorf("the portable spec differs between clouds: %v vs %v", a, s)
	}
	// The cross-cloud reference is an ordering edge in the model check
	// builds: the function depends on the AWS bucket.
	m, _ := spec.Compile(doc)
	fn, ok := m.Lookup(spectest.Address("scaleway/scaleway-function/multicloud-thumbnails"))
	if !ok {
		t.Fatal("the function is not declared")
	}
	want := spectest.Address("aws/object-store/multicloud-assets-aws")
	found := false
	for _, d := range fn.Deps() {
		if d == want {
			found = true
		}
	}
	if !found {
		t.Errorf("the function's dependencies %v lack %s", fn.Deps(), want)
	}
}

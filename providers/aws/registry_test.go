package aws

import (
	"testing"

	"github.com/infra-iac/infra/spec"
)

// Every kind spec offers on AWS has a registry entry, and nothing else
// does: a kind in the table without a driver would be planned and never
// made, and a driver spec does not know could never be declared.
func TestRegistryHoldsExactlyTheKindsSpecOffers(t *testing.T) {
	want := map[spec.Kind]bool{}
	for _, info := range spec.KindsOf(spec.AWS) {
		want[info.Kind] = true
		if _, ok := registry[info.Kind]; !ok {
			t.Errorf("spec offers %s on aws, but no driver file registers it", info.Kind)
		}
	}
	for k, e := range registry {
		if !want[k] {
			t.Errorf("%s is registered, but spec does not offer it on aws", k)
		}
		if e.kind != k || e.service == "" || len(e.actions) == 0 || e.new == nil {
			t.Errorf("%s: the entry needs its kind, service, executor actions and constructor: %+v", k, *e)
		}
		if e.arn == nil && !e.deepScan && spec.PhysicalClass(spec.AWS, k) == string(k) {
			t.Errorf("%s: neither the tag scan (arn) nor a deep scan finds it, and no twin stands in for it", k)
		}
	}
}

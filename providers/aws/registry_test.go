package aws

import (
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestRegistryHoldsExactlyTheKindsSpecOffers(t *testing.T) {
	drivertest.CheckKindsOffered(t, spec.AWS, Kinds())
	for k, e := range registry {
		if e.kind != k || e.service == "" || len(e.actions) == 0 || e.new == nil {
			t.Errorf("%s: the entry needs its kind, service, executor actions and constructor: %+v", k, *e)
		}
		// A kind the tag scan cannot report would leak after a lost
		// ledger, unless its physical twin is reported for it.
		if e.arn == nil && !e.deepScan && spec.PhysicalClass(spec.AWS, k) == string(k) {
			t.Errorf("%s: neither the tag scan (arn) nor a deep scan finds it, and no twin stands in for it", k)
		}
	}
}

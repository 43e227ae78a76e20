package scaleway

import (
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestRegistryHoldsExactlyTheKindsSpecOffers(t *testing.T) {
	drivertest.CheckKindsOffered(t, spec.Scaleway, Kinds())
	for k, e := range entries {
		if e.kind != k || e.new == nil {
			t.Errorf("%s: the entry needs its kind and constructor: %+v", k, *e)
		}
	}
	// The tag scan reports a container once, as scaleway-container.
	if !scannedAsTwin(spec.Compute) || scannedAsTwin(spec.ScalewayContainer) || scannedAsTwin(spec.ObjectStore) {
		t.Error("the tag scan must list compute's containers as scaleway-container, and every other kind as itself")
	}
}

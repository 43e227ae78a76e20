package drivertest

import (
	"testing"

	"github.com/infra-iac/infra/spec"
)

// CheckKindsOffered fails t unless registered, the kinds a backend of
// provider p has drivers for, are exactly the kinds spec offers on p: a
// kind in spec's table without a driver would be planned and never made,
// and a driver for a kind spec does not offer there could never be
// declared.
func CheckKindsOffered(t *testing.T, p spec.Provider, registered []spec.Kind) {
	t.Helper()
	has := map[spec.Kind]bool{}
	for _, k := range registered {
		has[k] = true
	}
	offered := map[spec.Kind]bool{}
	for _, info := range spec.KindsOf(p) {
		offered[info.Kind] = true
		if !has[info.Kind] {
			t.Errorf("spec offers %s on %s, but no driver file registers it", info.Kind, p)
		}
	}
	for _, k := range registered {
		if !offered[k] {
			t.Errorf("%s is registered, but spec does not offer it on %s", k, p)
		}
	}
}

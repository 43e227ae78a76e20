package main

import (
	"testing"

	"github.com/infra-iac/infra/examples/internal/synthtest"
)

// TestSynthMatchesTheDocument: shopeu is spec/testdata/wiring/shop-eu.json.
func TestSynthMatchesTheDocument(t *testing.T) {
	synthtest.SameDocument(t, shopEU(), "wiring/shop-eu")
}

package main

import (
	"testing"

	"github.com/infra-iac/infra/examples/wiring/internal/wiringtest"
)

// TestSynthMatchesTheDocument: shopeu is spec/testdata/wiring/shop-eu.json.
func TestSynthMatchesTheDocument(t *testing.T) {
	wiringtest.SameDocument(t, shopEU(), "shop-eu")
}

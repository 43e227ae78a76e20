package main

import (
	"testing"

	"github.com/infra-iac/infra/examples/internal/synthtest"
)

// TestSynthMatchesTheDocument: shop is spec/testdata/components/shop.json.
func TestSynthMatchesTheDocument(t *testing.T) {
	synthtest.SameDocument(t, shop(), "components/shop")
}

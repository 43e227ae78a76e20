package main

import (
	"testing"

	"github.com/infra-iac/infra/examples/internal/synthtest"
)

// TestSynthMatchesTheDocument: shopmoved is
// spec/testdata/components/shop-moved.json.
func TestSynthMatchesTheDocument(t *testing.T) {
	synthtest.SameDocument(t, shopMoved(), "components/shop-moved")
}

package main

import (
	"testing"

	"github.com/infra-iac/infra/examples/internal/synthtest"
)

// TestSynthMatchesTheDocument: pgshared is spec/testdata/wiring/pg-shared.json.
func TestSynthMatchesTheDocument(t *testing.T) {
	synthtest.SameDocument(t, pgShared(), "wiring/pg-shared")
}

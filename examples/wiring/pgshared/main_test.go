package main

import (
	"testing"

	"github.com/infra-iac/infra/examples/wiring/internal/wiringtest"
)

// TestSynthMatchesTheDocument: pgshared is spec/testdata/wiring/pg-shared.json.
func TestSynthMatchesTheDocument(t *testing.T) {
	wiringtest.SameDocument(t, pgShared(), "pg-shared")
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFileIsUpToDate fails when spec's field table changed and
// `go generate ./providers` was not run: the drivers' inputs must hold
// exactly the fields spec declares.
func TestGeneratedFileIsUpToDate(t *testing.T) {
	src, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join("..", "..", outFile))
	if err != nil {
		t.Fatalf("%v (run go generate ./providers)", err)
	}
	if !bytes.Equal(have, src) {
		t.Errorf("providers/%s is stale: run go generate ./providers", outFile)
	}
}

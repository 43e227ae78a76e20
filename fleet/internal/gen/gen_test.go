package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infra-iac/infra/internal/sdkshape"
	"github.com/infra-iac/infra/spec"
)

// TestGeneratedFilesAreUpToDate fails when spec's tables changed and
// `go generate ./fleet` was not run: the SDK must offer exactly what spec
// says each cloud has.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		have, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./fleet)", name, err)
			continue
		}
		if !bytes.Equal(have, files[name]) {
			t.Errorf("fleet/%s is stale: run go generate ./fleet", name)
		}
	}
}

// TestOnlyTheCloudsKinds: each cloud package gets a constructor for the
// kinds spec says it offers, and for no other.
func TestOnlyTheCloudsKinds(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range spec.Providers {
		src := files[string(p)+"/kinds_gen.go"]
		for _, info := range spec.Kinds() {
			decl := []byte("func (c *Cloud) " + sdkshape.KindType(p, info.Kind) + "(")
			if has := bytes.Contains(src, decl); has != info.OfferedBy(p) {
				t.Errorf("%s: constructor for %s present=%v, offered=%v", p, info.Kind, has, info.OfferedBy(p))
			}
		}
	}
}

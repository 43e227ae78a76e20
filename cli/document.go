package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// loadDocument finds and reads the fleet document: the one a fleet program
// passed in, else --fleet, else ./infra if it exists, else fleet.json. A
// directory is a Go fleet program, run to print its document.
func (g *globals) loadDocument(ctx context.Context) (*spec.Document, error) {
	if g.doc != nil {
		return g.doc, nil
	}
	path := g.fleet
	if path == "" {
		path = "fleet.json"
		if fi, err := os.Stat("infra"); err == nil && fi.IsDir() {
			path = "infra"
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) && g.fleet == "" {
			return nil, fmt.Errorf("no fleet found: there is no ./infra program and no fleet.json here; pass --fleet DIR or --fleet FILE.json")
		}
		return nil, fmt.Errorf("--fleet %s: %w", path, err)
	}
	var data []byte
	if fi.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err != nil && !hasGoFiles(path) {
			return nil, fmt.Errorf("--fleet %s: a directory must be a Go fleet program (package main calling fleet.Main)", path)
		}
		data, err = g.f.Synth(ctx, path)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	doc, err := spec.DecodeDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

func hasGoFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

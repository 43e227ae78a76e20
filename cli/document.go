package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// loadDocument finds and reads the fleet document: the one a fleet program
// passed in, else --fleet, else ./infra if it exists, else fleet.json. A
// directory is a Go fleet program, run to print its document.
func (g *globals) loadDocument(ctx context.Context) (*spec.Document, error) {
	if g.doc != nil {
		// A fleet program's own verb: its document was made here, so its
		// zips are read from here, as LoadDocument reads a synthesized one.
		return operations.ResolveZips(g.doc, "")
	}
	doc, err := operations.LoadDocument(ctx, g.fleet, g.f.Synth)
	var source *operations.SourceError
	switch {
	case errors.Is(err, operations.ErrNoFleet):
		return nil, fmt.Errorf("%w; pass --fleet DIR or --fleet FILE.json", err)
	case errors.As(err, &source):
		return nil, fmt.Errorf("--fleet %w", source)
	}
	return doc, err
}

package operations

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// OutputRequest asks for a fleet's published exports: all of them, one
// capability ("eu") or one export ("eu.endpoint").
type OutputRequest struct {
	Document *spec.Document
	// Fleet names the fleet when there is no document.
	Fleet string
	// Select is "", CAPABILITY or CAPABILITY.EXPORT.
	Select string
	// State is where the fleet's state is kept when not at this front
	// end's own location: a wire's "state", for a graph of the fleet's
	// wires.
	State string
}

// Output is a fleet's published record, narrowed to what was asked for.
type Output struct {
	Fleet string `json:"fleet"`
	// Where is the state the record was read from.
	Where        string                              `json:"where"`
	Capabilities map[string]spec.PublishedCapability `json:"capabilities"`
	Hash         string                              `json:"hash,omitempty"`
}

// ErrNothingPublished is an output of a fleet that has published nothing:
// it has not applied since it began to provide.
var ErrNothingPublished = errors.New("the fleet has published nothing: it publishes its exports at the end of a successful apply")

// Output reads a fleet's published record. A secret export is its
// reference (an ARN or an id), never its value: the record holds nothing
// else.
func (o *Operations) Output(ctx context.Context, req OutputRequest) (*Output, error) {
	fleet := req.Fleet
	if req.Document != nil {
		fleet = req.Document.Fleet
	}
	if !spec.ValidFleetName(fleet) {
		return nil, fmt.Errorf("invalid fleet name %q; run infra check", fleet)
	}
	store, err := o.env.storeOf(ctx, req.State, fleet)
	if err != nil {
		return nil, err
	}
	rec, err := store.LoadPublished(ctx)
	if err != nil {
		return nil, err
	}
	if rec == nil && req.Document != nil && len(req.Document.Provides) == 0 {
		// A fleet that provides nothing never publishes: its record is
		// empty, which is an answer, not a failure.
		rec = &spec.Published{Capabilities: map[string]spec.PublishedCapability{}}
	}
	if rec == nil {
		return nil, fmt.Errorf("%s at %s: %w", fleet, store.Where(), ErrNothingPublished)
	}
	out := &Output{Fleet: fleet, Where: store.Where(), Capabilities: rec.Capabilities, Hash: rec.Hash}
	if req.Select == "" {
		return out, nil
	}
	return out.narrow(req.Select)
}

// narrow keeps one capability, or one export of it.
func (out *Output) narrow(sel string) (*Output, error) {
	name, export, one := strings.Cut(sel, ".")
	c, ok := out.Capabilities[name]
	if !ok {
		return nil, fmt.Errorf("%s publishes no capability %q; it provides: %s", out.Fleet, spec.Printable(name), list(slices.Sorted(maps.Keys(out.Capabilities))))
	}
	if one {
		e, ok := c.Exports[export]
		if !ok {
			return nil, fmt.Errorf("capability %s of %s has no export %q; it exports: %s", name, out.Fleet, spec.Printable(export), list(slices.Sorted(maps.Keys(c.Exports))))
		}
		c.Exports = map[string]spec.PublishedExport{export: e}
	}
	return &Output{Fleet: out.Fleet, Where: out.Where, Capabilities: map[string]spec.PublishedCapability{name: c}}, nil
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

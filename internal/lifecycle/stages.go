package lifecycle

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// Stage is one declaration of a lifecycle fleet and what applying it must
// do: the plan's counts, then the ledger's size.
type Stage struct {
	Name     string
	Document string
	Want     engine.Summary
	Managed  int
}

// RunStages plans and applies each stage in order, as subtests. Each plan
// must have exactly the stage's counts, the ledger must then hold Managed
// rows, and a second plan must be empty (convergence). It stops at the
// first failing stage.
func RunStages(t *testing.T, e *engine.Engine, store state.Store, stages []Stage) {
	t.Helper()
	ctx := context.Background()
	for _, s := range stages {
		ok := t.Run(s.Name, func(t *testing.T) {
			m := Compile(t, s.Document)
			p := plan(t, e, store, m)
			if p.Summary != s.Want {
				t.Fatalf("plan %+v, want %+v:\n%s", p.Summary, s.Want, Render(p))
			}
			// The brake never fires in a lifecycle: ramps change nothing
			// destructive, trimming deletes a few, and the empty
			// declaration is a teardown.
			if _, err := e.Apply(ctx, p, engine.ApplyOptions{Store: store}); err != nil {
				t.Fatalf("apply: %v", err)
			}
			ledger, _ := store.LoadLedger(ctx)
			if len(ledger.Rows) != s.Managed {
				t.Fatalf("ledger has %d rows, want %d", len(ledger.Rows), s.Managed)
			}
			if again := plan(t, e, store, m); again.HasChanges() {
				t.Fatalf("not converged:\n%s", Render(again))
			}
		})
		if !ok {
			return
		}
	}
}

// Replan applies doc, runs between, and plans doc again, failing the test
// unless that plan is empty: for a test of what a plan that finds nothing
// to do costs (between starts counting).
func Replan(t *testing.T, e *engine.Engine, store state.Store, doc string, between func()) {
	t.Helper()
	m := Compile(t, doc)
	if _, err := e.Apply(context.Background(), plan(t, e, store, m), engine.ApplyOptions{Store: store}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	between()
	if p := plan(t, e, store, m); p.HasChanges() {
		t.Fatalf("the re-plan is not empty:\n%s", Render(p))
	}
}

// plan plans m against the store's ledger.
func plan(t *testing.T, e *engine.Engine, store state.Store, m *spec.Model) *engine.Plan {
	t.Helper()
	ctx := context.Background()
	ledger, err := store.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan(ctx, m, nil, ledger, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Compile decodes and checks a document, failing the test on any error.
func Compile(t testing.TB, doc string) *spec.Model {
	t.Helper()
	d, err := spec.DecodeDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	m, diags := spec.Compile(d)
	if spec.HasErrors(diags) {
		t.Fatalf("%v", diags)
	}
	return m
}

// Render is the plan as the terminal shows it, for failure messages.
func Render(p *engine.Plan) string {
	var b strings.Builder
	render.Text(&b, p, render.TextOptions{})
	return b.String()
}

package operations

import (
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec/spectest"
)

// A resume accepts only what is left of each accepted action.
func TestLeftOf(t *testing.T) {
	a := spectest.Address("aws/queues/jobs")
	upd := func(kind engine.ActionKind, field string, after any) engine.Action {
		return engine.Action{Address: a, Action: kind, Region: "eu-west-3", Changes: []engine.Change{{Field: field, After: after}}}
	}
	cases := []struct {
		was, fresh engine.Action
		ok         bool
	}{
		{upd(engine.Create, "visibilityTimeoutSec", 30.0), upd(engine.Update, "visibilityTimeoutSec", 30.0), true},
		{upd(engine.Create, "visibilityTimeoutSec", 30.0), upd(engine.Update, "visibilityTimeoutSec", 60.0), false},
		{upd(engine.Update, "visibilityTimeoutSec", 30.0), upd(engine.Update, "tags", nil), false},
		{upd(engine.Replace, "fifo", true), upd(engine.Create, "visibilityTimeoutSec", 30.0), true},
		{upd(engine.Create, "visibilityTimeoutSec", 30.0), upd(engine.Replace, "visibilityTimeoutSec", 30.0), false},
		{upd(engine.Delete, "x", nil), upd(engine.Create, "x", nil), false},
		{upd(engine.Create, "x", 1.0), engine.Action{Address: a, Action: engine.Adopt, Region: "eu-west-3"}, true},
		{upd(engine.Create, "x", 1.0), engine.Action{Address: a, Action: engine.Adopt, Region: "us-east-1"}, false},
	}
	for i, c := range cases {
		why := leftOf(c.was, c.fresh)
		if (why == "") != c.ok {
			t.Errorf("case %d: %s after %s: %q", i, c.fresh.Action, c.was.Action, why)
		}
	}
}

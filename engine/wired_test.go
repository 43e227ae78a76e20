package engine

import (
	"testing"

	"github.com/infra-iac/infra/spec/spectest"
)

// A change that reads another fleet's value counts by the value's name:
// reviewed while pending, it is the same plan once the value is known. A
// change that reads nothing of another fleet still counts by its value.
func TestPlanIDBindsReferencesNotPendingValues(t *testing.T) {
	plan := func(c Change) *Plan {
		return &Plan{FormatVersion: FormatVersion, Fleet: "shop-eu", Actions: []Action{{
			Address: spectest.Address("aws/compute/api"), Action: Update, Region: "eu-west-3", Changes: []Change{c}}}}
	}
	from := []string{"pg-shared:eu.endpoint"}
	pending := plan(Change{Field: "env", Before: "old", KnownAfterApply: true, From: from})
	known := plan(Change{Field: "env", Before: "old", After: "db:5432", From: from})
	if pending.computeID() != known.computeID() {
		t.Fatal("resolving a pending value changed the plan's id")
	}
	other := plan(Change{Field: "env", Before: "old", KnownAfterApply: true, From: []string{"pg-shared:us.endpoint"}})
	if other.computeID() == pending.computeID() {
		t.Fatal("reading another value gave the same id")
	}
	a, b := plan(Change{Field: "env", Before: "old", After: "x"}), plan(Change{Field: "env", Before: "old", After: "y"})
	if a.computeID() == b.computeID() {
		t.Fatal("a local value no longer counts in the id")
	}
	if known.Actions[0].Changes[0].After != "db:5432" {
		t.Fatal("computing the id changed the plan")
	}
}

package aws

import (
	"slices"
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestRegistryHoldsExactlyTheKindsSpecOffers(t *testing.T) {
	drivertest.CheckKindsOffered(t, spec.AWS, Kinds())
	for k, e := range registry {
		if e.kind != k || e.service == "" || len(e.actions) == 0 || e.new == nil {
			t.Errorf("%s: the entry needs its kind, service, executor actions and constructor: %+v", k, *e)
		}
		// A kind the tag scan cannot report would leak after a lost
		// ledger, unless its physical twin is reported for it.
		if e.arn == nil && !e.deepScan && spec.PhysicalClass(spec.AWS, k) == string(k) {
			t.Errorf("%s: neither the tag scan (arn) nor a deep scan finds it, and no twin stands in for it", k)
		}
	}
}

// An action a kind calls on another kind's resources names that kind, is
// one the other kind's own driver calls too (so its scope is decided
// there), and is left out of the sweep's statement on this kind's names.
func TestActionsElsewhereActOnAKindThatCallsThem(t *testing.T) {
	for k, e := range registry {
		_, deletes, _ := SweepTargets(k)
		for action, other := range e.elsewhere {
			if ActsOn(k, action) != other || other == k {
				t.Errorf("%s: ActsOn(%s) = %s, want %s", k, action, ActsOn(k, action), other)
			}
			if o, ok := registry[other]; !ok || !slices.Contains(o.actions, action) {
				t.Errorf("%s: %s acts on %s, whose driver does not call it", k, action, other)
			}
			if !slices.Contains(e.actions, action) {
				t.Errorf("%s: %s is elsewhere but not among its actions", k, action)
			}
			if slices.Contains(deletes, action) {
				t.Errorf("%s: the sweep deletes %s on its names, where it acts on %s", k, action, other)
			}
		}
	}
	if got := ActsOn(spec.IAMPolicy, "iam:DetachRolePolicy"); got != spec.IAMRole {
		t.Errorf("ActsOn(iam-policy, DetachRolePolicy) = %s", got)
	}
	if got := ActsOn(spec.IAMPolicy, "iam:DeletePolicy"); got != spec.IAMPolicy {
		t.Errorf("ActsOn(iam-policy, DeletePolicy) = %s", got)
	}
}

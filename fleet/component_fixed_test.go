package fleet_test

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

// The routes by which a user's setting can reach a path a component fixed
// (issue 33 §2, docs/components.md#defaults-and-fixed-values).

type tierSettings struct {
	Tier    string
	Timeout int
	Pool    poolSettings
}

type poolSettings struct{ Size int }

type tierAsk struct {
	Settings tierSettings
	Leaf     fleet.Member
}

// tierLeaf's queue carries its tier in its tags.
var tierLeaf = fleet.DefineComponent("tier-leaf",
	func(s tierSettings) tierAsk { return tierAsk{Settings: s} },
	func(b *fleet.Body, x tierAsk) {
		aws.Use(b.Fleet(), "", "").Queues("q", fleet.QueuesSpec{Tags: map[string]string{"tier": x.Settings.Tier}})
	})

func askTierWorker(s tierSettings) tierAsk {
	// The leaf's default tier is the worker's own: a setting derived
	// from a setting, through an ask half.
	return tierAsk{Settings: s, Leaf: fleet.NewMember("leaf", tierLeaf, tierSettings{Tier: s.Tier})}
}

// receiveTierWorker derives its queue's tags from its tier setting, and
// leaves every field of its bucket unset.
func receiveTierWorker(b *fleet.Body, x tierAsk) {
	cloud := aws.Use(b.Fleet(), "", "")
	cloud.Queues("jobs", fleet.QueuesSpec{Tags: map[string]string{"tier": x.Settings.Tier}, VisibilityTimeoutSec: fleet.Set(60)})
	cloud.ObjectStore("out", fleet.ObjectStoreSpec{})
}

var tierWorker = fleet.DefineComponent("tier-worker", askTierWorker, receiveTierWorker)

// tierWorkerFixed fixes its own tier: where it is a member, its parent's
// value holds.
var tierWorkerFixed = fleet.DefineComponent("tier-worker", askTierWorker, receiveTierWorker, fleet.Fixed("tier"))

type tiersAsk struct{ Worker fleet.Member }

// tiers has one worker member, of the gold tier.
func tiers(worker fleet.Component[tierSettings], opts ...fleet.ComponentOption) fleet.Component[struct{}] {
	return fleet.DefineComponent("tiers", func(struct{}) tiersAsk {
		return tiersAsk{Worker: fleet.NewMember("worker", worker, tierSettings{Tier: "gold", Pool: poolSettings{Size: 2}})}
	}, nil, opts...)
}

func synthTiers(t *testing.T, c fleet.Component[struct{}], opts ...fleet.InstanceOption) (*spec.Document, []spec.Diagnostic) {
	t.Helper()
	f := fleet.New("ops")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "t", c, struct{}{}, opts...)
	return f.Synth()
}

func fieldOf(t *testing.T, doc *spec.Document, address, field string) string {
	t.Helper()
	for _, r := range doc.Resources {
		if r.Address == address {
			return toJSON(t, r.Spec[field])
		}
	}
	t.Fatalf("no resource %s in %v", address, doc.Resources)
	return ""
}

func TestAFixedSettingHoldsWhateverPathReachesIt(t *testing.T) {
	const thisFile = "fleet/component_fixed_test.go:"
	bronze := map[string]string{"tier": "bronze"}
	for _, tc := range []struct {
		name      string
		component fleet.Component[struct{}]
		setting   fleet.InstanceOption
		// subject is the path the user wrote; fixed the path the row
		// names as fixed, and by which component.
		subject, fixed, by string
		// held is a resource field that keeps the component's value.
		held, field string
	}{{
		name:      "the resource path of a resource the member derives from its fixed setting",
		component: tiers(tierWorker, fleet.Fixed("worker.tier")),
		setting:   fleet.Settings("worker.jobs", fleet.QueuesSpec{Tags: bronze}),
		subject:   "worker.jobs.tags", fixed: "worker.tier", by: "tiers",
		held: "aws/queues/t-worker-jobs", field: "tags",
	}, {
		name:      "the resource path of a field the member wrote from no setting",
		component: tiers(tierWorker, fleet.Fixed("worker.tier")),
		setting:   fleet.Settings("worker.jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(5)}),
		subject:   "worker.jobs.visibilityTimeoutSec", fixed: "worker.tier", by: "tiers",
		held: "aws/queues/t-worker-jobs", field: "visibilityTimeoutSec",
	}, {
		name:      "the settings of a member whose default the member derives from its fixed setting",
		component: tiers(tierWorker, fleet.Fixed("worker.tier")),
		setting:   fleet.Settings("worker.leaf", tierSettings{Tier: "bronze"}),
		subject:   "worker.leaf.tier", fixed: "worker.tier", by: "tiers",
		held: "aws/queues/t-worker-leaf-q", field: "tags",
	}, {
		name:      "the resource path of a member's member",
		component: tiers(tierWorker, fleet.Fixed("worker.tier")),
		setting:   fleet.Settings("worker.leaf.q", fleet.QueuesSpec{Tags: bronze}),
		subject:   "worker.leaf.q.tags", fixed: "worker.tier", by: "tiers",
		held: "aws/queues/t-worker-leaf-q", field: "tags",
	}, {
		name:      "the member's own settings path",
		component: tiers(tierWorker, fleet.Fixed("worker.tier")),
		setting:   fleet.Settings("worker", tierSettings{Tier: "bronze"}),
		subject:   "worker.tier", fixed: "worker.tier", by: "tiers",
		held: "aws/queues/t-worker-jobs", field: "tags",
	}, {
		name:      "a member whose own definition fixes the setting",
		component: tiers(tierWorkerFixed),
		setting:   fleet.Settings("worker.jobs", fleet.QueuesSpec{Tags: bronze}),
		subject:   "worker.jobs.tags", fixed: "worker.tier", by: "tier-worker",
		held: "aws/queues/t-worker-jobs", field: "tags",
	}, {
		name:      "a settings field that holds the fixed path",
		component: tiers(tierWorker, fleet.Fixed("worker.pool.size")),
		setting:   fleet.Settings("worker", tierSettings{Pool: poolSettings{Size: 9}}),
		subject:   "worker.pool", fixed: "worker.pool.size", by: "tiers",
	}, {
		name:      "a resource field that holds the fixed path",
		component: tiers(tierWorker, fleet.Fixed("worker.jobs.tags.tier")),
		setting:   fleet.Settings("worker.jobs", fleet.QueuesSpec{Tags: map[string]string{"team": "x"}}),
		subject:   "worker.jobs.tags", fixed: "worker.jobs.tags.tier", by: "tiers",
		held: "aws/queues/t-worker-jobs", field: "tags",
	}, {
		name:      "a setting inside a fixed member",
		component: tiers(tierWorker, fleet.Fixed("worker")),
		setting:   fleet.Settings("worker", tierSettings{Timeout: 5}),
		subject:   "worker.timeout", fixed: "worker", by: "tiers",
	}, {
		name:      "a resource field inside a fixed member",
		component: tiers(tierWorker, fleet.Fixed("worker")),
		setting:   fleet.Settings("worker.out", fleet.ObjectStoreSpec{ForceDestroy: fleet.Set(true)}),
		subject:   "worker.out.forceDestroy", fixed: "worker", by: "tiers",
	}, {
		name:      "a resource field inside a fixed resource",
		component: tiers(tierWorker, fleet.Fixed("worker.jobs")),
		setting:   fleet.Settings("worker.jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(5)}),
		subject:   "worker.jobs.visibilityTimeoutSec", fixed: "worker.jobs", by: "tiers",
		held: "aws/queues/t-worker-jobs", field: "visibilityTimeoutSec",
	}, {
		name:      "the settings of a member whose settings are no struct",
		component: named(fleet.Fixed("n")),
		setting:   fleet.Settings("n", "bronze"),
		subject:   "n", fixed: "n", by: "named-pair",
		held: "aws/queues/t-n-q", field: "tags",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			doc, diags := synthTiers(t, tc.component, tc.setting)
			var row *spec.Diagnostic
			for i, d := range diags {
				if d.ID == spec.RowComponentFixed {
					if row != nil {
						t.Fatalf("two component-fixed rows: %v", diags)
					}
					row = &diags[i]
				}
			}
			if row == nil {
				t.Fatalf("rows = %v, want one component-fixed row for %s", diags, tc.subject)
			}
			if row.Subject != "t."+tc.subject || !strings.Contains(row.Message, tc.subject) || !strings.Contains(row.Message, tc.fixed) ||
				!strings.Contains(row.Message, "component "+tc.by+" ") || strings.Count(row.Message, thisFile) != 2 ||
				!strings.Contains(row.Evidence, thisFile) {
				t.Errorf("row = %+v: want subject t.%s, and a message naming %s, %s fixed by component %s, and both places", *row, tc.subject, tc.subject, tc.fixed, tc.by)
			}
			if tc.held != "" {
				if got := fieldOf(t, doc, tc.held, tc.field); strings.Contains(got, "bronze") || strings.Contains(got, "team") || got == "5" {
					t.Errorf("%s's %s = %s: the user's value passed", tc.held, tc.field, got)
				}
			}
			settings := doc.Components["t"].Settings
			for path, o := range settings {
				if o.Origin == spec.OriginUser {
					t.Errorf("the map says %s is the user's (%+v), and the setting was refused", path, o)
				}
			}
			if o, ok := settings[tc.fixed]; ok && o.Origin != spec.OriginFixed {
				t.Errorf("the map says the fixed %s is %+v", tc.fixed, o)
			}
		})
	}
}

// What a fixed setting leaves to the user: the member's other settings,
// and the fields the member's resources leave unset.
func TestAFixedSettingLeavesTheRest(t *testing.T) {
	c := tiers(tierWorker, fleet.Fixed("worker.tier"))
	doc, diags := synthTiers(t, c,
		fleet.Settings("worker", tierSettings{Timeout: 5}),
		fleet.Settings("worker.out", fleet.ObjectStoreSpec{ForceDestroy: fleet.Set(true)}))
	if spec.HasErrors(diags) {
		t.Fatalf("rows: %v", diags)
	}
	if got := fieldOf(t, doc, "aws/object-store/t-worker-out", "forceDestroy"); got != "true" {
		t.Errorf("forceDestroy = %s, want the user's true", got)
	}
	settings := doc.Components["t"].Settings
	for path, want := range map[string]string{
		"worker.tier":             spec.OriginFixed,
		"worker.timeout":          spec.OriginUser,
		"worker.out.forceDestroy": spec.OriginUser,
		"worker.jobs.tags":        spec.OriginDefault,
		"worker.leaf.tier":        spec.OriginDefault,
	} {
		if o := settings[path]; o.Origin != want {
			t.Errorf("the map says %s is %+v, want %s", path, o, want)
		}
	}
}

// A fixed path on a component's own settings holds where the component is
// a member. The instance's own settings are its author's: the map says
// so, never fixed.
func TestAnInstanceWritesItsOwnSettings(t *testing.T) {
	f := fleet.New("ops")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "t", tierWorkerFixed, tierSettings{Tier: "bronze"})
	doc, diags := f.Synth()
	if spec.HasErrors(diags) {
		t.Fatalf("rows: %v", diags)
	}
	if o := doc.Components["t"].Settings["tier"]; o.Origin != spec.OriginUser {
		t.Errorf("the map says tier is %+v, want the user's", o)
	}
}

type namedAsk struct{ N fleet.Member }

var namedLeaf = fleet.DefineComponent("named",
	func(s string) struct{ Name string } { return struct{ Name string }{s} },
	func(b *fleet.Body, x struct{ Name string }) {
		aws.Use(b.Fleet(), "", "").Queues("q", fleet.QueuesSpec{Tags: map[string]string{"name": x.Name}})
	})

// named has one member whose settings are a string.
func named(opts ...fleet.ComponentOption) fleet.Component[struct{}] {
	return fleet.DefineComponent("named-pair", func(struct{}) namedAsk {
		return namedAsk{N: fleet.NewMember("n", namedLeaf, "gold")}
	}, nil, opts...)
}

// A Fixed path that names nothing the component composes is a row naming
// the Fixed call; each path that does name something (a setting of a
// member, a member, a field of a resource member's kind, even one left
// unset) is not.
func TestAFixedPathThatNamesNothingIsARow(t *testing.T) {
	for _, tc := range []struct {
		path  string
		wrong bool
	}{
		{"worker.tier", false},
		{"worker.pool.size", false},
		{"worker", false},
		{"worker.jobs.tags.team", false},
		{"worker.out.versioning", false},
		{"worker.leaf.q.visibilityTimeoutSec", false},
		{"worker.teir", true},
		{"worker.jobs.visibilityTimout", true},
		{"wroker.tier", true},
		{"worker.leaf.q.tag", true},
	} {
		_, diags := synthTiers(t, tiers(tierWorker, fleet.Fixed(tc.path)))
		var rows []spec.Diagnostic
		for _, d := range diags {
			if d.ID == spec.RowComponentFixedUnknown {
				rows = append(rows, d)
			}
		}
		switch {
		case tc.wrong && (len(rows) != 1 || rows[0].Subject != "t."+tc.path || !strings.Contains(rows[0].Evidence, "component_fixed_test.go")):
			t.Errorf("Fixed(%q): want one component-fixed-unknown row about t.%s naming the Fixed call, got %v", tc.path, tc.path, diags)
		case !tc.wrong && len(rows) > 0:
			t.Errorf("Fixed(%q) names something, and is a row: %v", tc.path, rows)
		}
	}
}

package fleet_test

import (
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

// A component that has itself as a member is a row, never an expansion
// without end (docs/components.md#a-component-inside-itself). Each
// component here counts its asks and stops adding members past a guard,
// so that without the SDK's limits a test fails with a count instead of
// taking the machine's memory; synth also runs against a timeout.

type nestSettings struct{ Depth int }

type nestAsk struct{ Inner fleet.Member }

// The guards are far past what the SDK may ask of one instance
// (fleet.MaxMemberDepth levels, fleet.MaxMembers members), and small
// enough that a chain of them (whose paths grow with their depth) stays
// a few megabytes.
const (
	deepGuard  = 1000
	broadGuard = 3 * fleet.MaxMembers
)

var asks int

// asked counts one ask, and says whether the component may still add a
// member.
func asked(guard int) bool {
	asks++
	return asks < guard
}

// nest is the tester's program: a function that defines the component
// each time it is called, and whose ask half makes a member of nest().
// Each call is a new definition, so only the depth limit can stop it.
func nest() fleet.Component[nestSettings] {
	return fleet.DefineComponent("nest", func(s nestSettings) nestAsk {
		if !asked(deepGuard) {
			return nestAsk{}
		}
		return nestAsk{Inner: fleet.NewMember("inner", nest(), s)}
	}, nil)
}

// self is one definition that has itself as a member, with its own
// settings: a cycle, found at its first repeat.
var self fleet.Component[nestSettings]

func init() {
	self = fleet.DefineComponent("self", func(s nestSettings) nestAsk {
		if !asked(deepGuard) {
			return nestAsk{}
		}
		return nestAsk{Inner: fleet.NewMember("inner", self, s)}
	}, nil)
}

// deeper passes its member a deeper depth each time: no two levels have
// the same settings, so only the depth limit can stop it.
var deeper fleet.Component[nestSettings]

func init() {
	deeper = fleet.DefineComponent("deeper", func(s nestSettings) nestAsk {
		if !asked(deepGuard) {
			return nestAsk{}
		}
		return nestAsk{Inner: fleet.NewMember("inner", deeper, nestSettings{Depth: s.Depth + 1})}
	}, nil)
}

// countdown stops at depth 0: a recursion with an end, which is no row.
var countdown fleet.Component[nestSettings]

func init() {
	countdown = fleet.DefineComponent("countdown", func(s nestSettings) nestAsk {
		if s.Depth <= 0 || !asked(deepGuard) {
			return nestAsk{}
		}
		return nestAsk{Inner: fleet.NewMember("inner", countdown, nestSettings{Depth: s.Depth - 1})}
	}, func(b *fleet.Body, _ nestAsk) {
		aws.Use(b.Fleet(), "", "").Queues("q", fleet.QueuesSpec{})
	})
}

type twoNest struct{ Left, Right fleet.Member }

// binary has two members of itself, each one level shallower: it ends,
// and within the depth limit, but has 2^Depth members.
var binary fleet.Component[nestSettings]

func init() {
	binary = fleet.DefineComponent("binary", func(s nestSettings) twoNest {
		if s.Depth <= 0 || !asked(broadGuard) {
			return twoNest{}
		}
		next := nestSettings{Depth: s.Depth - 1}
		return twoNest{Left: fleet.NewMember("l", binary, next), Right: fleet.NewMember("r", binary, next)}
	}, nil)
}

// synthRecursive instantiates c as shop and synthesizes, within a time
// bound, and returns the rows and how many asks it took.
func synthRecursive[S any](t *testing.T, c fleet.Component[S], s S) (*spec.Document, []spec.Diagnostic, int) {
	t.Helper()
	asks = 0
	type result struct {
		doc   *spec.Document
		diags []spec.Diagnostic
	}
	done := make(chan result, 1)
	go func() {
		f := fleet.New("ops")
		aws.Use(f, "", aws.Paris)
		fleet.Instantiate(f, "shop", c, s)
		doc, diags := f.Synth()
		done <- result{doc, diags}
	}()
	select {
	case r := <-done:
		return r.doc, r.diags, asks
	case <-time.After(30 * time.Second):
		t.Fatalf("synth of a recursive component did not end in 30s")
		return nil, nil, 0
	}
}

func recursionRows(ds []spec.Diagnostic) []spec.Diagnostic {
	var out []spec.Diagnostic
	for _, d := range ds {
		if d.ID == spec.RowComponentRecursion {
			out = append(out, d)
		}
	}
	return out
}

func TestAComponentThatIsItsOwnMemberIsARow(t *testing.T) {
	_, diags, n := synthRecursive(t, nest(), nestSettings{})
	rows := recursionRows(diags)
	if len(rows) != 1 {
		t.Fatalf("after %d asks, rows = %v: want one component-recursion row", n, diags)
	}
	if n > fleet.MaxMemberDepth+1 {
		t.Fatalf("%d asks: want at most %d (the depth limit)", n, fleet.MaxMemberDepth+1)
	}
	r := rows[0]
	if r.Severity != spec.Error || !strings.HasPrefix(r.Subject, "shop.inner.inner.inner.") || !strings.Contains(r.Subject, "…") || len(r.Subject) > 80 {
		t.Fatalf("subject = %q: want shop.inner.inner.inner.… truncated", r.Subject)
	}
	if !strings.Contains(r.Message, "nest") || !strings.Contains(r.Message, "32") || !strings.Contains(r.Resolution, "stop") {
		t.Fatalf("row = %+v: want the component, the limit and the fix", r)
	}
	if want := "shop" + strings.Repeat(".inner", fleet.MaxMemberDepth+1); r.Evidence != want {
		t.Fatalf("evidence = %q, want the full path %q", r.Evidence, want)
	}
}

func TestAComponentCycleIsFoundAtItsFirstRepeat(t *testing.T) {
	_, diags, n := synthRecursive(t, self, nestSettings{Depth: 7})
	rows := recursionRows(diags)
	if len(rows) != 1 || n > 2 {
		t.Fatalf("after %d asks, rows = %v: want one component-recursion row after 2 asks", n, diags)
	}
	r := rows[0]
	if r.Subject != "shop.inner" || !strings.Contains(r.Message, "same settings") || !strings.Contains(r.Message, "shop") {
		t.Fatalf("row = %+v: want shop.inner, a member of its ancestor's component with the same settings", r)
	}
}

func TestAComponentTooDeepIsARow(t *testing.T) {
	_, diags, n := synthRecursive(t, deeper, nestSettings{})
	if rows := recursionRows(diags); len(rows) != 1 || n > fleet.MaxMemberDepth+1 {
		t.Fatalf("after %d asks, rows = %v: want one component-recursion row", n, diags)
	}
}

func TestAComponentTooBroadIsARow(t *testing.T) {
	_, diags, n := synthRecursive(t, binary, nestSettings{Depth: 30})
	rows := recursionRows(diags)
	if len(rows) != 1 || n > fleet.MaxMembers+1 {
		t.Fatalf("after %d asks, rows = %v: want one component-recursion row", n, diags)
	}
	if !strings.Contains(rows[0].Message, "members") {
		t.Fatalf("row = %+v: want the member limit", rows[0])
	}
}

func TestARecursionWithAnEndIsNoRow(t *testing.T) {
	doc, diags, _ := synthRecursive(t, countdown, nestSettings{Depth: 3})
	if spec.HasErrors(diags) || len(doc.Resources) != 4 {
		t.Fatalf("rows = %v, %d resources: want none, and a queue per level", diags, len(doc.Resources))
	}
	if _, ok := doc.Components["shop"].Members["inner.inner.inner"]; !ok {
		t.Fatalf("members = %v: want inner.inner.inner", doc.Components["shop"].Members)
	}
}

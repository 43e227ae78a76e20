package fleet_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

type monExports struct{ URL fleet.Output[string] }

var monQueue = fleet.DefineInterface("watched-queue", monExports{URL: fleet.NewExport[string]("url", fleet.AfterApply, fleet.Global|fleet.AccountLocal|fleet.RegionLocal)})

type monitorAsk struct{ Queues fleet.SlotAll[monExports] }

// monitor is a component whose slot reaches every queue its wire lists.
var monitor = fleet.DefineComponent("monitor",
	func(struct{}) monitorAsk { return monitorAsk{Queues: fleet.NeedAll("queues", monQueue)} },
	func(b *fleet.Body, x monitorAsk) {
		aws.Use(b.Fleet(), "", "").Queues("watch", fleet.QueuesSpec{
			Tags: x.Queues.EachTags(func(q monExports) fleet.Output[string] { return q.URL }),
		})
	})

func TestAComponentSlotReachesAll(t *testing.T) {
	f := fleet.New("ops")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "mon", monitor, struct{}{}, fleet.WireMemberAll("queues", fleet.At("a", "jobs"), fleet.At("b", "jobs")))
	doc, diags := f.Synth()
	if spec.HasErrors(diags) {
		t.Fatalf("rows: %v", diags)
	}
	if u := doc.Uses["mon-queues"]; u.Reach != "all" || u.Interface != "watched-queue" {
		t.Fatalf("use = %+v", u)
	}
	if w := doc.Wires["mon-queues"]; !w.List || len(w.Entries) != 2 {
		t.Fatalf("wire = %+v", w)
	}
	if got := doc.Resources[0].Spec["tags"]; got == nil || !strings.Contains(toJSON(t, got), `"use":"mon-queues"`) {
		t.Fatalf("the watch queue's tags = %v, want the keyed set of mon-queues", got)
	}

	// A reach-all slot wired to one capability is the wiring's own row.
	f = fleet.New("ops")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "mon", monitor, struct{}{}, fleet.WireMember("queues", "a", "jobs"))
	if _, diags := f.Synth(); !hasRow(diags, spec.RowReachWire) {
		t.Fatalf("rows = %v, want reach-wire", diags)
	}
	// Unwired, the row says to use WireMemberAll.
	f = fleet.New("ops")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "mon", monitor, struct{}{})
	_, diags = f.Synth()
	var unfilled bool
	for _, d := range diags {
		unfilled = unfilled || (d.ID == spec.RowComponentSlotUnfilled && strings.Contains(d.Resolution, "fleet.WireMemberAll"))
	}
	if !unfilled {
		t.Fatalf("rows = %v, want component-slot-unfilled naming WireMemberAll", diags)
	}
}

func hasRow(ds []spec.Diagnostic, id spec.RowID) bool {
	for _, d := range ds {
		if d.ID == id {
			return true
		}
	}
	return false
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type twoAsk struct{ A, B fleet.Member }

var leaf = fleet.DefineComponent("leaf", func(struct{}) struct{} { return struct{}{} }, func(b *fleet.Body, _ struct{}) {
	aws.Use(b.Fleet(), "", "").Queues("q", fleet.QueuesSpec{})
})

func TestTwoMembersOfOneName(t *testing.T) {
	twice := fleet.DefineComponent("twice", func(struct{}) twoAsk {
		return twoAsk{A: fleet.NewMember("x", leaf, struct{}{}), B: fleet.NewMember("x", leaf, struct{}{})}
	}, nil)
	f := fleet.New("ops")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "t", twice, struct{}{})
	doc, diags := f.Synth()
	var dup bool
	for _, d := range diags {
		dup = dup || (d.ID == spec.RowGivenTwice && d.Subject == "t.x")
	}
	if !dup || len(doc.Resources) != 1 {
		t.Fatalf("rows = %v, resources %d: want given-twice for t.x and the first member's queue only", diags, len(doc.Resources))
	}
}

// A receive half that reaches for fleet-level wiring gets a row for each,
// and never a panic: its fleet is the body's view.
func TestReceiveHalfWiringIsARowNotAPanic(t *testing.T) {
	bad := fleet.DefineComponent("bad", func(struct{}) struct{} { return struct{}{} }, func(b *fleet.Body, _ struct{}) {
		s := fleet.UseAll(b.Fleet(), "queues", monQueue)
		fleet.WireAll(b.Fleet(), s, fleet.At("a", "jobs"))
		fleet.Wire(b.Fleet(), fleet.Use(b.Fleet(), "db", monQueue), "a", "jobs")
		fleet.Forget[aws.Queues](b.Fleet(), "old")
		fleet.Exclude[aws.Queues](b.Fleet(), "x", "why")
		fleet.Instantiate(b.Fleet(), "inner", leaf, struct{}{})
	})
	f := fleet.New("ops")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "x", bad, struct{}{})
	doc, diags := f.Synth()
	n := 0
	for _, d := range diags {
		if d.ID == spec.RowComponentBodyWiring {
			n++
		}
	}
	if n != 7 || len(doc.Uses) != 0 || len(doc.Wires) != 0 {
		t.Fatalf("%d component-body-wiring rows, uses %v, wires %v: %v", n, doc.Uses, doc.Wires, diags)
	}
}

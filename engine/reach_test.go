package engine

import (
	"context"
	"reflect"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// reachConsumer tags a queue with the urls of every job queue it reaches.
const reachConsumer = `{"apiVersion": "infra/v1", "fleet": "worker", "accounts": {"aws": "` + acct + `"},
	"placement": {"aws": "eu-west-1"},
	"interfaces": {"job-queue": {"exports": {"url": {"type": "string", "lifecycle": "apply", "locality": ["global", "region"]}}}},
	"uses": {"queues": {"interface": "job-queue", "reach": "all"}},
	"wires": {"queues": [{"fleet": "a", "provides": "jobs"}, {"fleet": "b", "provides": "jobs"}]},
	"resources": [{"address": "aws/queues/work", "spec": {"tags": {"use": "queues", "export": "url"}}}]}`

// reachModel is the consumer resolved against a and b; b's url is
// pending when bPending.
func reachModel(t *testing.T, bPending bool) *spec.Model {
	t.Helper()
	m := model(t, reachConsumer)
	record := func(fleet, region, url string) spec.Far {
		e := spec.PublishedExport{Type: spec.ExportString, Lifecycle: spec.LifecycleApply, Locality: spec.LocalityGlobal, Region: region, Provider: spec.AWS, Value: url}
		if url == "" {
			e.Pending = true
		}
		rec := &spec.Published{Fleet: fleet, Capabilities: map[string]spec.PublishedCapability{"jobs": {
			Interface: "job-queue", InterfaceHash: m.Interfaces["job-queue"].Hash, Consumers: "many", Exposed: true,
			Exports: map[string]spec.PublishedExport{"url": e}}}}
		return spec.Far{Record: rec}
	}
	bURL := "https://sqs.us-east-1.amazonaws.com/" + acct + "/b-jobs"
	if bPending {
		bURL = ""
	}
	far := map[string]spec.Far{"a": record("a", "eu-west-1", "https://sqs.eu-west-1.amazonaws.com/"+acct+"/a-jobs"), "b": record("b", "us-east-1", bURL)}
	if diags := spec.ResolveWires(m, far); len(diags) != 0 {
		t.Fatalf("rows: %v", diags)
	}
	return m
}

// A reach-all import is a map keyed by FLEET/REGION; the change names each
// entry it reads, and the plan's id binds those names, not the values.
func TestReachAllReadsAKeyedSet(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	plan := func(m *spec.Model) *Plan {
		l, _ := f.store.LoadLedger(ctx)
		p, err := f.engine().Plan(ctx, m, nil, l, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pending := plan(reachModel(t, true))
	known := plan(reachModel(t, false))
	c := known.Actions[0].Changes
	want := []string{"a:jobs.url", "b:jobs.url"}
	var tags *Change
	for i := range c {
		if c[i].Field == "tags" {
			tags = &c[i]
		}
	}
	if tags == nil || !reflect.DeepEqual(tags.From, want) {
		t.Fatalf("the changes: %+v", c)
	}
	wantTags := map[string]any{"a/eu-west-1": "https://sqs.eu-west-1.amazonaws.com/" + acct + "/a-jobs", "b/us-east-1": "https://sqs.us-east-1.amazonaws.com/" + acct + "/b-jobs"}
	if !reflect.DeepEqual(tags.After, wantTags) {
		t.Fatalf("tags after %#v, want %#v", tags.After, wantTags)
	}
	if pending.ID != known.ID {
		t.Fatal("resolving a pending entry changed the plan's id")
	}
	if e := pending.Pending(); e == nil || !reflect.DeepEqual(e.Refs, []string{"b:jobs.url"}) || !reflect.DeepEqual(e.Fleets, []string{"b"}) {
		t.Fatalf("pending: %+v", e)
	}
	if _, err := f.engine().Apply(ctx, known, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	if p := plan(reachModel(t, false)); p.HasChanges() {
		t.Fatalf("the plan after the apply: %+v", p.Actions)
	}
}

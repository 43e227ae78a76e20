package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

// jobQueueExports is the interface of the reach tests: url may be used
// anywhere or in its region, host only in its region.
var jobQueueExports = map[string]any{
	"url":  map[string]any{"type": "string", "lifecycle": "apply", "locality": []any{"global", "region"}},
	"host": map[string]any{"type": "string", "lifecycle": "apply", "locality": "region"},
	"name": map[string]any{"type": "string", "lifecycle": "plan", "locality": "global"},
}

// reachDoc is a consumer whose slot queues reaches all, wired to a:jobs
// and b:jobs, with a queue tagged with the set of urls.
func reachDoc(t *testing.T, edit func(m map[string]any)) *Document {
	t.Helper()
	m := map[string]any{
		"apiVersion": "infra/v1", "fleet": "worker", "placement": map[string]any{"aws": "eu-west-1"},
		"interfaces": map[string]any{"job-queue": map[string]any{"exports": jobQueueExports}},
		"uses":       map[string]any{"queues": map[string]any{"interface": "job-queue", "reach": "all"}},
		"wires": map[string]any{"queues": []any{
			map[string]any{"fleet": "a", "provides": "jobs"}, map[string]any{"fleet": "b", "provides": "jobs"}}},
		"resources": []any{map[string]any{"address": "aws/queues/work",
			"spec": map[string]any{"tags": map[string]any{"use": "queues", "export": "url"}}}},
	}
	if edit != nil {
		edit(m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// queueRecord is fleet's record: capability jobs of job-queue, its values
// in region.
func queueRecord(t *testing.T, fleet, region string) *Published {
	t.Helper()
	m, diags := Compile(reachDoc(t, nil))
	if HasErrors(diags) {
		t.Fatal(rowsText(diags))
	}
	url := "https://sqs." + region + ".amazonaws.com/123456789012/" + fleet + "-jobs"
	rec := &Published{Fleet: fleet, Capabilities: map[string]PublishedCapability{"jobs": {
		Interface: "job-queue", InterfaceHash: m.Interfaces["job-queue"].Hash, Consumers: "many", Exposed: true,
		Exports: map[string]PublishedExport{
			"url":  {Type: ExportString, Lifecycle: LifecycleApply, Locality: LocalityGlobal, Region: region, Provider: AWS, Value: url},
			"host": {Type: ExportString, Lifecycle: LifecycleApply, Locality: LocalityRegion, Region: region, Provider: AWS, Value: "sqs." + region},
			"name": {Type: ExportString, Lifecycle: LifecyclePlan, Locality: LocalityGlobal, Value: fleet + "-jobs"},
		}}}}
	rec.Seal()
	return rec
}

func twoRegions(t *testing.T) map[string]Far {
	return map[string]Far{"a": {Record: queueRecord(t, "a", "eu-west-1")}, "b": {Record: queueRecord(t, "b", "us-east-1")}}
}

func wiresOf(m map[string]any) map[string]any { return m["wires"].(map[string]any) }

func tagsOf(m map[string]any) map[string]any {
	return m["resources"].([]any)[0].(map[string]any)["spec"].(map[string]any)
}

func TestReachAllDecodesAndRoundTrips(t *testing.T) {
	doc := reachDoc(t, nil)
	m, diags := Compile(doc)
	if HasErrors(diags) {
		t.Fatal(rowsText(diags))
	}
	slot := m.Uses["queues"]
	if !slot.All || !slot.Wire.List || len(slot.Wire.Entries) != 2 || slot.Wire.Entries[1].Fleet != "b" {
		t.Fatalf("slot %+v, wire %+v", slot, slot.Wire)
	}
	d, _ := m.Lookup(Address{Provider: AWS, Kind: Queues, Name: "work"})
	if im, ok := d.Fields["tags"].(Import); !ok || im.Slot != "queues" || im.Export != "url" {
		t.Fatalf("tags are %#v, want the import of the whole set", d.Fields["tags"])
	}
	b, err := EncodeDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"queues": [`) || !strings.Contains(string(b), `"reach": "all"`) {
		t.Fatalf("encoded:\n%s", b)
	}
	again, err := DecodeDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := EncodeDocument(again); string(b2) != string(b) {
		t.Fatalf("encode/decode changed the document:\n%s\n%s", b, b2)
	}
	// An empty list is an empty set, and stays a list.
	empty := reachDoc(t, func(m map[string]any) { wiresOf(m)["queues"] = []any{} })
	b, _ = EncodeDocument(empty)
	if again, err := DecodeDocument(b); err != nil || !again.Wires["queues"].List {
		t.Fatalf("an empty list wire reads back as %+v (%v):\n%s", again.Wires["queues"], err, b)
	}
	// A published record keeps the list as a list.
	var w Wire
	if err := json.Unmarshal([]byte(`[{"fleet":"a","provides":"jobs"}]`), &w); err != nil || !w.List || len(w.Each()) != 1 {
		t.Fatalf("wire %+v: %v", w, err)
	}
	if out, _ := json.Marshal(Wire{List: true}); string(out) != "[]" {
		t.Fatalf("an empty list wire is written %s", out)
	}
}

func TestReachRows(t *testing.T) {
	cases := []struct {
		name string
		edit func(m map[string]any)
		id   RowID
		want string
	}{
		{"reach one wired to a list", func(m map[string]any) {
			delete(m["uses"].(map[string]any)["queues"].(map[string]any), "reach")
		}, RowReachWire, `slot "queues" reaches one capability, and its wire is a list`},
		{"reach all wired to one object", func(m map[string]any) {
			wiresOf(m)["queues"] = map[string]any{"fleet": "a", "provides": "jobs"}
		}, RowReachWire, `slot "queues" reaches all, and its wire is one object (write a list, even of one capability: "wires": {"queues": [{"fleet": "a", "provides": "jobs"}]})`},
		{"unknown reach", func(m map[string]any) {
			m["uses"].(map[string]any)["queues"].(map[string]any)["reach"] = "some"
		}, RowReachUnknown, `unknown reach "some"`},
		{"a set in a scalar field", func(m map[string]any) {
			tagsOf(m)["tags"] = map[string]any{"URL": map[string]any{"use": "queues", "export": "url"}}
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/secrets/s",
				"spec": map[string]any{"value": map[string]any{"composed": map[string]any{"format": "{0}", "args": []any{map[string]any{"use": "queues", "export": "url"}}}}}})
		}, RowReachField, `field "value" reads queues.url, a set keyed by fleet and region (slot "queues" reaches all), where it takes one value`},
		{"one value as a whole map", func(m map[string]any) {
			m["uses"].(map[string]any)["queues"].(map[string]any)["reach"] = "one"
			wiresOf(m)["queues"] = map[string]any{"fleet": "a", "provides": "jobs"}
		}, RowReachField, `field "tags" takes a map, and queues.url is one value (slot "queues" reaches one)`},
		{"a set in a Lambda's environment", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/compute/api",
				"spec": map[string]any{"image": "nginx", "executionRole": "arn:aws:iam::123456789012:role/api", "env": map[string]any{"use": "queues", "export": "url"}}})
		}, RowReachField, `field "env" reads the set queues.url, keyed FLEET/REGION, and Lambda takes environment variable names of letters, digits and '_' only`},
		{"a capability listed twice", func(m map[string]any) {
			wiresOf(m)["queues"] = append(wiresOf(m)["queues"].([]any), map[string]any{"fleet": "a", "provides": "jobs"})
		}, RowReachKeyDuplicate, `slot "queues" lists a:jobs twice (items 1 and 3)`},
		{"a set wired to nothing", func(m map[string]any) { delete(m, "wires") },
			RowWireUnfilled, `slot "queues" is wired to nothing (wire it to a list: "wires": {"queues": [{"fleet": "…", "provides": "…"}, …]})`},
		{"an entry wired to itself", func(m map[string]any) {
			wiresOf(m)["queues"].([]any)[1].(map[string]any)["fleet"] = "worker"
		}, RowWireSelf, `wires.queues[1]: slot "queues" is wired to this fleet itself`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diags := Validate(reachDoc(t, tc.edit))
			if !hasRow(diags, tc.id, tc.want) {
				t.Fatalf("want a %s row with %q, got:\n%s", tc.id, tc.want, rowsText(diags))
			}
		})
	}
}

// hasRow reports whether diags has an error row id whose text holds want.
func hasRow(diags []Diagnostic, id RowID, want string) bool {
	for _, d := range diags {
		if d.ID == id && strings.Contains(d.String(), want) {
			return true
		}
	}
	return false
}

func TestResolveReachAll(t *testing.T) {
	m, diags := Compile(reachDoc(t, nil))
	if HasErrors(diags) {
		t.Fatal(rowsText(diags))
	}
	if diags := ResolveWires(m, twoRegions(t)); len(diags) != 0 {
		t.Fatalf("rows: %s", rowsText(diags))
	}
	set := m.WiredOf(Import{Slot: "queues", Export: "url"})
	if len(set) != 2 || set[0].Key != "a/eu-west-1" || set[1].Key != "b/us-east-1" || set[1].Ref != "b:jobs.url" {
		t.Fatalf("the set: %+v", set)
	}
	if len(m.Wired) != 0 {
		t.Fatalf("a reach-all slot resolved as one value too: %+v", m.Wired)
	}

	// One entry is still a keyed set.
	m, _ = Compile(reachDoc(t, func(m map[string]any) {
		wiresOf(m)["queues"] = []any{map[string]any{"fleet": "a", "provides": "jobs"}}
	}))
	if diags := ResolveWires(m, twoRegions(t)); len(diags) != 0 {
		t.Fatalf("rows: %s", rowsText(diags))
	}
	if set := m.WiredOf(Import{Slot: "queues", Export: "url"}); len(set) != 1 || set[0].Key != "a/eu-west-1" {
		t.Fatalf("a set of one: %+v", set)
	}

	// A capability with no region is keyed by its fleet alone.
	noRegion := queueRecord(t, "b", "")
	m, _ = Compile(reachDoc(t, nil))
	ResolveWires(m, map[string]Far{"a": {Record: queueRecord(t, "a", "eu-west-1")}, "b": {Record: noRegion}})
	if set := m.WiredOf(Import{Slot: "queues", Export: "url"}); len(set) != 2 || set[1].Key != "b" {
		t.Fatalf("keys without a region: %+v", set)
	}
}

func TestResolveReachAllRows(t *testing.T) {
	cases := []struct {
		name string
		edit func(m map[string]any)
		far  func(t *testing.T) map[string]Far
		id   RowID
		want string
	}{
		{"a region-local export from two regions", func(m map[string]any) {
			tagsOf(m)["tags"] = map[string]any{"use": "queues", "export": "host"}
		}, twoRegions, RowReachRegion, `uses.queues: slot "queues" reaches all, and export "host" is region-local: no placement can make a multi-region set agree with a value that never leaves its region (a:jobs.host in eu-west-1, b:jobs.host in us-east-1)`},
		{"two entries with one key", func(m map[string]any) {
			wiresOf(m)["queues"].([]any)[1].(map[string]any)["provides"] = "jobs2"
			wiresOf(m)["queues"].([]any)[1].(map[string]any)["fleet"] = "a"
		}, func(t *testing.T) map[string]Far {
			rec := queueRecord(t, "a", "eu-west-1")
			rec.Capabilities["jobs2"] = rec.Capabilities["jobs"]
			return map[string]Far{"a": {Record: rec}}
		}, RowReachKeyDuplicate, `slot "queues" reaches a:jobs and a:jobs2, which have the same key a/eu-west-1`},
		{"a capability in two regions", nil, func(t *testing.T) map[string]Far {
			far := twoRegions(t)
			e := far["b"].Record.Capabilities["jobs"].Exports["host"]
			e.Region = "eu-west-1"
			far["b"].Record.Capabilities["jobs"].Exports["host"] = e
			return far
		}, RowReachKeyAmbiguous, `slot "queues" reaches b:jobs, whose exports live in eu-west-1 and us-east-1, so it has no one key`},
		{"an entry's fleet has published nothing", nil, func(t *testing.T) map[string]Far {
			return map[string]Far{"a": {Record: queueRecord(t, "a", "eu-west-1")}, "b": {Where: "state/b"}}
		}, RowWireFleetUnknown, `wires.queues[1]: slot "queues" is wired to fleet "b", which has published nothing at state/b`},
		{"an entry's capability is held", nil, func(t *testing.T) map[string]Far {
			far := twoRegions(t)
			c := far["b"].Record.Capabilities["jobs"]
			c.Consumers = "one"
			far["b"].Record.Capabilities["jobs"] = c
			f := far["b"]
			f.Claims = &Claims{Capabilities: map[string][]Claim{"jobs": {{Fleet: "other", Slot: "q"}}}}
			far["b"] = f
			return far
		}, RowConsumerHeld, `slot "queues" is wired to b:jobs, which serves one consumer, and other already holds it`},
		{"an entry fails a requirement", func(m map[string]any) {
			m["uses"].(map[string]any)["queues"].(map[string]any)["requires"] = []any{map[string]any{"export": "name", "op": "!=", "value": "b-jobs"}}
		}, twoRegions, RowRequirementFailed, `slot "queues" requires name != "b-jobs", and b publishes name = "b-jobs"`},
		{"an entry's value from another region", func(m map[string]any) {
			m["interfaces"].(map[string]any)["job-queue"].(map[string]any)["exports"].(map[string]any)["url"].(map[string]any)["locality"] = "region"
			wiresOf(m)["queues"] = []any{map[string]any{"fleet": "b", "provides": "jobs"}}
		}, func(t *testing.T) map[string]Far {
			far := twoRegions(t)
			delete(far, "a")
			// The record says url is of another definition now; carry
			// the consumer's hash, and a region-local value.
			m, _ := Compile(reachDoc(t, func(m map[string]any) {
				m["interfaces"].(map[string]any)["job-queue"].(map[string]any)["exports"].(map[string]any)["url"].(map[string]any)["locality"] = "region"
			}))
			c := far["b"].Record.Capabilities["jobs"]
			c.InterfaceHash = m.Interfaces["job-queue"].Hash
			e := c.Exports["url"]
			e.Locality = LocalityRegion
			c.Exports["url"] = e
			far["b"].Record.Capabilities["jobs"] = c
			return far
		}, RowLocalityRegion, `reads b:jobs.url, which is region-local (us-east-1); aws/queues/work is in eu-west-1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, diags := Compile(reachDoc(t, tc.edit))
			if HasErrors(diags) {
				t.Fatal(rowsText(diags))
			}
			diags = ResolveWires(m, tc.far(t))
			if !hasRow(diags, tc.id, tc.want) {
				t.Fatalf("want a %s row with %q, got:\n%s", tc.id, tc.want, rowsText(diags))
			}
		})
	}
}

package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/golden"
	"github.com/infra-iac/infra/spec"
)

// shopModel is the components fixture: two web-app instances, each
// reading its database's password and endpoint.
func shopModel(t *testing.T) *spec.Model {
	t.Helper()
	m, diags := spec.Compile(specFixture(t, "components", "shop.json"))
	if spec.HasErrors(diags) {
		t.Fatalf("fixture has errors: %v", diags)
	}
	return m
}

// specFixture decodes a document of spec/testdata.
func specFixture(t *testing.T, path ...string) *spec.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{"..", "spec", "testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := spec.DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestDocumentGraphGolden(t *testing.T) {
	g := DocumentGraph(shopModel(t))
	golden.Check(t, "graph-document.mmd", Mermaid(g))
	golden.Check(t, "graph-document.dot", DOT(g))
}

func TestPlanGraphGolden(t *testing.T) {
	p := samplePlan()
	// The sample has no order; give it some, as the planner would.
	for i := range p.Actions {
		switch p.Actions[i].Address.String() {
		case "aws/secrets/db-url":
			p.Actions[i].DependsOn = []spec.Address{addr("aws/secrets/db-password")}
		case "scaleway/secrets/shop-db-url":
			p.Actions[i].DependsOn = []spec.Address{addr("aws/secrets/db-url"), addr("aws/security-group/web")}
		}
	}
	g := PlanGraph(p)
	golden.Check(t, "graph-plan.mmd", Mermaid(g))
	golden.Check(t, "graph-plan.dot", DOT(g))
}

// The document graph has an arrow per referenced resource, labelled with
// every field that reads it, and the component's resources sit in its
// subgraph.
func TestDocumentGraphEdgesAndGroups(t *testing.T) {
	g := DocumentGraph(shopModel(t))
	if len(g.Nodes) != 12 || len(g.Groups) != 2 {
		t.Fatalf("got %d nodes and %d groups, want 12 and 2", len(g.Nodes), len(g.Groups))
	}
	want := GraphEdge{From: "aws/postgres/shop-a-db-pg", To: "aws/secrets/shop-a-db-password", Label: "masterPasswordSecret"}
	if !containsEdge(g, want) {
		t.Errorf("no edge %+v in %+v", want, g.Edges)
	}
	for _, n := range g.Nodes {
		if strings.Contains(n.Key, "shop-a") && n.Group != "shop-a" {
			t.Errorf("%s is in group %q, want shop-a", n.Key, n.Group)
		}
	}
}

func containsEdge(g *Graph, e GraphEdge) bool {
	for _, x := range g.Edges {
		if x == e {
			return true
		}
	}
	return false
}

// A name that carries control characters, quotes and the drawing
// languages' own syntax is a label, escaped, never an identifier; the
// drawing holds none of its raw bytes.
func TestGraphEscapesHostileNames(t *testing.T) {
	hostile := "evil\"]\n  x-->y\x1b[31m#quot;<b>`\\l|"
	g := &Graph{
		Nodes:  []GraphNode{{Key: "a", Label: hostile, Class: graphResource, Group: "grp"}, {Key: "b", Label: "b"}},
		Groups: []GraphGroup{{Key: "grp", Label: hostile}},
		Edges:  []GraphEdge{{From: "a", To: "b", Label: hostile}},
	}
	mm := Mermaid(g)
	for _, raw := range []string{"\x1b", "\n  x-->y", `evil"`, "<b>", "`", "#quot;<", `\l|`} {
		if strings.Contains(mm, raw) {
			t.Errorf("mermaid holds %q raw:\n%s", raw, mm)
		}
	}
	if want := `n1["evil#quot;]\u000a  x--#gt;y\u001b[31m#35;quot;#lt;b#gt;#96;\l#124;"]`; !strings.Contains(mm, want) {
		t.Errorf("mermaid label is not %s:\n%s", want, mm)
	}
	dot := DOT(g)
	for _, raw := range []string{"\x1b", "\n  x-->y", `evil"`} {
		if strings.Contains(dot, raw) {
			t.Errorf("dot holds %q raw:\n%s", raw, dot)
		}
	}
	if want := `label="evil\"]\\u000a  x-->y\\u001b[31m#quot;<b>` + "`" + `\\l|"`; !strings.Contains(dot, want) {
		t.Errorf("dot label is not %s:\n%s", want, dot)
	}
}

func TestDrawGraphRefusesUnknownFormat(t *testing.T) {
	if _, err := DrawGraph(&Graph{}, "svg\x1b"); err == nil || !strings.Contains(err.Error(), `"svg\\u001b"`) || !strings.Contains(err.Error(), "mermaid, dot") {
		t.Fatalf("got %v, want an error naming the escaped format and the formats", err)
	}
	for _, f := range GraphFormats {
		if _, err := DrawGraph(&Graph{}, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The same plan draws the same text whatever the order of its actions.
func TestPlanGraphIsDeterministic(t *testing.T) {
	p := samplePlan()
	want := Mermaid(PlanGraph(p))
	for i, j := 0, len(p.Actions)-1; i < j; i, j = i+1, j-1 {
		p.Actions[i], p.Actions[j] = p.Actions[j], p.Actions[i]
	}
	if got := Mermaid(PlanGraph(p)); got != want {
		t.Errorf("reordered actions draw differently:\n%s\nwant:\n%s", got, want)
	}
}

// A contract is a dashed arrow from its resource to what it reads; each
// action's node has its class.
func TestPlanGraphContractsAndClasses(t *testing.T) {
	g := PlanGraph(samplePlan())
	want := GraphEdge{From: "scaleway/scaleway-container/api", To: "scaleway/secrets/shop-db-url", Label: "secretEnv", Dashed: true}
	if !containsEdge(g, want) {
		t.Errorf("no contract edge %+v in %+v", want, g.Edges)
	}
	classes := map[string]string{}
	for _, n := range g.Nodes {
		classes[n.Key] = n.Class
	}
	for key, class := range map[string]string{"aws/security-group/web": "replace", "aws/queues/jobs": "update-in-place",
		"aws/queues/old": "forget", "aws/queues/mail": "adopt", "scaleway/scaleway-container/api": "contract"} {
		if classes[key] != class {
			t.Errorf("%s is of class %q, want %q", key, classes[key], class)
		}
	}
	if mm := Mermaid(g); !strings.Contains(mm, "classDef update_in_place ") || !strings.Contains(mm, " -.->|\"secretEnv\"| ") {
		t.Errorf("mermaid lacks the class or the dashed contract:\n%s", mm)
	}
}

// fleetsModel is the wiring example's consumer with two more slots: one
// reaching all of a list of two capabilities, one wired to nothing.
func fleetsModel(t *testing.T) *spec.Model {
	t.Helper()
	doc := specFixture(t, "wiring", "shop-eu.json")
	doc.Uses["queues"] = spec.Use{Interface: "postgres-database", Reach: "all"}
	doc.Uses["cache"] = spec.Use{Interface: "postgres-database"}
	doc.Wires["queues"] = spec.Wire{List: true, Entries: []spec.Wire{{Fleet: "a", Provides: "jobs"}, {Fleet: "b", Provides: "jobs", State: "s3://other/infra"}}}
	// The unwired slot is a row; the graph draws the model all the same.
	m, _ := spec.Compile(doc)
	return m
}

// Each slot points at each capability its wire names; a read record shows
// its capabilities, and one without the wired capability marks it missing.
func TestFleetsGraph(t *testing.T) {
	records := map[string]*spec.Published{
		"pg-shared": {Fleet: "pg-shared", Capabilities: map[string]spec.PublishedCapability{
			"eu": {Interface: "postgres-database", Exposed: true}, "us": {Interface: "postgres-database"}}},
		"a": {Fleet: "a", Capabilities: map[string]spec.PublishedCapability{}},
	}
	g := FleetsGraph(fleetsModel(t), records)
	golden.Check(t, "graph-fleets.mmd", Mermaid(g))
	want := GraphEdge{From: "slot:db", To: "capability:pg-shared:eu", Label: "reads endpoint, password, username"}
	if !containsEdge(g, want) {
		t.Errorf("no edge %+v in %+v", want, g.Edges)
	}
	for _, e := range []GraphEdge{{From: "slot:queues", To: "capability:a:jobs"}, {From: "slot:queues", To: "capability:b:jobs"}} {
		if !containsEdge(g, e) {
			t.Errorf("no edge %+v in %+v", e, g.Edges)
		}
	}
	labels := map[string]GraphNode{}
	for _, n := range g.Nodes {
		labels[n.Key] = n
	}
	for key, want := range map[string]GraphNode{
		"capability:pg-shared:us": {Label: "us (postgres-database), not exposed", Class: graphCapability, Group: "fleet:pg-shared"},
		"capability:a:jobs":       {Label: "jobs: not in the record of a", Class: graphMissing, Group: "fleet:a"},
		"capability:b:jobs":       {Label: "jobs", Class: graphCapability, Group: "fleet:b"},
		"slot:cache":              {Label: "uses cache (postgres-database): not wired", Class: graphMissing, Group: "fleet:shop-eu"},
		"slot:queues":             {Label: "uses queues (postgres-database), reach all", Class: graphSlot, Group: "fleet:shop-eu"},
	} {
		want.Key = key
		if labels[key] != want {
			t.Errorf("node %s is %+v, want %+v", key, labels[key], want)
		}
	}
}

// The comment draws the plan's graph, collapsed, up to commentGraphNodes
// nodes; above that it says how many there would be and how to draw them.
func TestMarkdownGraphCap(t *testing.T) {
	md := Markdown(bigPlan(commentGraphNodes), MarkdownOptions{Limit: 100 << 20})
	if !strings.Contains(md, "<details><summary>Graph of the changes (40 node(s))</summary>\n\n```mermaid\nflowchart LR\n") {
		t.Errorf("a plan of %d actions has no graph:\n%s", commentGraphNodes, md)
	}
	md = Markdown(bigPlan(commentGraphNodes+1), MarkdownOptions{Limit: 100 << 20})
	if strings.Contains(md, "```mermaid") {
		t.Errorf("a plan of %d actions is drawn", commentGraphNodes+1)
	}
	if !strings.Contains(md, "_The graph of the changes would have 41 nodes, more than the 40 a comment draws: `infra graph --plan FILE` draws it") {
		t.Errorf("no note for the graph over the cap:\n%s", md[len(md)-600:])
	}
	if md := Markdown(&engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop"}, MarkdownOptions{}); strings.Contains(md, "graph") {
		t.Errorf("a plan with no actions mentions a graph:\n%s", md)
	}
}

// The graph goes before anything else is cut: a comment that cuts any
// part has no graph, and at the largest limit that leaves the graph out,
// nothing else is cut and a note says where the graph is.
func TestMarkdownDropsTheGraphFirst(t *testing.T) {
	p := bigPlan(38)
	// bigPlan's diagnostics want more than their share of any limit; two
	// leave the details and the graph to compete.
	p.Diagnostics = p.Diagnostics[:2]
	// Long names make the graph larger than the room kept for the notes
	// of what was cut, so that some limits leave it out and cut nothing.
	for i := range p.Actions {
		p.Actions[i].Address.Name += strings.Repeat("n", 40)
	}
	full := Markdown(p, MarkdownOptions{Limit: 100 << 20})
	cut := func(md string) bool {
		return strings.Contains(md, "not detailed here") || strings.Contains(md, "more diagnostic(s)") || strings.Contains(md, "more destroyed or replaced")
	}
	if cut(full) || !strings.Contains(full, "```mermaid") {
		t.Fatal("the uncut comment is cut or has no graph")
	}
	// One by one down to where the graph goes, then in steps.
	first, step := 0, 1
	for limit := len(full); limit > len(full)-20000; limit -= step {
		md := Markdown(p, MarkdownOptions{Limit: limit})
		if len(md) > limit {
			t.Fatalf("limit %d: %d characters", limit, len(md))
		}
		if strings.Contains(md, "```mermaid") {
			if cut(md) {
				t.Fatalf("limit %d: the graph is drawn and something else is cut", limit)
			}
			continue
		}
		if first == 0 {
			first, step = limit, 50
			if cut(md) || !strings.Contains(md, fmt.Sprintf("_The graph of the changes is left out to keep this comment under %d characters: `infra graph --plan FILE` draws it", limit)) {
				t.Fatalf("limit %d: the graph is left out, but something else is cut too or the note is missing", limit)
			}
		}
		if limit < first-5000 {
			break
		}
	}
	if first == 0 {
		t.Fatal("the graph was never left out")
	}
	// A part cut to its own share of the limit leaves room the graph
	// would fit in; the graph goes all the same.
	q := bigPlan(10)
	for range 30 {
		q.Diagnostics = append(q.Diagnostics, q.Diagnostics[0])
	}
	if md := Markdown(q, MarkdownOptions{Limit: 20000}); !cut(md) || strings.Contains(md, "```mermaid") {
		t.Errorf("a comment that cuts its diagnostics draws the graph, or cuts nothing:\n%s", md)
	}
}

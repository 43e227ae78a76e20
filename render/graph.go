package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// Graph is a picture of a fleet, independent of the language it is drawn
// in: the fleet document's references (DocumentGraph), a plan's actions
// (PlanGraph) or the fleet's wires (FleetsGraph). Mermaid and DOT draw it.
// Nodes, groups and edges are identified by keys (an address, a slot's
// name); the drawings number them in sorted order, so that a name from a
// document is only ever a quoted label, never an identifier.
type Graph struct {
	Nodes  []GraphNode
	Edges  []GraphEdge
	Groups []GraphGroup
}

// GraphNode is one box. Class picks its shape and colour (graphStyles);
// Group is the key of the group it is drawn in, if any.
type GraphNode struct {
	Key, Label, Class, Group string
}

// GraphEdge points from the node that reads or waits to the node it reads
// or waits for. Dashed is a read at run time (a contract).
type GraphEdge struct {
	From, To, Label string
	Dashed          bool
}

// GraphGroup is a subgraph: a component instance, or a fleet.
type GraphGroup struct {
	Key, Label string
}

// The node classes. The action classes are engine.ActionClass's names.
const (
	graphResource   = "resource"
	graphContract   = "contract"
	graphCapability = "capability"
	graphSlot       = "slot"
	graphMissing    = "missing"
)

// GraphFormats are the languages a graph is drawn in, the default first.
var GraphFormats = []string{"mermaid", "dot"}

// CheckGraphFormat says why format is none of GraphFormats, if it is not.
func CheckGraphFormat(format string) error {
	if slices.Contains(GraphFormats, format) {
		return nil
	}
	return fmt.Errorf("unknown graph format %q: the formats are %s", spec.Printable(format), strings.Join(GraphFormats, ", "))
}

// DrawGraph draws g in format, one of GraphFormats.
func DrawGraph(g *Graph, format string) (string, error) {
	if err := CheckGraphFormat(format); err != nil {
		return "", err
	}
	if format == "dot" {
		return DOT(g), nil
	}
	return Mermaid(g), nil
}

// graphStyle is how one class is drawn: a Mermaid shape (the brackets
// around the quoted label) and classDef, and DOT node attributes.
type graphStyle struct {
	open, close string
	mermaid     string
	dot         string
}

var graphStyles = map[string]graphStyle{
	string(engine.ClassCreate):        {"([", "])", "fill:#e6ffed,stroke:#22863a", `shape=box, style="rounded,filled", fillcolor="#e6ffed", color="#22863a"`},
	string(engine.ClassUpdateInPlace): {"[", "]", "fill:#fff5b1,stroke:#b08800", `shape=box, style=filled, fillcolor="#fff5b1", color="#b08800"`},
	string(engine.ClassReplace):       {"{{", "}}", "fill:#ffdce0,stroke:#cb2431,stroke-width:2px", `shape=hexagon, style=filled, fillcolor="#ffdce0", color="#cb2431", penwidth=2`},
	string(engine.ClassDelete):        {">", "]", "fill:#ffdce0,stroke:#cb2431,stroke-dasharray:4 2", `shape=cds, style="filled,dashed", fillcolor="#ffdce0", color="#cb2431"`},
	string(engine.ClassAdopt):         {"[[", "]]", "fill:#f1f8ff,stroke:#0366d6", `shape=component, style=filled, fillcolor="#f1f8ff", color="#0366d6"`},
	string(engine.ClassForget):        {"[", "]", "fill:#f6f8fa,stroke:#6a737d,stroke-dasharray:4 2", `shape=box, style="filled,dashed", fillcolor="#f6f8fa", color="#6a737d"`},
	graphContract:                     {"(", ")", "fill:#ffffff,stroke:#6a737d,stroke-dasharray:2 2", `shape=ellipse, style=dashed, color="#6a737d"`},
	graphResource:                     {"[", "]", "", `shape=box`},
	graphCapability:                   {"([", "])", "fill:#f1f8ff,stroke:#0366d6", `shape=box, style="rounded,filled", fillcolor="#f1f8ff", color="#0366d6"`},
	graphSlot:                         {"[/", "/]", "fill:#fffbdd,stroke:#b08800", `shape=parallelogram, style=filled, fillcolor="#fffbdd", color="#b08800"`},
	graphMissing:                      {"[", "]", "fill:#ffffff,stroke:#cb2431,stroke-dasharray:4 2", `shape=box, style=dashed, color="#cb2431"`},
}

// graphIDs numbers the nodes (n1, n2 …) and the groups (g1 …) in the
// order of their keys.
type graphIDs struct {
	node, group map[string]string
}

func (g *Graph) ids() graphIDs {
	ids := graphIDs{node: map[string]string{}, group: map[string]string{}}
	for i, n := range g.Nodes {
		ids.node[n.Key] = fmt.Sprintf("n%d", i+1)
	}
	for i, gr := range g.Groups {
		ids.group[gr.Key] = fmt.Sprintf("g%d", i+1)
	}
	return ids
}

// sort puts nodes, groups and edges in key order, so that a drawing of
// the same input is the same text.
func (g *Graph) sort() {
	slices.SortFunc(g.Nodes, func(x, y GraphNode) int { return strings.Compare(x.Key, y.Key) })
	slices.SortFunc(g.Groups, func(x, y GraphGroup) int { return strings.Compare(x.Key, y.Key) })
	slices.SortFunc(g.Edges, func(x, y GraphEdge) int {
		return cmp.Or(strings.Compare(x.From, y.From), strings.Compare(x.To, y.To), strings.Compare(x.Label, y.Label), cmpBool(x.Dashed, y.Dashed))
	})
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	}
	return -1
}

// drawNodes draws the nodes of no group, then each group's between open
// and close, each with the indent it has there: Mermaid and DOT nest
// alike and differ only in the words.
func (g *Graph) drawNodes(node func(indent string, n GraphNode), open func(GraphGroup), close func()) {
	for _, n := range g.inGroup("") {
		node("  ", n)
	}
	for _, gr := range g.Groups {
		open(gr)
		for _, n := range g.inGroup(gr.Key) {
			node("    ", n)
		}
		close()
	}
}

// inGroup lists the nodes of group key ("" for those of none).
func (g *Graph) inGroup(key string) []GraphNode {
	var out []GraphNode
	for _, n := range g.Nodes {
		if n.Group == key {
			out = append(out, n)
		}
	}
	return out
}

// classes lists the classes the nodes use, sorted, each with its nodes.
func (g *Graph) classes() ([]string, map[string][]string) {
	ids := g.ids()
	of := map[string][]string{}
	for _, n := range g.Nodes {
		of[n.Class] = append(of[n.Class], ids.node[n.Key])
	}
	return slices.Sorted(maps.Keys(of)), of
}

// Mermaid draws g as a Mermaid flowchart: the nodes of no group, then a
// subgraph per group, the edges, and a classDef per class in use.
func Mermaid(g *Graph) string {
	ids := g.ids()
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	node := func(indent string, n GraphNode) {
		st := graphStyles[n.Class]
		fmt.Fprintf(&b, "%s%s%s\"%s\"%s\n", indent, ids.node[n.Key], cmp.Or(st.open, "["), mermaidText(n.Label), cmp.Or(st.close, "]"))
	}
	g.drawNodes(node, func(gr GraphGroup) {
		fmt.Fprintf(&b, "  subgraph %s[\"%s\"]\n", ids.group[gr.Key], mermaidText(gr.Label))
	}, func() { b.WriteString("  end\n") })
	for _, e := range g.Edges {
		arrow := "-->"
		if e.Dashed {
			arrow = "-.->"
		}
		if e.Label != "" {
			arrow += "|\"" + mermaidText(e.Label) + "\"|"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", ids.node[e.From], arrow, ids.node[e.To])
	}
	names, of := g.classes()
	for _, c := range names {
		if st := graphStyles[c]; st.mermaid != "" {
			// A class name from a fixed table, with - made _ for Mermaid.
			name := strings.ReplaceAll(c, "-", "_")
			fmt.Fprintf(&b, "  classDef %s %s\n  class %s %s\n", name, st.mermaid, strings.Join(of[c], ","), name)
		}
	}
	return b.String()
}

// mermaidText makes a label inert inside Mermaid's double quotes: a quote
// would end it, a pipe an edge's label, and #, &, <, > and ` would start
// an entity, HTML or markdown; control characters are escaped
// (spec.Printable) first.
func mermaidText(s string) string { return mermaidEscapes.Replace(spec.Printable(s)) }

var mermaidEscapes = strings.NewReplacer(`"`, "#quot;", "#", "#35;", "&", "#38;", "<", "#lt;", ">", "#gt;", "`", "#96;", "|", "#124;")

// DOT draws g in Graphviz's language: a cluster per group, attributes per
// node class.
func DOT(g *Graph) string {
	ids := g.ids()
	var b strings.Builder
	b.WriteString("digraph infra {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n")
	node := func(indent string, n GraphNode) {
		fmt.Fprintf(&b, "%s%s [label=\"%s\", %s];\n", indent, ids.node[n.Key], dotText(n.Label), cmp.Or(graphStyles[n.Class].dot, "shape=box"))
	}
	g.drawNodes(node, func(gr GraphGroup) {
		fmt.Fprintf(&b, "  subgraph cluster_%s {\n    label=\"%s\";\n", ids.group[gr.Key], dotText(gr.Label))
	}, func() { b.WriteString("  }\n") })
	for _, e := range g.Edges {
		var attrs []string
		if e.Label != "" {
			attrs = append(attrs, fmt.Sprintf("label=\"%s\"", dotText(e.Label)))
		}
		if e.Dashed {
			attrs = append(attrs, "style=dashed")
		}
		fmt.Fprintf(&b, "  %s -> %s", ids.node[e.From], ids.node[e.To])
		if len(attrs) > 0 {
			b.WriteString(" [" + strings.Join(attrs, ", ") + "]")
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// dotText makes a label inert inside DOT's double quotes: a quote would end
// it and a backslash start an escape (\n, \l); control characters are
// escaped (spec.Printable) first, and the escapes' own backslashes then.
func dotText(s string) string { return dotEscapes.Replace(spec.Printable(s)) }

var dotEscapes = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// graphBuilder collects nodes, groups and edges once each.
type graphBuilder struct {
	g      Graph
	nodes  map[string]bool
	groups map[string]bool
	// edges are keyed by their ends and dash, each with its labels, so
	// that two fields reading one resource are one arrow labelled with
	// both.
	edges map[GraphEdge]map[string]bool
}

func newGraphBuilder() *graphBuilder {
	return &graphBuilder{nodes: map[string]bool{}, groups: map[string]bool{}, edges: map[GraphEdge]map[string]bool{}}
}

// node adds a node unless its key is there already.
func (gb *graphBuilder) node(n GraphNode) {
	if gb.nodes[n.Key] {
		return
	}
	gb.nodes[n.Key] = true
	gb.g.Nodes = append(gb.g.Nodes, n)
}

func (gb *graphBuilder) group(key, label string) {
	if key == "" || gb.groups[key] {
		return
	}
	gb.groups[key] = true
	gb.g.Groups = append(gb.g.Groups, GraphGroup{Key: key, Label: label})
}

func (gb *graphBuilder) edge(from, to, label string, dashed bool) {
	k := GraphEdge{From: from, To: to, Dashed: dashed}
	if gb.edges[k] == nil {
		gb.edges[k] = map[string]bool{}
	}
	if label != "" {
		gb.edges[k][label] = true
	}
}

func (gb *graphBuilder) done() *Graph {
	for e, labels := range gb.edges {
		e.Label = strings.Join(slices.Sorted(maps.Keys(labels)), ", ")
		gb.g.Edges = append(gb.g.Edges, e)
	}
	gb.g.sort()
	return &gb.g
}

// DocumentGraph is the fleet document's dependency graph: a node per
// declared resource, an arrow from a resource to each resource a field
// reads (a reference, an observed attribute, a secret's value), labelled
// with the fields, and a group per component instance.
func DocumentGraph(m *spec.Model) *Graph {
	gb := newGraphBuilder()
	for _, d := range m.Resources {
		n := GraphNode{Key: d.Address.String(), Label: d.Address.String(), Class: graphResource}
		if of, ok := m.Components.Of(d.Address); ok {
			n.Group, n.Label = of.Instance, n.Label+" ("+of.Member+")"
			gb.group(of.Instance, instanceLabel(of.Instance, m.Components.Instances[of.Instance].Component))
		}
		gb.node(n)
	}
	for _, d := range m.Resources {
		for _, field := range slices.Sorted(maps.Keys(d.Fields)) {
			for _, dep := range spec.Deps(d.Fields[field]) {
				// Compile refuses a reference to an undeclared resource;
				// the node keeps the arrow drawable all the same.
				gb.node(GraphNode{Key: dep.String(), Label: dep.String() + " (not declared)", Class: graphMissing})
				gb.edge(d.Address.String(), dep.String(), field, false)
			}
		}
	}
	return gb.done()
}

// instanceLabel is "shop-a (web-app)".
func instanceLabel(instance, component string) string {
	if component == "" {
		return instance
	}
	return instance + " (" + component + ")"
}

// PlanGraph is a plan's graph: a node per action, shaped and coloured by
// its class and labelled with its symbol, address and member; an arrow
// from each action to each it depends on (DependsOn); and a node per
// contract's resource, with a dashed arrow, labelled with the field, to
// what it reads at run time. A component's resources are grouped by
// instance.
func PlanGraph(p *engine.Plan) *Graph {
	gb := newGraphBuilder()
	place := func(n GraphNode, component, member string) GraphNode {
		if member != "" {
			n.Label += " (" + member + ")"
		}
		n.Group = component
		gb.group(component, component)
		return n
	}
	for _, a := range p.Actions {
		label := strings.TrimSpace(actionStyle[a.Action].symbol) + " " + a.Address.String()
		gb.node(place(GraphNode{Key: a.Address.String(), Label: label, Class: string(a.Classified())}, a.Component, a.Member))
	}
	for _, c := range p.Contracts {
		gb.node(place(GraphNode{Key: c.Address.String(), Label: c.Address.String(), Class: graphContract}, c.Component, c.Member))
		gb.node(GraphNode{Key: c.Reads.String(), Label: c.Reads.String(), Class: graphResource})
		gb.edge(c.Address.String(), c.Reads.String(), c.Field, true)
	}
	for _, a := range p.Actions {
		for _, dep := range a.DependsOn {
			// DependsOn names actions of this plan; a hand-made plan may
			// not, and the arrow still needs both ends.
			gb.node(GraphNode{Key: dep.String(), Label: dep.String(), Class: graphResource})
			gb.edge(a.Address.String(), dep.String(), "", false)
		}
	}
	return gb.done()
}

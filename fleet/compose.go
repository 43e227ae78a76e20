package fleet

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/infra-iac/infra/fleet/internal/sdk"
	"github.com/infra-iac/infra/spec"
)

// InstanceOption is what the author of an instance writes about its
// members: settings, cuts, wires and placements, each by member path.
type InstanceOption struct {
	kind   string // "settings", "cut", "wire", "place"
	path   string
	value  any
	wire   spec.Wire
	source string
}

// Settings gives the member at path (a sub-component, "db", or a resource
// a component declares, "assets" or "db.pg") settings of its own type: a
// sub-component's settings struct, or a resource's spec struct
// (fleet.ObjectStoreSpec …). They reach the member directly, so no
// component forwards them; each field that is set overrides the
// component's default, and setting a fixed one is a row.
func Settings(path string, v any) InstanceOption {
	return InstanceOption{kind: "settings", path: path, value: v, source: caller(1)}
}

// Cut deletes the member at path from the declaration
// (members.<path>.enabled = false). The uses bound to what it offered
// become unfilled slots, to be filled with WireMember; its resources that
// exist are deleted, under a heading of their own.
func Cut(path string) InstanceOption {
	return InstanceOption{kind: "cut", path: path, source: caller(1)}
}

// WireMember fills the slot at path (member path, then the use: "api.db";
// the instance's own use: "db") with the capability provides of fleet
// providerFleet: a name across the fleet boundary, as Wire writes one.
func WireMember(path, providerFleet, provides string, opts ...WireOption) InstanceOption {
	w := spec.Wire{Fleet: providerFleet, Provides: provides}
	for _, o := range opts {
		if o.state != "" {
			w.State = o.state
		}
	}
	return InstanceOption{kind: "wire", path: path, wire: w, source: caller(1)}
}

// Place puts the member at path ("" for the whole instance) in region r.
// A member with no placement of its own follows the member it reads a
// region-local export from, and otherwise its parent's.
func Place[R ~string](path string, r R) InstanceOption {
	return InstanceOption{kind: "place", path: path, value: string(r), source: caller(1)}
}

// instance is one Instantiate being composed.
type instance struct {
	f      *Fleet
	root   *node
	name   string
	source string
	opts   map[string]map[string]*InstanceOption // kind → path → option
	used   map[*InstanceOption]bool
	record spec.ComponentInstance
	nodes  []*node // every node, parents before children
	// members is how many sub-component members were asked; tooMany is
	// set once that passed MaxMembers, and said.
	members int
	tooMany bool
}

// Instantiate adds an instance of component c called name to f, with the
// component's own settings and what the author writes about its members.
// The instance's resources are named name-…, and the document's
// component map says which member each comes from.
//
//	fleet.Instantiate(f, "shop-a", webapp.WebApp, webapp.Settings{Image: "…"},
//		fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"))
func Instantiate[S any](f *Fleet, name string, c Component[S], settings S, opts ...InstanceOption) Instance {
	if f == nil {
		return Instance{}
	}
	if f.scope != nil {
		f.scope.root.diags = append(f.scope.root.diags, bodyWiringRow("fleet.Instantiate"))
		return Instance{}
	}
	in := &instance{f: f, name: name, source: caller(1), opts: map[string]map[string]*InstanceOption{}, used: map[*InstanceOption]bool{},
		record: spec.ComponentInstance{Component: c.name, Source: c.source, Members: map[string]spec.ComponentMember{}, Settings: map[string]spec.SettingOrigin{}}}
	if _, dup := f.components[name]; dup {
		f.diags = append(f.diags, spec.Errorf(spec.RowGivenTwice, "components."+name, "give each instance its own name", "component instance %q declared twice", name))
		return Instance{}
	}
	for i := range opts {
		o := &opts[i]
		if in.opts[o.kind] == nil {
			in.opts[o.kind] = map[string]*InstanceOption{}
		}
		if old, dup := in.opts[o.kind][o.path]; dup {
			f.diags = append(f.diags, spec.Errorf(spec.RowGivenTwice, name+pathSuffix(o.path), "write it once",
				"%s for %s given twice, at %s and at %s", o.kind, o.path, old.source, o.source).WithEvidence(old.source+" "+o.source))
			continue
		}
		in.opts[o.kind][o.path] = o
	}
	if c.ask == nil {
		f.diags = append(f.diags, spec.Errorf(spec.RowInvalidValue, "components."+name, "make it with fleet.DefineComponent", "a zero fleet.Component"))
		return Instance{}
	}
	root := c.ask(settings)
	in.root = root
	for _, r := range settingRecordsOf("", reflect.ValueOf(settings), nil, in.source, nil) {
		in.record.Settings[r.path] = spec.SettingOrigin{Origin: spec.OriginUser, Source: in.source}
	}
	in.compose(root)
	if f.components == nil {
		f.components = map[string]spec.ComponentInstance{}
	}
	f.components[name] = in.record
	return Instance{in: in}
}

// Instance is a handle on a component instance, for ProvideFrom.
type Instance struct{ in *instance }

// ProvideFrom makes the capability offer of instance i (one its component
// offers, Offer, or re-exports from a member, ReExport) a capability of f
// called name, as Provide would; Expose then lets other fleets wire to it.
// A capability re-exported from a member the author cut cannot be
// provided, and is a row naming the cut.
func ProvideFrom(f *Fleet, name string, i Instance, offer string, opts ...ProvideOption) Capability {
	c := Capability{name: name}
	if f.inBody("fleet.ProvideFrom") || i.in == nil {
		return c
	}
	in := i.in
	o := findOffer(in.root, offer)
	if o == nil {
		in.row(spec.RowComponentBinding, "", "provide one of "+offerNames(in.root), "instance %s (component %s) offers no capability %q", in.name, in.record.Component, offer)
		return c
	}
	target, cut := o.target()
	switch {
	case cut != "":
		in.row(spec.RowComponentExposeCut, offer, "wire the consumers to another provider, or do not cut "+cut,
			"capability %s of %s is re-exported from member %s, which is cut", offer, in.name, cut).WithEvidence(in.name + "." + cut + " is cut")
		return c
	case target != nil && target.iface != o.iface:
		in.row(spec.RowComponentBinding, offer, "re-export a capability of interface "+o.iface,
			"capability %s of %s is a %s, and re-exports a %s", offer, in.name, o.iface, target.iface)
		return c
	case target == nil || target.provide == nil:
		in.row(spec.RowComponentBinding, offer, "fill it in the receive half: fleet.Fill(b, offer, exports)",
			"capability %s of %s is never filled", offer, in.name)
		return c
	}
	return target.provide(f, name, opts)
}

// compose runs the asks, resolves the slots, runs the receives and places
// the members.
func (in *instance) compose(root *node) {
	in.place(root, nil)
	in.expand(root)
	for _, n := range in.nodes {
		in.resolve(n)
	}
	in.receive(root)
	for _, n := range in.nodes {
		in.follow(n)
	}
	in.unused()
	in.fixedNamesSomething()
}

// fixedNamesSomething is a row for every path a component fixed that
// names nothing of what it composed: a misspelt Fixed would otherwise
// hold nothing, and say so nowhere.
func (in *instance) fixedNamesSomething() {
	for _, n := range in.nodes {
		for _, fp := range absolute(n.path, n.fixed) {
			if in.names(fp.path) {
				continue
			}
			d := spec.Errorf(spec.RowComponentFixedUnknown, in.name+pathSuffix(fp.path),
				"fix the path, or remove it from fleet.Fixed: the instance's members are "+strings.Join(in.record.MemberPaths(), ", "),
				"component %s fixes %s (at %s), which is none of its settings, its members or their fields", fp.component, fp.path, fp.source).
				WithEvidence(fp.source)
			in.f.diags = append(in.f.diags, d)
		}
	}
}

// names reports whether path, from the instance, names what the instance
// composed: a member, a setting recorded, a field of a member's settings
// struct, or a field of a resource member's kind.
func (in *instance) names(path string) bool {
	if _, ok := in.record.Members[path]; ok {
		return true
	}
	for at := range in.record.Settings {
		if reaches(at, path) {
			return true
		}
	}
	// The nearest member holding the path, the instance's root at last.
	owner, rest := "", path
	for p := range in.record.Members {
		if strings.HasPrefix(path, p+".") && len(p) > len(owner) {
			owner, rest = p, strings.TrimPrefix(path, p+".")
		}
	}
	name, _, _ := strings.Cut(rest, ".")
	m := in.record.Members[owner]
	if m.Cut {
		return true // what a cut member would have composed is not known
	}
	if m.Resource != "" {
		a, err := spec.ParseAddress(m.Resource)
		if err != nil {
			return true
		}
		info, ok := spec.Lookup(a.Kind)
		_, has := info.Field(name)
		return !ok || has
	}
	for _, n := range in.nodes {
		if n.path == owner {
			return settingsField(n.settings, name)
		}
	}
	return false
}

// settingsField reports whether a settings value has a field called name.
func settingsField(settings any, name string) bool {
	t := reflect.TypeOf(settings)
	if t == nil || t.Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		if sf := t.Field(i); sf.IsExported() && settingName(sf) == name {
			return true
		}
	}
	return false
}

// option returns the author's option of kind at path, marking it used.
func (in *instance) option(kind, path string) *InstanceOption {
	o := in.opts[kind][path]
	if o != nil {
		in.used[o] = true
	}
	return o
}

func (in *instance) row(id spec.RowID, path, resolution, format string, args ...any) spec.Diagnostic {
	d := spec.Errorf(id, in.name+pathSuffix(path), resolution, format, args...)
	in.f.diags = append(in.f.diags, d)
	return d
}

func pathSuffix(path string) string {
	if path == "" {
		return ""
	}
	return "." + path
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// expand asks every member of n, depth first, in the order the members
// were made. It is the one recursion over what a user's ask halves
// return, so it holds the limits on it: a member too deep, past the
// instance's count, or repeating an ancestor is a row, and what is under
// it is not asked (component_recursion.go).
func (in *instance) expand(n *node) {
	in.nodes = append(in.nodes, n)
	for _, p := range n.problems {
		in.row(spec.RowInvalidValue, n.path, "", "%s", p)
	}
	for _, s := range n.slots {
		s.owner = n
	}
	for _, o := range n.offers {
		o.owner = n
	}
	in.unique(n)
	slices.SortFunc(n.members, func(a, b *memberDecl) int { return int(a.seq) - int(b.seq) })
	for i, m := range n.members {
		path := joinPath(n.path, m.name)
		if in.beyondLimits(n, path) {
			n.members = n.members[:i]
			break
		}
		rec := spec.ComponentMember{Component: m.component}
		if in.option("cut", path) != nil {
			rec.Cut = true
			in.record.Members[path] = rec
			m.node = &node{component: m.component, path: path, parent: n, cut: true}
			continue
		}
		var user any
		var userSource string
		if o := in.option("settings", path); o != nil {
			user, userSource = o.value, o.source
		}
		child, records, diags := m.ask(path, user, userSource, holding{fixed: in.fixedFor(n, m), seal: sealOf(n)})
		for _, d := range diags {
			d.Subject = in.name + "." + d.Subject
			in.f.diags = append(in.f.diags, d)
		}
		for _, r := range records {
			in.record.Settings[r.path] = spec.SettingOrigin{Origin: r.origin, Source: r.source}
		}
		in.members++
		child.path, child.parent, child.depth = path, n, n.depth+1
		child.seal = sealFrom(child)
		m.node = child
		in.place(child, n)
		in.record.Members[path] = rec
		if in.repeats(child) {
			child.members = nil
		}
		in.expand(child)
	}
}

// unique reports two members, two slots or two offers of one name in n,
// and keeps the first of each: a path names one thing.
func (in *instance) unique(n *node) {
	seen := map[string]bool{}
	keep := func(what, name string) bool {
		if seen[what+" "+name] {
			in.row(spec.RowGivenTwice, joinPath(n.path, name), "give each its own name", "the component %s has two %ss called %q", n.component, what, name)
			return false
		}
		seen[what+" "+name] = true
		return true
	}
	n.members = slices.DeleteFunc(n.members, func(m *memberDecl) bool { return !keep("member", m.name) })
	n.slots = slices.DeleteFunc(n.slots, func(s *slotDecl) bool { return !keep("slot", s.name) })
	n.offers = slices.DeleteFunc(n.offers, func(o *offerDecl) bool { return !keep("offer", o.name) })
}

// fixedFor returns the fixed paths that hold for a member m of n, from
// the instance: what n and each of its ancestors fixed, and m's own
// component.
func (in *instance) fixedFor(n *node, m *memberDecl) []fixedPath {
	return append(absolute(joinPath(n.path, m.name), m.fixed), fixedAbove(n)...)
}

// fixedAbove returns the fixed paths that hold for what n composes, from
// the instance: what n and each of its ancestors fixed.
func fixedAbove(n *node) []fixedPath {
	var out []fixedPath
	for a := n; a != nil; a = a.parent {
		out = append(out, absolute(a.path, a.fixed)...)
	}
	return out
}

func absolute(at string, fps []fixedPath) []fixedPath {
	out := make([]fixedPath, len(fps))
	for i, fp := range fps {
		fp.path = joinPath(at, fp.path)
		out[i] = fp
	}
	return out
}

// reaches reports whether a value written at path u writes fixed path f:
// the same path, a path inside it ("db.version" inside "db"), or a path
// that holds it ("jobs.tags" holds "jobs.tags.team").
func reaches(u, f string) bool {
	return u == f || strings.HasPrefix(f, u+".") || strings.HasPrefix(u, f+".")
}

// fixedReaching is the fixed path that a value written at path reaches,
// the path itself first.
func fixedReaching(fps []fixedPath, path string) (fixedPath, bool) {
	for _, fp := range fps {
		if fp.path == path {
			return fp, true
		}
	}
	for _, fp := range fps {
		if reaches(path, fp.path) {
			return fp, true
		}
	}
	return fixedPath{}, false
}

// holding is what holds a member's settings, or a resource's fields,
// against the user's: the fixed paths (from the instance), and the seal of
// the member above with a fixed setting of its own.
type holding struct {
	fixed []fixedPath
	seal  *seal
}

// seal says that member holds every value it composes, because fixed
// names one of its own settings: the SDK cannot see which of the values
// the member writes it computes from that setting, so a user may set none
// of them, only the member's other settings (Fixed).
type seal struct {
	member string
	fixed  fixedPath
}

// sealFrom is n's seal when a fixed path is one of its own settings: a
// path under n whose first name is a field of n's settings struct. The
// instance's root has none: its settings are its author's.
func sealFrom(n *node) *seal {
	if n.parent == nil {
		return nil
	}
	t := reflect.TypeOf(n.settings)
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		if sf := t.Field(i); sf.IsExported() {
			fields[settingName(sf)] = true
		}
	}
	for _, fp := range fixedAbove(n) {
		rest, under := strings.CutPrefix(fp.path, n.path+".")
		if name, _, _ := strings.Cut(rest, "."); under && fields[name] {
			return &seal{member: n.path, fixed: fp}
		}
	}
	return nil
}

// sealOf is the seal that holds what n composes: its own, else the
// nearest of its ancestors'.
func sealOf(n *node) *seal {
	for a := n; a != nil; a = a.parent {
		if a.seal != nil {
			return a.seal
		}
	}
	return nil
}

// fixedRow refuses the user's setting at path at (from the instance),
// which reaches fixed path fp; its subject is at, for the caller to
// prefix with the instance.
func fixedRow(at, userSource string, fp fixedPath) spec.Diagnostic {
	var msg string
	switch {
	case at == fp.path:
		msg = fmt.Sprintf("%s is fixed by component %s (at %s), and is set at %s", at, fp.component, fp.source, userSource)
	case strings.HasPrefix(at, fp.path+"."):
		msg = fmt.Sprintf("%s is set at %s, inside %s, which component %s fixed (at %s)", at, userSource, fp.path, fp.component, fp.source)
	default:
		msg = fmt.Sprintf("%s is set at %s, and holds %s, which component %s fixed (at %s)", at, userSource, fp.path, fp.component, fp.source)
	}
	return spec.Errorf(spec.RowComponentFixed, at, "remove the setting: component "+fp.component+" fixed "+fp.path+" at "+fp.source, "%s", msg).
		WithEvidence(fp.source + " " + userSource)
}

// sealRow refuses the user's setting at path at, a value that member
// s.member composes, whose setting s.fixed is fixed.
func sealRow(at, userSource string, s *seal) spec.Diagnostic {
	return spec.Errorf(spec.RowComponentFixed, at,
		fmt.Sprintf("remove the setting, or set member %s's own settings where they offer it: fleet.Settings(%q, …)", s.member, s.member),
		"%s is set at %s; member %s composes it, and component %s fixed its setting %s (at %s): what a member composes may be computed from its fixed setting, so it holds too",
		at, userSource, s.member, s.fixed.component, s.fixed.path, s.fixed.source).
		WithEvidence(s.fixed.source + " " + userSource)
}

// place sets a node's placement before its receive: the author's, else
// its parent's.
func (in *instance) place(n, parent *node) {
	if o := in.option("place", n.path); o != nil {
		n.region, n.placedBy = o.value.(string), spec.PlacedByUser
		return
	}
	if parent != nil {
		n.region = parent.region
	}
}

// resolve fills n's slots: from the bindings its parent wrote, else from
// the author's wire, else a row listing what the fleet's wires offer.
func (in *instance) resolve(n *node) {
	if n.parent != nil {
		for _, m := range n.parent.members {
			if m.node == n {
				in.bind(n, m)
			}
		}
	}
	for _, s := range n.slots {
		path := joinPath(n.path, s.name)
		w := in.option("wire", path)
		switch {
		case s.bound != nil && w != nil:
			in.row(spec.RowComponentBinding, path, "remove the wire, or cut the member the component binds it to",
				"slot %s is bound by the component to %s; a wire cannot fill it too", path, s.bound.owner.path+"."+s.bound.name)
		case s.bound != nil:
		case w != nil:
			in.wireSlot(s, path, w.wire)
		default:
			in.row(spec.RowComponentSlotUnfilled, "wire."+path, in.candidates(s, path),
				"slot %s (interface %s) is filled by nothing: the component does not bind it, or the member it was bound to is cut", path, s.iface)
		}
	}
}

// bind resolves the bindings of member m, whose node is n.
func (in *instance) bind(n *node, m *memberDecl) {
	for _, b := range m.binds {
		slot := findSlot(n, b.use)
		switch {
		case slot == nil:
			in.row(spec.RowComponentBinding, n.path, "bind one of its uses: "+slotNames(n), "member %s has no use %q (bound at %s)", n.path, b.use, b.source)
		case b.provider == nil || b.provider.node == nil || b.provider.node.parent != n.parent:
			in.row(spec.RowComponentBinding, joinPath(n.path, b.use), "bind it to a member made before it in the same ask half", "slot %s is bound to a member that is not its sibling (at %s)", joinPath(n.path, b.use), b.source)
		case slot.all:
			in.row(spec.RowComponentBinding, joinPath(n.path, b.use), "wire it with fleet.WireMemberAll",
				"slot %s reaches all the capabilities of its wire, and a binding is one edge (bound at %s)", joinPath(n.path, b.use), b.source)
		case b.provider.node.cut:
			// A hole: the author's wire fills it, or resolve reports it.
		default:
			o := findOffer(b.provider.node, b.offer)
			switch {
			case o == nil:
				in.row(spec.RowComponentBinding, joinPath(n.path, b.use), "bind it to one of "+offerNames(b.provider.node),
					"member %s offers no capability %q (bound at %s)", b.provider.node.path, b.offer, b.source)
			case o.iface != slot.iface:
				in.row(spec.RowComponentBinding, joinPath(n.path, b.use), "bind it to a capability of interface "+slot.iface,
					"slot %s uses interface %s, and %s.%s is a %s (bound at %s)", joinPath(n.path, b.use), slot.iface, b.provider.node.path, o.name, o.iface, b.source)
			default:
				slot.bound = o
			}
		}
	}
}

// wireSlot makes a member's slot a use of the fleet, wired by the author.
func (in *instance) wireSlot(s *slotDecl, path string, w spec.Wire) {
	name := in.name + "-" + strings.ReplaceAll(path, ".", "-")
	in.f.addInterface(s.iface, s.doc, s.problems)
	u := spec.Use{Interface: s.iface}
	if s.all {
		u.Reach = "all"
	}
	for _, r := range s.requires {
		if r.export == nil || r.export.iface != s.iface {
			continue
		}
		req := spec.Requirement{Export: r.export.name, Op: r.op, Value: r.value}
		if r.want {
			req.Severity = "want"
		}
		u.Requires = append(u.Requires, req)
	}
	if in.f.uses == nil {
		in.f.uses = map[string]spec.Use{}
	}
	if in.f.wires == nil {
		in.f.wires = map[string]spec.Wire{}
	}
	in.f.uses[name], in.f.wires[name] = u, w
	s.wired = name
}

// candidates is an unfilled slot's resolution: the wires of the fleet to
// a capability of the slot's interface, which the author could reuse.
func (in *instance) candidates(s *slotDecl, path string) string {
	var seen []string
	for _, slot := range sortedNames(in.f.uses) {
		if in.f.uses[slot].Interface == s.iface {
			w, ok := in.f.wires[slot]
			if ok && w.List {
				for _, e := range w.Entries {
					seen = append(seen, e.Fleet+"/"+e.Provides)
				}
			} else if ok {
				seen = append(seen, w.Fleet+"/"+w.Provides)
			}
		}
	}
	fix := fmt.Sprintf("wire it: fleet.WireMember(%q, FLEET, CAPABILITY)", path)
	if s.all {
		fix = fmt.Sprintf("wire it: fleet.WireMemberAll(%q, fleet.At(FLEET, CAPABILITY), …)", path)
	}
	if len(seen) == 0 {
		return fix + "; the fleet wires no capability of interface " + s.iface + " yet"
	}
	return fix + "; the fleet's wires offer: " + strings.Join(slices.Compact(seen), ", ")
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func findSlot(n *node, name string) *slotDecl {
	for _, s := range n.slots {
		if s.name == name {
			return s
		}
	}
	return nil
}

func findOffer(n *node, name string) *offerDecl {
	for _, o := range n.offers {
		if o.name == name {
			return o
		}
	}
	return nil
}

func slotNames(n *node) string {
	return nameList(n.slots, func(s *slotDecl) string { return s.name }, "(it has none)")
}

func offerNames(n *node) string {
	return nameList(n.offers, func(o *offerDecl) string { return o.name }, "(it offers none)")
}

// nameList joins the names of xs for a resolution, or says none.
func nameList[T any](xs []T, name func(T) string, none string) string {
	if len(xs) == 0 {
		return none
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return strings.Join(out, ", ")
}

// receive runs the receive halves: each member's before its parent's, in
// the order the members were made, so that a provider has filled its
// offers before its consumers read them.
func (in *instance) receive(n *node) {
	for _, m := range n.members {
		if m.node != nil && !m.node.cut {
			in.receive(m.node)
		}
	}
	if n.receive != nil {
		n.receive(&Body{f: &Fleet{name: in.f.name, scope: &bodyScope{root: in.f, in: in, node: n}}})
	}
}

// unused reports what the author wrote for members that do not exist or
// were cut: never a silent no-op.
func (in *instance) unused() {
	paths := in.record.MemberPaths()
	for _, kind := range []string{"settings", "cut", "wire", "place"} {
		for _, path := range sortedNames(in.opts[kind]) {
			o := in.opts[kind][path]
			if in.used[o] {
				continue
			}
			if m, ok := in.record.Members[path]; ok && kind == "cut" && m.Resource != "" {
				in.row(spec.RowComponentMemberUnknown, path, "cut the sub-component it belongs to, or set its fields",
					"cut of %s, which is a resource the component declares (%s): only a sub-component member can be cut (written at %s)", path, m.Resource, o.source)
				continue
			}
			if cut := in.cutAbove(path); cut != "" {
				in.row(spec.RowComponentMemberCut, path, "remove it, or do not cut "+cut,
					"%s for %s, which is inside the cut member %s (written at %s)", kind, path, cut, o.source)
				continue
			}
			in.row(spec.RowComponentMemberUnknown, path, "the instance's members: "+strings.Join(paths, ", "),
				"%s for %s, which instance %s (component %s) does not have (written at %s)", kind, path, in.name, in.record.Component, o.source)
		}
	}
}

func (in *instance) cutAbove(path string) string {
	for p, m := range in.record.Members {
		if m.Cut && (path == p || strings.HasPrefix(path, p+".")) {
			return p
		}
	}
	return ""
}

// bodyScope is a receive half's view of the fleet: it declares resources
// into root, named, placed and recorded as the member's.
type bodyScope struct {
	root *Fleet
	in   *instance
	node *node
}

func bodyWiringRow(what string) spec.Diagnostic {
	return spec.Errorf(spec.RowComponentBodyWiring, "components", "declare uses with fleet.Need, offers with fleet.Offer and members with fleet.NewMember in the ask half",
		"%s inside a component's receive half: a component declares what it needs and offers before it sees any value", what)
}

// declare adds a resource of the member: named after the instance and
// the member path, with the author's settings over the component's, and
// placed where the member is unless the component placed it itself.
func (s *bodyScope) declare(ref any, d sdk.Decl) {
	in, n := s.in, s.node
	path := joinPath(n.path, d.Name)
	d.Name = in.name + "-" + strings.ReplaceAll(path, ".", "-")
	explicit := d.Region != ""
	if !explicit {
		d.Region = n.region
	}
	var user []sdk.Field
	var userSource string
	if o := in.option("settings", path); o != nil {
		user, userSource = specFields(o.value), o.source
		if user == nil {
			in.row(spec.RowInvalidValue, path, "give a resource member its kind's spec struct, such as fleet.ObjectStoreSpec", "settings for %s are a %T, which is not a spec struct", path, o.value)
		}
	}
	d.Fields = in.mergeFields(n, path, d.Fields, user, userSource)
	idx := len(s.root.resources)
	for _, f := range d.Fields {
		if v, set, _ := value(f.Value); set {
			for _, obs := range spec.ObservedIn(v) {
				n.reads = append(n.reads, readAt{idx: idx, obs: obs})
			}
		}
	}
	s.root.declare(ref, d)
	if idx == len(s.root.resources) {
		return
	}
	n.resources = append(n.resources, idx)
	if explicit {
		n.explicit = append(n.explicit, idx)
	}
	in.record.Members[path] = spec.ComponentMember{Resource: s.root.resources[idx].Address}
}

// mergeFields lays the author's set fields over the component's, and
// records each set field's origin; a fixed one the author set is a row.
func (in *instance) mergeFields(n *node, path string, fields, user []sdk.Field, userSource string) []sdk.Field {
	out := append([]sdk.Field(nil), fields...)
	fixed, sealed := fixedAbove(n), sealOf(n)
	for _, u := range user {
		if _, set, _ := value(u.Value); !set {
			continue
		}
		at := joinPath(path, u.Name)
		if fp, ok := fixedReaching(fixed, at); ok {
			in.refuse(fixedRow(at, userSource, fp))
			continue
		}
		if sealed != nil && wrote(fields, u.Name) {
			in.refuse(sealRow(at, userSource, sealed))
			continue
		}
		replaced := false
		for i := range out {
			if out[i].Name == u.Name {
				out[i].Value, replaced = u.Value, true
			}
		}
		if !replaced {
			out = append(out, u)
		}
		in.record.Settings[at] = spec.SettingOrigin{Origin: spec.OriginUser, Source: userSource}
	}
	for _, f := range out {
		at := joinPath(path, f.Name)
		if _, done := in.record.Settings[at]; done {
			continue
		}
		if _, set, _ := value(f.Value); !set {
			continue
		}
		origin := spec.OriginDefault
		src := n.source
		if fp, ok := fixedReaching(fixed, at); ok {
			origin, src = spec.OriginFixed, fp.source
		}
		in.record.Settings[at] = spec.SettingOrigin{Origin: origin, Source: src}
	}
	return out
}

// wrote reports whether the component set field name of a resource.
func wrote(fields []sdk.Field, name string) bool {
	for _, f := range fields {
		if _, set, _ := value(f.Value); set && f.Name == name {
			return true
		}
	}
	return false
}

// refuse adds a row about a path of the instance.
func (in *instance) refuse(d spec.Diagnostic) {
	d.Subject = in.name + "." + d.Subject
	in.f.diags = append(in.f.diags, d)
}

// specFields is a spec struct's set fields, by their document names (the
// generated structs tag each field with infra:"name").
func specFields(v any) []sdk.Field {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return nil
	}
	var out []sdk.Field
	for i := 0; i < rv.NumField(); i++ {
		name := rv.Type().Field(i).Tag.Get("infra")
		if name == "" {
			return nil
		}
		out = append(out, sdk.Field{Name: name, Value: rv.Field(i).Interface()})
	}
	return out
}

// settingRecord is the origin of one setting of a member's settings.
type settingRecord struct{ path, origin, source string }

// settingName is a settings field's name in paths: its infra tag, else
// its Go name with the first letter lowered.
func settingName(f reflect.StructField) string {
	if t := f.Tag.Get("infra"); t != "" {
		return t
	}
	r := []rune(f.Name)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// settingRecordsOf lists the set fields of a settings struct at prefix,
// with their origin: fixed where a fixed path reaches them, else origin.
func settingRecordsOf(prefix string, v reflect.Value, fixed []fixedPath, source string, origin *string) []settingRecord {
	if v.Kind() != reflect.Struct {
		return nil
	}
	var out []settingRecord
	for i := 0; i < v.NumField(); i++ {
		sf := v.Type().Field(i)
		if !sf.IsExported() || v.Field(i).IsZero() {
			continue
		}
		r := settingRecord{path: joinPath(prefix, settingName(sf)), origin: spec.OriginUser, source: source}
		if origin != nil {
			r.origin = *origin
		}
		if fp, ok := fixedReaching(fixed, r.path); ok {
			r.origin, r.source = spec.OriginFixed, fp.source
		}
		out = append(out, r)
	}
	return out
}

// mergeSettings lays the author's settings for a member over the
// component's defaults, field by field. A field that reaches a fixed path,
// or that the component wrote under a member whose setting is fixed (h's
// seal), is a row naming both places, and the default stays.
func mergeSettings[S any](prefix string, defaults S, user any, userSource string, h holding, componentSource string) (S, []settingRecord, []spec.Diagnostic) {
	out := defaults
	def := spec.OriginDefault
	dv := reflect.ValueOf(&out).Elem()
	records := settingRecordsOf(prefix, dv, h.fixed, componentSource, &def)
	if dv.Kind() != reflect.Struct && !dv.IsZero() {
		// Settings that are no struct are one value, at the member's path.
		r := settingRecord{path: prefix, origin: def, source: componentSource}
		if fp, ok := fixedReaching(h.fixed, prefix); ok {
			r.origin, r.source = spec.OriginFixed, fp.source
		}
		records = []settingRecord{r}
	}
	if user == nil {
		return out, records, nil
	}
	u, ok := user.(S)
	if !ok {
		return out, records, []spec.Diagnostic{spec.Errorf(spec.RowInvalidValue, prefix, fmt.Sprintf("give it a %T", defaults),
			"settings for %s are a %T, and the member takes a %T (written at %s)", prefix, user, defaults, userSource)}
	}
	// refused is the row that holds the component's value at path at,
	// which the component wrote unless it is zero.
	refused := func(at string, written bool) (spec.Diagnostic, bool) {
		if fp, ok := fixedReaching(h.fixed, at); ok {
			return fixedRow(at, userSource, fp), true
		}
		if h.seal != nil && written {
			return sealRow(at, userSource, h.seal), true
		}
		var none spec.Diagnostic
		return none, false
	}
	uv := reflect.ValueOf(u)
	if uv.Kind() != reflect.Struct || dv.Kind() != reflect.Struct {
		// Settings that are no struct (or an interface of one) have no
		// fields to lay over: the author's replace the defaults whole.
		if d, no := refused(prefix, !dv.IsZero()); no {
			return out, records, []spec.Diagnostic{d}
		}
		return u, []settingRecord{{path: prefix, origin: spec.OriginUser, source: userSource}}, nil
	}
	var diags []spec.Diagnostic
	for i := 0; i < uv.NumField(); i++ {
		sf := uv.Type().Field(i)
		if !sf.IsExported() || uv.Field(i).IsZero() {
			continue
		}
		at := joinPath(prefix, settingName(sf))
		if d, no := refused(at, !dv.Field(i).IsZero()); no {
			diags = append(diags, d)
			continue
		}
		dv.Field(i).Set(uv.Field(i))
		records = slices.DeleteFunc(records, func(r settingRecord) bool { return r.path == at })
		records = append(records, settingRecord{path: at, origin: spec.OriginUser, source: userSource})
	}
	return out, records, diags
}

// componentExports is a component slot's exports: the provider member's
// own bindings when the component bound the slot, the wired fleet-level
// slot's when the author wired it, and unset when nothing fills it (a
// row says so).
func (s Slot[E]) componentExports() E {
	d := s.decl
	switch {
	case d.bound != nil:
		e, ok := d.bound.filled.(E)
		if !ok {
			var zero E
			return zero
		}
		return s.in.each(e, func(_ *exportDef, field exportField) {
			if se, ok := field.(*SecretExport); ok {
				se.inFleet = true
			}
		})
	case d.wired != "":
		return s.in.each(s.in.exports, func(_ *exportDef, field exportField) { field.readFrom(d.wired) })
	}
	var zero E
	return zero
}

// readAt is an attribute of another resource that a member's resource
// reads, for co-placement.
type readAt struct {
	idx int
	obs spec.Observed
}

// follow places a member that reads a region-local export of a sibling in
// that export's region, once every receive has run: a member with a
// placement of its own that contradicts it is a row naming both members,
// both regions and the export.
func (in *instance) follow(n *node) {
	if n.cut {
		return
	}
	rec := in.record.Members[n.path]
	if n.placedBy == spec.PlacedByUser {
		rec.Region, rec.Placement = n.region, spec.PlacedByUser
	}
	for _, s := range n.slots {
		if s.bound != nil && s.bound.filled == nil {
			in.row(spec.RowComponentBinding, joinPath(n.path, s.name), "fill it in the member's receive half: fleet.Fill(b, offer, exports)",
				"slot %s is bound to %s.%s, which the member's receive half never fills", joinPath(n.path, s.name), s.bound.owner.path, s.bound.name)
		}
	}
	for _, r := range n.reads {
		for _, s := range n.slots {
			if s.bound == nil {
				continue
			}
			export, ok := s.bound.regionLocal[r.obs]
			if !ok {
				continue
			}
			region, provider, found := in.regionOf(r.obs.Of)
			if !found || !strings.HasPrefix(in.f.resources[r.idx].Address, provider) {
				continue
			}
			ref := fmt.Sprintf("%s.%s.%s", s.bound.owner.path, s.bound.name, export)
			if n.placedBy == spec.PlacedByUser && n.region != region {
				in.row(spec.RowComponentPlacement, n.path, "remove the placement of "+n.path+", or place "+s.bound.owner.path+" in "+n.region,
					"%s is placed in %s, and reads %s, which is region-local: %s is in %s", n.path, n.region, ref, s.bound.owner.path, region).
					WithEvidence(fmt.Sprintf("%s in %s; %s in %s; export %s", n.path, n.region, s.bound.owner.path, region, ref))
				continue
			}
			otherwise := n.region
			if otherwise == "" {
				provider, _, _ := strings.Cut(in.f.resources[r.idx].Address, "/")
				otherwise = in.f.placement[spec.Provider(provider)]
			}
			if n.placedBy == "" && region != otherwise {
				n.placedBy = spec.PlacedByFollowing
				n.because = fmt.Sprintf("it reads %s, which is region-local (%s)", ref, region)
				in.move(n, region)
				rec.Region, rec.Placement, rec.Because = region, spec.PlacedByFollowing, n.because
			}
		}
	}
	if n.path != "" {
		in.record.Members[n.path] = rec
	}
}

// move places n, and the members under it that have no placement of
// their own, in region.
func (in *instance) move(n *node, region string) {
	explicit := map[int]bool{}
	for _, i := range n.explicit {
		explicit[i] = true
	}
	for _, i := range n.resources {
		if !explicit[i] {
			in.f.resources[i].Region = region
		}
	}
	n.region = region
	for _, m := range n.members {
		if m.node != nil && !m.node.cut && m.node.placedBy == "" {
			in.move(m.node, region)
		}
	}
}

// regionOf is the region a resource of the fleet is in (its own, else the
// fleet's placement for its cloud), and its address's provider prefix.
func (in *instance) regionOf(a spec.Address) (region, provider string, ok bool) {
	for _, r := range in.f.resources {
		if r.Address == a.String() {
			region = r.Region
			if region == "" {
				region = in.f.placement[a.Provider]
			}
			return region, string(a.Provider) + "/", region != ""
		}
	}
	return "", "", false
}

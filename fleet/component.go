package fleet

import (
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"sync/atomic"

	"github.com/infra-iac/infra/spec"
)

// Components (docs/components.md). A component is two functions:
//
//   - its ask half sees only its settings, and returns a struct of what it
//     needs (slots, made with Need), what it offers (Offer) and its
//     members (sub-components, made with NewMember, with the bindings
//     between them, Bind);
//   - its receive half gets that struct back, once every slot is resolved,
//     and declares resources through the Body's fleet.
//
// Go enforces the split. The ask half's only parameter is its settings, so
// it cannot branch on a value another component produces; the receive
// half's only way to read a slot is a field of the struct the ask half
// returned, so reading a slot it did not declare does not compile.

// Component is a component definition with settings of type S, made with
// DefineComponent and instantiated with Instantiate or, inside another
// component's ask half, NewMember.
type Component[S any] struct {
	// id tells definitions apart: two DefineComponent calls are two
	// components, even of one name and one line.
	id     uint64
	name   string
	source string
	fixed  []fixedPath
	ask    func(s S) *node
}

// Name is the component's name, as the document's component map writes it.
func (c Component[S]) Name() string { return c.name }

// fixedPath is a path a component fixed (Fixed): relative to the
// component where its definition holds it, absolute (from the instance)
// once composing looks it up; source is the line of the Fixed call and
// component the name of the component that wrote it.
type fixedPath struct{ path, source, component string }

// ComponentOption changes how DefineComponent defines a component.
type ComponentOption struct{ fixed []fixedPath }

// Fixed names setting paths that are the composition's own invariants,
// relative to the component: "engineVersion" of its settings, "db.version"
// of member db's, "pg.engineVersion" of its resource pg, "db" for the whole
// of member db. A user setting that reaches one, by whatever path, is a
// row naming this line and theirs, and the component's value stays:
//
//   - the path itself, a path inside it, or a path that holds it
//     ("pg.tags" holds "pg.tags.team");
//   - where the path is a member's setting ("db.version"), what that
//     member composes from it: a field the member's receive half set on
//     one of its resources ("db.pg.engineVersion"), or a setting the
//     member's ask half gave one of its own members. The SDK cannot see
//     which of them the member computed from the fixed setting, so it
//     holds every one the member wrote.
//
// A fixed path on a component's own settings holds where the component is
// a member: its parent's value stays. An instance's own settings are its
// author's. Every other value the component writes is a default, which a
// user may override.
func Fixed(paths ...string) ComponentOption {
	at := caller(1)
	o := ComponentOption{}
	for _, p := range paths {
		o.fixed = append(o.fixed, fixedPath{path: p, source: at})
	}
	return o
}

// DefineComponent defines the component name from its two halves. ask sees
// only the settings and returns A, a struct whose exported fields are the
// component's slots (Need), offers (Offer) and members (NewMember); receive
// gets that A back once the slots are resolved, and declares resources
// through b.Fleet().
//
//	var WebApp = fleet.DefineComponent("web-app", askWebApp, receiveWebApp,
//		fleet.Fixed("db.engineVersion"))
func DefineComponent[S, A any](name string, ask func(S) A, receive func(b *Body, asked A), opts ...ComponentOption) Component[S] {
	c := Component[S]{id: componentSeq.Add(1), name: name, source: caller(1)}
	for _, o := range opts {
		for _, fp := range o.fixed {
			fp.component = name
			c.fixed = append(c.fixed, fp)
		}
	}
	c.ask = func(s S) *node {
		asked := ask(s)
		n := &node{def: c.id, settings: s, component: name, source: c.source, fixed: c.fixed}
		collect(n, reflect.ValueOf(&asked).Elem())
		n.receive = func(b *Body) {
			if receive != nil {
				receive(b, asked)
			}
		}
		return n
	}
	return c
}

// collect finds the slots, offers and members among the fields of the
// struct the ask half returned.
func collect(n *node, v reflect.Value) {
	if v.Kind() != reflect.Struct {
		n.problems = append(n.problems, fmt.Sprintf("the ask half returns a %s, not a struct of slots, offers and members", v.Type()))
		return
	}
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch x := v.Field(i).Interface().(type) {
		case Member:
			if x.d != nil {
				n.members = append(n.members, x.d)
			}
		case interface{ componentSlot() *slotDecl }:
			if s := x.componentSlot(); s != nil {
				n.slots = append(n.slots, s)
			}
		case interface{ componentOffer() *offerDecl }:
			if o := x.componentOffer(); o != nil {
				n.offers = append(n.offers, o)
			}
		}
	}
}

// node is one component in an instance's tree: its ask half's answer, and
// what composing it found.
type node struct {
	// def is the definition it is of (Component.id), and settings what
	// its ask half saw: an ancestor of one def with equal settings means
	// the same members would be asked again, without end.
	def       uint64
	settings  any
	depth     int // members deep: 0 for the root
	component string
	source    string
	fixed     []fixedPath
	// seal is set on a member with a fixed setting of its own: what it
	// composes is held too (Fixed).
	seal     *seal
	path     string // member path in its instance; "" for the root
	parent   *node
	slots    []*slotDecl
	offers   []*offerDecl
	members  []*memberDecl
	receive  func(*Body)
	problems []string
	cut      bool
	// placement: region and where it came from (spec.PlacedBy…).
	region, placedBy, because string
	// resources are the indexes in the root fleet's resources of what its
	// receive half declared; explicit those the component placed itself
	// (a cloud's In).
	resources, explicit []int
	// reads are the attributes of other resources its resources read.
	reads []readAt
}

// slotDecl is a slot a component's ask half declared (Need).
type slotDecl struct {
	name  string
	iface string
	doc   spec.InterfaceDoc
	// defs names each export's definition, by export name.
	defs     map[string]*exportDef
	problems []string
	requires []Requirement
	owner    *node
	// Resolution: bound to a member's offer, or wired by the user to a
	// fleet-level slot of this name.
	bound *offerDecl
	wired string
	// all: a reach-all slot (NeedAll), filled by a list of wires only.
	all bool
}

// offerDecl is a capability a component offers (Offer), filled by its
// receive half (Fill).
type offerDecl struct {
	name   string
	iface  string
	owner  *node
	filled any // the E its receive half bound
	// regionLocal names the export each attribute bound to a region-local
	// export is, for co-placement: a consumer that reads one is placed in
	// its resource's region.
	regionLocal map[spec.Observed]string
	// provide writes the filled offer as a capability of a fleet.
	provide func(f *Fleet, name string, opts []ProvideOption) Capability
	// from is set on a re-export (ReExport): the member's offer it is.
	from *binding
}

// target is the offer a re-export stands for, followed to its end, or the
// path of the cut member it came from.
func (o *offerDecl) target() (*offerDecl, string) {
	for seen := 0; o != nil && o.from != nil && seen < 64; seen++ {
		m := o.from.provider
		if m == nil || m.node == nil {
			return nil, ""
		}
		if m.node.cut {
			return nil, m.node.path
		}
		o = findOffer(m.node, o.from.offer)
	}
	return o, ""
}

// memberDecl is a sub-component made by NewMember: its name, how to ask
// it (with the settings the user merged in), and the bindings of its uses.
type memberDecl struct {
	seq       uint64
	name      string
	component string
	fixed     []fixedPath
	ask       func(path string, user any, userSource string, h holding) (*node, []settingRecord, []spec.Diagnostic)
	binds     []binding
	// node is the member once asked (or cut).
	node *node
}

type binding struct {
	use      string
	provider *memberDecl
	offer    string
	source   string
}

var memberSeq, componentSeq atomic.Uint64

// Need declares a slot of the component: an interface it reads, with
// requirements on what fills it. A member's slot is filled by its parent's
// Bind, or, when nothing binds it (its provider was cut, or it is the
// instance's own), by the user's WireMember to another fleet.
func Need[E any](name string, in Interface[E], requires ...Requirement) Slot[E] {
	d := &slotDecl{name: name, iface: in.name, doc: in.doc, problems: in.problems, requires: requires, defs: map[string]*exportDef{}}
	in.each(in.exports, func(def *exportDef, _ exportField) { d.defs[def.name] = def })
	return Slot[E]{name: name, in: in, decl: d}
}

// Offer declares a capability the component offers, an instance of in,
// for a sibling member to be bound to. Its receive half fills it (Fill).
func Offer[E any](name string, in Interface[E]) Offered[E] {
	return Offered[E]{in: in, decl: &offerDecl{name: name, iface: in.name}}
}

// ReExport declares that the component offers, as its own capability
// name, the capability offer of its member from: what a parent passes up
// from a member it composes, for ProvideFrom. When the author cuts from,
// the re-export can no longer be offered: silent while nothing provides
// it, a row as soon as ProvideFrom does.
func ReExport[E any](name string, from Member, offer string, in Interface[E]) Offered[E] {
	return Offered[E]{in: in, decl: &offerDecl{name: name, iface: in.name, from: &binding{provider: from.d, offer: offer, source: caller(1)}}}
}

// Offered is a capability a component offers, declared by Offer.
type Offered[E any] struct {
	in   Interface[E]
	decl *offerDecl
}

func (o Offered[E]) componentOffer() *offerDecl { return o.decl }

// Fill binds the exports of offer o, in the component's receive half, as
// Provide does for a fleet: each field a value of the fleet.
func Fill[E any](b *Body, o Offered[E], exports E) {
	if b == nil || o.decl == nil {
		return
	}
	o.decl.filled = exports
	o.decl.provide = func(f *Fleet, name string, opts []ProvideOption) Capability {
		return Provide(f, name, o.in, exports, opts...)
	}
	o.decl.regionLocal = map[spec.Observed]string{}
	o.in.each(exports, func(def *exportDef, field exportField) {
		v, _, _ := field.binding()
		if obs, ok := v.(spec.Observed); ok && def.locality == RegionLocal {
			o.decl.regionLocal[obs] = def.name
		}
	})
}

// Member is a member of a component: a sub-component instance made by
// NewMember in its parent's ask half.
type Member struct{ d *memberDecl }

// Name is the member's name within its parent.
func (m Member) Name() string {
	if m.d == nil {
		return ""
	}
	return m.d.name
}

// MemberOption changes how NewMember makes a member.
type MemberOption struct{ bind *binding }

// Bind fills the member's use with the capability offer of provider, a
// sibling made before it: an edge the component's author wrote, so
// nothing inside a component resolves by interface and nothing can be
// ambiguous. A provider is made before its consumers, so members cannot
// bind each other in a cycle.
//
//	api := fleet.NewMember("api", API, APISettings{}, fleet.Bind("db", db, "main"))
func Bind(use string, provider Member, offer string) MemberOption {
	return MemberOption{bind: &binding{use: use, provider: provider.d, offer: offer, source: caller(1)}}
}

// NewMember makes a member of the component whose ask half calls it: an
// instance of c called name, with the settings defaults, which the user
// may override through settings.<name> (Settings), except where the
// component fixed them.
func NewMember[S any](name string, c Component[S], defaults S, opts ...MemberOption) Member {
	d := &memberDecl{seq: memberSeq.Add(1), name: name, component: c.name, fixed: c.fixed}
	for _, o := range opts {
		if o.bind != nil {
			d.binds = append(d.binds, *o.bind)
		}
	}
	d.ask = func(path string, user any, userSource string, h holding) (*node, []settingRecord, []spec.Diagnostic) {
		s, records, diags := mergeSettings(path, defaults, user, userSource, h, c.source)
		if c.ask == nil {
			return &node{component: c.name, problems: []string{"a zero fleet.Component: make it with fleet.DefineComponent"}}, records, diags
		}
		return c.ask(s), records, diags
	}
	return Member{d: d}
}

// Body is what a component's receive half declares through. Its Fleet is
// the fleet being declared, seen from the member: a resource declared on
// it is named after the instance and the member path, placed where the
// member is, and recorded in the document's component map.
type Body struct {
	f *Fleet
}

// Fleet returns the fleet to declare the member's resources on, with a
// cloud package's Use (give "" for the account and region: they are the
// fleet's, and the member's placement decides the region).
//
//	cloud := aws.Use(b.Fleet(), "", "")
func (b *Body) Fleet() *Fleet {
	if b == nil {
		return nil
	}
	return b.f
}

// caller is file:line of the function skip levels up, with the file's
// directory, so a row names a place a reader can find.
func caller(skip int) string {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(file)), filepath.Base(file), line)
}

// Limits of an instance's member tree, so that a component that has
// itself as a member is a component-recursion row, never an expansion
// without end (docs/components.md#a-component-inside-itself).
const (
	// MaxMemberDepth is how many members deep a member path may go: a
	// member deeper is not asked.
	MaxMemberDepth = 32
	// MaxMembers is how many sub-component members one instance may
	// have: the members past it are not asked.
	MaxMembers = 10000
)

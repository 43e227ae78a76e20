package spec

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Components (docs/components.md). The document stays flat: a component is
// composed by the SDK into ordinary resources, and the document's
// "components" map only says where each came from, so that check, plan and
// the PR comment can group resources by component instance, name
// `instance.member` paths in their rows, and delete a cut member's
// resources under a heading of their own.

// ComponentInstance is one instance of a component in a fleet.
type ComponentInstance struct {
	// Component is the component's name (web-app); Source is where it is
	// defined (file:line), for rows that name it.
	Component string `json:"component"`
	Source    string `json:"source,omitempty"`
	// Members are keyed by member path ("db", "api", "db.password").
	Members map[string]ComponentMember `json:"members,omitempty"`
	// Settings are keyed by setting path ("db.maxCapacity"): where each
	// value the composition used came from.
	Settings map[string]SettingOrigin `json:"settings,omitempty"`

	extra map[string]json.RawMessage
}

// ComponentMember is a member of an instance: a sub-component, or one
// resource the instance declares.
type ComponentMember struct {
	// Component names a sub-component; Resource is a resource member's
	// address. One of the two is set.
	Component string `json:"component,omitempty"`
	Resource  string `json:"resource,omitempty"`
	// Cut: the user deleted the member from the declaration
	// (members.<name>.enabled = false). A cut member has no resources; the
	// ones it had are deletes with the cause "cut: members.<name>".
	Cut bool `json:"cut,omitempty"`
	// Region is the member's placement and Placement says where it came
	// from: "user", "component" or "followed" (the member reads a
	// region-local export of another member, named in Because).
	Region    string `json:"region,omitempty"`
	Placement string `json:"placement,omitempty"`
	Because   string `json:"because,omitempty"`

	extra map[string]json.RawMessage
}

// SettingOrigin says who decided a setting: "default" (the component
// suggested it and nobody overrode it), "fixed" (the component's own
// invariant) or "user" (the instance's author), and where (file:line).
type SettingOrigin struct {
	Origin string `json:"origin"`
	Source string `json:"source,omitempty"`

	extra map[string]json.RawMessage
}

// The origins of a setting.
const (
	OriginDefault = "default"
	OriginFixed   = "fixed"
	OriginUser    = "user"
)

// The sources of a member's placement.
const (
	PlacedByUser      = "user"
	PlacedByComponent = "component"
	PlacedByFollowing = "followed"
)

// MarshalJSON writes the unknown keys back.
func (x ComponentInstance) MarshalJSON() ([]byte, error) {
	type plain ComponentInstance
	return marshalWithExtra(plain(x), x.extra)
}

// MarshalJSON writes the unknown keys back.
func (x ComponentMember) MarshalJSON() ([]byte, error) {
	type plain ComponentMember
	return marshalWithExtra(plain(x), x.extra)
}

// MarshalJSON writes the unknown keys back.
func (x SettingOrigin) MarshalJSON() ([]byte, error) {
	type plain SettingOrigin
	return marshalWithExtra(plain(x), x.extra)
}

func (r *reader) components(doc *Document) error {
	return r.named(`"components"`, "an object of instance name to component instance", func(name string) error {
		var in ComponentInstance
		what := fmt.Sprintf("component instance %s", quoted(name))
		err := r.object(func() string { return what }, `an object with "component", "source", "members" and "settings"`, func(key string) error {
			var err error
			switch key {
			case "component":
				in.Component, err = r.str(func() string { return `"component" of ` + what }, "a string")
			case "source":
				in.Source, err = r.str(func() string { return `"source" of ` + what }, "a string")
			case "members":
				err = r.named(`"members" of `+what, "an object of member path to member", func(path string) error {
					m, err := r.componentMember(fmt.Sprintf("member %s of %s", quoted(path), what))
					if in.Members == nil {
						in.Members = map[string]ComponentMember{}
					}
					in.Members[path] = m
					return err
				})
			case "settings":
				err = r.named(`"settings" of `+what, "an object of setting path to origin", func(path string) error {
					s, err := r.settingOrigin(fmt.Sprintf("setting %s of %s", quoted(path), what))
					if in.Settings == nil {
						in.Settings = map[string]SettingOrigin{}
					}
					in.Settings[path] = s
					return err
				})
			default:
				err = r.unknown(&in.extra, key)
			}
			return err
		})
		if doc.Components == nil {
			doc.Components = map[string]ComponentInstance{}
		}
		doc.Components[name] = in
		return err
	})
}

func (r *reader) componentMember(what string) (ComponentMember, error) {
	var m ComponentMember
	err := r.object(func() string { return what }, `an object with "component" or "resource", "cut", "region", "placement" and "because"`, func(key string) error {
		var err error
		field := func(s *string) {
			*s, err = r.str(func() string { return quoted(key) + " of " + what }, "a string")
		}
		switch key {
		case "component":
			field(&m.Component)
		case "resource":
			field(&m.Resource)
		case "region":
			field(&m.Region)
		case "placement":
			field(&m.Placement)
		case "because":
			field(&m.Because)
		case "cut":
			var v any
			v, err = r.value()
			b, ok := v.(bool)
			if err == nil && !ok {
				return fmt.Errorf(`"cut" of %s is %s, and it takes true or false`, what, describeJSON(v))
			}
			m.Cut = b
		default:
			err = r.unknown(&m.extra, key)
		}
		return err
	})
	return m, err
}

func (r *reader) settingOrigin(what string) (SettingOrigin, error) {
	var s SettingOrigin
	err := r.object(func() string { return what }, `an object with "origin" and "source"`, func(key string) error {
		var err error
		switch key {
		case "origin":
			s.Origin, err = r.str(func() string { return `"origin" of ` + what }, `"default", "fixed" or "user"`)
		case "source":
			s.Source, err = r.str(func() string { return `"source" of ` + what }, "a string (file:line)")
		default:
			err = r.unknown(&s.extra, key)
		}
		return err
	})
	return s, err
}

// describeJSON names the JSON type of a decoded value, for a shape error.
func describeJSON(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// MemberOf is where a resource sits in the fleet's components: its
// instance and its member path, such as ("shop-a", "db.password").
type MemberOf struct {
	Instance string
	Member   string
}

// Path is the member's full path, instance.member.
func (m MemberOf) Path() string {
	if m.Member == "" {
		return m.Instance
	}
	return m.Instance + "." + m.Member
}

// Components is the compiled component map.
type Components struct {
	// Instances as the document wrote them.
	Instances map[string]ComponentInstance
	// of is each member resource's place.
	of map[Address]MemberOf
}

// Of returns where resource a sits, if it belongs to a component.
func (c Components) Of(a Address) (MemberOf, bool) {
	m, ok := c.of[a]
	return m, ok
}

// IsCut reports whether member path (instance.member, or a path under a
// cut member) is cut in this document.
func (c Components) IsCut(path string) (cut string, ok bool) {
	inst, member, found := strings.Cut(path, ".")
	if !found {
		return "", false
	}
	in, ok := c.Instances[inst]
	if !ok {
		return "", false
	}
	for _, p := range sortedKeys(in.Members) {
		if in.Members[p].Cut && (member == p || strings.HasPrefix(member, p+".")) {
			return p, true
		}
	}
	return "", false
}

var componentOrigins = map[string]bool{OriginDefault: true, OriginFixed: true, OriginUser: true}
var memberPlacements = map[string]bool{"": true, PlacedByUser: true, PlacedByComponent: true, PlacedByFollowing: true}

// components compiles the document's component map: each resource member
// names a resource of the document, no resource belongs to two members, a
// cut member has none, and a followed placement is a warning that says
// why, so the plan says where the member landed and the cause.
func (c *compiler) components() {
	c.m.Components = Components{Instances: c.doc.Components, of: map[Address]MemberOf{}}
	for _, name := range sortedKeys(c.doc.Components) {
		in := c.doc.Components[name]
		where := "components." + name
		for _, k := range sortedKeys(in.extra) {
			c.add(Errorf(RowUnknownKey, where, "a component instance's keys are component, source, members and settings", "unknown key %q", k))
		}
		if !wireNameRE.MatchString(name) {
			c.add(Errorf(RowComponentMap, where, "1–63 characters of a-z, 0-9, '-' and '_', starting with a letter: it prefixes the names of the instance's resources", "invalid component instance name %q", name))
		}
		if in.Component == "" {
			c.add(Errorf(RowComponentMap, where, `name the component: "component": "web-app"`, "component instance %q names no component", name))
		}
		for _, path := range sortedKeys(in.Members) {
			c.componentMember(where+".members."+path, MemberOf{Instance: name, Member: path}, in.Members[path])
		}
		for _, path := range sortedKeys(in.Settings) {
			s := in.Settings[path]
			if !componentOrigins[s.Origin] {
				c.add(Errorf(RowComponentMap, where+".settings."+path, `"origin" is "default", "fixed" or "user"`, "unknown origin %q", s.Origin))
			}
		}
	}
}

func (c *compiler) componentMember(where string, at MemberOf, m ComponentMember) {
	for _, k := range sortedKeys(m.extra) {
		c.add(Errorf(RowUnknownKey, where, "a member's keys are component, resource, cut, region, placement and because", "unknown key %q", k))
	}
	if !memberPlacements[m.Placement] {
		c.add(Errorf(RowComponentMap, where, `"placement" is "user", "component" or "followed"`, "unknown placement %q", m.Placement))
	}
	if m.Placement == PlacedByFollowing {
		c.add(Warnf(RowRegionFollowed, at.Path(), "place the member yourself to put it elsewhere",
			"placed in %s: %s; it has no placement of its own", m.Region, m.Because).WithEvidence(m.Because))
	}
	if m.Resource == "" {
		return
	}
	a, err := ParseAddress(m.Resource)
	if err != nil {
		c.add(Errorf(RowComponentMap, where, "an address is provider/kind/name", "resource member: %v", err))
		return
	}
	if _, ok := c.m.Lookup(a); !ok {
		if m.Cut {
			return // a cut member's resource is not declared: that is the cut
		}
		c.add(Errorf(RowComponentMap, where, "regenerate the document from the fleet's program", "member %s names %s, which is not in the document", at.Path(), a).WithEvidence(a.String()))
		return
	}
	if m.Cut {
		c.add(Errorf(RowComponentMap, where, "a cut member declares nothing: regenerate the document", "member %s is cut, but %s is declared", at.Path(), a).WithEvidence(a.String()))
		return
	}
	if old, dup := c.m.Components.of[a]; dup {
		c.add(Errorf(RowComponentMap, where, "a resource belongs to one member", "%s belongs to %s and to %s", a, old.Path(), at.Path()).WithEvidence(a.String()))
		return
	}
	c.m.Components.of[a] = at
}

// MemberPaths returns the instance's member paths, sorted, for a
// candidate list.
func (in ComponentInstance) MemberPaths() []string {
	out := make([]string, 0, len(in.Members))
	for p := range in.Members {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// name sets the member of each row about a resource a component declared,
// so that a row names the component.member path beside the address.
func (c Components) name(diags []Diagnostic) {
	if len(c.of) == 0 {
		return
	}
	for i := range diags {
		if a, err := ParseAddress(diags[i].Subject); err == nil {
			if m, ok := c.of[a]; ok {
				diags[i].Member = m.Path()
			}
		}
	}
}

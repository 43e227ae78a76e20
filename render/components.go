package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// ComponentInstance is a component instance as check shows it: its
// resources by member, and the members its author cut.
type ComponentInstance struct {
	Name      string            `json:"name"`
	Component string            `json:"component"`
	Resources map[string]string `json:"resources"` // member path → address
	Cut       []string          `json:"cut,omitempty"`
}

// Components lists the document's component instances, by name.
func Components(doc *spec.Document) []ComponentInstance {
	if doc == nil {
		return nil
	}
	var out []ComponentInstance
	for name, in := range doc.Components {
		c := ComponentInstance{Name: name, Component: in.Component, Resources: map[string]string{}}
		for path, m := range in.Members {
			switch {
			case m.Cut:
				c.Cut = append(c.Cut, path)
			case m.Resource != "":
				c.Resources[path] = m.Resource
			}
		}
		sort.Strings(c.Cut)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ComponentLine is one instance in a line: "component shop-a (web-app):
// 6 resources: api.db-url, …; cut: db".
func ComponentLine(c ComponentInstance) string {
	paths := make([]string, 0, len(c.Resources))
	for p := range c.Resources {
		paths = append(paths, spec.Printable(p))
	}
	sort.Strings(paths)
	line := fmt.Sprintf("component %s (%s): %d resource(s)", spec.Printable(c.Name), spec.Printable(c.Component), len(paths))
	if len(paths) > 0 {
		line += ": " + strings.Join(paths, ", ")
	}
	if len(c.Cut) > 0 {
		cut := make([]string, len(c.Cut))
		for i, p := range c.Cut {
			cut[i] = spec.Printable(p)
		}
		line += "; cut: " + strings.Join(cut, ", ")
	}
	return line
}

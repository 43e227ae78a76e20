package gcpfake

import (
	"fmt"
	"strings"
)

// The fields system parameter asks for a partial response:
// "name,labels", "secrets(name,labels),nextPageToken", "replication/automatic".
// The discovery clients send it when a caller uses .Fields(); ignoring it
// would answer more than asked, so the fake applies it. A selector naming
// no field of the response schema is refused, as Google refuses it.

// parseFields reads a selector into its field paths.
func parseFields(s string) ([][]string, error) {
	p := &fieldParser{s: s}
	paths, err := p.list(nil)
	if err == nil && p.i < len(s) {
		err = fmt.Errorf("unexpected %q at offset %d", s[p.i], p.i)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid field selection %q: %w", s, err)
	}
	return paths, nil
}

type fieldParser struct {
	s string
	i int
}

func (p *fieldParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

// list reads item (',' item)*, each path below prefix; an item is
// name('/'name)* optionally followed by a parenthesised sub-list.
func (p *fieldParser) list(prefix []string) ([][]string, error) {
	var out [][]string
	for {
		path := append([]string(nil), prefix...)
		for {
			name := p.name()
			if name == "" {
				return nil, fmt.Errorf("want a field name at offset %d", p.i)
			}
			path = append(path, name)
			if !p.peek('/') {
				break
			}
			p.i++
		}
		if p.peek('(') {
			p.i++
			sub, err := p.list(path)
			if err != nil {
				return nil, err
			}
			if !p.peek(')') {
				return nil, fmt.Errorf("unclosed ( at offset %d", p.i)
			}
			p.i++
			out = append(out, sub...)
		} else {
			out = append(out, path)
		}
		if !p.peek(',') {
			return out, nil
		}
		p.i++
	}
}

func (p *fieldParser) name() string {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("/(),", p.s[p.i]) < 0 && p.s[p.i] != ' ' {
		p.i++
	}
	return p.s[start:p.i]
}

// checkFieldPaths holds each path to the schema: a property, any key of a
// map, through arrays.
func (d *Doc) checkFieldPaths(ref string, paths [][]string) error {
	for _, path := range paths {
		s := &Schema{Ref: ref}
		for _, name := range path {
			s = d.deref(s)
			for s != nil && s.Items != nil {
				s = d.deref(s.Items)
			}
			switch {
			case s == nil:
			case name == "*":
				s = &Schema{}
			case s.Properties[name] != nil:
				s = s.Properties[name]
			case s.AdditionalProperties != nil:
				s = s.AdditionalProperties
			default:
				return fmt.Errorf("invalid field selection %s: no field %q", strings.Join(path, "/"), name)
			}
		}
	}
	return nil
}

func (d *Doc) deref(s *Schema) *Schema {
	if s.Ref != "" {
		return d.Schemas[s.Ref]
	}
	return s
}

// selectFields keeps only the selected paths of a value.
func selectFields(v any, paths [][]string) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = selectFields(x[i], paths)
		}
		return x
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			whole, sub := false, [][]string(nil)
			for _, p := range paths {
				if p[0] != k && p[0] != "*" {
					continue
				}
				if len(p) == 1 {
					whole = true
				} else {
					sub = append(sub, p[1:])
				}
			}
			if whole {
				out[k] = e
			} else if sub != nil {
				out[k] = selectFields(e, sub)
			}
		}
		return out
	}
	return v
}

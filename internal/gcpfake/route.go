package gcpfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// route is one discovery method as the fake matches it: by its flatPath,
// whose every variable is one path segment, then by its path, whose
// {+name} variables give the method's path parameters (name, parent).
type route struct {
	m        *Method
	flat     *regexp.Regexp
	flatVars []string
	path     *regexp.Regexp
	pathVars []string
	// literal counts the flatPath's fixed characters: when two templates
	// match (…/secrets/{secretsId} also matches …/secrets/s:addVersion),
	// the one with more fixed text is the method meant.
	literal  int
	patterns map[string]*regexp.Regexp
}

func newRoute(m *Method) (*route, error) {
	prefix := "/" + m.doc.ServicePath
	rt := &route{m: m, patterns: map[string]*regexp.Regexp{}}
	var err error
	if rt.flat, rt.flatVars, rt.literal, err = compileTemplate(prefix + orDefault(m.FlatPath, m.Path)); err != nil {
		return nil, fmt.Errorf("%s: %w", m.ID, err)
	}
	if rt.path, rt.pathVars, _, err = compileTemplate(prefix + m.Path); err != nil {
		return nil, fmt.Errorf("%s: %w", m.ID, err)
	}
	for name, p := range m.Parameters {
		if p.Location == "path" && p.Pattern != "" {
			if rt.patterns[name], err = regexp.Compile(p.Pattern); err != nil {
				return nil, fmt.Errorf("%s: pattern of %s: %w", m.ID, name, err)
			}
		}
	}
	return rt, nil
}

// compileTemplate turns a URI template of discovery's two forms, {var}
// (one segment) and {+var} (reserved expansion: slashes allowed), into a
// regexp over the escaped URL path.
func compileTemplate(t string) (*regexp.Regexp, []string, int, error) {
	var re strings.Builder
	re.WriteString("^")
	var vars []string
	literal := 0
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			re.WriteString(regexp.QuoteMeta(t))
			literal += len(t)
			break
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return nil, nil, 0, fmt.Errorf("template %q: unclosed {", t)
		}
		re.WriteString(regexp.QuoteMeta(t[:i]))
		literal += i
		name := t[i+1 : i+j]
		if strings.HasPrefix(name, "+") {
			re.WriteString("(.+)")
			name = name[1:]
		} else {
			re.WriteString("([^/]+)")
		}
		vars = append(vars, name)
		t = t[i+j+1:]
	}
	re.WriteString("$")
	rx, err := regexp.Compile(re.String())
	return rx, vars, literal, err
}

// bind extracts a template's variables from an escaped path, unescaped.
func bind(rx *regexp.Regexp, vars []string, escaped string) (map[string]string, bool) {
	sub := rx.FindStringSubmatch(escaped)
	if sub == nil {
		return nil, false
	}
	out := map[string]string{}
	for i, name := range vars {
		v, err := url.PathUnescape(sub[i+1])
		if err != nil {
			return nil, false
		}
		out[name] = v
	}
	return out, true
}

// pathParams binds the method's path parameters and holds each to its
// discovery pattern (^projects/[^/]+/secrets/[^/]+$).
func (rt *route) pathParams(escaped string) (map[string]string, []string) {
	params, ok := bind(rt.path, rt.pathVars, escaped)
	if !ok {
		return nil, []string{fmt.Sprintf("path does not fit the method's template %q", rt.m.Path)}
	}
	var errs []string
	for _, name := range sortedKeys(params) {
		if rx := rt.patterns[name]; rx != nil && !rx.MatchString(params[name]) {
			errs = append(errs, fmt.Sprintf("path parameter %s=%q does not match %s", name, params[name], rx))
		}
	}
	return params, errs
}

// queryFlags are what the system parameters ask of the answer.
type queryFlags struct {
	enumInts bool
	compact  bool   // prettyPrint=false
	fields   string // partial response selector
}

// checkQuery holds every query parameter to the method's parameters and
// the document's system parameters; anything else is a violation. $alt is
// the GAPIC clients' spelling of alt with options (json;enum-encoding=int),
// which discovery does not list.
func (rt *route) checkQuery(q url.Values) (queryFlags, []string, *apiError) {
	var flags queryFlags
	var errs []string
	var unsupported *apiError
	for _, k := range sortedKeys(q) {
		p := rt.m.Parameters[k]
		if p == nil || p.Location != "query" {
			p = rt.m.doc.Parameters[k]
		}
		switch {
		case k == "$alt":
			errs = append(errs, flags.alt(rt.m.doc, q[k])...)
		case p == nil:
			errs = append(errs, fmt.Sprintf("unknown query parameter %q", k))
		default:
			errs = append(errs, checkParam(k, p, q[k], flags.enumInts)...)
		}
	}
	for _, name := range sortedKeys(rt.m.Parameters) {
		if p := rt.m.Parameters[name]; p.Location == "query" && p.Required && q.Get(name) == "" {
			errs = append(errs, fmt.Sprintf("required query parameter %q missing", name))
		}
	}
	flags.compact = q.Get("prettyPrint") == "false"
	flags.fields = q.Get("fields")
	if alt := q.Get("alt"); alt != "" && alt != "json" {
		unsupported = unmodelled("alt=%s (it answers JSON only)", alt)
	}
	if q.Has("callback") {
		unsupported = unmodelled("JSONP callbacks")
	}
	return flags, errs, unsupported
}

// alt reads $alt: a value of the alt enum, then ;-separated options.
func (f *queryFlags) alt(d *Doc, vals []string) []string {
	if len(vals) != 1 {
		return []string{fmt.Sprintf("$alt given %d times", len(vals))}
	}
	parts := strings.Split(vals[0], ";")
	var errs []string
	if alt := d.Parameters["alt"]; alt != nil && !slices.Contains(alt.Enum, parts[0]) {
		errs = append(errs, fmt.Sprintf("$alt=%q: %q is not one of %s", vals[0], parts[0], strings.Join(alt.Enum, ", ")))
	}
	for _, opt := range parts[1:] {
		if opt != "enum-encoding=int" {
			errs = append(errs, fmt.Sprintf("$alt=%q: unknown option %q", vals[0], opt))
			continue
		}
		f.enumInts = true
	}
	return errs
}

// checkParam checks a query parameter's values against its type.
func checkParam(name string, p *Parameter, vals []string, enumInts bool) []string {
	if len(vals) > 1 && !p.Repeated {
		return []string{fmt.Sprintf("query parameter %s given %d times but is not repeated", name, len(vals))}
	}
	var errs []string
	for _, v := range vals {
		if msg := paramValue(p, v, enumInts); msg != "" {
			errs = append(errs, fmt.Sprintf("query parameter %s=%q: %s", name, v, msg))
		}
	}
	return errs
}

func paramValue(p *Parameter, v string, enumInts bool) string {
	switch p.Type {
	case "integer":
		var err error
		if p.Format == "uint32" {
			_, err = strconv.ParseUint(v, 10, 32)
		} else {
			_, err = strconv.ParseInt(v, 10, 32)
		}
		if err != nil {
			return "want " + orDefault(p.Format, "int32")
		}
	case "boolean":
		if v != "true" && v != "false" {
			return "want true or false"
		}
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "want a number"
		}
	case "string":
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, v) {
			// Query enums carry no field to find a descriptor by: the
			// index is all there is.
			if i, err := strconv.Atoi(v); !enumInts || err != nil || i < 0 || i >= len(p.Enum) {
				return "not one of " + strings.Join(p.Enum, ", ")
			}
		}
		return checkFormat(p.Format, v)
	}
	return ""
}

// decodeBody reads the request body as the method's request schema wants
// it and returns the violations. A body-less method must get no body; a
// method with one reads an empty body as {} (as HTTP transcoding does).
func (rt *route) decodeBody(contentType string, body []byte, params map[string]string, enumInts bool) (map[string]any, []string) {
	body = bytes.TrimSpace(body)
	if rt.m.Request == nil {
		if len(body) > 0 {
			return nil, []string{fmt.Sprintf("the method takes no body, got %d bytes", len(body))}
		}
		return nil, nil
	}
	if len(body) == 0 {
		return map[string]any{}, nil
	}
	if !strings.HasPrefix(contentType, "application/json") {
		return nil, []string{fmt.Sprintf("body sent as %q, not application/json", contentType)}
	}
	m, err := decodeObject(body)
	if err != nil {
		return nil, []string{"body: " + err.Error()}
	}
	errs := rt.stripEcho(m, params)
	return m, append(errs, rt.m.doc.Check(rt.m.Request.Ref, m, CheckOptions{EnumInts: enumInts})...)
}

// stripEcho drops the path parameters a GAPIC client repeats in the body.
// For a method whose body is the whole request message (HTTP rule body
// "*"; discovery names its schema …Request) the client marshals the whole
// message, path fields too ({"parent": "projects/p/secrets/s", "payload":
// …} for addVersion: seen on the wire), and the API reads them; discovery
// leaves them out of the schema. They must agree with the path.
func (rt *route) stripEcho(m map[string]any, params map[string]string) []string {
	if !strings.HasSuffix(rt.m.Request.Ref, "Request") {
		return nil
	}
	var errs []string
	for _, name := range sortedKeys(params) {
		v, ok := m[name]
		if !ok {
			continue
		}
		if v != params[name] {
			errs = append(errs, fmt.Sprintf("body %s=%v differs from the path's %q", name, v, params[name]))
		}
		delete(m, name)
	}
	return errs
}

// decodeObject decodes one JSON object, numbers kept as written.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %s", jsonType(v))
	}
	return m, nil
}

// checkRoutingHeader holds x-goog-request-params (parent=projects%2Fp,
// secret.name=…), which GAPIC clients send for routing, to the path: a
// mismatch would route a real request to the wrong place.
func checkRoutingHeader(h string, params map[string]string) []string {
	if h == "" {
		return nil
	}
	var errs []string
	for _, kv := range strings.Split(h, "&") {
		k, v, _ := strings.Cut(kv, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		name := k[strings.LastIndex(k, ".")+1:]
		if want, ok := params[name]; ok && want != v {
			errs = append(errs, fmt.Sprintf("x-goog-request-params %s=%q, but the path says %q", k, v, want))
		}
	}
	return errs
}

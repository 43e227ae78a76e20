package gcpfake

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// check matches a request to its method and holds it to the document:
// path parameters to their patterns, query parameters to the method's
// and the system ones, the body to the request schema. It returns the
// violations, or else the API error a valid request still earns (a
// project the caller cannot see, a feature the fake lacks).
func (s *Server) check(r *http.Request, body []byte) (*call, []string, *apiError) {
	escaped := r.URL.EscapedPath()
	rt, flat, msg := s.match(r.Method, escaped)
	if msg != "" {
		return nil, []string{msg}, nil
	}
	c := &call{s: s, m: rt.m, flat: flat, query: r.URL.Query()}
	var errs, more []string
	c.params, errs = rt.pathParams(escaped)
	var unsupported *apiError
	c.flags, more, unsupported = rt.checkQuery(c.query)
	errs = append(errs, more...)
	errs = append(errs, checkRoutingHeader(r.Header.Get("X-Goog-Request-Params"), c.params)...)
	c.body, more = rt.decodeBody(r.Header.Get("Content-Type"), body, c.params, c.flags.enumInts)
	errs = append(errs, more...)
	if len(errs) > 0 {
		return c, prefixed("request: ", errs), nil
	}
	if unsupported != nil {
		return c, nil, unsupported
	}
	if c.flags.enumInts && c.body != nil {
		c.m.doc.decodeEnums(c.m.Request.Ref, c.body)
	}
	if err := c.selectFields(); err != nil {
		return c, nil, err
	}
	return c, nil, s.checkProject(c)
}

// match finds the one method whose HTTP method and flatPath fit.
func (s *Server) match(method, escaped string) (*route, map[string]string, string) {
	var found []*route
	for _, rt := range s.routes {
		if rt.m.HTTPMethod != method || !rt.flat.MatchString(escaped) {
			continue
		}
		switch {
		case len(found) == 0 || rt.literal > found[0].literal:
			found = []*route{rt}
		case rt.literal == found[0].literal:
			found = append(found, rt)
		}
	}
	if len(found) == 0 {
		return nil, nil, "no method of " + s.served() + " has this HTTP method and path"
	}
	// Several match only where no product models any of them
	// (checkDisjoint): one is as good as another.
	flat, ok := bind(found[0].flat, found[0].flatVars, escaped)
	if !ok {
		return nil, nil, "a path segment does not unescape"
	}
	return found[0], flat, ""
}

// served names the served documents, for messages.
func (s *Server) served() string {
	var names []string
	for _, p := range s.products() {
		names = append(names, p.api+" "+p.version)
	}
	return strings.Join(names, ", ")
}

// selectFields parses fields= and holds it to the response schema.
func (c *call) selectFields() *apiError {
	if c.flags.fields == "" || c.m.Response == nil {
		return nil
	}
	paths, err := parseFields(c.flags.fields)
	if err == nil {
		err = c.m.doc.checkFieldPaths(c.m.Response.Ref, paths)
	}
	if err != nil {
		return invalid("%v", err)
	}
	c.fieldPaths = paths
	return nil
}

// checkProject resolves the path's project (flatPath variable projectsId,
// the convention of every GCP document) and refuses one the caller may
// not see.
func (s *Server) checkProject(c *call) *apiError {
	seg, ok := c.flat["projectsId"]
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.project = s.projectID(seg)
	// A number the fake never gave out names no project it knows.
	if isDigits(c.project) || !s.visible(c.project) {
		return permissionDenied(serviceName(c.m.doc), "projects/"+seg)
	}
	return nil
}

// serviceName is the API's host, secretmanager.googleapis.com: the
// ErrorInfo domain.
func serviceName(d *Doc) string {
	if u, err := url.Parse(d.RootURL); err == nil && u.Host != "" {
		return u.Host
	}
	return d.Name + ".googleapis.com"
}

// serve runs the method's handler and sends its answer, checked.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, c *call) {
	h := s.handler[c.m.ID]
	if h == nil {
		writeError(w, unmodelled("%s", c.m.ID))
		return
	}
	out, err := s.invoke(h, c)
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae)
		return
	case err != nil:
		s.reject(w, r, c.m.ID, "the fake failed: "+err.Error())
		return
	}
	v, errs := s.answer(c, out)
	if len(errs) > 0 {
		s.reject(w, r, c.m.ID, strings.Join(prefixed("response: ", errs), "; "))
		return
	}
	writeJSON(w, http.StatusOK, v, !c.flags.compact)
}

// invoke runs a handler under the state lock, released even if it panics.
func (s *Server) invoke(h handler, c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return h(c)
}

// answer turns a handler's value into the JSON sent: checked against the
// response schema first, then enums as numbers if asked, then the fields
// selection.
func (s *Server) answer(c *call, out any) (any, []string) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, []string{"encoding: " + err.Error()}
	}
	m, err := decodeObject(b)
	if err != nil {
		return nil, []string{err.Error()}
	}
	if s.opts.mutate != nil {
		s.opts.mutate(c.m.ID, m)
	}
	if c.m.Response == nil {
		if len(m) > 0 {
			return nil, []string{"the method has no response body"}
		}
		return m, nil
	}
	ref := c.m.Response.Ref
	if errs := c.m.doc.Check(ref, m, CheckOptions{EnumInts: c.flags.enumInts, Response: true}); len(errs) > 0 {
		return nil, errs
	}
	var v any = m
	if c.flags.enumInts {
		v = c.m.doc.encodeEnums(ref, m)
	}
	if c.fieldPaths != nil {
		v = selectFields(v, c.fieldPaths)
	}
	return v, nil
}

func prefixed(p string, msgs []string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = p + m
	}
	return out
}

package gcpfake

import (
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one API request the fake received (token requests are not
// recorded).
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Body   string
	Header http.Header
}

// Options tune the fake.
type Options struct {
	// Projects are the project ids the caller may use: a request naming
	// any other project (by id or number) answers 403 PERMISSION_DENIED,
	// as GCP answers for a project you cannot see. Empty: every project.
	Projects []string

	// mutate rewrites an answer before it is checked: tests use it to
	// prove the check catches a wrong answer.
	mutate func(methodID string, body map[string]any)
}

// Server is the fake: one loopback HTTP server for every API it serves.
//
// Dispatch: the APIs share one host, as they share googleapis.com's
// domain but not its hosts, so a request finds its method by path alone.
// Every method of every served discovery document is a candidate; the
// HTTP method and the flatPath template, under the document's
// servicePath, must match. The versions and collections keep the served
// APIs apart: v1/projects/{p}/secrets/… is Secret Manager,
// v3/projects/{p} Resource Manager. Two methods of different documents
// matching one request would be ambiguous, and newServer refuses to
// serve such a set.
type Server struct {
	opts    Options
	srv     *httptest.Server
	routes  []*route
	handler map[string]handler // by method id
	now     func() time.Time
	started string // when the fake's projects were "created"

	mu         sync.Mutex
	log        []Request
	violations []string
	numbers    map[string]string // project number -> id
	keys       map[string]*serviceAccount
	// tokens are the access tokens issued, to the service account's email:
	// what a test holds a client's bearer token to.
	tokens  map[string]string
	seq     int
	secrets map[string]map[string]*secret // project id -> secret id -> secret
	// ar is Artifact Registry's, IAM's and the project policies' state
	// (operations_ar.go); ex Cloud SQL's and Cloud Run's (operations_run.go).
	// reset clears their resources and keeps a test's settings.
	ar regIAMState
	ex extra
	// assetSources are what Cloud Asset Inventory's search answers from
	// beside the fake's own products (cloudasset.go).
	assetSources []AssetSource
	assetDenied  bool
}

// handler serves one method: it answers a value encoding/json writes as
// the method's response schema, or an *apiError.
type handler func(c *call) (any, error)

// call is one request as a handler sees it, checked.
type call struct {
	s       *Server
	m       *Method
	flat    map[string]string // flatPath variables: projectsId, secretsId
	params  map[string]string // path parameters: name, parent
	query   url.Values
	body    map[string]any
	project string // the path's project, as an id
	flags   queryFlags
	// fieldPaths is the fields= selection, nil for the whole answer.
	fieldPaths [][]string
}

// product is one API the fake serves and the methods it models.
type product struct {
	api, version string
	handlers     map[string]handler
}

func (s *Server) products() []product {
	return []product{s.resourceManager(), s.secretManager(),
		s.artifactRegistry(),
		s.iamProduct(),
		s.sqlAdmin(),
		s.cloudRun(),
		s.cloudAsset(),
	}
}

// New starts the fake on 127.0.0.1 for the test. At cleanup it stops and
// reports every recorded violation as a test error, so a test whose
// requests or answers broke the published API cannot pass.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := newServer(opts)
	if err != nil {
		t.Fatalf("gcpfake: %v", err)
	}
	s.srv = httptest.NewServer(s)
	t.Cleanup(func() {
		s.srv.Close()
		for _, v := range s.Violations() {
			t.Errorf("gcpfake: %s", v)
		}
	})
	return s
}

func newServer(opts Options) (*Server, error) {
	s := &Server{opts: opts, handler: map[string]handler{}, now: func() time.Time { return time.Now().UTC() },
		numbers: map[string]string{}, keys: map[string]*serviceAccount{}, tokens: map[string]string{}}
	s.started = timestamp(s.now().Truncate(time.Second))
	s.reset()
	for _, p := range s.products() {
		doc, err := LoadDoc(p.api, p.version)
		if err != nil {
			return nil, err
		}
		for _, id := range doc.MethodIDs() {
			rt, err := newRoute(doc.Method(id))
			if err != nil {
				return nil, err
			}
			s.routes = append(s.routes, rt)
		}
		for id, h := range p.handlers {
			if doc.Method(id) == nil {
				return nil, fmt.Errorf("%s %s has no method %s", p.api, p.version, id)
			}
			s.handler[id] = h
		}
	}
	return s, checkDisjoint(s.routes, s.handler)
}

// checkDisjoint refuses two documents claiming one request that either
// models: each template, its variables filled, must match no equally
// specific template of another document. Two methods neither models may
// share a path (Secret Manager's and Artifact Registry's locations.get):
// Google tells them apart by host, which the fake, serving every API on
// one host, cannot; a request there is UNIMPLEMENTED either way.
func checkDisjoint(routes []*route, handled map[string]handler) error {
	for _, a := range routes {
		sample := a.flat.String()
		sample = strings.NewReplacer(`^`, "", `$`, "", `([^/]+)`, "x", `(.+)`, "x/y", `\`, "").Replace(sample)
		for _, b := range routes {
			if handled[a.m.ID] == nil && handled[b.m.ID] == nil {
				continue
			}
			if a.m.doc != b.m.doc && a.m.HTTPMethod == b.m.HTTPMethod && b.flat.MatchString(sample) && b.literal >= a.literal {
				return fmt.Errorf("%s and %s both match %s %s", a.m.ID, b.m.ID, a.m.HTTPMethod, sample)
			}
		}
	}
	return nil
}

// URL is the fake's base URL, http://127.0.0.1:port: the endpoint for
// GAPIC clients (option.WithEndpoint(URL())); the discovery clients want
// a trailing slash (URL()+"/").
func (s *Server) URL() string { return s.srv.URL }

// Requests returns the API requests received, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Violations returns the requests and answers that broke the discovery
// documents, each naming the method and path.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

// TakeViolations returns the violations and forgets them: for a test that
// provokes them on purpose (the cleanup would fail it otherwise).
func (s *Server) TakeViolations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.violations
	s.violations = nil
	return v
}

// Reset forgets every resource and recorded request. Violations stay (a
// test cannot wipe them by accident), and so do service-account keys and
// access tokens, which a client has cached.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
}

func (s *Server) reset() {
	s.log = nil
	s.secrets = map[string]map[string]*secret{}
	s.ar = regIAMState{pendingPolls: s.ar.pendingPolls, repos: map[string]*arRepo{}, ops: map[string]*arOperation{},
		packages: map[string][]string{}, accounts: map[string]map[string]*iamAccount{}, policies: map[string]*projectPolicy{}}
	if s.ex.knobs.polls == nil {
		s.ex.knobs = opKnobs{polls: map[string]int{}, failNext: map[string]string{}}
	}
	s.ex.state = &extraState{sqlInstances: map[string]map[string]*sqlInstance{}, sqlOps: map[string]map[string]*sqlOp{},
		sqlReserved: map[string]map[string]bool{}, runServices: map[string]*runService{}, lros: map[string]*lro{}}
}

// ProjectNumber is the number the fake gives a project id: stable (a hash
// of the id), twelve digits like GCP's. A number is a project's other
// name: names in answers use it, and requests may use either.
func (s *Server) ProjectNumber(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.number(id)
}

func (s *Server) number(id string) string {
	if isDigits(id) {
		return id
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	n := strconv.FormatUint(100000000000+h.Sum64()%900000000000, 10)
	s.numbers[n] = id
	return n
}

// projectID reads a project path segment, id or number, as an id.
func (s *Server) projectID(seg string) string {
	if id, ok := s.numbers[seg]; ok {
		return id
	}
	for _, id := range s.opts.Projects {
		if s.number(id) == seg {
			return id
		}
	}
	return seg
}

func (s *Server) visible(id string) bool {
	return len(s.opts.Projects) == 0 || slices.Contains(s.opts.Projects, id)
}

func isDigits(x string) bool {
	return x != "" && strings.Trim(x, "0123456789") == ""
}

// ServeHTTP serves /token and the APIs: record, authenticate, check the
// request, run the handler, check the answer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, invalid("reading the body: %v", err))
		return
	}
	if r.URL.Path == tokenPath {
		s.serveToken(w, r, body)
		return
	}
	s.record(r, body)
	defer func() {
		// A handler bug must answer 500 and fail the test, never take the
		// test binary down.
		if p := recover(); p != nil {
			s.reject(w, r, "", fmt.Sprintf("the fake panicked: %v", p))
		}
	}()
	if !authorized(r) {
		writeError(w, unauthenticated())
		return
	}
	c, errs, apiErr := s.check(r, body)
	switch {
	case len(errs) > 0:
		s.reject(w, r, methodID(c), strings.Join(errs, "; "))
	case apiErr != nil:
		writeError(w, apiErr)
	default:
		s.serve(w, r, c)
	}
}

func methodID(c *call) string {
	if c == nil {
		return ""
	}
	return c.m.ID
}

func (s *Server) record(r *http.Request, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: string(body), Header: r.Header.Clone()})
}

// authorized: GCP wants an OAuth token on every call, in the header or as
// access_token (oauth_token) in the query. Any token is accepted: what
// is proven is that the client sends one.
func authorized(r *http.Request) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && strings.TrimSpace(tok) != "" {
		return true
	}
	q := r.URL.Query()
	return q.Get("access_token") != "" || q.Get("oauth_token") != ""
}

// reject records a violation and answers 500 naming it.
func (s *Server) reject(w http.ResponseWriter, r *http.Request, method, msg string) {
	v := fmt.Sprintf("%s %s: %s", r.Method, r.URL.Path, msg)
	if method != "" {
		v = method + " " + v
	}
	s.mu.Lock()
	s.violations = append(s.violations, v)
	s.mu.Unlock()
	writeError(w, errorf("INTERNAL", "gcpfake: discovery violation: %s", v))
}

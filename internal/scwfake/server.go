// Package scwfake is a stateful fake of the Scaleway REST APIs infra's
// Scaleway drivers call: Functions (v1beta1), Serverless Containers (v1),
// Container Registry (v1), Secret Manager (v1beta1), Serverless SQL
// (v1alpha1), IAM (v1alpha1), Messaging and Queuing's SQS control plane
// (v1beta1), Account (v3) and the gateway's GET /metadata. Tests start it
// on loopback with httptest; the SDK reaches it through scw.WithAPIURL.
//
// Its answers are held against real recordings
// (../shared/fixtures/scaleway, see replay_test.go): each response carries
// exactly the JSON keys the real API sent, asynchronous states pass through
// their transient value once before settling (pending, creating, deleting),
// and the quirks the recordings show are reproduced: untyped 404s for
// functions and registry namespaces, 403 for a deleted Serverless SQL
// database, soft-deleted secrets that still read as ready, unknown_… enums
// refused.
//
// Every request is recorded, so a test can assert that no listing went out
// without a project_id. The S3 and SQS data planes are not here: moto_server
// serves them, and the fake's sqs-info points at it.
package scwfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Body   string
}

// IsList reports whether the request lists a collection (a GET whose last
// path segment names a collection rather than an id).
func (r Request) IsList() bool {
	if r.Method != http.MethodGet {
		return false
	}
	last := r.Path[strings.LastIndex(r.Path, "/")+1:]
	switch last {
	case "namespaces", "functions", "containers", "secrets", "databases", "applications", "policies",
		"rules", "sqs-credentials", "projects", "api-keys", "versions":
		return true
	}
	return false
}

// Options tune the fake.
type Options struct {
	// SQSEndpoint is the sqs_endpoint_url sqs-info reports: the moto_server
	// that serves the SQS data plane.
	SQSEndpoint string
	// TransientReads is how many reads by id see a transient state
	// (creating, pending, deleting) before it settles; 1 when zero, as in
	// the compressed recordings. Negative: settle at once.
	TransientReads int
	// CredentialLag makes a new SQS credential answer 404 to this many
	// reads, and sqs-info answer 403 to this many reads after activation,
	// as the real API does for a while (eventual consistency).
	CredentialLag int
	// DefaultPageSize is the page size when a listing sends none; 20 (the
	// API's) when zero.
	DefaultPageSize int
}

// Server is the fake.
type Server struct {
	*httptest.Server
	opts Options

	mu    sync.Mutex
	log   []Request
	seq   int
	objs  map[string]map[string]*object // collection -> id -> object
	order map[string][]string           // collection -> ids in creation order
	// data of secret versions, by secret id then revision
	versionData map[string]map[int][]byte
	code        map[string][]byte // function id -> uploaded zip
	sqsLag      map[string]int    // project/region -> 403s left on sqs-info
	credLag     map[string]int    // credential id -> 404s left
	rules       map[string][]map[string]any
	now         func() time.Time
	lagNext     bool
}

// object is one resource: its JSON form and a pending transition.
type object struct {
	m map[string]any
	// pending: the status the object moves to after reads more reads by
	// id; gone means it disappears.
	next  string
	gone  bool
	reads int
	has   bool
}

// Start starts the fake on a loopback port. Close it with Close.
func Start(opts Options) *Server {
	s := New(opts)
	s.Server = httptest.NewServer(s)
	return s
}

// New returns the fake as an http.Handler, not listening.
func New(opts Options) *Server {
	if opts.TransientReads == 0 {
		opts.TransientReads = 1
	}
	if opts.DefaultPageSize == 0 {
		opts.DefaultPageSize = 20
	}
	s := &Server{opts: opts, now: func() time.Time { return time.Now().UTC() }}
	s.reset()
	return s
}

// Reset forgets every resource and every logged request; projects and API
// keys added with AddProject and AddAPIKey go too.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
}

func (s *Server) reset() {
	s.log = nil
	s.objs = map[string]map[string]*object{}
	s.order = map[string][]string{}
	s.versionData = map[string]map[int][]byte{}
	s.code = map[string][]byte{}
	s.sqsLag = map[string]int{}
	s.credLag = map[string]int{}
	s.rules = map[string][]map[string]any{}
}

// SetSQSEndpoint changes the sqs_endpoint_url reported from now on.
func (s *Server) SetSQSEndpoint(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.SQSEndpoint = u
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ClearLog forgets the logged requests, keeping the resources.
func (s *Server) ClearLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// UnscopedListings returns the listings that named no project_id. IAM and
// Account listings are organization-level by nature; they are returned
// only when they name no organization_id either.
func (s *Server) UnscopedListings() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if !r.IsList() || r.Query.Get("project_id") != "" {
			continue
		}
		if strings.HasPrefix(r.Path, "/iam/") || strings.HasPrefix(r.Path, "/account/") {
			if r.Query.Get("organization_id") != "" || r.Query.Get("policy_id") != "" {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// Lag makes the next read of SQS info refuse (403) and the next read of an
// SQS credential answer 404, as the real API does for a while after an
// activation or a mint; the replay uses it where a recording shows it.
func (s *Server) Lag() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lagNext = true
}

// Settle completes every pending transition at once.
func (s *Server) Settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for coll, m := range s.objs {
		for id, o := range m {
			if o.has {
				s.transition(coll, id, o)
			}
		}
	}
}

// Count returns how many live objects a collection holds; soft-deleted
// secrets are not counted. Collections: see the constants.
func (s *Server) Count(coll string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.objs[coll] {
		if coll == Secrets && o.m["deletion_requested_at"] != nil {
			continue
		}
		n++
	}
	return n
}

// Leftovers names every live object of every collection except projects
// and API keys, for the audit at the end of a lifecycle test.
func (s *Server) Leftovers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for coll, m := range s.objs {
		if coll == Projects || coll == APIKeys || coll == SQSInfo {
			continue
		}
		for _, o := range m {
			if coll == Secrets && o.m["deletion_requested_at"] != nil {
				continue
			}
			if coll == Versions {
				// A version goes with its secret.
				sec, ok := s.objs[Secrets][str(o.m, "secret_id")]
				if !ok || sec.m["deletion_requested_at"] != nil {
					continue
				}
				out = append(out, fmt.Sprintf("%s %v revision %v", coll, sec.m["name"], o.m["revision"]))
				continue
			}
			out = append(out, fmt.Sprintf("%s %v (%v)", coll, o.m["name"], o.m["id"]))
		}
	}
	sort.Strings(out)
	return out
}

// Collections.
const (
	Projects     = "projects"
	APIKeys      = "api-keys"
	FnNamespaces = "function-namespaces"
	Functions    = "functions"
	CtNamespaces = "container-namespaces"
	Containers   = "containers"
	Registries   = "registry-namespaces"
	Secrets      = "secrets"
	Versions     = "secret-versions"
	Databases    = "databases"
	Applications = "applications"
	Policies     = "policies"
	SQSInfo      = "sqs-info"
	SQSCreds     = "sqs-credentials"
)

// AddProject makes a project known to the fake.
func (s *Server) AddProject(id, organizationID, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(Projects, id, s.project(id, organizationID, name, ""))
}

// AddAPIKey makes an API key known: its access key, its default project and
// the application it belongs to.
func (s *Server) AddAPIKey(accessKey, defaultProject, applicationID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.ts()
	s.put(APIKeys, accessKey, map[string]any{
		"access_key": accessKey, "application_id": applicationID, "created_at": ts, "creation_ip": "127.0.0.1",
		"default_project_id": defaultProject, "deletable": true, "description": "", "editable": true,
		"expires_at": nil, "managed": false, "secret_key": nil, "updated_at": ts,
	})
}

func (s *Server) project(id, org, name, description string) map[string]any {
	ts := s.ts()
	return map[string]any{"id": id, "name": name, "organization_id": org, "description": description,
		"qualification": map[string]any{"architecture_type": "unknown_architecture_type"}, "created_at": ts, "updated_at": ts}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: string(body)})
	c := &call{s: s, w: w, r: r, body: body, q: r.URL.Query()}
	defer func() {
		// A handler bug must answer 500, never take the test binary down.
		if p := recover(); p != nil {
			c.json(http.StatusInternalServerError, map[string]any{"message": fmt.Sprint(p), "type": "internal_error"})
		}
	}()
	path := strings.TrimSuffix(r.URL.Path, "/")
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if path == "/metadata" {
		c.json(200, map[string]any{"platform": "external", "partition": "scw", "domain": "scw.eu"})
		return
	}
	if len(seg) >= 2 {
		switch seg[0] + "/" + seg[1] {
		case "account/v3":
			s.account(c, seg[2:])
			return
		case "iam/v1alpha1":
			s.iam(c, seg[2:])
			return
		}
	}
	if len(seg) >= 4 && seg[2] == "regions" {
		c.region = seg[3]
		rest := seg[4:]
		switch seg[0] + "/" + seg[1] {
		case "functions/v1beta1":
			s.functions(c, rest)
			return
		case "containers/v1":
			s.containers(c, rest)
			return
		case "registry/v1":
			s.registry(c, rest)
			return
		case "secret-manager/v1beta1":
			s.secrets(c, rest)
			return
		case "serverless-sqldb/v1alpha1":
			s.sdb(c, rest)
			return
		case "mnq/v1beta1":
			s.mnq(c, rest)
			return
		}
	}
	if len(seg) == 2 && seg[0] == "upload" && r.Method == http.MethodPut {
		s.code[seg[1]] = body
		w.WriteHeader(http.StatusOK)
		return
	}
	c.json(404, map[string]any{"message": "no such route in the fake: " + r.Method + " " + path})
}

// call is one request being answered.
type call struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	body   []byte
	q      url.Values
	region string
}

func (c *call) json(code int, v any) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(code)
	_ = json.NewEncoder(c.w).Encode(v)
}

func (c *call) noContent() { c.w.WriteHeader(http.StatusNoContent) }

// decode reads the JSON body into a map; a body that is not JSON is a 400.
func (c *call) decode() (map[string]any, bool) {
	m := map[string]any{}
	if len(c.body) == 0 {
		return m, true
	}
	if err := json.Unmarshal(c.body, &m); err != nil {
		c.invalid("body", "the body is not a JSON object: "+err.Error())
		return nil, false
	}
	return m, true
}

// notFound answers the typed 404 most products send.
func (c *call) notFound(resource, id string) {
	c.json(404, map[string]any{"type": "not_found", "resource": resource, "resource_id": id, "message": "resource is not found"})
}

// untypedNotFound answers the 404 Functions and Registry send: no type.
func (c *call) untypedNotFound(what string) {
	c.json(404, map[string]any{"message": what + " was not found"})
}

func (c *call) denied(resource, action string) {
	c.json(403, map[string]any{"type": "permissions_denied", "message": "insufficient permissions",
		"details": []any{map[string]any{"resource": resource, "action": action}}})
}

func (c *call) conflict(resource, id, msg string) {
	c.json(409, map[string]any{"type": "already_exists", "resource": resource, "resource_id": id,
		"message": "resource already exists", "help_message": msg})
}

func (c *call) invalid(arg, reason string) {
	c.json(400, map[string]any{"type": "invalid_arguments", "message": "invalid argument(s)",
		"details": []any{map[string]any{"argument_name": arg, "reason": "constraint", "help_message": reason}}})
}

// enum checks that an enum was set: the SDK sends an unset one as
// "unknown_…", which the real API refuses.
func (c *call) enum(m map[string]any, key string, allowed ...string) (string, bool) {
	v, _ := m[key].(string)
	for _, a := range allowed {
		if v == a {
			return v, true
		}
	}
	c.invalid(key, fmt.Sprintf("%q is not one of %s", v, strings.Join(allowed, ", ")))
	return "", false
}

func (s *Server) id() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (s *Server) ts() string {
	s.seq++
	// Distinct, increasing timestamps keep created_at ordering stable.
	return s.now().Add(time.Duration(s.seq) * time.Microsecond).Format(time.RFC3339Nano)
}

func (s *Server) put(coll, id string, m map[string]any) *object {
	if s.objs[coll] == nil {
		s.objs[coll] = map[string]*object{}
	}
	o := &object{m: m}
	if _, exists := s.objs[coll][id]; !exists {
		s.order[coll] = append(s.order[coll], id)
	}
	s.objs[coll][id] = o
	return o
}

func (s *Server) get(coll, id string) (*object, bool) {
	o, ok := s.objs[coll][id]
	return o, ok
}

func (s *Server) remove(coll, id string) {
	delete(s.objs[coll], id)
	ids := s.order[coll]
	for i, x := range ids {
		if x == id {
			s.order[coll] = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
}

// schedule sets a transient status now and the status it settles to.
func (s *Server) schedule(o *object, now, next string, gone bool) {
	o.m["status"] = now
	if s.opts.TransientReads < 0 {
		o.has = false
		if !gone {
			o.m["status"] = next
		}
		o.gone = gone
		return
	}
	o.next, o.gone, o.reads, o.has = next, gone, s.opts.TransientReads, true
}

// read is a read by id: it returns the object as it is now, then moves it
// one step along its pending transition. ok is false when it is gone.
func (s *Server) read(coll, id string) (map[string]any, bool) {
	o, ok := s.get(coll, id)
	if !ok {
		return nil, false
	}
	if !o.has && o.gone {
		s.remove(coll, id)
		return nil, false
	}
	out := o.m
	if o.has {
		o.reads--
		if o.reads <= 0 {
			s.transition(coll, id, o)
		}
	}
	return out, true
}

func (s *Server) transition(coll, id string, o *object) {
	o.has = false
	if o.gone {
		s.cascade(coll, id)
		s.remove(coll, id)
		return
	}
	// Copy, so that a map already handed out keeps the state it showed.
	m := make(map[string]any, len(o.m))
	for k, v := range o.m {
		m[k] = v
	}
	m["status"] = o.next
	if _, has := m["updated_at"]; has {
		m["updated_at"] = s.ts()
	}
	if f, ok := readyHooks[coll]; ok {
		f(s, m)
	}
	o.m = m
}

// readyHooks fill what a resource reports once it settles.
var readyHooks = map[string]func(s *Server, m map[string]any){}

// cascade removes what lives in a deleted namespace.
func (s *Server) cascade(coll, id string) {
	child := map[string]string{FnNamespaces: Functions, CtNamespaces: Containers}[coll]
	if child == "" {
		return
	}
	for cid, o := range s.objs[child] {
		if o.m["namespace_id"] == id {
			s.remove(child, cid)
		}
	}
}

// list answers a listing: the collection's objects that keep(m) accepts,
// oldest first unless order_by says otherwise, one page of them.
func (c *call) list(coll, key string, keep func(m map[string]any) bool) {
	s := c.s
	var items []map[string]any
	for _, id := range s.order[coll] {
		o := s.objs[coll][id]
		if o == nil || (!o.has && o.gone) {
			continue
		}
		if keep(o.m) {
			items = append(items, o.m)
		}
	}
	if strings.HasSuffix(c.q.Get("order_by"), "_desc") {
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	}
	total := len(items)
	page, _ := strconv.Atoi(c.q.Get("page"))
	if page < 1 {
		page = 1
	}
	size, _ := strconv.Atoi(c.q.Get("page_size"))
	if size < 1 {
		size = s.opts.DefaultPageSize
	}
	start := (page - 1) * size
	if start > len(items) {
		start = len(items)
	}
	end := start + size
	if end > len(items) {
		end = len(items)
	}
	out := make([]any, 0, end-start)
	for _, m := range items[start:end] {
		out = append(out, m)
	}
	c.json(200, map[string]any{key: out, "total_count": total})
}

// match filters on the query parameters a listing names.
func (c *call) match(m map[string]any, params ...string) bool {
	for _, p := range params {
		want := c.q.Get(p)
		if want == "" {
			continue
		}
		if fmt.Sprint(m[p]) != want {
			return false
		}
	}
	return true
}

// projectOf returns the organization of a known project, or answers 403 as
// the API does for a project the caller cannot see.
func (c *call) projectOrg(project string) (string, bool) {
	if project == "" {
		c.invalid("project_id", "required")
		return "", false
	}
	p, ok := c.s.objs[Projects][project]
	if !ok {
		c.denied("project", "read")
		return "", false
	}
	return p.m["organization_id"].(string), true
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

func strList(v any) []any {
	xs, _ := v.([]any)
	if xs == nil {
		return []any{}
	}
	return xs
}

func strMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// num returns a JSON number field, or def when it is absent.
func num(m map[string]any, k string, def float64) float64 {
	switch v := m[k].(type) {
	case float64:
		return v
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSuffix(v, "s"), 64); err == nil {
			return f
		}
	}
	return def
}

// hasTag reports whether a tags list holds t.
func hasTag(tags any, t string) bool {
	for _, x := range strList(tags) {
		if x == t {
			return true
		}
	}
	return false
}

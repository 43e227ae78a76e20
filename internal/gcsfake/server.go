// Package gcsfake is Cloud Storage for tests: fake-gcs-server
// (github.com/fsouza/fake-gcs-server/fakestorage), run in process, behind
// a thin layer that keeps the bucket metadata fake-gcs-server drops.
//
// fake-gcs-server serves the JSON API's buckets and objects, but it keeps
// no labels, no project and no per-bucket location, and a PATCH without
// "versioning" turns versioning off. Ownership on GCP is labels and the
// project is the account, so the layer adds exactly these, in front of the
// bucket routes: a bucket's project (from insert's project parameter, and
// listings filtered by it), location, labels (PATCH merges them, null
// deletes), metageneration (ifMetagenerationMatch is enforced) and
// iamConfiguration; and a delete of a bucket that holds objects answers
// 409, as Cloud Storage does, not 412. Objects pass through untouched. Everything else a test
// proves about Cloud Storage is fake-gcs-server's behaviour.
package gcsfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/infra-iac/infra/internal/gcpfake"
)

// Request is one request the server received.
type Request struct {
	Method, Path, Query string
}

// Server is a running fake.
type Server struct {
	srv      *httptest.Server
	fake     *fakestorage.Server
	projects map[string]int64 // project id -> number

	mu       sync.Mutex
	meta     map[string]*bucket
	requests []Request
}

// bucket is what the layer keeps of one bucket.
type bucket struct {
	project        string
	location       string
	labels         map[string]string
	metageneration int64
	iam            any
}

// New starts the fake on loopback, closed when the test ends. projects
// maps each project id the fake knows to its number; an insert or a
// listing for another project is refused with 403, as GCP refuses a
// project the caller cannot see.
func New(t testing.TB, projects map[string]int64) *Server {
	t.Helper()
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Writer: io.Discard})
	if err != nil {
		t.Fatalf("gcsfake: %v", err)
	}
	s := &Server{fake: fake, projects: projects, meta: map[string]*bucket{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() { s.srv.Close(); fake.Stop() })
	return s
}

// Endpoint is the JSON API's base URL, for option.WithEndpoint.
func (s *Server) Endpoint() string { return s.srv.URL + "/storage/v1/" }

// Host is host:port, for STORAGE_EMULATOR_HOST.
func (s *Server) Host() string { return strings.TrimPrefix(s.srv.URL, "http://") }

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reset deletes every bucket and object.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.meta {
		objs, _, _ := s.fake.ListObjectsWithOptions(name, fakestorage.ListOptions{Versions: true})
		for _, o := range objs {
			_ = s.fake.Backend().DeleteObjectWithGeneration(name, o.Name, o.Generation)
		}
		_ = s.fake.Backend().DeleteBucket(name)
	}
	s.meta = map[string]*bucket{}
	s.requests = nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery})
	s.mu.Unlock()
	rest, ok := strings.CutPrefix(r.URL.Path, "/storage/v1/b")
	switch {
	case !ok || strings.Contains(strings.TrimPrefix(rest, "/"), "/"):
		s.fake.HTTPHandler().ServeHTTP(w, r) // objects and the rest
	case rest == "" || rest == "/":
		if r.Method == http.MethodPost {
			s.insert(w, r)
		} else {
			s.list(w, r)
		}
	default:
		s.one(w, r, strings.TrimPrefix(rest, "/"))
	}
}

// forward sends r, with body, to fake-gcs-server and returns its answer.
func (s *Server) forward(r *http.Request, body []byte) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	f := r.Clone(r.Context())
	f.Body = io.NopCloser(bytes.NewReader(body))
	f.ContentLength = int64(len(body))
	s.fake.HTTPHandler().ServeHTTP(rec, f)
	return rec
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg,
		"errors": []map[string]any{{"message": msg, "reason": http.StatusText(code)}}}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) insert(w http.ResponseWriter, r *http.Request) {
	project := r.URL.Query().Get("project")
	if !s.known(project) {
		writeError(w, http.StatusForbidden, "The caller does not have permission to create buckets in project "+project)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var in struct {
		Location         string            `json:"location"`
		Labels           map[string]string `json:"labels"`
		IAMConfiguration any               `json:"iamConfiguration"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := checkLabels(in.Labels); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if in.Location == "" {
		in.Location = "US"
	}
	rec := s.forward(r, body)
	if rec.Code != http.StatusOK {
		copyAnswer(w, rec)
		return
	}
	out := decode(rec)
	s.mu.Lock()
	b := &bucket{project: project, location: strings.ToUpper(in.Location), labels: in.Labels, metageneration: 1, iam: in.IAMConfiguration}
	s.meta[out["name"].(string)] = b
	s.merge(out, b)
	s.mu.Unlock()
	writeJSON(w, out)
}

func copyAnswer(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func decode(rec *httptest.ResponseRecorder) map[string]any {
	out := map[string]any{}
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return out
}

// merge writes the layer's metadata into a bucket resource. The caller
// holds s.mu.
func (s *Server) merge(out map[string]any, b *bucket) {
	out["projectNumber"] = strconv.FormatInt(s.projects[b.project], 10)
	out["location"] = b.location
	out["locationType"] = "region"
	out["metageneration"] = strconv.FormatInt(b.metageneration, 10)
	if len(b.labels) > 0 {
		out["labels"] = b.labels
	}
	if b.iam != nil {
		out["iamConfiguration"] = b.iam
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	project := r.URL.Query().Get("project")
	if !s.known(project) {
		writeError(w, http.StatusForbidden, "The caller does not have permission to list buckets of project "+project)
		return
	}
	rec := s.forward(r, nil)
	if rec.Code != http.StatusOK {
		copyAnswer(w, rec)
		return
	}
	out := decode(rec)
	items, _ := out["items"].([]any)
	kept := []any{}
	s.mu.Lock()
	for _, it := range items {
		m, _ := it.(map[string]any)
		name, _ := m["name"].(string)
		if b := s.meta[name]; b != nil && b.project == project {
			s.merge(m, b)
			kept = append(kept, m)
		}
	}
	s.mu.Unlock()
	out["items"] = kept
	writeJSON(w, out)
}

// one serves GET, PATCH and DELETE of one bucket.
func (s *Server) one(w http.ResponseWriter, r *http.Request, name string) {
	s.mu.Lock()
	b := s.meta[name]
	s.mu.Unlock()
	if b == nil {
		writeError(w, http.StatusNotFound, "The specified bucket does not exist.")
		return
	}
	if m := r.URL.Query().Get("ifMetagenerationMatch"); m != "" && m != strconv.FormatInt(b.metageneration, 10) {
		writeError(w, http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold.")
		return
	}
	var body []byte
	if r.Method == http.MethodPatch || r.Method == http.MethodPost {
		var err error
		if body, err = s.patch(r, name, b); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	rec := s.forward(r, body)
	if r.Method == http.MethodDelete && rec.Code == http.StatusPreconditionFailed {
		// Cloud Storage answers a delete of a bucket with objects 409;
		// fake-gcs-server answers 412.
		writeError(w, http.StatusConflict, "The bucket you tried to delete is not empty.")
		return
	}
	if rec.Code >= 300 {
		copyAnswer(w, rec)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodDelete {
		delete(s.meta, name)
		w.WriteHeader(rec.Code)
		return
	}
	out := decode(rec)
	s.merge(out, b)
	writeJSON(w, out)
}

// patch applies a PATCH's labels to the layer and returns the body for
// fake-gcs-server, which always carries the versioning the bucket will
// have (it would otherwise turn versioning off).
func (s *Server) patch(r *http.Request, name string, b *bucket) ([]byte, error) {
	raw, _ := io.ReadAll(r.Body)
	var in struct {
		Labels     map[string]*string `json:"labels"`
		Versioning *struct {
			Enabled bool `json:"enabled"`
		} `json:"versioning"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	versioning := false
	if in.Versioning != nil {
		versioning = in.Versioning.Enabled
	} else if cur, err := s.fake.Backend().GetBucket(name); err == nil {
		versioning = cur.VersioningEnabled
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[string]string{}
	for k, v := range b.labels {
		next[k] = v
	}
	for k, v := range in.Labels {
		if v == nil {
			delete(next, k)
		} else {
			next[k] = *v
		}
	}
	if err := checkLabels(next); err != nil {
		return nil, err
	}
	b.labels = next
	b.metageneration++
	return json.Marshal(map[string]any{"versioning": map[string]bool{"enabled": versioning}})
}

// Cloud Storage holds labels to GCP's rules, which fake-gcs-server, keeping
// none, does not check.
var (
	labelKey   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	labelValue = regexp.MustCompile(`^[a-z0-9_-]{0,63}$`)
)

func checkLabels(l map[string]string) error {
	if len(l) > 64 {
		return fmt.Errorf("a bucket has at most 64 labels, not %d", len(l))
	}
	for k, v := range l {
		if !labelKey.MatchString(k) || !labelValue.MatchString(v) {
			return fmt.Errorf("Invalid argument: label %q=%q", k, v)
		}
	}
	return nil
}

func (s *Server) known(project string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.projects[project]
	return ok
}

// AddProject makes another project known to the fake, for a test that
// needs a bucket outside the fleet's project.
func (s *Server) AddProject(id string, number int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.projects[id] = number
}

// Assets are the project's buckets as Cloud Asset Inventory lists them,
// for gcpfake's search (gcpfake.AddAssetSource).
func (s *Server) Assets(project string) []gcpfake.Asset {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []gcpfake.Asset
	for name, b := range s.meta {
		if b.project == project {
			out = append(out, gcpfake.Asset{Name: "//storage.googleapis.com/" + name, Type: "storage.googleapis.com/Bucket",
				Location: strings.ToLower(b.location), Labels: maps.Clone(b.labels)})
		}
	}
	return out
}

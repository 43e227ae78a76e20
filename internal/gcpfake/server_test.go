package gcpfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// do sends a raw request with a bearer token and returns the status and
// body.
func do(t *testing.T, srv *Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// wantViolation: the request answered 500 naming the method, and exactly
// one violation containing want was recorded (and is taken, so the
// cleanup does not fail the test for it).
func wantViolation(t *testing.T, srv *Server, code int, body, method, want string) {
	t.Helper()
	got := srv.TakeViolations()
	if code != http.StatusInternalServerError || !strings.Contains(body, method) {
		t.Errorf("answered %d %s; want 500 naming %s", code, body, method)
	}
	if len(got) != 1 || !strings.Contains(got[0], want) || !strings.HasPrefix(got[0], method+" ") {
		t.Errorf("violations %q; want one from %s containing %q", got, method, want)
	}
}

const createBody = `{"replication":{"automatic":{}},"labels":{"team":"a"}}`

// TestRequestViolations: requests that break the discovery document are
// caught before any handler runs.
func TestRequestViolations(t *testing.T) {
	srv := New(t, Options{})
	const create = "secretmanager.projects.secrets.create"
	for _, tc := range []struct {
		name, method, path, body, id, want string
	}{
		{"unknown query parameter", "POST", "/v1/projects/p/secrets?secretId=s&secret_id=s", createBody, create,
			`unknown query parameter "secret_id"`},
		{"query parameter type", "GET", "/v1/projects/p/secrets?pageSize=two", "", "secretmanager.projects.secrets.list",
			`query parameter pageSize="two": want int32`},
		{"system parameter type", "GET", "/v1/projects/p/secrets?prettyPrint=yes", "", "secretmanager.projects.secrets.list",
			`query parameter prettyPrint="yes": want true or false`},
		{"unknown $alt option", "GET", "/v1/projects/p/secrets?%24alt=json%3Benum-encoding%3Dname", "", "secretmanager.projects.secrets.list",
			`unknown option "enum-encoding=name"`},
		{"unknown body field", "POST", "/v1/projects/p/secrets?secretId=s", `{"replication":{"automatic":{}},"label":{"team":"a"}}`, create,
			`request: Secret: unknown property "label"`},
		{"wrong body type", "POST", "/v1/projects/p/secrets?secretId=s", `{"replication":{"automatic":{}},"labels":{"team":7}}`, create,
			"request: Secret.labels.team: want string, got number"},
		{"int64 as a number", "POST", "/v1/projects/p/secrets/s:addVersion", `{"payload":{"data":"eA==","dataCrc32c":5}}`,
			"secretmanager.projects.secrets.addVersion", "request: AddSecretVersionRequest.payload.dataCrc32c: want string (int64), got number"},
		{"enum as a number unasked", "POST", "/v1/projects/p/secrets?secretId=s", `{"replication":{"automatic":{}},"secretType":2}`, create,
			"did not ask for enum-encoding=int"},
		{"enum name not listed", "POST", "/v1/projects/p/secrets?secretId=s", `{"replication":{"automatic":{}},"secretType":"PASSWORD"}`, create,
			`"PASSWORD" is not one of SECRET_TYPE_UNSPECIFIED`},
		{"body on a body-less method", "GET", "/v1/projects/p/secrets/s", `{}`, "secretmanager.projects.secrets.get",
			"the method takes no body"},
		{"path echo that disagrees", "POST", "/v1/projects/p/secrets/s:addVersion", `{"parent":"projects/p/secrets/t","payload":{}}`,
			"secretmanager.projects.secrets.addVersion", `body parent=projects/p/secrets/t differs from the path's "projects/p/secrets/s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, srv, tc.method, tc.path, tc.body)
			wantViolation(t, srv, code, body, tc.id, tc.want)
		})
	}
}

// TestUnknownPathIsAViolation: a path no served method has is the
// client's bug (or an API the fake does not serve), said as such.
func TestUnknownPathIsAViolation(t *testing.T) {
	srv := New(t, Options{})
	code, body := do(t, srv, "GET", "/v1/projects/p/buckets", "")
	got := srv.TakeViolations()
	if code != http.StatusInternalServerError || len(got) != 1 || !strings.Contains(got[0], "no method of cloudresourcemanager v3, secretmanager v1") {
		t.Fatalf("answered %d %s, violations %q", code, body, got)
	}
}

// TestResponseViolations: the fake's own answers are held to the response
// schema; a test-only hook spoils them to prove it.
func TestResponseViolations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(map[string]any)
		method string
		path   string
		want   string
	}{
		{"field the schema lacks", func(m map[string]any) { m["secretName"] = "s" }, "GET", "/v1/projects/p/secrets/s",
			`response: Secret: unknown property "secretName"`},
		{"label value as a number", func(m map[string]any) { m["labels"] = map[string]any{"team": 7} }, "GET", "/v1/projects/p/secrets/s",
			"response: Secret.labels.team: want string, got number"},
		{"int64 not as a string", func(m map[string]any) { m["payload"].(map[string]any)["dataCrc32c"] = 42 }, "GET",
			"/v1/projects/p/secrets/s/versions/1:access", "response: AccessSecretVersionResponse.payload.dataCrc32c: want string (int64), got number"},
		{"enum value not listed", func(m map[string]any) { m["state"] = "ACTIVE" }, "GET", "/v1/projects/p/secrets/s/versions/latest",
			`response: SecretVersion.state: "ACTIVE" is not one of STATE_UNSPECIFIED, ENABLED, DISABLED, DESTROYED`},
		{"timestamp not RFC 3339", func(m map[string]any) { m["createTime"] = "yesterday" }, "GET", "/v1/projects/p/secrets/s",
			`response: Secret.createTime: want an RFC 3339 timestamp: "yesterday"`},
		{"null", func(m map[string]any) { m["etag"] = nil }, "GET", "/v1/projects/p/secrets/s",
			"response: Secret.etag: null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spoil bool
			srv := New(t, Options{mutate: func(_ string, m map[string]any) {
				if spoil {
					tc.spoil(m)
				}
			}})
			seedSecret(t, srv)
			spoil = true
			code, body := do(t, srv, tc.method, tc.path, "")
			id := "secretmanager.projects.secrets.get"
			if strings.Contains(tc.path, "/versions/") {
				id = "secretmanager.projects.secrets.versions." + map[bool]string{true: "access", false: "get"}[strings.HasSuffix(tc.path, ":access")]
			}
			wantViolation(t, srv, code, body, id, tc.want)
		})
	}
}

// seedSecret creates projects/p/secrets/s with one version.
func seedSecret(t *testing.T, srv *Server) {
	t.Helper()
	if code, body := do(t, srv, "POST", "/v1/projects/p/secrets?secretId=s", createBody); code != http.StatusOK {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := do(t, srv, "POST", "/v1/projects/p/secrets/s:addVersion", `{"payload":{"data":"eA=="}}`); code != http.StatusOK {
		t.Fatalf("add version: %d %s", code, body)
	}
}

// TestViolationsFailTheTest: a violation left untaken fails the test at
// cleanup.
func TestViolationsFailTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	srv := New(rec, Options{})
	do(t, srv, "GET", "/v1/projects/p/secrets?bogus=1", "")
	rec.cleanup()
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], `unknown query parameter "bogus"`) {
		t.Fatalf("cleanup reported %q", rec.errors)
	}
}

// recordingTB runs cleanups on demand and keeps Errorf's messages.
type recordingTB struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestUnauthenticated(t *testing.T) {
	srv := New(t, Options{})
	resp, err := http.Get(srv.URL() + "/v1/projects/p/secrets")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct {
			Code   int
			Status string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 || e.Error.Code != 401 || e.Error.Status != "UNAUTHENTICATED" || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("answered %d %+v", resp.StatusCode, e)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("recorded %d requests", n)
	}
}

// TestRouting: the most specific template wins (…/secrets/s:getIamPolicy
// is getIamPolicy, not get of a secret "s:getIamPolicy"), a method the
// fake does not model answers UNIMPLEMENTED, and two documents claiming
// one path are refused.
func TestRouting(t *testing.T) {
	srv := New(t, Options{})
	seedSecret(t, srv)
	if code, body := do(t, srv, "GET", "/v1/projects/p/secrets/s/versions/1", ""); code != 200 || !strings.Contains(body, `"state": "ENABLED"`) {
		t.Fatalf("get version: %d %s", code, body)
	}
	code, body := do(t, srv, "GET", "/v1/projects/p/secrets/s:getIamPolicy", "")
	if code != http.StatusNotImplemented || !strings.Contains(body, "secretmanager.projects.secrets.getIamPolicy") {
		t.Fatalf("getIamPolicy: %d %s", code, body)
	}
	if err := checkDisjoint(srv.routes, srv.handler); err != nil {
		t.Fatal(err)
	}
	a, _ := newRoute(srv.routes[0].m)
	twin := *a
	twin.m = &Method{ID: "other.get", HTTPMethod: a.m.HTTPMethod, doc: &Doc{}}
	if err := checkDisjoint([]*route{a, &twin}, map[string]handler{a.m.ID: getProject}); err == nil {
		t.Fatal("two documents claiming one path that one of them models passed")
	}
	// Two methods neither models may share a path: Secret Manager's and
	// Artifact Registry's locations.get are both served, UNIMPLEMENTED.
	if err := checkDisjoint([]*route{a, &twin}, nil); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, srv, "GET", "/v1/projects/p/locations/us", ""); code != http.StatusNotImplemented {
		t.Fatalf("locations.get: %d %s", code, body)
	}
}

// TestSystemParameters: fields= selects, prettyPrint=false compacts, and
// a selection naming no field is refused.
func TestSystemParameters(t *testing.T) {
	srv := New(t, Options{})
	seedSecret(t, srv)
	code, body := do(t, srv, "GET", "/v1/projects/p/secrets?fields=secrets(name,labels/team),totalSize&prettyPrint=false", "")
	num := srv.ProjectNumber("p")
	if want := `{"secrets":[{"labels":{"team":"a"},"name":"projects/` + num + `/secrets/s"}],"totalSize":1}` + "\n"; code != 200 || body != want {
		t.Fatalf("got %d %s, want %s", code, body, want)
	}
	if code, body := do(t, srv, "GET", "/v1/projects/p/secrets?fields=secrets(nom)", ""); code != 400 || !strings.Contains(body, `no field \"nom\"`) {
		t.Fatalf("bad selection: %d %s", code, body)
	}
}

package gcpfake

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSecretRules: the rules the API documents, over raw requests.
func TestSecretRules(t *testing.T) {
	srv := New(t, Options{})
	seedSecret(t, srv)
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"no secretId", "POST", "/v1/projects/p/secrets", createBody, 400, "Secret ID [] must be"},
		{"bad secretId", "POST", "/v1/projects/p/secrets?secretId=a.b", createBody, 400, "Secret ID [a.b] must be"},
		{"no replication", "POST", "/v1/projects/p/secrets?secretId=t", `{}`, 400, "exactly one of automatic and userManaged"},
		{"no replicas", "POST", "/v1/projects/p/secrets?secretId=t", `{"replication":{"userManaged":{}}}`, 400, "replicas must not be empty"},
		{"label key", "POST", "/v1/projects/p/secrets?secretId=t", `{"replication":{"automatic":{}},"labels":{"Team":"a"}}`, 400, `Label \"Team\"`},
		{"ttl and expireTime", "POST", "/v1/projects/p/secrets?secretId=t",
			`{"replication":{"automatic":{}},"ttl":"60s","expireTime":"2030-01-01T00:00:00Z"}`, 400, "Only one of ttl and expire_time"},
		{"alias to no version", "PATCH", "/v1/projects/p/secrets/s?updateMask=versionAliases", `{"versionAliases":{"prod":"2"}}`, 400, `Version alias \"prod\"`},
		{"no update mask", "PATCH", "/v1/projects/p/secrets/s", `{"labels":{}}`, 400, "update_mask is required"},
		{"immutable path", "PATCH", "/v1/projects/p/secrets/s?updateMask=replication", `{}`, 400, "Secret.replication cannot be updated"},
		{"stale patch etag", "PATCH", "/v1/projects/p/secrets/s?updateMask=labels", `{"etag":"\"old\""}`, 400, "does not match"},
		{"checksum mismatch", "POST", "/v1/projects/p/secrets/s:addVersion", `{"payload":{"data":"eA==","dataCrc32c":"1"}}`, 400, "Checksum mismatch"},
		{"no payload", "POST", "/v1/projects/p/secrets/s:addVersion", `{}`, 400, "payload is required"},
		{"unknown version", "GET", "/v1/projects/p/secrets/s/versions/9", "", 404, "versions/9] not found"},
		{"stale page token", "GET", "/v1/projects/p/secrets?pageToken=" + encodePageToken(1, "another list"), "", 400, "Invalid page token"},
		{"unmodelled filter", "GET", "/v1/projects/p/secrets?filter=" + url.QueryEscape("create_time>2021-01-01"), "", 400, "gcpfake models only"},
		{"regional secret", "GET", "/v1/projects/p/locations/l/secrets", "", 501, "secretmanager.projects.locations.secrets.list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, srv, tc.method, tc.path, tc.body)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s; want %d with %q", code, body, tc.code, tc.want)
			}
		})
	}
}

// TestVersionLifecycle: aliases resolve, ttl sets expireTime, a delayed
// destroy disables and schedules, and enum-encoding=int answers numbers.
func TestVersionLifecycle(t *testing.T) {
	srv := New(t, Options{})
	seedSecret(t, srv)
	steps := []struct{ method, path, body, want string }{
		{"PATCH", "/v1/projects/p/secrets/s?updateMask=versionAliases,ttl,version_destroy_ttl",
			`{"versionAliases":{"prod":"1"},"ttl":"3600s","versionDestroyTtl":"86400s"}`, `"expireTime"`},
		{"GET", "/v1/projects/p/secrets/s/versions/prod", "", `/versions/1"`},
		{"GET", "/v1/projects/p/secrets/s/versions/prod:access", "", `"data": "eA=="`},
		{"POST", "/v1/projects/p/secrets/s/versions/1:destroy", `{}`, `"scheduledDestroyTime"`},
		{"GET", "/v1/projects/p/secrets/s/versions/1?%24alt=json%3Benum-encoding%3Dint", "", `"state": 2`},
		{"GET", "/v1/projects/p/secrets/s/versions?filter=state%3ADISABLED", "", `"state": "DISABLED"`},
		{"GET", "/v1/projects/p/secrets/s/versions?filter=state%3AENABLED", "", "{}"},
	}
	for _, st := range steps {
		if code, body := do(t, srv, st.method, st.path, st.body); code != http.StatusOK || !strings.Contains(body, st.want) {
			t.Fatalf("%s %s: %d %s; want %q", st.method, st.path, code, body, st.want)
		}
	}
}

func TestParseFilter(t *testing.T) {
	for _, ok := range []string{"", "labels.team=a", `labels.team = "a b"`, "labels.team:* labels.env=dev", "labels.a=b AND name:sec"} {
		if _, err := parseFilter(ok, secretFilterFields); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"labels.team:a", "labels.a=b OR labels.a=c", "NOT labels.a=b", "-labels.a=b", "(labels.a=b)",
		"AND labels.a=b", "labels.a=b AND", "create_time<2021", "name:APIKEY*prod", "state=ENABLED"} {
		if _, err := parseFilter(bad, secretFilterFields); err == nil || !strings.Contains(err.Error(), "INVALID_ARGUMENT") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	f, _ := parseFilter(`labels.team="a b" labels.env:*`, secretFilterFields)
	if !f.match(map[string]any{"labels": map[string]any{"team": "a b", "env": ""}}) || f.match(map[string]any{"labels": map[string]any{"team": "a b"}}) {
		t.Fatal("match")
	}
}

// TestTokenEndpoint: only an assertion signed with a key the fake issued,
// for its token URI, earns a token.
func TestTokenEndpoint(t *testing.T) {
	srv := New(t, Options{})
	post := func(form url.Values) (int, string) {
		resp, err := http.PostForm(srv.URL()+tokenPath, form)
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
	if code, body := post(url.Values{"grant_type": {"client_credentials"}}); code != 400 || !strings.Contains(body, "unsupported_grant_type") {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := post(url.Values{"grant_type": {jwtBearer}, "assertion": {"a.b.c"}}); code != 400 || !strings.Contains(body, "invalid_grant") {
		t.Fatalf("%d %s", code, body)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("token requests were recorded as API requests")
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"cloud.google.com/go/auth/credentials"
	"github.com/sethvargo/go-githubactions"
)

const (
	wifProvider = "projects/123456789/locations/global/workloadIdentityPools/github-pool/providers/github-repo"
	wifAccount  = "infra-ci@shop-prod-1.iam.gserviceaccount.com"
)

// federation is GitHub's OIDC endpoint and GCP's token services, each
// asserting the exact request Google's auth library must send.
func federation(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oidc", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer request-token-7c" || r.URL.Query().Get("audience") != "https://iam.googleapis.com/"+wifProvider {
			t.Errorf("OIDC request: %s %v", r.URL, r.Header)
		}
		_, _ = w.Write([]byte(`{"value": "github-oidc-jwt"}`))
	})
	mux.HandleFunc("POST /v1/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		for k, want := range map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
			"audience": "//iam.googleapis.com/" + wifProvider, "subject_token": "github-oidc-jwt",
			"subject_token_type": "urn:ietf:params:oauth:token-type:jwt"} {
			if got := r.PostForm.Get(k); got != want {
				t.Errorf("STS %s = %q, want %q", k, got, want)
			}
		}
		_, _ = w.Write([]byte(`{"access_token": "federated-token", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer", "expires_in": 3600}`))
	})
	mux.HandleFunc("POST /v1/projects/-/serviceAccounts/{sa}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("sa") != wifAccount+":generateAccessToken" || r.Header.Get("Authorization") != "Bearer federated-token" {
			t.Errorf("impersonation: %s %v", r.URL.Path, r.Header.Get("Authorization"))
		}
		_, _ = w.Write([]byte(`{"accessToken": "service-account-token", "expireTime": "2099-01-01T00:00:00Z"}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func wifAction(t *testing.T, vars map[string]string) (*action, map[string]string, *bytes.Buffer) {
	set := map[string]string{}
	var log bytes.Buffer
	getenv := func(k string) string { return vars[k] }
	gha := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&log))
	return &action{e: env{getenv: getenv, setenv: func(k, v string) error { set[k] = v; return nil }}, gha: gha, log: &log}, set, &log
}

// TestWorkloadIdentityFederation: with the provider and a service account,
// the action writes a configuration Google's auth library turns into the
// service account's token, through GitHub's OIDC token, STS and
// impersonation, and the request token is masked.
func TestWorkloadIdentityFederation(t *testing.T) {
	srv := federation(t)
	a, set, log := wifAction(t, map[string]string{
		"INPUT_GCP_WORKLOAD_IDENTITY_PROVIDER": wifProvider, "INPUT_GCP_SERVICE_ACCOUNT": wifAccount,
		"ACTIONS_ID_TOKEN_REQUEST_URL": srv.URL + "/oidc?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token-7c",
		"RUNNER_TEMP": t.TempDir(), "INFRA_GCP_API_URL": srv.URL,
	})
	if err := a.gcpWorkloadIdentity(); err != nil {
		t.Fatal(err)
	}
	path := set["GOOGLE_APPLICATION_CREDENTIALS"]
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("configuration %s: %v %v", path, fi, err)
	}
	if !strings.Contains(log.String(), "::add-mask::request-token-7c") || strings.Count(log.String(), "request-token-7c") != 1 {
		t.Errorf("the request token is not masked, or shown:\n%s", log.String())
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := creds.Token(context.Background())
	if err != nil || tok.Value != "service-account-token" {
		t.Fatalf("token %+v, %v", tok, err)
	}
	var cfg map[string]any
	raw, _ := os.ReadFile(path)
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg["type"] != "external_account" {
		t.Fatalf("configuration: %s", raw)
	}
}

func TestWorkloadIdentityRefusals(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"INPUT_GCP_SERVICE_ACCOUNT": wifAccount}, "needs gcp-workload-identity-provider"},
		{map[string]string{"INPUT_GCP_WORKLOAD_IDENTITY_PROVIDER": "my-pool\x1b[2J"}, `want projects/<number>/locations/global`},
		{map[string]string{"INPUT_GCP_WORKLOAD_IDENTITY_PROVIDER": wifProvider, "INPUT_GCP_SERVICE_ACCOUNT": "root"}, "want a service account's email"},
		{map[string]string{"INPUT_GCP_WORKLOAD_IDENTITY_PROVIDER": wifProvider}, "permissions: id-token: write"},
	} {
		a, set, _ := wifAction(t, c.vars)
		err := a.gcpWorkloadIdentity()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\x1b") || len(set) != 0 {
			t.Errorf("%v: %v (set %v)", c.vars, err, set)
		}
	}
	a, set, _ := wifAction(t, map[string]string{})
	if err := a.gcpWorkloadIdentity(); err != nil || len(set) != 0 {
		t.Errorf("without the inputs: %v, set %v", err, set)
	}
}

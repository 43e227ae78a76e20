package gcp

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// TestAccountIsTheProjectReadWithTheCredentials: the account is the
// configured project, once Resource Manager has answered for it.
func TestAccountIsTheProjectReadWithTheCredentials(t *testing.T) {
	e := newEnv(t)
	got, err := e.backend.Account(t.Context())
	if err != nil || got != testProject {
		t.Fatalf("Account = %q, %v", got, err)
	}
	if _, err := e.backend.Account(t.Context()); err != nil {
		t.Fatal(err)
	}
	var reads int
	for _, r := range e.rest.Requests() {
		if r.Method == "GET" && strings.HasPrefix(r.Path, "/v3/projects/") {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("the project was read %d times; once is enough", reads)
	}
}

// TestAProjectTheCredentialsCannotSeeIsRefusedBeforeListing: a project
// the fake does not know answers 403, and no listing goes out.
func TestAProjectTheCredentialsCannotSeeIsRefusedBeforeListing(t *testing.T) {
	e := newEnv(t)
	e.backend.opts.Project = "someone-elses"
	_, err := e.backend.Account(t.Context())
	if err == nil || !strings.Contains(err.Error(), "read project someone-elses with these credentials") {
		t.Fatalf("Account = %v", err)
	}
	if code := e.backend.ErrorCode(err); code != providers.PermissionDenied {
		t.Errorf("code %v", code)
	}
	d, _ := e.backend.Driver(spec.ObjectStore)
	if _, err := d.List(t.Context(), testRegion); err == nil {
		t.Fatal("a listing went out for a project that was not established")
	}
	for _, r := range e.gcs.Requests() {
		t.Errorf("Cloud Storage was called: %s %s", r.Method, r.Path)
	}
}

// TestAnUnreachableAPIIsAnErrorNotAnEmptyProject: connections refused are
// an error from Account and from every listing, never an empty answer.
func TestAnUnreachableAPIIsAnErrorNotAnEmptyProject(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	b, err := New(Options{Project: testProject, APIURL: "http://" + addr, RetryBudget: 1,
		RESTOptions:    []option.ClientOption{option.WithoutAuthentication()},
		StorageOptions: []option.ClientOption{option.WithEndpoint("http://" + addr + "/storage/v1/"), option.WithoutAuthentication()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Account(t.Context()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Account = %v", err)
	}
	for _, k := range Kinds() {
		d, _ := b.Driver(k)
		if got, err := d.List(t.Context(), testRegion); err == nil {
			t.Errorf("%s: List = %v, nil", k, got)
		}
	}
}

func TestErrorCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want providers.Code
	}{
		{&googleapi.Error{Code: 404}, providers.NotFound},
		{&googleapi.Error{Code: 409}, providers.AlreadyExists},
		{&googleapi.Error{Code: 403}, providers.PermissionDenied},
		{&googleapi.Error{Code: 429}, providers.Throttled},
		{&googleapi.Error{Code: 412}, providers.Conflict},
		{status.Error(codes.NotFound, "x"), providers.NotFound},
		{status.Error(codes.AlreadyExists, "x"), providers.AlreadyExists},
		{status.Error(codes.ResourceExhausted, "x"), providers.Throttled},
		{status.Error(codes.FailedPrecondition, "x"), providers.Conflict},
		{status.Error(codes.Unavailable, "x"), providers.Unknown},
		{errors.New("plain"), providers.Unknown},
		{providers.Errorf(providers.Conflict, "x"), providers.Conflict},
	} {
		if got := errorCode(c.err); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}

// TestMissingCredentialsSaysWhere: a key file that is not there is named
// as missing credentials, for sweep's "not swept" line; a key is enough.
func TestMissingCredentialsSaysWhere(t *testing.T) {
	e := newEnv(t)
	b, err := New(Options{Project: testProject})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", t.TempDir()+"/absent.json")
	if got := b.MissingCredentials(); !strings.Contains(got, "no GCP credentials were found (GOOGLE_APPLICATION_CREDENTIALS") {
		t.Errorf("MissingCredentials = %q", got)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", e.rest.ServiceAccountKey(t, testProject, "sweeper@"+testProject+".iam.gserviceaccount.com"))
	if got := b.MissingCredentials(); got != "" {
		t.Errorf("with a key: %q", got)
	}
}

// TestKeysFromASecret: a service-account key's JSON, as the executor's
// secret holds it, reaches the REST APIs; a refresh token is refused, and
// no error quotes the JSON.
func TestKeysFromASecret(t *testing.T) {
	e := newEnv(t)
	key, err := os.ReadFile(e.rest.ServiceAccountKey(t, testProject, "executor@"+testProject+".iam.gserviceaccount.com"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewWithKeys(Keys{CredentialsJSON: spec.NewSensitive(string(key))}, Options{APIURL: e.rest.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Account(t.Context()); err != nil || got != testProject {
		t.Fatalf("Account = %q, %v (the key's project_id is the project)", got, err)
	}
	const canary = "CANARY-refresh-91a2"
	for _, bad := range []string{`{"type": "authorized_user", "refresh_token": "` + canary + `"}`, `{"type": "service_account", ` + canary} {
		_, err := NewWithKeys(Keys{CredentialsJSON: spec.NewSensitive(bad), Project: testProject}, Options{})
		if err == nil || strings.Contains(err.Error(), canary) {
			t.Errorf("%s: %v", bad[:20], err)
		}
	}
}

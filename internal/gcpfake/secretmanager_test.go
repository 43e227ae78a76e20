package gcpfake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"strings"
	"testing"

	secretmanager "cloud.google.com/go/secretmanager/apiv1"
	"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// smClient is the real GAPIC REST client, authenticated with a key the
// fake issued (the two-legged OAuth flow runs against /token).
func smClient(t *testing.T, srv *Server, project string) *secretmanager.Client {
	t.Helper()
	key := srv.ServiceAccountKey(t, project, "deployer@"+project+".iam.gserviceaccount.com")
	c, err := secretmanager.NewRESTClient(context.Background(),
		option.WithEndpoint(srv.URL()), option.WithAuthCredentialsFile(option.ServiceAccount, key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func automatic() *secretmanagerpb.Replication {
	return &secretmanagerpb.Replication{Replication: &secretmanagerpb.Replication_Automatic_{Automatic: &secretmanagerpb.Replication_Automatic{}}}
}

func userManaged(locs ...string) *secretmanagerpb.Replication {
	um := &secretmanagerpb.Replication_UserManaged{}
	for _, l := range locs {
		um.Replicas = append(um.Replicas, &secretmanagerpb.Replication_UserManaged_Replica{Location: l})
	}
	return &secretmanagerpb.Replication{Replication: &secretmanagerpb.Replication_UserManaged_{UserManaged: um}}
}

// createSecrets makes five secrets: s0, s2, s4 of team a, s1, s3 of team
// b; s4 replicated by hand, s3 typed OTHER (protobuf number 50).
func createSecrets(t *testing.T, c *secretmanager.Client, project string) {
	t.Helper()
	for i := range 5 {
		team := map[bool]string{true: "a", false: "b"}[i%2 == 0]
		sec := &secretmanagerpb.Secret{Replication: automatic(), Labels: map[string]string{"team": team, "env": "dev"}}
		if i == 4 {
			sec.Replication = userManaged("europe-west1", "us-east1")
		}
		if i == 3 {
			sec.SecretType = secretmanagerpb.Secret_OTHER
		}
		got, err := c.CreateSecret(context.Background(), &secretmanagerpb.CreateSecretRequest{
			Parent: "projects/" + project, SecretId: fmt.Sprintf("s%d", i), Secret: sec})
		if err != nil {
			t.Fatalf("create s%d: %v", i, err)
		}
		if got.GetSecretType() != sec.GetSecretType() || got.GetEtag() == "" || got.GetCreateTime() == nil {
			t.Fatalf("created %v", got)
		}
	}
}

func TestSecretManagerLifecycle(t *testing.T) {
	srv := New(t, Options{Projects: []string{"proj-a"}})
	c := smClient(t, srv, "proj-a")
	ctx := context.Background()
	createSecrets(t, c, "proj-a")
	num := srv.ProjectNumber("proj-a")

	got, err := c.GetSecret(ctx, &secretmanagerpb.GetSecretRequest{Name: "projects/" + num + "/secrets/s3"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "projects/"+num+"/secrets/s3" || got.SecretType != secretmanagerpb.Secret_OTHER {
		t.Fatalf("get by number: %v", got)
	}
	if names := listNames(t, c, "labels.team=a", 2); strings.Join(names, ",") != "s4,s2,s0" {
		t.Fatalf("team a, newest first: %v", names)
	}
	if names := listNames(t, c, `labels.env:* AND labels.team="b"`, 2); strings.Join(names, ",") != "s3,s1" {
		t.Fatalf("env set and team b: %v", names)
	}
	var pages []string
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v1/projects/proj-a/secrets" && r.Query.Get("filter") == "labels.team=a" {
			pages = append(pages, r.Query.Get("pageSize")+"/"+fmt.Sprint(r.Query.Has("pageToken")))
		}
	}
	if strings.Join(pages, " ") != "2/false 2/true" {
		t.Fatalf("team a pages (pageSize/with token): %v", pages)
	}
	patchAndVersions(t, srv, c, got)
}

// listNames lists secret ids under a filter, page by page.
func listNames(t *testing.T, c *secretmanager.Client, filter string, pageSize int32) []string {
	t.Helper()
	it := c.ListSecrets(context.Background(), &secretmanagerpb.ListSecretsRequest{Parent: "projects/proj-a", Filter: filter, PageSize: pageSize})
	var names []string
	for {
		s, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return names
		}
		if err != nil {
			t.Fatalf("list %q: %v", filter, err)
		}
		names = append(names, s.Name[strings.LastIndex(s.Name, "/")+1:])
	}
}

func patchAndVersions(t *testing.T, srv *Server, c *secretmanager.Client, s3 *secretmanagerpb.Secret) {
	ctx := context.Background()
	upd, err := c.UpdateSecret(ctx, &secretmanagerpb.UpdateSecretRequest{
		Secret:     &secretmanagerpb.Secret{Name: s3.Name, Labels: map[string]string{"team": "c"}, Annotations: map[string]string{"owner": "infra"}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"labels", "annotations"}}})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Labels["team"] != "c" || upd.Labels["env"] != "" || upd.Annotations["owner"] != "infra" || upd.Etag == s3.Etag {
		t.Fatalf("patched %v (was %v)", upd, s3)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if last.Method != http.MethodPatch || last.Query.Get("updateMask") != "labels,annotations" {
		t.Fatalf("patch went out as %s %s?%v", last.Method, last.Path, last.Query)
	}
	name := "projects/proj-a/secrets/s3"
	for _, data := range []string{"one", "two"} {
		crc := int64(crc32.Checksum([]byte(data), crc32.MakeTable(crc32.Castagnoli)))
		v, err := c.AddSecretVersion(ctx, &secretmanagerpb.AddSecretVersionRequest{Parent: name,
			Payload: &secretmanagerpb.SecretPayload{Data: []byte(data), DataCrc32C: &crc}})
		if err != nil {
			t.Fatal(err)
		}
		if v.State != secretmanagerpb.SecretVersion_ENABLED || !v.ClientSpecifiedPayloadChecksum {
			t.Fatalf("added %v", v)
		}
	}
	acc, err := c.AccessSecretVersion(ctx, &secretmanagerpb.AccessSecretVersionRequest{Name: name + "/versions/latest"})
	if err != nil {
		t.Fatal(err)
	}
	if string(acc.Payload.Data) != "two" || !strings.HasSuffix(acc.Name, "/secrets/s3/versions/2") || acc.Payload.GetDataCrc32C() == 0 {
		t.Fatalf("accessed latest: %v", acc)
	}
	versionStates(t, c, name)
	if err := c.DeleteSecret(ctx, &secretmanagerpb.DeleteSecretRequest{Name: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSecret(ctx, &secretmanagerpb.GetSecretRequest{Name: name}); status.Code(err) != codes.NotFound {
		t.Fatalf("get after delete: %v", err)
	}
}

// versionStates disables version 2 (latest then refuses access: FAILED_
// PRECONDITION), destroys version 1, and lists the versions newest first.
func versionStates(t *testing.T, c *secretmanager.Client, name string) {
	ctx := context.Background()
	v2, err := c.DisableSecretVersion(ctx, &secretmanagerpb.DisableSecretVersionRequest{Name: name + "/versions/2"})
	if err != nil || v2.State != secretmanagerpb.SecretVersion_DISABLED {
		t.Fatalf("disable: %v %v", v2, err)
	}
	_, err = c.AccessSecretVersion(ctx, &secretmanagerpb.AccessSecretVersionRequest{Name: name + "/versions/latest"})
	wantAPIError(t, err, http.StatusBadRequest, "FAILED_PRECONDITION", codes.InvalidArgument)
	v1, err := c.DestroySecretVersion(ctx, &secretmanagerpb.DestroySecretVersionRequest{Name: name + "/versions/1"})
	if err != nil || v1.State != secretmanagerpb.SecretVersion_DESTROYED || v1.DestroyTime == nil {
		t.Fatalf("destroy: %v %v", v1, err)
	}
	it := c.ListSecretVersions(ctx, &secretmanagerpb.ListSecretVersionsRequest{Parent: name})
	var states []string
	for v, err := it.Next(); !errors.Is(err, iterator.Done); v, err = it.Next() {
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, v.Name[strings.LastIndex(v.Name, "/")+1:]+"="+v.State.String())
	}
	if strings.Join(states, " ") != "2=DISABLED 1=DESTROYED" {
		t.Fatalf("versions: %v", states)
	}
}

// wantAPIError checks an error as the REST client hands it over: an
// *apierror.APIError over a *googleapi.Error. Its gRPC code comes from the
// HTTP status alone (gax's apierror maps 400 to InvalidArgument and 409
// to Aborted), so FAILED_PRECONDITION and ALREADY_EXISTS are told apart
// only by the body's status.
func wantAPIError(t *testing.T, err error, httpCode int, statusName string, code codes.Code) *apierror.APIError {
	t.Helper()
	var ae *apierror.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want an apierror, got %T %v", err, err)
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("want a googleapi.Error inside, got %v", err)
	}
	if ae.HTTPCode() != httpCode || ge.Code != httpCode || status.Code(err) != code || ae.GRPCStatus().Code() != code {
		t.Fatalf("HTTP %d gRPC %v, want HTTP %d gRPC %v: %v", ae.HTTPCode(), status.Code(err), httpCode, code, err)
	}
	if !strings.Contains(ge.Body, `"status": "`+statusName+`"`) || ge.Message == "" {
		t.Fatalf("body %s, want status %s and a message", ge.Body, statusName)
	}
	return ae
}

func TestSecretManagerErrors(t *testing.T) {
	srv := New(t, Options{Projects: []string{"proj-a"}})
	c := smClient(t, srv, "proj-a")
	ctx := context.Background()
	_, err := c.GetSecret(ctx, &secretmanagerpb.GetSecretRequest{Name: "projects/proj-a/secrets/nope"})
	wantAPIError(t, err, http.StatusNotFound, "NOT_FOUND", codes.NotFound)

	req := &secretmanagerpb.CreateSecretRequest{Parent: "projects/proj-a", SecretId: "dup", Secret: &secretmanagerpb.Secret{Replication: automatic()}}
	if _, err := c.CreateSecret(ctx, req); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateSecret(ctx, req)
	wantAPIError(t, err, http.StatusConflict, "ALREADY_EXISTS", codes.Aborted)

	_, err = c.GetSecret(ctx, &secretmanagerpb.GetSecretRequest{Name: "projects/proj-b/secrets/dup"})
	if ae := wantAPIError(t, err, http.StatusForbidden, "PERMISSION_DENIED", codes.PermissionDenied); ae.Reason() != "IAM_PERMISSION_DENIED" {
		t.Fatalf("reason %q: the ErrorInfo detail did not parse", ae.Reason())
	}
	it := c.ListSecrets(ctx, &secretmanagerpb.ListSecretsRequest{Parent: "projects/proj-a", Filter: "labels.team:a OR labels.team:b"})
	_, err = it.Next()
	wantAPIError(t, err, http.StatusBadRequest, "INVALID_ARGUMENT", codes.InvalidArgument)

	_, err = c.UpdateSecret(ctx, &secretmanagerpb.UpdateSecretRequest{Secret: &secretmanagerpb.Secret{Name: "projects/proj-a/secrets/dup"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"no_such_field"}}})
	wantAPIError(t, err, http.StatusBadRequest, "INVALID_ARGUMENT", codes.InvalidArgument)

	err = c.DeleteSecret(ctx, &secretmanagerpb.DeleteSecretRequest{Name: "projects/proj-a/secrets/dup", Etag: `"stale"`})
	wantAPIError(t, err, http.StatusBadRequest, "FAILED_PRECONDITION", codes.InvalidArgument)
}

// TestSecretManagerWithoutToken: a client without credentials is refused
// 401 UNAUTHENTICATED, as GCP refuses it.
func TestSecretManagerWithoutToken(t *testing.T) {
	srv := New(t, Options{})
	c, err := secretmanager.NewRESTClient(context.Background(), option.WithEndpoint(srv.URL()), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.GetSecret(context.Background(), &secretmanagerpb.GetSecretRequest{Name: "projects/p/secrets/s"})
	wantAPIError(t, err, http.StatusUnauthorized, "UNAUTHENTICATED", codes.Unauthenticated)
}

// TestClientWireFormat pins what the GAPIC REST client sends, as the
// checks rely on it: $alt=json;enum-encoding=int on every call, enums as
// protobuf numbers, the whole request message (path fields included) as
// the body of a body:"*" method, a lowerCamel update mask, and a token
// the fake issued.
func TestClientWireFormat(t *testing.T) {
	srv := New(t, Options{})
	c := smClient(t, srv, "p")
	ctx := context.Background()
	_, err := c.CreateSecret(ctx, &secretmanagerpb.CreateSecretRequest{Parent: "projects/p", SecretId: "s",
		Secret: &secretmanagerpb.Secret{Replication: automatic(), SecretType: secretmanagerpb.Secret_OTHER}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddSecretVersion(ctx, &secretmanagerpb.AddSecretVersionRequest{Parent: "projects/p/secrets/s",
		Payload: &secretmanagerpb.SecretPayload{Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateSecret(ctx, &secretmanagerpb.UpdateSecretRequest{Secret: &secretmanagerpb.Secret{Name: "projects/p/secrets/s"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"version_aliases"}}}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	want := []string{
		`POST /v1/projects/p/secrets $alt=json;enum-encoding=int&secretId=s {"replication":{"automatic":{}},"secretType":50}`,
		`POST /v1/projects/p/secrets/s:addVersion $alt=json;enum-encoding=int {"parent":"projects/p/secrets/s","payload":{"data":"eA=="}}`,
		`PATCH /v1/projects/p/secrets/s $alt=json;enum-encoding=int&updateMask=versionAliases {"name":"projects/p/secrets/s"}`,
	}
	for i, w := range want {
		q, _ := url.QueryUnescape(reqs[i].Query.Encode())
		var body bytes.Buffer // protojson spaces its output at random, on purpose
		if err := json.Compact(&body, []byte(reqs[i].Body)); err != nil {
			t.Fatal(err)
		}
		if got := reqs[i].Method + " " + reqs[i].Path + " " + q + " " + body.String(); got != w {
			t.Errorf("request %d:\n got %s\nwant %s", i, got, w)
		}
		tok, _ := strings.CutPrefix(reqs[i].Header.Get("Authorization"), "Bearer ")
		srv.mu.Lock()
		issued := srv.tokens[tok]
		srv.mu.Unlock()
		if issued != "deployer@p.iam.gserviceaccount.com" {
			t.Errorf("request %d carried %q, not a token the fake issued", i, tok)
		}
	}
}

// TestMismatchThroughClient: an answer that breaks the schema reaches the
// real client as HTTP 500 naming the method, and is recorded.
func TestMismatchThroughClient(t *testing.T) {
	srv := New(t, Options{mutate: func(id string, m map[string]any) {
		if id == "secretmanager.projects.secrets.get" {
			m["labels"] = map[string]any{"team": 7}
		}
	}})
	c := smClient(t, srv, "p")
	ctx := context.Background()
	if _, err := c.CreateSecret(ctx, &secretmanagerpb.CreateSecretRequest{Parent: "projects/p", SecretId: "s",
		Secret: &secretmanagerpb.Secret{Replication: automatic()}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.GetSecret(ctx, &secretmanagerpb.GetSecretRequest{Name: "projects/p/secrets/s"})
	ae := wantAPIError(t, err, http.StatusInternalServerError, "INTERNAL", codes.Internal)
	if !strings.Contains(ae.Error(), "secretmanager.projects.secrets.get GET /v1/projects/p/secrets/s") {
		t.Fatalf("error %v does not name the method and path", ae)
	}
	if v := srv.TakeViolations(); len(v) != 1 || !strings.Contains(v[0], "Secret.labels.team: want string, got number") {
		t.Fatalf("violations %q", v)
	}
}

package gcpfake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	cloudresourcemanager "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
)

// iamClients are the discovery-generated IAM and Resource Manager
// clients, authenticated with a key the fake issued.
func iamClients(t *testing.T, srv *Server, project string) (*iam.Service, *cloudresourcemanager.Service) {
	t.Helper()
	key := srv.ServiceAccountKey(t, project, "deployer@"+project+".iam.gserviceaccount.com")
	opts := []option.ClientOption{option.WithEndpoint(srv.URL() + "/"), option.WithAuthCredentialsFile(option.ServiceAccount, key)}
	ic, err := iam.NewService(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cloudresourcemanager.NewService(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ic, cc
}

func wantHTTP(t *testing.T, err error, code int, want string) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != code || !strings.Contains(ge.Message, want) {
		t.Fatalf("got %v, want HTTP %d with %q", err, code, want)
	}
}

func TestServiceAccountLifecycle(t *testing.T) {
	srv := New(t, Options{Projects: []string{"proj-a"}})
	ic, _ := iamClients(t, srv, "proj-a")
	sas := ic.Projects.ServiceAccounts
	sa, err := sas.Create("projects/proj-a", &iam.CreateServiceAccountRequest{AccountId: "deployer-1",
		ServiceAccount: &iam.ServiceAccount{Description: "managed-by-infra=shop", DisplayName: "Deployer", Email: "ignored@x"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	email := "deployer-1@proj-a.iam.gserviceaccount.com"
	if sa.Name != "projects/proj-a/serviceAccounts/"+email || sa.Email != email || sa.ProjectId != "proj-a" || len(sa.UniqueId) != 21 ||
		sa.Oauth2ClientId != sa.UniqueId || sa.Etag == "" || sa.Description != "managed-by-infra=shop" || sa.DisplayName != "Deployer" {
		t.Fatalf("created %+v", sa)
	}
	byID, err := sas.Get("projects/proj-a/serviceAccounts/" + sa.UniqueId).Do()
	if err != nil || byID.Email != email {
		t.Fatalf("get by unique id: %+v %v", byID, err)
	}
	patched, err := sas.Patch(sa.Name, &iam.PatchServiceAccountRequest{ServiceAccount: &iam.ServiceAccount{Description: "team=web"},
		UpdateMask: "description"}).Do()
	if err != nil || patched.Description != "team=web" || patched.DisplayName != "" || patched.Etag == sa.Etag {
		t.Fatalf("patched %+v %v", patched, err)
	}
	got, err := sas.Get(sa.Name).Do()
	if err != nil || got.Description != "team=web" || got.DisplayName != "Deployer" {
		t.Fatalf("after patch %+v %v", got, err)
	}
	for i := range 4 {
		if _, err := sas.Create("projects/proj-a", &iam.CreateServiceAccountRequest{AccountId: fmt.Sprintf("other-%d", i)}).Do(); err != nil {
			t.Fatal(err)
		}
	}
	var emails []string
	if err := sas.List("projects/proj-a").PageSize(2).Pages(context.Background(), func(r *iam.ListServiceAccountsResponse) error {
		if len(r.Accounts) > 2 {
			t.Errorf("a page of %d", len(r.Accounts))
		}
		for _, a := range r.Accounts {
			emails = append(emails, strings.TrimSuffix(a.Email, "@proj-a.iam.gserviceaccount.com"))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(emails) != "[deployer-1 other-0 other-1 other-2 other-3]" {
		t.Fatalf("listed %v", emails)
	}
	if _, err := sas.Delete(sa.Name).Do(); err != nil {
		t.Fatal(err)
	}
	_, err = sas.Get(sa.Name).Do()
	wantHTTP(t, err, http.StatusNotFound, "Unknown service account")
}

func TestServiceAccountErrors(t *testing.T) {
	srv := New(t, Options{})
	ic, _ := iamClients(t, srv, "p")
	sas := ic.Projects.ServiceAccounts
	if _, err := sas.Create("projects/p", &iam.CreateServiceAccountRequest{AccountId: "taken-1"}).Do(); err != nil {
		t.Fatal(err)
	}
	_, err := sas.Create("projects/p", &iam.CreateServiceAccountRequest{AccountId: "taken-1"}).Do()
	wantHTTP(t, err, http.StatusConflict, "already exists")
	for _, id := range []string{"short", "Upper-case", "ends-with-", strings.Repeat("a", 31), "1digit"} {
		_, err := sas.Create("projects/p", &iam.CreateServiceAccountRequest{AccountId: id}).Do()
		wantHTTP(t, err, http.StatusBadRequest, "Invalid account id")
	}
	_, err = sas.Create("projects/p", &iam.CreateServiceAccountRequest{AccountId: "long-desc",
		ServiceAccount: &iam.ServiceAccount{Description: strings.Repeat("x", 257)}}).Do()
	wantHTTP(t, err, http.StatusBadRequest, "at most 256")
	_, err = sas.Patch("projects/p/serviceAccounts/taken-1@p.iam.gserviceaccount.com", &iam.PatchServiceAccountRequest{
		ServiceAccount: &iam.ServiceAccount{Email: "x@y"}, UpdateMask: "email"}).Do()
	wantHTTP(t, err, http.StatusBadRequest, "only displayName and description")
	_, err = sas.Patch("projects/p/serviceAccounts/taken-1@p.iam.gserviceaccount.com", &iam.PatchServiceAccountRequest{
		ServiceAccount: &iam.ServiceAccount{Description: "x"}}).Do()
	wantHTTP(t, err, http.StatusBadRequest, "update_mask is required")
	// A body the document does not allow: the account id is
	// CreateServiceAccountRequest.accountId, not account_id.
	code, body := do(t, srv, "POST", "/v1/projects/p/serviceAccounts", `{"account_id":"x-y-z-1"}`)
	wantViolation(t, srv, code, body, "iam.projects.serviceAccounts.create", `unknown property "account_id"`)
}

func bindingsOf(p *cloudresourcemanager.Policy) string {
	var out []string
	for _, b := range p.Bindings {
		out = append(out, b.Role+"="+strings.Join(b.Members, ","))
	}
	return strings.Join(out, " ")
}

// TestProjectPolicy: the policy's etag guards a write, bindings are
// normalised, a service account must exist to be granted, and deleting
// an account leaves its bindings as deleted members.
func TestProjectPolicy(t *testing.T) {
	srv := New(t, Options{Projects: []string{"p"}})
	ic, cc := iamClients(t, srv, "p")
	get := func() *cloudresourcemanager.Policy {
		t.Helper()
		p, err := cc.Projects.GetIamPolicy("projects/p", &cloudresourcemanager.GetIamPolicyRequest{
			Options: &cloudresourcemanager.GetPolicyOptions{RequestedPolicyVersion: 3}}).Do()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := get()
	if p.Version != 1 || p.Etag == "" || !strings.Contains(bindingsOf(p), "roles/owner=user:owner@example.com") {
		t.Fatalf("a new project's policy: %+v %s", p, bindingsOf(p))
	}
	sa, err := ic.Projects.ServiceAccounts.Create("projects/p", &iam.CreateServiceAccountRequest{AccountId: "runner"}).Do()
	if err != nil {
		t.Fatal(err)
	}
	member := "serviceAccount:" + sa.Email
	stale := p.Etag
	p.Bindings = append(p.Bindings, &cloudresourcemanager.Binding{Role: "roles/viewer", Members: []string{member, "user:b@example.com", member}},
		&cloudresourcemanager.Binding{Role: "roles/viewer", Members: []string{"user:a@example.com"}},
		&cloudresourcemanager.Binding{Role: "roles/browser"})
	set, err := cc.Projects.SetIamPolicy("projects/p", &cloudresourcemanager.SetIamPolicyRequest{Policy: p}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if set.Etag == stale || !strings.HasSuffix(bindingsOf(set), "roles/viewer="+member+",user:a@example.com,user:b@example.com") || strings.Contains(bindingsOf(set), "browser") {
		t.Fatalf("set: %s", bindingsOf(set))
	}
	p.Etag = stale
	_, err = cc.Projects.SetIamPolicy("projects/p", &cloudresourcemanager.SetIamPolicyRequest{Policy: p}).Do()
	wantHTTP(t, err, http.StatusConflict, "concurrent policy changes")
	for _, m := range []string{"serviceAccount:ghost@p.iam.gserviceaccount.com", "allUsers", "nobody"} {
		q := get()
		q.Bindings = append(q.Bindings, &cloudresourcemanager.Binding{Role: "roles/viewer", Members: []string{m}})
		_, err := cc.Projects.SetIamPolicy("projects/p", &cloudresourcemanager.SetIamPolicyRequest{Policy: q}).Do()
		wantHTTP(t, err, http.StatusBadRequest, "")
	}
	q := get()
	q.Bindings = append(q.Bindings, &cloudresourcemanager.Binding{Role: "roles/editor", Members: []string{member},
		Condition: &cloudresourcemanager.Expr{Expression: "request.time < timestamp('2030-01-01T00:00:00Z')"}})
	_, err = cc.Projects.SetIamPolicy("projects/p", &cloudresourcemanager.SetIamPolicyRequest{Policy: q}).Do()
	wantHTTP(t, err, http.StatusBadRequest, "version 3")
	q.Version = 3
	if _, err := cc.Projects.SetIamPolicy("projects/p", &cloudresourcemanager.SetIamPolicyRequest{Policy: q}).Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := ic.Projects.ServiceAccounts.Delete(sa.Name).Do(); err != nil {
		t.Fatal(err)
	}
	after := get()
	deleted := "deleted:" + member + "?uid=" + sa.UniqueId
	kept := slices.ContainsFunc(after.Bindings, func(b *cloudresourcemanager.Binding) bool { return slices.Contains(b.Members, member) })
	if after.Version != 3 || kept || strings.Count(bindingsOf(after), deleted) != 2 {
		t.Fatalf("after the delete: version %d, %s", after.Version, bindingsOf(after))
	}
	if !slices.ContainsFunc(after.Bindings, func(b *cloudresourcemanager.Binding) bool { return b.Condition != nil }) {
		t.Fatal("the conditional binding was lost")
	}
	_, err = cc.Projects.GetIamPolicy("projects/p", &cloudresourcemanager.GetIamPolicyRequest{}).Do()
	wantHTTP(t, err, http.StatusNotImplemented, "conditions at version 0")
	srv.Reset()
	if fresh := get(); strings.Contains(bindingsOf(fresh), "viewer") {
		t.Fatalf("Reset kept the policy: %s", bindingsOf(fresh))
	}
}

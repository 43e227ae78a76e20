package gcp

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	crm "google.golang.org/api/cloudresourcemanager/v3"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

func iamDriver(t *testing.T, b *Backend) *serviceAccounts {
	t.Helper()
	d, ok := b.Driver(spec.IAM)
	if !ok {
		t.Fatal("no iam driver")
	}
	return d.(*serviceAccounts)
}

func iamTarget(name string, roles ...string) providers.Target {
	policies := []any{}
	for _, r := range roles {
		policies = append(policies, r)
	}
	return providers.Target{Name: name, Region: testRegion, Owner: fleet,
		Fields: map[string]any{"policies": policies, spec.TagsField: map[string]any{"team": "web"}}}
}

// policyNow reads the project's policy through the driver's client.
func policyNow(t *testing.T, d *serviceAccounts) *crm.Policy {
	t.Helper()
	_, cc, project, err := d.clients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.policy(t.Context(), cc, project)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// grant binds member to role out of band, as another tool would.
func grant(t *testing.T, d *serviceAccounts, role, member string) {
	t.Helper()
	_, cc, project, err := d.clients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := policyNow(t, d)
	p.Bindings = append(p.Bindings, &crm.Binding{Role: role, Members: []string{member}})
	if _, err := cc.Projects.SetIamPolicy("projects/"+project, &crm.SetIamPolicyRequest{Policy: p}).Context(t.Context()).Do(); err != nil {
		t.Fatal(err)
	}
}

// othersOf is the policy without member's bindings, for comparing what
// belongs to others.
func othersOf(p *crm.Policy, member string) string {
	var out []string
	for _, b := range p.Bindings {
		for _, m := range b.Members {
			if m != member && !strings.HasPrefix(m, "deleted:"+member) {
				out = append(out, b.Role+"="+m)
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// TestIAMDeleteRemovesOnlyItsBindings: a delete leaves no binding for the
// account, not even the deleted:… one GCP would keep, and every other
// member's bindings as they were, in the roles they share too.
func TestIAMDeleteRemovesOnlyItsBindings(t *testing.T) {
	e := newEnv(t)
	d := iamDriver(t, e.backend)
	tg := iamTarget("deployer", "roles/storage.objectViewer", "roles/pubsub.subscriber")
	res, err := d.Create(t.Context(), tg)
	if err != nil {
		t.Fatal(err)
	}
	member := "serviceAccount:" + res.Attributes["id"]
	if fmt.Sprint(res.Fields["policies"]) != "[roles/pubsub.subscriber roles/storage.objectViewer]" || res.Attributes["id"] != "deployer@"+testProject+".iam.gserviceaccount.com" {
		t.Fatalf("created %+v", res)
	}
	grant(t, d, "roles/storage.objectViewer", "user:alice@example.com")
	grant(t, d, "roles/logging.viewer", "group:ops@example.com")
	before := othersOf(policyNow(t, d), member)
	if !strings.Contains(before, "roles/storage.objectViewer=user:alice@example.com") {
		t.Fatalf("the other member's grant is missing: %s", before)
	}
	if err := d.Delete(t.Context(), providers.Target{Name: tg.Name, Region: testRegion, Owner: fleet}); err != nil {
		t.Fatal(err)
	}
	after := policyNow(t, d)
	for _, b := range after.Bindings {
		for _, m := range b.Members {
			if strings.Contains(m, res.Attributes["id"]) {
				t.Errorf("%s still binds %s", b.Role, m)
			}
		}
	}
	if got := othersOf(after, member); got != before {
		t.Fatalf("other members' bindings changed:\nbefore %s\nafter  %s", before, got)
	}
	if _, err := d.Read(t.Context(), testRegion, tg.Name); providers.CodeOf(e.backend, err) != providers.NotFound {
		t.Fatalf("read after delete: %v", err)
	}
}

// TestIAMUpdateKeepsOthersAndConditions: setting the roles touches the
// account's unconditional bindings alone; a conditional one is reported,
// not changed.
func TestIAMUpdateKeepsOthersAndConditions(t *testing.T) {
	e := newEnv(t)
	d := iamDriver(t, e.backend)
	tg := iamTarget("builder", "roles/viewer")
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	member := "serviceAccount:builder@" + testProject + ".iam.gserviceaccount.com"
	grant(t, d, "roles/viewer", "user:bob@example.com")
	_, cc, project, _ := d.clients(t.Context())
	p := policyNow(t, d)
	p.Version = 3
	p.Bindings = append(p.Bindings, &crm.Binding{Role: "roles/editor", Members: []string{member},
		Condition: &crm.Expr{Title: "until 2030", Expression: "request.time < timestamp('2030-01-01T00:00:00Z')"}})
	if _, err := cc.Projects.SetIamPolicy("projects/"+project, &crm.SetIamPolicyRequest{Policy: p}).Context(t.Context()).Do(); err != nil {
		t.Fatal(err)
	}
	before := othersOf(policyNow(t, d), member)
	tg.Fields["policies"] = []any{"roles/storage.admin"}
	res, err := d.Update(t.Context(), tg, []string{providers.IAMPolicies})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Fields["policies"]) != "[roles/storage.admin]" || !slices.Contains(res.Unmodelled, "ConditionalRole=roles/editor") {
		t.Fatalf("updated %+v", res)
	}
	after := policyNow(t, d)
	if got := othersOf(after, member); got != before {
		t.Fatalf("others changed:\nbefore %s\nafter  %s", before, got)
	}
	if !slices.ContainsFunc(after.Bindings, func(b *crm.Binding) bool { return b.Condition != nil && slices.Contains(b.Members, member) }) {
		t.Fatal("the conditional binding was removed")
	}
}

// interfering sends every request with a bearer token and runs before
// ahead of each.
type interfering struct {
	before func(*http.Request)
}

func (rt interfering) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer test")
	rt.before(r)
	return http.DefaultTransport.RoundTrip(r)
}

// TestIAMPolicyRaceRetried: another writer changes the policy between
// the driver's read and its write; the write fails on the etag (409
// ABORTED), is made again from a fresh read, and both changes stand.
func TestIAMPolicyRaceRetried(t *testing.T) {
	e := newEnv(t)
	other := iamDriver(t, e.backend)
	var sets atomic.Int32
	b, err := New(Options{Project: testProject, APIURL: e.rest.URL(), RESTOptions: []option.ClientOption{
		option.WithHTTPClient(&http.Client{Transport: interfering{before: func(r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ":setIamPolicy") && sets.Add(1) == 1 {
				grant(t, other, "roles/viewer", "user:racer@example.com")
			}
		}}})}})
	if err != nil {
		t.Fatal(err)
	}
	d := iamDriver(t, b)
	res, err := d.Create(t.Context(), iamTarget("raced-1", "roles/viewer"))
	if err != nil {
		t.Fatal(err)
	}
	if sets.Load() != 2 || fmt.Sprint(res.Fields["policies"]) != "[roles/viewer]" {
		t.Fatalf("%d setIamPolicy calls, policies %v; want 2 and the role", sets.Load(), res.Fields["policies"])
	}
	if got := othersOf(policyNow(t, d), "serviceAccount:"+res.Attributes["id"]); !strings.Contains(got, "roles/viewer=user:racer@example.com") {
		t.Fatalf("the concurrent grant was overwritten: %s", got)
	}
}

// TestIAMCreateRolledBack: a grant the API refuses takes the new account
// back, so that nothing half-made stays.
func TestIAMCreateRolledBack(t *testing.T) {
	e := newEnv(t)
	d := iamDriver(t, e.backend)
	_, err := d.Create(t.Context(), iamTarget("half-made", "not-a-role"))
	if providers.CodeOf(e.backend, err) != providers.InvalidArgument || !strings.Contains(err.Error(), "gcp/iam/half-made: granting not-a-role (the service account was deleted again)") {
		t.Fatalf("create: %v (code %s)", err, providers.CodeOf(e.backend, err))
	}
	if _, err := d.Read(t.Context(), testRegion, "half-made"); providers.CodeOf(e.backend, err) != providers.NotFound {
		t.Fatalf("the account stayed: %v", err)
	}
}

// TestIAMDescriptionMark: tags that overflow the description are refused
// before anything is made; an account described in free text is listed
// unmarked, and releasing it changes nothing.
func TestIAMDescriptionMark(t *testing.T) {
	e := newEnv(t)
	d := iamDriver(t, e.backend)
	tg := iamTarget("too-many-tags")
	tg.Fields[spec.TagsField] = map[string]any{"a": strings.Repeat("x", 63), "b": strings.Repeat("x", 63), "c": strings.Repeat("x", 63), "d": strings.Repeat("x", 63)}
	_, err := d.Create(t.Context(), tg)
	if providers.CodeOf(e.backend, err) != providers.InvalidArgument || !strings.Contains(err.Error(), "> 256 characters") {
		t.Fatalf("create with overflowing tags: %v", err)
	}
	if _, err := d.Read(t.Context(), testRegion, tg.Name); providers.CodeOf(e.backend, err) != providers.NotFound {
		t.Fatalf("something was made: %v", err)
	}
	ic, _, project, _ := d.clients(t.Context())
	if _, err := ic.Projects.ServiceAccounts.Create("projects/"+project, &iam.CreateServiceAccountRequest{AccountId: "hand-made",
		ServiceAccount: &iam.ServiceAccount{Description: "Runs the nightly export"}}).Context(t.Context()).Do(); err != nil {
		t.Fatal(err)
	}
	rs, err := d.List(t.Context(), otherRegion)
	if err != nil || len(rs) != 1 || rs[0].Name != "hand-made" || rs[0].Owner != "" || rs[0].Fields[spec.TagsField] != nil || rs[0].Region != otherRegion {
		t.Fatalf("listed %+v %v", rs, err)
	}
	if err := d.Release(t.Context(), testRegion, "hand-made", fleet); err != nil {
		t.Fatal(err)
	}
	sa, err := ic.Projects.ServiceAccounts.Get(accountName(project, "hand-made")).Context(t.Context()).Do()
	if err != nil || sa.Description != "Runs the nightly export" {
		t.Fatalf("after release: %+v %v", sa, err)
	}
}

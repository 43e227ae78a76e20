package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

const (
	token   = "ghs_TESTTOKEN0123456789"
	account = "123456789012"
)

// harness runs the action in-process against the fake GitHub and a
// memory cloud, as the workflow would: inputs in INPUT_* variables, the
// event in a file, outputs and the summary in files.
type harness struct {
	t     *testing.T
	gh    *fakeGitHub
	cloud *memory.Cloud
	dir   string
	fleet string
	state string
	// vars is the environment of fleet secrets (fromEnv).
	vars map[string]string
	// inv, when set, is the executor (executor mode).
	inv invoker
	// workspace, when set, is GITHUB_WORKSPACE.
	workspace string
	// runs counts the runs, so each has its own GITHUB_RUN_ID as on GitHub.
	runs int
	// backends, when set, replace the memory cloud (moto, for instance).
	backends operations.BackendsFunc
	// checkout, when set, is the commit lookup of the working directory;
	// nil reads the head GitHub has for the event's pull request, which is
	// what the workflow's checkout of refs/pull/N/head finds.
	checkout func(ctx context.Context) (string, error)
	// synth, when set, synthesizes a fleet program directory.
	synth operations.SynthFunc
}

func newHarness(t *testing.T) *harness {
	dir := t.TempDir()
	return &harness{t: t, gh: newFakeGitHub(t, token),
		cloud: memory.NewCloud(map[spec.Provider]string{spec.AWS: account}),
		dir:   dir, fleet: filepath.Join(dir, "fleet.json"), state: filepath.Join(dir, "state"), vars: map[string]string{}}
}

// writeFleet writes the fleet document with these resources.
func (h *harness) writeFleet(resources ...string) {
	h.t.Helper()
	doc := `{
  "apiVersion": "infra/v1",
  "fleet": "shop",
  "accounts": {"aws": "` + account + `"},
  "placement": {"aws": "eu-west-3"},
  "resources": [
    ` + strings.Join(resources, ",\n    ") + `
  ]
}
`
	if err := os.WriteFile(h.fleet, []byte(doc), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) factory(out, errOut io.Writer) *cli.Factory {
	f := cli.DefaultFactory()
	f.IO = cli.Test(strings.NewReader(""), out, errOut)
	f.Getenv = func(k string) string { return h.vars[k] }
	f.Backends = func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		out := map[spec.Provider]providers.Backend{}
		for _, p := range ps {
			out[p] = h.cloud.Backend(p)
		}
		return out, map[spec.Provider]string{}, nil
	}
	return f
}

// clouds are the factory's memory cloud, for the action's own operations.
func (h *harness) clouds() clouds {
	f := h.factory(io.Discard, io.Discard)
	c := clouds{Backends: f.Backends, Store: f.Store, Synth: f.Synth, Getenv: f.Getenv}
	if h.backends != nil {
		c.Backends = h.backends
	}
	if h.synth != nil {
		c.Synth = h.synth
	}
	return c
}

// result is what one run of the action left.
type result struct {
	code    int
	log     string
	outputs map[string]string
	summary string
}

// run runs the action for an event with inputs over the defaults.
func (h *harness) run(event string, payload map[string]any, in map[string]string) result {
	h.t.Helper()
	dir := h.t.TempDir()
	eventPath := filepath.Join(dir, "event.json")
	b, _ := json.Marshal(payload)
	if err := os.WriteFile(eventPath, b, 0o644); err != nil {
		h.t.Fatal(err)
	}
	vars := map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   event,
		"GITHUB_EVENT_PATH":   eventPath,
		"GITHUB_API_URL":      h.gh.URL(),
		"GITHUB_SERVER_URL":   "https://github.example",
		"GITHUB_REPOSITORY":   "acme/shop",
		"GITHUB_RUN_ID":       fmt.Sprint(42 + h.runs),
		"GITHUB_RUN_ATTEMPT":  "1",
		"GITHUB_SHA":          "f00dfeed",
		"GITHUB_OUTPUT":       filepath.Join(dir, "output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"INPUT_FLEET":         h.fleet,
		"INPUT_STATE":         h.state,
		"INPUT_GITHUB-TOKEN":  token,
		"INPUT_COMMENT":       "true",
	}
	if h.inv != nil {
		vars["INPUT_EXECUTOR"] = "function"
	}
	if h.workspace != "" {
		vars["GITHUB_WORKSPACE"] = h.workspace
	}
	for k, v := range in {
		vars["INPUT_"+strings.ToUpper(k)] = v
	}
	h.runs++
	checkout := h.checkout
	if checkout == nil {
		issue, _ := payload["issue"].(map[string]any)
		n, _ := issue["number"].(int)
		checkout = func(context.Context) (string, error) { return h.gh.head(n), nil }
	}
	var stdout bytes.Buffer
	code := run(context.Background(), env{
		getenv:   func(k string) string { return vars[k] },
		stdout:   &stdout,
		http:     http.DefaultClient,
		clouds:   h.clouds(),
		invoker:  func(context.Context) (invoker, error) { return h.inv, nil },
		checkout: checkout,
	})
	outputs, _ := os.ReadFile(vars["GITHUB_OUTPUT"])
	summary, _ := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	return result{code: code, log: stdout.String(), outputs: parseOutputs(string(outputs)), summary: string(summary)}
}

// parseOutputs reads GITHUB_OUTPUT's heredoc form: name<<DELIM, the
// value's lines, DELIM.
func parseOutputs(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok || delim == "" {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if lines[j] == delim {
				out[name] = strings.Join(lines[i+1:j], "\n")
				i = j
				break
			}
		}
	}
	return out
}

func prEvent(number int, head string) map[string]any {
	return map[string]any{"number": number, "pull_request": map[string]any{"number": number, "head": map[string]any{"sha": head}},
		"repository": map[string]any{"full_name": "acme/shop", "default_branch": "main"}}
}

func pushEvent(sha string) map[string]any {
	return map[string]any{"ref": "refs/heads/main", "after": sha,
		"repository": map[string]any{"full_name": "acme/shop", "default_branch": "main"}}
}

func planInputs() map[string]string { return map[string]string{"command": "plan"} }

const (
	queue  = `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30}}`
	bucket = `{"address": "aws/object-store/assets", "spec": {"versioning": true, "tags": {"team": "web"}}}`
	sg     = `{"address": "aws/security-group/web", "spec": {"description": "web", "ingress": [{"port": 443, "cidr": "0.0.0.0/0"}]}}`
)

const (
	listComments7 = "GET /repos/acme/shop/issues/7/comments?per_page=100"
	createOn7     = "POST /repos/acme/shop/issues/7/comments"
)

func TestPlanCreatesOneCommentThenEditsIt(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue, bucket)

	r := h.run("pull_request", prEvent(7, "1111111111111111111111111111111111111111"), planInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, listComments7, createOn7)
	bodies := h.gh.bodies(7)
	if len(bodies) != 1 || !strings.HasPrefix(bodies[0], render.PlanMarker("shop")+"\n") {
		t.Fatalf("comments on #7: %q", bodies)
	}
	id, head, ok := render.ReadMarkdownPlanID(bodies[0])
	if !ok || id != r.outputs["plan-id"] || head != "1111111111111111111111111111111111111111" {
		t.Fatalf("comment carries %q for %q, outputs %v", id, head, r.outputs)
	}
	want := map[string]string{"plan-id": id, "has-changes": "true", "has-destroys": "false",
		"summary": "Plan: 2 to create, 0 to update, 0 to replace, 0 to delete."}
	for k, v := range want {
		if r.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, r.outputs[k], v)
		}
	}
	if !strings.Contains(r.summary, "### infra plan for fleet `shop`") || !strings.Contains(r.summary, "aws/queues/jobs") {
		t.Errorf("job summary:\n%s", r.summary)
	}
	if !strings.Contains(r.log, "::add-mask::"+token) {
		t.Error("the token was not masked")
	}

	// A new push to the pull request: the same comment is edited.
	r = h.run("pull_request", prEvent(7, "2222222222222222222222222222222222222222"), planInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, listComments7, "PATCH /repos/acme/shop/issues/comments/1000")
	if bodies := h.gh.bodies(7); len(bodies) != 1 || !strings.Contains(bodies[0], "2222222222222222222222222222222222222222") {
		t.Fatalf("after the second plan, comments on #7: %q", bodies)
	}

	// A re-run that plans the same for the same commit writes nothing.
	h.run("pull_request", prEvent(7, "2222222222222222222222222222222222222222"), planInputs())
	h.gh.assertRequests(t, listComments7)
}

func TestPlanFindsItsCommentBeyondTheFirstPage(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	h.gh.addComments(8, 150)
	const list1, list2 = "GET /repos/acme/shop/issues/8/comments?per_page=100", "GET /repos/acme/shop/issues/8/comments?page=2&per_page=100"
	h.run("pull_request", prEvent(8, "aaaa"), planInputs())
	h.gh.assertRequests(t, list1, list2, "POST /repos/acme/shop/issues/8/comments")
	h.gh.addComments(8, 100)
	h.writeFleet(queue, bucket)
	h.run("pull_request", prEvent(8, "bbbb"), planInputs())
	h.gh.assertRequests(t, list1, list2, "PATCH /repos/acme/shop/issues/comments/1150")
	if n := len(h.gh.bodies(8)); n != 1 {
		t.Fatalf("%d plan comments on #8, want 1", n)
	}
}

func TestTwoFleetsGetTwoComments(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	other := filepath.Join(h.dir, "billing.json")
	doc := `{"apiVersion": "infra/v1", "fleet": "billing", "accounts": {"aws": "` + account + `"}, "placement": {"aws": "eu-west-3"},
	"resources": [{"address": "aws/queues/invoices", "spec": {}}]}`
	if err := os.WriteFile(other, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	in := map[string]string{"command": "plan", "fleet": h.fleet + "\n" + other}
	for i := 0; i < 2; i++ {
		if r := h.run("pull_request", prEvent(7, fmt.Sprint("c0ffee", i)), in); r.code != 0 {
			t.Fatalf("exit %d:\n%s", r.code, r.log)
		}
	}
	bodies := h.gh.bodies(7)
	if len(bodies) != 2 || !strings.HasPrefix(bodies[0], render.PlanMarker("shop")) || !strings.HasPrefix(bodies[1], render.PlanMarker("billing")) {
		t.Fatalf("comments: %q", bodies)
	}
	// The same fleet twice is refused: it would share one comment.
	r := h.run("pull_request", prEvent(7, "c0ffee9"), map[string]string{"command": "plan", "fleet": h.fleet + "\n" + h.fleet})
	if r.code != 1 || !strings.Contains(r.log, "are both named shop") {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
}

func TestDestroysComeFirstInTheComment(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue, bucket, sg)
	var out, errOut bytes.Buffer
	if code := cli.RunWith(h.factory(&out, &errOut), []string{"apply", "--yes", "--fleet", h.fleet, "--state", h.state}, nil); code != 0 {
		t.Fatalf("seed apply: %d %s", code, errOut.String())
	}
	// The bucket goes, the security group is replaced, a queue is added,
	// the other updated.
	h.writeFleet(`{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 120}}`,
		`{"address": "aws/queues/mail", "spec": {}}`,
		`{"address": "aws/security-group/web", "spec": {"description": "web tier", "ingress": [{"port": 443, "cidr": "0.0.0.0/0"}]}}`)
	r := h.run("pull_request", prEvent(7, "abc"), planInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	body := h.gh.bodies(7)[0]
	order := []string{"[!WARNING]", "aws/security-group/web", "aws/object-store/assets", "#### Resources", "<code>-/+ aws/security-group/web</code>",
		"aws/object-store/assets"}
	at := 0
	for _, s := range order {
		i := strings.Index(body[at:], s)
		if i < 0 {
			t.Fatalf("%q is not after position %d in:\n%s", s, at, body)
		}
		at += i + len(s)
	}
	// The rest follow, in the plan's dependency order.
	for _, s := range []string{"aws/queues/mail", "aws/queues/jobs"} {
		if !strings.Contains(body[at:], s) {
			t.Fatalf("%q is not after the destroys in:\n%s", s, body)
		}
	}
	if r.outputs["has-destroys"] != "true" {
		t.Errorf("has-destroys = %q", r.outputs["has-destroys"])
	}
}

func TestCommentStaysUnderTheCapWith2000Resources(t *testing.T) {
	h := newHarness(t)
	var rs []string
	for i := 0; i < 2000; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/load-%04d", "spec": {"visibilityTimeoutSec": %d, "tags": {"team": "load", "owner": "someone-with-a-long-name-%04d"}}}`, i, 30+i%60, i))
	}
	h.writeFleet(rs...)
	r := h.run("pull_request", prEvent(7, "abc"), planInputs())
	if r.code != 0 {
		t.Fatalf("exit %d:\n%.3000s", r.code, r.log)
	}
	reqs := h.gh.assertRequests(t, listComments7, createOn7)
	var posted struct{ Body string }
	if err := json.Unmarshal([]byte(reqs[1].Body), &posted); err != nil {
		t.Fatal(err)
	}
	t.Logf("plan comment for 2,000 resources: %d characters; job summary: %d", len([]rune(posted.Body)), len(r.summary))
	if n := len([]rune(posted.Body)); n >= 60000 {
		t.Fatalf("the comment is %d characters", n)
	}
	if !strings.Contains(posted.Body, "the [job summary](https://github.example/acme/shop/actions/runs/42) has the whole plan") {
		t.Errorf("no note pointing to the job summary in the cut comment")
	}
	if n := strings.Count(r.summary, "<details>"); n != 2000 {
		t.Errorf("the job summary details %d resources, want all 2000", n)
	}
	if r.outputs["summary"] != "Plan: 2000 to create, 0 to update, 0 to replace, 0 to delete." {
		t.Errorf("summary output %q", r.outputs["summary"])
	}
}

func TestDiagnosticsBecomeAnnotationsOnTheDocument(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue, `{"address": "aws/object-store/logs", "spec": {"versionning": true}}`)
	r := h.run("pull_request", prEvent(7, "abc"), planInputs())
	if r.code != 1 {
		t.Fatalf("a fleet with errors exited %d", r.code)
	}
	// The document's line 8 declares the bucket.
	want := "::error file=" + h.fleet + ",line=8,title=infra%3A aws/object-store/logs::aws/object-store/logs: unknown field"
	if !strings.Contains(r.log, want) {
		t.Fatalf("no annotation %q in:\n%s", want, r.log)
	}
	body := h.gh.bodies(7)[0]
	if !strings.Contains(body, "#### Diagnostics: 1 error(s)") || !strings.Contains(body, "versionning") {
		t.Fatalf("the comment lacks the diagnostics:\n%s", body)
	}
	if !strings.Contains(r.log, "::error::fleet shop has errors") {
		t.Errorf("the step does not fail with a reason:\n%s", r.log)
	}
	if r.outputs["plan-id"] == "" {
		t.Error("no plan-id output for a plan with errors")
	}

	// On GitHub the file is named from the repository's root.
	h.workspace = h.dir
	r = h.run("pull_request", prEvent(7, "abc"), planInputs())
	if !strings.Contains(r.log, "::error file=fleet.json,line=8,") {
		t.Fatalf("no annotation relative to the workspace:\n%s", r.log)
	}

	// A warning: a declared queue that another fleet owns.
	h2 := newHarness(t)
	h2.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "legacy", Region: "eu-west-3", Owner: "billing",
		Fields: map[string]any{"tags": map[string]any{"managed-by-infra": "billing"}}})
	h2.writeFleet(`{"address": "aws/queues/legacy", "spec": {}}`)
	r = h2.run("pull_request", prEvent(7, "abc"), planInputs())
	if r.code != 0 || !strings.Contains(r.log, "::warning file="+h2.fleet+",line=7,title=infra%3A aws/queues/legacy::") {
		t.Fatalf("exit %d, no warning annotation:\n%s", r.code, r.log)
	}
}

// A read-only token (a pull request from a fork) cannot comment: the plan
// still reaches the summary and the outputs, with a warning.
func TestPlanWithAReadOnlyTokenWarns(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	h.gh.readOnly = true
	r := h.run("pull_request", prEvent(7, "abc"), planInputs())
	if r.code != 0 || !strings.Contains(r.log, "::warning::cannot comment on #7") || r.outputs["has-changes"] != "true" ||
		!strings.Contains(r.summary, "aws/queues/jobs") {
		t.Fatalf("exit %d, outputs %v:\n%s", r.code, r.outputs, r.log)
	}
	h.gh.assertRequests(t, listComments7, createOn7)
}

func TestOutsideAPullRequestPlanWritesNoComment(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	r := h.run("schedule", map[string]any{}, planInputs())
	if r.code != 0 || r.outputs["has-changes"] != "true" {
		t.Fatalf("exit %d, outputs %v:\n%s", r.code, r.outputs, r.log)
	}
	h.gh.assertRequests(t)
}

func TestInputsAreChecked(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	for _, c := range []struct {
		in   map[string]string
		want string
	}{
		{map[string]string{}, "input command is required"},
		{map[string]string{"command": "nuke"}, `input command is "nuke"`},
		{map[string]string{"command": "plan", "on-plan-changed": "maybe"}, "on-plan-changed"},
		{map[string]string{"command": "plan", "comment": "sometimes"}, "input comment"},
		{map[string]string{"command": "sweep"}, "sweep-prefix"},
		{map[string]string{"command": "apply"}, "runs on a push"},
	} {
		r := h.run("pull_request", prEvent(7, "abc"), c.in)
		if r.code != 1 || !strings.Contains(r.log, "::error::") || !strings.Contains(r.log, c.want) {
			t.Errorf("%v: exit %d, log:\n%s", c.in, r.code, r.log)
		}
	}
	h.gh.assertRequests(t)
}

// sweep's table (a dry run here) reaches the job summary.
func TestSweepWritesTheTableToTheSummary(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	h.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "ci-tests-leftover", Region: "eu-west-3"})
	r := h.run("schedule", map[string]any{}, map[string]string{"command": "sweep", "sweep-prefix": "ci-tests-"})
	if r.code != 0 || !strings.Contains(r.summary, "### infra sweep `ci-tests-`: dry run") || !strings.Contains(r.summary, "ci-tests-leftover") {
		t.Fatalf("exit %d:\n%s\nsummary:\n%s", r.code, r.log, r.summary)
	}
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "ci-tests-leftover"); !ok {
		t.Fatal("a dry run deleted")
	}
	if r.outputs["summary"] != "would delete 1" {
		t.Errorf("summary output %q", r.outputs["summary"])
	}
	// An age floor keeps what the cloud cannot date.
	r = h.run("schedule", map[string]any{}, map[string]string{"command": "sweep", "sweep-prefix": "ci-tests-", "sweep-older-than": "2h", "sweep-delete": "true"})
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "ci-tests-leftover"); !ok || r.code != 0 || !strings.Contains(r.summary, "older than 2h") {
		t.Fatalf("exit %d:\n%s", r.code, r.summary)
	}
	r = h.run("schedule", map[string]any{}, map[string]string{"command": "sweep", "sweep-prefix": "ci-tests-", "sweep-delete": "true"})
	if _, ok := h.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "ci-tests-leftover"); ok || r.code != 0 || !strings.Contains(r.summary, "### infra sweep `ci-tests-`: deletion") {
		t.Fatalf("exit %d:\n%s", r.code, r.summary)
	}
}

func TestDiscoverWritesTheTableToTheSummary(t *testing.T) {
	h := newHarness(t)
	h.writeFleet(queue)
	h.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "jobs", Region: "eu-west-3", Owner: "shop",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0, "tags": map[string]any{"managed-by-infra": "shop"}}})
	r := h.run("schedule", map[string]any{}, map[string]string{"command": "discover"})
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	if !strings.Contains(r.summary, "| + | `aws/queues/jobs` | eu-west-3 |") || !strings.HasPrefix(r.outputs["summary"], "Discovered for fleet shop: 1 managed; 1 added") {
		t.Fatalf("summary:\n%s\noutputs %v", r.summary, r.outputs)
	}
}

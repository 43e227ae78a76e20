package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/executor/executortest"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// invokeHarness is an executor whose handler runs in the test, on the
// memory cloud and in-memory state, behind Lambda's Invoke API on
// loopback: `infra executor invoke` reaches it through the SDK as it
// reaches a deployed function, and every request it sent is kept.
type invokeHarness struct {
	cloud    *memory.Cloud
	h        *executor.Handler
	requests []executor.Request
	dir      string
	fleet    string
}

const invokeAccount = "123456789012"

func newInvokeHarness(t *testing.T, queues ...string) *invokeHarness {
	t.Helper()
	x := &invokeHarness{cloud: memory.NewCloud(map[spec.Provider]string{spec.AWS: invokeAccount}), dir: t.TempDir()}
	blobs := executortest.NewMemBlobs()
	x.h = executor.New(executor.Config{
		State:       func(context.Context) (operations.Blobs, string, error) { return blobs, "fleets", nil },
		Backends:    x.backends,
		Parallelism: 1,
	})
	executortest.ServeLambda(t, func(ctx context.Context, payload []byte) ([]byte, error) {
		var req executor.Request
		if err := json.Unmarshal(payload, &req); err != nil {
			return nil, err
		}
		x.requests = append(x.requests, req)
		resp, _ := x.h.Handle(ctx, req)
		return json.Marshal(resp)
	})
	var rs []string
	for _, q := range queues {
		rs = append(rs, `{"address": "aws/queues/`+q+`", "spec": {"visibilityTimeoutSec": 30}}`)
	}
	x.fleet = filepath.Join(x.dir, "fleet.json")
	doc := `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + invokeAccount + `"}, "placement": {"aws": "eu-west-3"}, "resources": [` + strings.Join(rs, ",") + `]}`
	if err := os.WriteFile(x.fleet, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return x
}

func (x *invokeHarness) backends(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
	out := map[spec.Provider]providers.Backend{}
	for _, p := range ps {
		out[p] = x.cloud.Backend(p)
	}
	return out, map[spec.Provider]string{}, nil
}

// run runs infra with args; a local verb reaches the same memory cloud,
// with its state in the harness's directory.
func (x *invokeHarness) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := DefaultFactory()
	f.IO = Test(strings.NewReader(""), &out, &errOut)
	f.Backends = x.backends
	args = append(args, "--fleet", x.fleet, "--no-color")
	if args[0] != "executor" {
		// The executor keeps its own state: invoke takes no --state.
		args = append(args, "--state", filepath.Join(x.dir, "state"))
	}
	code = RunWith(f, args, nil)
	return code, out.String(), errOut.String()
}

func (x *invokeHarness) invoke(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return x.run(t, append([]string{"executor", "invoke", "--function", "infra-executor"}, args...)...)
}

// last is the last request the executor received.
func (x *invokeHarness) last(t *testing.T) executor.Request {
	t.Helper()
	if len(x.requests) == 0 {
		t.Fatal("the executor received no request")
	}
	return x.requests[len(x.requests)-1]
}

// --target and --replace go on the wire of a plan and an apply, and an
// apply of a saved partial plan sends the plan's own targets, so that its
// fresh plan has the reviewed id; flags that contradict the plan file, a
// malformed address and a scope on another operation are usage errors
// that invoke nothing.
func TestInvokeSendsTargetsAndReplace(t *testing.T) {
	x := newInvokeHarness(t, "jobs", "mail")
	code, out, errOut := x.invoke(t, "--operation", "plan", "--target", "aws/queues/jobs", "--json")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
	}
	if got := x.last(t).Targets; len(got) != 1 || got[0].String() != "aws/queues/jobs" {
		t.Fatalf("the plan's request has targets %v", got)
	}
	var plan executor.Response
	if err := json.Unmarshal([]byte(out), &plan); err != nil || plan.Plan == nil || len(plan.Plan.Actions) != 1 {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	planFile := filepath.Join(x.dir, "plan.json")
	data, _ := json.Marshal(plan.Plan)
	if err := os.WriteFile(planFile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	sent := len(x.requests)
	for _, bad := range [][]string{
		{"--operation", "apply", "--plan", planFile, "--target", "aws/queues/mail"},
		{"--operation", "plan", "--target", "jobs"},
		{"--operation", "destroy", "--unreviewed", "--target", "aws/queues/jobs"},
		{"--operation", "drift", "--replace", "aws/queues/jobs"},
	} {
		if code, out, errOut := x.invoke(t, bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want a usage error\n%s%s", bad, code, out, errOut)
		}
	}
	if code, _, errOut := x.invoke(t, "--operation", "apply", "--plan", planFile, "--target", "aws/queues/mail"); code != ExitUsage ||
		!strings.Contains(errOut, "--target and --replace must name the same, or be left out") {
		t.Fatalf("a contradicting --target: exit %d\n%s", code, errOut)
	}
	if len(x.requests) != sent {
		t.Fatalf("a usage error invoked the executor: %+v", x.requests[sent:])
	}

	// The plan file's targets, given again or not, are what is sent.
	code, out, errOut = x.invoke(t, "--operation", "apply", "--plan", planFile, "--target", "aws/queues/jobs", "--run-id", "r1")
	if code != 0 || !strings.Contains(out, "Applied: 1 created") {
		t.Fatalf("apply of the partial plan: exit %d\n%s%s", code, out, errOut)
	}
	if req := x.last(t); req.ExpectPlanID != plan.Plan.ID || len(req.Targets) != 1 || req.Targets[0].String() != "aws/queues/jobs" {
		t.Fatalf("the apply's request: id %s, targets %v", req.ExpectPlanID, req.Targets)
	}
	if got := strings.Join(x.cloud.Addresses(), " "); got != "aws/queues/jobs" {
		t.Fatalf("the cloud holds %s", got)
	}

	// A forced replace of what now exists, printed as infra plan prints it.
	code, out, errOut = x.invoke(t, "--operation", "plan", "--target", "aws/queues/jobs", "--replace", "aws/queues/jobs")
	if code != 0 || !strings.Contains(out, "1 to replace") {
		t.Fatalf("plan with --replace: exit %d\n%s%s", code, out, errOut)
	}
	if req := x.last(t); len(req.Replace) != 1 || req.Replace[0].String() != "aws/queues/jobs" {
		t.Fatalf("the request's replace: %v", req.Replace)
	}
}

// invoke --operation drift prints the report as infra drift does, exits 0
// on drift (the report is the answer), and with --json prints the
// response, drift report included.
func TestInvokePrintsDrift(t *testing.T) {
	x := newInvokeHarness(t, "jobs", "mail")
	if code, out, errOut := x.invoke(t, "--operation", "apply", "--unreviewed"); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := x.invoke(t, "--operation", "drift")
	if code != 0 || !strings.Contains(out, "No drift: the 2 managed resource(s) compared") {
		t.Fatalf("drift after the apply: exit %d\n%s%s", code, out, errOut)
	}
	q, _ := x.cloud.Get(spec.AWS, spec.Queues, "eu-west-3", "mail")
	q.Fields["visibilityTimeoutSec"] = 120.0
	x.cloud.Put(spec.AWS, spec.Queues, q)

	code, out, errOut = x.invoke(t, "--operation", "drift", "--json")
	var resp executor.Response
	if code != 0 || json.Unmarshal([]byte(out), &resp) != nil || resp.Drift == nil || len(resp.Drift.Resources) != 1 {
		t.Fatalf("drift --json: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = x.invoke(t, "--operation", "drift")
	if code != 0 {
		t.Fatalf("drift: exit %d\n%s%s", code, out, errOut)
	}
	var want bytes.Buffer
	if err := render.DriftText(&want, resp.Drift); err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Fatalf("drift's text is not infra drift's:\n%s\nwant:\n%s", out, want.String())
	}
	for _, line := range []string{"aws: " + invokeAccount + " in eu-west-3 ok\n", "  ~ aws/queues/mail", "visibilityTimeoutSec", "Drift: 1 of 2 managed resource(s) changed out of band"} {
		if !strings.Contains(out, line) {
			t.Errorf("drift's text lacks %q:\n%s", line, out)
		}
	}
	if !strings.Contains(errOut, "infra-executor: invocation 1: done") {
		t.Errorf("stderr: %s", errOut)
	}
}

// invoke --operation import prints and writes exactly what infra import
// prints and writes from the same cloud: the listing, and with --out the
// merged document or the Go files; its filters go on the wire, and a kind
// infra does not know invokes nothing.
func TestInvokeImport(t *testing.T) {
	x := newInvokeHarness(t, "jobs")
	x.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "mail", Region: "eu-west-3", Fields: map[string]any{"visibilityTimeoutSec": 45.0, "tags": map[string]any{"team": "mail"}}})
	x.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "reports", Region: "eu-west-3", Fields: map[string]any{}})
	x.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "billing", Region: "eu-west-3", Fields: map[string]any{}, Owner: "billing"})

	for _, c := range []struct {
		name        string
		local, args []string
	}{
		{"listing", nil, nil},
		{"filtered", []string{"--kind", "queues", "--name-prefix", "ma"}, []string{"--kind", "queues", "--prefix", "ma"}},
		{"document", []string{"--out", filepath.Join(x.dir, "local.json")}, []string{"--out", filepath.Join(x.dir, "remote.json")}},
		{"go", []string{"--format", "go", "--out", filepath.Join(x.dir, "local-go")}, []string{"--format", "go", "--out", filepath.Join(x.dir, "remote-go")}},
	} {
		code, want, wantErr := x.run(t, append([]string{"import"}, c.local...)...)
		if code != 0 {
			t.Fatalf("%s: infra import: exit %d\n%s%s", c.name, code, want, wantErr)
		}
		args := c.args
		if args == nil {
			args = c.local
		}
		code, out, errOut := x.invoke(t, append([]string{"--operation", "import"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: invoke: exit %d\n%s%s", c.name, code, out, errOut)
		}
		want = strings.ReplaceAll(want, "local", "remote")
		if c.name == "listing" && (!strings.Contains(out, "  + adopt  aws/queues/mail\n") || !strings.Contains(out, "Import: 2 to adopt that no fleet owns, 0 new, 0 left out; passed over 1 owned by fleets")) {
			t.Errorf("the listing:\n%s", out)
		}
		if c.name == "go" && !strings.Contains(out, "Wrote "+filepath.Join(x.dir, "remote-go", "imported.go")) {
			t.Errorf("the Go files' line:\n%s", out)
		}
		if out != want {
			t.Errorf("%s: invoke printed\n%s\ninfra import printed\n%s", c.name, out, want)
		}
		if strings.Contains(wantErr, "Nothing written") != strings.Contains(errOut, "Nothing written") {
			t.Errorf("%s: stderr %q, infra import's %q", c.name, errOut, wantErr)
		}
	}
	if req := x.requests[1]; strings.Join(req.Options.Kinds, ",") != "queues" || req.Options.Prefix != "ma" {
		t.Errorf("the filtered request's options: %+v", req.Options)
	}
	for _, pair := range [][2]string{{"local.json", "remote.json"}, {"local-go/imported.go", "remote-go/imported.go"}, {"local-go/main.go", "remote-go/main.go"}} {
		a, err1 := os.ReadFile(filepath.Join(x.dir, pair[0]))
		b, err2 := os.ReadFile(filepath.Join(x.dir, pair[1]))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s and %s differ (%v, %v):\n%s\n---\n%s", pair[0], pair[1], err1, err2, a, b)
		}
	}
	if doc, _ := os.ReadFile(filepath.Join(x.dir, "remote.json")); !bytes.Contains(doc, []byte(`"aws/queues/mail"`)) || !bytes.Contains(doc, []byte(`"adopt"`)) {
		t.Errorf("the written document:\n%s", doc)
	}

	sent := len(x.requests)
	if code, _, errOut := x.invoke(t, "--operation", "import", "--kind", "queue"); code != ExitUsage || !strings.Contains(errOut, "--kind queue: infra knows no such kind") {
		t.Errorf("an unknown kind: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := x.invoke(t, "--operation", "import", "--prefix", "ma", "--name-prefix", "re"); code != ExitUsage || !strings.Contains(errOut, "pass one") {
		t.Errorf("two prefixes: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := x.invoke(t, "--operation", "plan", "--out", "x.json"); code != ExitUsage || !strings.Contains(errOut, "are for --operation import") {
		t.Errorf("--out with plan: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := x.invoke(t, "--operation", "import", "--format", "yaml"); code == 0 || !strings.Contains(errOut, "--format yaml: give go or document") {
		t.Errorf("a bad format: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := x.invoke(t, "--operation", "imprt"); code != ExitUsage ||
		!strings.Contains(errOut, `want plan, apply, destroy, discover, sweep, output, drift or import`) {
		t.Errorf("an unknown operation: exit %d\n%s", code, errOut)
	}
	if len(x.requests) != sent {
		t.Fatalf("a refused command line invoked the executor: %+v", x.requests[sent:])
	}
}

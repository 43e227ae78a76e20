package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// wiringFleet writes a document of spec/testdata/wiring into the
// harness's directory, edited, and returns its path.
func (h *harness) wiringFleet(name string, edit func(m map[string]any)) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "spec", "testdata", "wiring", name+".json"))
	if err != nil {
		h.t.Fatal(err)
	}
	if edit != nil {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			h.t.Fatal(err)
		}
		edit(m)
		data, _ = json.Marshal(m)
	}
	path := filepath.Join(h.dir, name+".json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	return path
}

const pgCanary = "canary-action-pg-password-41c9"

// One pull request changes a provider and its consumer, named consumer
// first: the plans are posted provider first, the consumer planned beside
// the provider's plan with its values pending, each comment saying who
// reads whom. On merge the provider applies first; when it fails the
// consumer is not applied and says why; once it applies, the consumer's
// reviewed plan is the one applied. The exports output is the provider's
// record, its password a reference. Against moto, in the runner.
func TestFleetsThatWireToEachOtherGoProvidersFirst(t *testing.T) {
	moto.Fresh(t)
	h := newHarness(t)
	h.backends = operations.DefaultBackends(nil)
	h.vars["PG_EU_PASSWORD"] = pgCanary
	consumer, provider := h.wiringFleet("shop-eu", nil), h.wiringFleet("pg-shared", nil)
	fleets := consumer + "\n" + provider

	r := h.run("pull_request", prEvent(7, "abc"), map[string]string{"command": "plan", "fleet": fleets})
	if r.code != 0 {
		t.Fatalf("plan: exit %d:\n%s", r.code, r.log)
	}
	h.gh.assertRequests(t, listComments7, createOn7, listComments7, createOn7)
	bodies := h.gh.bodies(7)
	if len(bodies) != 2 || !strings.HasPrefix(bodies[0], render.PlanMarker("pg-shared")+"\n") || !strings.HasPrefix(bodies[1], render.PlanMarker("shop-eu")+"\n") {
		t.Fatalf("comments on #7, want the provider's first: %q", bodies)
	}
	for _, want := range []string{"#### Reads from other fleets",
		"| `db` | `pg-shared:eu` | `endpoint`, `password`, `username` | `endpoint`, `password` |",
		"`pg-shared` is planned in this run, before this fleet", "Plan: 1 to create"} {
		if !strings.Contains(bodies[1], want) {
			t.Errorf("the consumer's comment lacks %q:\n%s", want, bodies[1])
		}
	}
	if want := "| `eu` | `shop-eu` | planned in this run, applied after this fleet |"; !strings.Contains(bodies[0], want) {
		t.Errorf("the provider's comment lacks %q:\n%s", want, bodies[0])
	}
	reviewed, _, _ := render.ReadMarkdownPlanID(bodies[1])
	ids := strings.Split(r.outputs["plan-id"], "\n")
	if len(ids) != 2 || !strings.HasPrefix(ids[0], "pg-shared=") || ids[1] != "shop-eu="+reviewed {
		t.Fatalf("plan-id output: %q (%v)\n%s", r.outputs["plan-id"], r.outputs, r.log)
	}
	if _, ok := r.outputs["exports"]; ok {
		t.Errorf("an exports output before anything was published: %q", r.outputs["exports"])
	}

	// The merged provider differs from the reviewed one: it is refused,
	// and its consumer is not applied, naming it.
	h.gh.merged(mergeSHA1, 7)
	h.wiringFleet("pg-shared", func(m map[string]any) {
		m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/queues/pg-jobs", "spec": map[string]any{}})
	})
	h.gh.take()
	r = h.run("push", pushEvent(mergeSHA1), applyInputs("fleet", fleets))
	if r.code != 1 || !strings.Contains(r.log, "fleet shop-eu: not applied: it reads fleet pg-shared, whose apply did not succeed") {
		t.Fatalf("apply after a refused provider: exit %d:\n%s", r.code, r.log)
	}
	bodies = h.gh.bodies(7)
	if len(bodies) != 4 || !strings.Contains(bodies[2], "fleet `pg-shared` refused") || !strings.Contains(bodies[3], "### infra apply for fleet `shop-eu`: not applied") {
		t.Fatalf("results: %q", bodies[2:])
	}

	// The provider as reviewed: both apply, in order.
	h.wiringFleet("pg-shared", nil)
	r = h.run("push", pushEvent(mergeSHA1), applyInputs("fleet", fleets))
	if r.code != 0 {
		t.Fatalf("apply: exit %d:\n%s", r.code, r.log)
	}
	first, second := strings.Index(r.log, "fleet pg-shared: applying plan"), strings.Index(r.log, "fleet shop-eu: applying plan "+reviewed)
	if first < 0 || second < first {
		t.Fatalf("want pg-shared applied, then shop-eu's reviewed plan %s:\n%s", reviewed, r.log)
	}
	bodies = h.gh.bodies(7)
	if len(bodies) != 4 || !strings.Contains(bodies[3], "### infra apply for fleet `shop-eu`: applied") || !strings.Contains(bodies[3], reviewed) {
		t.Fatalf("the consumer's result: %q", bodies[3])
	}
	var exports map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(r.outputs["exports"]), &exports); err != nil {
		t.Fatalf("exports output %q: %v", r.outputs["exports"], err)
	}
	eu := exports["pg-shared"]["eu"]
	if pw, _ := eu["password"].(string); !strings.HasPrefix(pw, "arn:aws:secretsmanager:eu-west-3:") || eu["username"] != "shop" || eu["endpoint"] == nil || len(exports) != 1 {
		t.Fatalf("exports output: %v", exports)
	}
	if strings.Contains(r.log+r.summary+strings.Join(mapValues(r.outputs), "\n")+strings.Join(h.gh.bodies(7), "\n"), pgCanary) {
		t.Fatal("the provider's password left the cloud")
	}

	// The next pull request: the provider's comment names the consumer
	// by its claim, and the plan sets the exports output from the record.
	r = h.run("pull_request", prEvent(9, "def"), map[string]string{"command": "plan", "fleet": provider})
	if r.code != 0 || !strings.Contains(h.gh.bodies(9)[0], "| `eu` | `shop-eu` | holds a claim (it has applied) |") || !strings.Contains(r.outputs["exports"], `"pg-shared"`) {
		t.Fatalf("exit %d, outputs %v, comment:\n%s", r.code, r.outputs, h.gh.bodies(9)[0])
	}
	// Unexposing what the consumer reads is blocking.
	h.wiringFleet("pg-shared", func(m map[string]any) { m["exposes"] = []any{} })
	r = h.run("pull_request", prEvent(9, "def2"), map[string]string{"command": "plan", "fleet": provider})
	if r.code != 1 || !strings.Contains(h.gh.bodies(9)[0], "**Blocking: this plan breaks what 1 consumer claim(s) read; apply refuses it**") {
		t.Fatalf("exit %d, comment:\n%s", r.code, h.gh.bodies(9)[0])
	}
}

func wiredDoc(name string, reads ...string) *fleetDoc {
	doc := &spec.Document{Fleet: name, Wires: map[string]spec.Wire{}}
	for i, r := range reads {
		doc.Wires[string(rune('a'+i))] = spec.Wire{Fleet: r, Provides: "eu"}
	}
	return &fleetDoc{Name: name, document: doc}
}

// Each fleet comes after the fleets of the run it reads; ties keep the
// input order; a fleet outside the run orders nothing; a cycle names the
// fleets in it.
func TestOrderFleets(t *testing.T) {
	names := func(fs []*fleetDoc) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return strings.Join(out, " ")
	}
	got, err := orderFleets([]*fleetDoc{wiredDoc("web", "api", "db"), wiredDoc("solo", "elsewhere"), wiredDoc("api", "db"), wiredDoc("db"), wiredDoc("mail")})
	if err != nil || names(got) != "solo db api web mail" {
		t.Fatalf("order %q, %v", names(got), err)
	}
	_, err = orderFleets([]*fleetDoc{wiredDoc("a", "b"), wiredDoc("b", "a"), wiredDoc("c")})
	if err == nil || !strings.Contains(err.Error(), "cycle (a reads b; b reads a)") {
		t.Fatalf("cycle: %v", err)
	}
}

// The exports output is JSON in printable ASCII, whatever a value holds.
func TestExportsOutputIsPrintableJSON(t *testing.T) {
	s := asciiJSON([]byte(`{"a":"` + evil + "\U0001F600" + `"}`))
	var back map[string]string
	if err := json.Unmarshal([]byte(s), &back); err != nil || back["a"] != evil+"\U0001F600" || !printable(s) {
		t.Fatalf("%q: %v", s, err)
	}
}

// Through the executor, a consumer's plan request carries what the
// provider's plan answered it will publish, and the provider's comment
// names the consumers the executor read from its claims.
func TestRemotePlanSendsTheProvidersRecordUpstream(t *testing.T) {
	h := newHarness(t)
	consumer, provider := h.wiringFleet("shop-eu", nil), h.wiringFleet("pg-shared", nil)
	rec := &spec.Published{Fleet: "pg-shared", Capabilities: map[string]spec.PublishedCapability{"eu": {Interface: "postgres-database",
		Exposed: true, Exports: map[string]spec.PublishedExport{"endpoint": {Pending: true}}}}}
	plan := func(fleet string, publishes *spec.Published) *engine.Plan {
		return &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: fleet, ID: "sha256:" + strings.Repeat("e", 64), Applicable: true, Publishes: publishes}
	}
	s := &scripted{answers: []string{
		response(t, executor.Response{Status: executor.StatusDone, Plan: plan("pg-shared", rec), Consumers: map[string][]string{"eu": {"shop-us"}}}),
		response(t, executor.Response{Status: executor.StatusDone, Plan: plan("shop-eu", nil)}),
		response(t, executor.Response{Status: executor.StatusDone, Message: "pg-shared at s3://x: the fleet has published nothing"}),
	}}
	h.inv = s
	r := h.run("pull_request", prEvent(7, "abc"), map[string]string{"command": "plan", "fleet": consumer + "\n" + provider})
	if r.code != 0 || len(s.requests) != 3 {
		t.Fatalf("exit %d, %d requests:\n%s", r.code, len(s.requests), r.log)
	}
	ops := []executor.Operation{s.requests[0].Operation, s.requests[1].Operation, s.requests[2].Operation}
	if ops[0] != executor.OpPlan || ops[1] != executor.OpPlan || ops[2] != executor.OpOutput || s.requests[0].Upstream != nil {
		t.Fatalf("requests %v", ops)
	}
	if got := s.requests[1].Upstream["pg-shared"]; got == nil || !got.Capabilities["eu"].Exports["endpoint"].Pending {
		t.Fatalf("the consumer's plan request carries upstream %+v", s.requests[1].Upstream)
	}
	bodies := h.gh.bodies(7)
	if len(bodies) != 2 || !strings.Contains(bodies[0], "| `eu` | `shop-us` | holds a claim (it has applied) |") ||
		!strings.Contains(bodies[0], "| `eu` | `shop-eu` | planned in this run, applied after this fleet |") {
		t.Fatalf("comments: %q", bodies)
	}
	if _, ok := r.outputs["exports"]; ok {
		t.Errorf("exports output of a fleet that published nothing: %q", r.outputs["exports"])
	}
}

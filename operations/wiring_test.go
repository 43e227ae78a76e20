package operations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
	"github.com/infra-iac/infra/state"
)

func TestMain(m *testing.M) { moto.Main(m) }

// canary is pg-shared's database password: it must appear nowhere but in
// Secrets Manager.
const canary = "canary-7f3a9c1e-pg-password"

type wiringRig struct {
	t     *testing.T
	ops   *Operations
	dir   string
	plans [][]byte
}

func newWiringRig(t *testing.T) *wiringRig {
	moto.Fresh(t)
	dir := t.TempDir()
	env := Env{
		Backends: DefaultBackends(nil),
		Store:    func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) },
		Getenv: func(k string) string {
			switch k {
			case "PG_EU_PASSWORD":
				return canary
			case "WEBAPP_DB_PASSWORD":
				return "webapp-private-password"
			}
			return ""
		},
	}
	return &wiringRig{t: t, ops: New(env), dir: dir}
}

// doc reads a document of spec/testdata/wiring, edited.
func (r *wiringRig) doc(name string, edit func(m map[string]any)) *spec.Document {
	r.t.Helper()
	return r.docAt("wiring/"+name, edit)
}

// docAt reads the document spec/testdata/<name>.json, edited.
func (r *wiringRig) docAt(name string, edit func(m map[string]any)) *spec.Document {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "spec", "testdata", filepath.FromSlash(name)+".json"))
	if err != nil {
		r.t.Fatal(err)
	}
	if edit != nil {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			r.t.Fatal(err)
		}
		edit(m)
		data, _ = json.Marshal(m)
	}
	doc, err := spec.DecodeDocument(data)
	if err != nil {
		r.t.Fatal(err)
	}
	return doc
}

func (r *wiringRig) plan(doc *spec.Document) (*engine.Plan, error) {
	p, err := r.ops.Plan(context.Background(), PlanRequest{Document: doc})
	if p != nil {
		b, _ := json.Marshal(p)
		r.plans = append(r.plans, b)
	}
	return p, err
}

func (r *wiringRig) apply(doc *spec.Document) *ApplyResult {
	r.t.Helper()
	res, err := r.ops.Apply(context.Background(), ApplyRequest{Document: doc, Confirm: func(*engine.Plan) error { return nil }})
	if res != nil && res.Plan != nil {
		b, _ := json.Marshal(res.Plan)
		r.plans = append(r.plans, b)
	}
	if err != nil {
		r.t.Fatalf("apply %s: %v", doc.Fleet, err)
	}
	return res
}

// rows is every diagnostic of a plan, as text.
func rows(p *engine.Plan, err error) string {
	var b strings.Builder
	if p != nil {
		for _, d := range p.Diagnostics {
			b.WriteString(d.String() + "\n")
		}
	}
	var de *DiagnosticsError
	if err != nil && !errors.As(err, &de) {
		b.WriteString("error: " + err.Error() + "\n")
	}
	return b.String()
}

func wiredVersion(m map[string]any, v float64) {
	m["uses"].(map[string]any)["db"].(map[string]any)["requires"].([]any)[0].(map[string]any)["value"] = v
}

// The acceptance of docs/wiring.md, against the emulator: a provider and
// a consumer applied in order, the consumer's secret composed from the
// provider's exports, and each refusal a consumer can meet at plan.
func TestFleetsWireToEachOther(t *testing.T) {
	r := newWiringRig(t)
	ctx := context.Background()

	// Before the provider has applied, the consumer's plan says so.
	_, err := r.plan(r.doc("shop-eu", nil))
	if got := rows(nil, err) + errText(err); !strings.Contains(got, `wired to fleet "pg-shared", which has published nothing`) {
		t.Fatalf("plan before the provider applied: %s", got)
	}

	r.apply(r.doc("pg-shared", nil))
	out, err := r.ops.Output(ctx, OutputRequest{Fleet: "pg-shared"})
	if err != nil {
		t.Fatal(err)
	}
	eu := out.Capabilities["eu"]
	password, _ := eu.Exports["password"].Value.(string)
	endpoint, _ := eu.Exports["endpoint"].Value.(string)
	if !strings.HasPrefix(password, "arn:aws:secretsmanager:eu-west-3:") || !eu.Exports["password"].Secret {
		t.Fatalf("the password export is %+v, want a secret's ARN", eu.Exports["password"])
	}
	if endpoint == "" || eu.Exports["endpoint"].Region != "eu-west-3" || eu.Consumers != "one" || !eu.Exposed {
		t.Fatalf("capability eu: %+v", eu)
	}

	p, err := r.plan(r.doc("shop-eu", nil))
	if err != nil {
		t.Fatalf("consumer plan: %v\n%s", err, rows(p, err))
	}
	if c := p.Actions[0].Changes; len(c) == 0 || len(c[0].From) != 3 {
		t.Fatalf("the composed secret's change should name the three values it reads: %+v", p.Actions)
	}
	r.apply(r.doc("shop-eu", nil))
	b, _, err := r.ops.env.Backends(ctx, []spec.Provider{spec.AWS})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := providers.ResourcesOf(b[spec.AWS], spec.Secrets)
	got, err := rs.ReadSecretValue(ctx, "eu-west-3", "shop-db-url")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://shop:" + canary + "@" + endpoint + "/shop"; got.Reveal() != want {
		t.Fatalf("the consumer's secret holds %q, want %q", got.Reveal(), want)
	}

	// The canary is in Secrets Manager only: not in any state file, plan
	// or output.
	outJSON, _ := json.Marshal(out)
	haystacks := append([][]byte{outJSON}, r.plans...)
	filepath.Walk(r.dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			haystacks = append(haystacks, data)
		}
		return nil
	})
	for _, h := range haystacks {
		if bytes.Contains(h, []byte(canary)) {
			t.Fatalf("the canary password leaked: %.300s", h)
		}
	}

	// The provider's username changes; its apply changes no resource and
	// still publishes, and the consumer's next plan sends its secret again.
	renamed := func(m map[string]any) {
		m["provides"].(map[string]any)["eu"].(map[string]any)["exports"].(map[string]any)["username"] = "shop2"
	}
	if res := r.apply(r.doc("pg-shared", renamed)); res.Plan.HasChanges() {
		t.Fatalf("renaming an export's literal changed resources: %+v", res.Plan.Actions)
	}
	p, err = r.plan(r.doc("shop-eu", nil))
	if err != nil || len(p.Actions) != 1 || p.Actions[0].Action != engine.Update {
		t.Fatalf("the consumer after the provider's username changed: %v %+v", err, p.Actions)
	}
	r.apply(r.doc("shop-eu", nil))
	if got, _ := rs.ReadSecretValue(ctx, "eu-west-3", "shop-db-url"); !strings.HasPrefix(got.Reveal(), "postgres://shop2:") {
		t.Fatalf("the consumer's secret was not sent again: %.20s…", got.Reveal())
	}
	if p, err := r.plan(r.doc("shop-eu", nil)); err != nil || p.HasChanges() {
		t.Fatalf("the consumer's plan after it re-sent its secret: %v %+v", err, p.Actions)
	}
	r.apply(r.doc("pg-shared", nil))
	r.apply(r.doc("shop-eu", nil))

	claims := r.claims("pg-shared")
	if got := claims.Holders("eu"); len(got) != 1 || got[0] != "shop-eu" {
		t.Fatalf("claims on pg-shared:eu: %v", got)
	}

	refusals := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"typo in provides", func(m map[string]any) {
			m["wires"].(map[string]any)["db"].(map[string]any)["provides"] = "ue"
		}, `pg-shared provides no capability "ue" (it exposes: eu (postgres-database))`},
		{"version predicate", func(m map[string]any) { wiredVersion(m, 17) }, `slot "db" requires version >= 17, and pg-shared publishes version = "16`},
		{"region-local endpoint read from another region", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/secrets/us-url", "region": "us-east-1",
				"spec": map[string]any{"value": map[string]any{"composed": map[string]any{"format": "{0}", "args": []any{
					map[string]any{"use": "db", "export": "endpoint"}}}}}})
		}, "reads pg-shared:eu.endpoint, which is region-local (eu-west-3); aws/secrets/us-url is in us-east-1"},
	}
	for _, tc := range refusals {
		p, err := r.plan(r.doc("shop-eu", tc.edit))
		if got := rows(p, err); !strings.Contains(got, tc.want) || (p != nil && p.Applicable) {
			t.Errorf("%s: want a refusing row with %q, got:\n%s", tc.name, tc.want, got)
		}
	}

	// A second consumer of a capability that serves one is refused at
	// plan, and again at apply, naming the holder.
	second := r.doc("shop-eu", func(m map[string]any) {
		m["fleet"] = "shop-eu2"
		m["resources"].([]any)[0].(map[string]any)["address"] = "aws/secrets/shop2-db-url"
	})
	p, err = r.plan(second)
	if got := rows(p, err); !strings.Contains(got, `which serves one consumer, and shop-eu already holds it`) {
		t.Fatalf("a second consumer's plan: %s", got)
	}

	// The provider protects its consumer: no unexposing, no deleting what
	// an export reads, unless forced.
	unexpose := func(m map[string]any) { m["exposes"] = []any{} }
	p, err = r.plan(r.doc("pg-shared", unexpose))
	if got := rows(p, err); !strings.Contains(got, "this plan stops exposing capability eu, which shop-eu read(s)") || p.Applicable {
		t.Fatalf("unexposing a claimed capability: %s", got)
	}
	moveDB := func(m map[string]any) {
		res := m["resources"].([]any)
		db := map[string]any{}
		for k, v := range res[1].(map[string]any) {
			db[k] = v
		}
		db["address"] = "aws/postgres/pg-eu2"
		m["resources"] = []any{res[0], db}
		ex := m["provides"].(map[string]any)["eu"].(map[string]any)["exports"].(map[string]any)
		ex["endpoint"] = map[string]any{"observed": "aws/postgres/pg-eu2", "attribute": "endpoint"}
		ex["version"] = map[string]any{"observed": "aws/postgres/pg-eu2", "attribute": "version"}
	}
	p, err = r.plan(r.doc("pg-shared", moveDB))
	if got := rows(p, err); !strings.Contains(got, "this plan deletes aws/postgres/pg-eu, which export eu.endpoint reads, which shop-eu read(s)") {
		t.Fatalf("deleting the database behind an export: %s", got)
	}
	// A forced replace deletes what the export reads just as well.
	p, err = r.ops.Plan(ctx, PlanRequest{Document: r.doc("pg-shared", nil), Scope: Scope{Replace: []spec.Address{spectest.Address("aws/postgres/pg-eu")}}})
	if got := rows(p, err); !strings.Contains(got, "this plan replaces aws/postgres/pg-eu (a delete, then a create), which export eu.endpoint reads, which shop-eu read(s)") || p.Applicable {
		t.Fatalf("a forced replace of the database behind an export: %s", got)
	}
	// A claim edited by hand still refuses, and the row says what it
	// holds rather than a blank.
	for _, edited := range []func(c *spec.Claims){
		func(c *spec.Claims) { c.Capabilities["eu"][0].Fleet = "" },
		func(c *spec.Claims) { c.Capabilities["eu"] = nil },
	} {
		st, err := state.OpenFile(r.dir, "pg-shared")
		if err != nil {
			t.Fatal(err)
		}
		kept := r.claims("pg-shared")
		c, err := st.LoadClaims(ctx)
		if err != nil {
			t.Fatal(err)
		}
		edited(c)
		if err := st.SaveClaims(ctx, c); err != nil {
			t.Fatal(err)
		}
		p, err = r.plan(r.doc("pg-shared", unexpose))
		if got := rows(p, err); !strings.Contains(got, "(the claims record was edited) read(s)") || strings.Contains(got, "which  read") || p.Applicable {
			t.Errorf("unexposing a capability whose claim was edited: %s", got)
		}
		if err := st.SaveClaims(ctx, kept); err != nil {
			t.Fatal(err)
		}
	}
	res, err := r.ops.Apply(ctx, ApplyRequest{Document: r.doc("pg-shared", unexpose), Force: true, Confirm: func(*engine.Plan) error { return nil }})
	if err != nil {
		t.Fatalf("a forced unexpose: %v", err)
	}
	if got := rows(res.Plan, nil); !strings.Contains(got, "--force: this plan stops exposing capability eu") {
		t.Fatalf("a forced apply says what it overrode: %s", got)
	}
	if _, err := r.plan(r.doc("shop-eu", nil)); !strings.Contains(errText(err), "which pg-shared provides but does not expose") {
		t.Fatalf("the consumer after the provider unexposed: %v", errText(err))
	}

	// The consumer's destroy gives its claim up.
	r.apply(r.doc("pg-shared", nil))
	if _, err := r.ops.Apply(ctx, ApplyRequest{Document: r.doc("shop-eu", nil), Destroy: true, Confirm: func(*engine.Plan) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if got := r.claims("pg-shared").Holders("eu"); len(got) != 0 {
		t.Fatalf("claims after the consumer's destroy: %v", got)
	}
}

func (r *wiringRig) claims(fleet string) *spec.Claims {
	r.t.Helper()
	st, err := state.OpenFile(r.dir, fleet)
	if err != nil {
		r.t.Fatal(err)
	}
	c, err := st.LoadClaims(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

func errText(err error) string {
	var de *DiagnosticsError
	if errors.As(err, &de) {
		var b strings.Builder
		for _, d := range de.Diagnostics {
			b.WriteString(d.String() + "\n")
		}
		return b.String()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// Of consumers racing to claim a capability that serves one, exactly one
// wins; every other is refused, naming the winner.
func TestClaimOfOneIsExclusiveUnderARace(t *testing.T) {
	dir := t.TempDir()
	s := &session{env: Env{Store: func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) }}}
	w := spec.Wire{Fleet: "pg-shared", Provides: "eu"}
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- s.claimOne(context.Background(), w, spec.Claim{Fleet: fmt.Sprintf("shop-%d", i), Slot: "db"}, true)
		}()
	}
	won := 0
	for range n {
		err := <-errs
		var held *ConsumerHeldError
		switch {
		case err == nil:
			won++
		case errors.As(err, &held):
		default:
			t.Errorf("a losing claim: %v", err)
		}
	}
	st, _ := state.OpenFile(dir, "pg-shared")
	c, err := st.LoadClaims(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if won != 1 || len(c.Holders("eu")) != 1 {
		t.Fatalf("%d claims won, holders %v", won, c.Holders("eu"))
	}
}

// One pull request changes both fleets: the consumer is planned beside its
// provider's plan, its values pending; once the provider has applied, the
// consumer's reviewed plan is still the plan its apply accepts.
func TestConsumerPlannedBesideItsProviderStaysReviewed(t *testing.T) {
	r := newWiringRig(t)
	ctx := context.Background()
	provider, err := r.plan(r.doc("pg-shared", nil))
	if err != nil {
		t.Fatal(err)
	}
	upstream := map[string]*spec.Published{"pg-shared": provider.Published()}
	if e := upstream["pg-shared"].Capabilities["eu"].Exports["endpoint"]; !e.Pending {
		t.Fatalf("the provider's plan publishes an endpoint before it exists: %+v", e)
	}
	reviewed, err := r.ops.Plan(ctx, PlanRequest{Document: r.doc("shop-eu", nil), Upstream: upstream})
	if err != nil {
		t.Fatalf("consumer planned beside its provider: %v\n%s", err, rows(reviewed, err))
	}
	if c := reviewed.Actions[0].Changes[0]; !c.Sensitive || len(c.From) != 3 {
		t.Fatalf("the consumer's change: %+v", c)
	}
	// Applied out of order, the consumer is refused, naming the fleet to
	// apply first.
	if _, err := r.ops.Apply(ctx, ApplyRequest{Document: r.doc("shop-eu", nil), Expect: reviewed.ID}); !strings.Contains(errText(err), `fleet "pg-shared", which has published nothing`) {
		t.Fatalf("the consumer applied before its provider: %v", errText(err))
	}
	r.apply(r.doc("pg-shared", nil))
	res, err := r.ops.Apply(ctx, ApplyRequest{Document: r.doc("shop-eu", nil), Expect: reviewed.ID})
	if err != nil {
		t.Fatalf("the reviewed consumer plan after its provider applied: %v", err)
	}
	if res.Plan.ID != reviewed.ID || res.Report == nil {
		t.Fatalf("applied %s, reviewed %s", res.Plan.ID, reviewed.ID)
	}
}

// Another fleet's secret export is a database's master password: read at
// apply, by its ARN, with this fleet's credentials.
func TestSecretExportIsADatabasePassword(t *testing.T) {
	r := newWiringRig(t)
	r.apply(r.doc("pg-shared", nil))
	replica := r.doc("shop-eu", func(m map[string]any) {
		m["resources"] = []any{map[string]any{"address": "aws/postgres/shop-replica", "spec": map[string]any{
			"masterUsername": "shop", "masterPasswordSecret": map[string]any{"use": "db", "export": "password"},
			"minCapacity": 0.5, "maxCapacity": 1}}}
	})
	res := r.apply(replica)
	if res.Report == nil || len(res.Report.Applied) != 1 || res.Report.Applied[0].Status != engine.StatusDone {
		t.Fatalf("the replica: %+v", res.Report)
	}
	for _, b := range r.plans {
		if bytes.Contains(b, []byte(canary)) {
			t.Fatal("the canary password is in a plan")
		}
	}
}

package operations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
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
			if k == "PG_EU_PASSWORD" {
				return canary
			}
			return ""
		},
	}
	return &wiringRig{t: t, ops: New(env), dir: dir}
}

// doc reads a document of spec/testdata/wiring, edited.
func (r *wiringRig) doc(name string, edit func(m map[string]any)) *spec.Document {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "spec", "testdata", "wiring", name+".json"))
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

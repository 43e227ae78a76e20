package operations

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// apiRole makes the web-app api's execution role, which is the account's
// and not a kind infra manages.
func (r *wiringRig) apiRole() {
	r.t.Helper()
	ctx := context.Background()
	b, _, err := r.ops.env.Backends(ctx, []spec.Provider{spec.AWS})
	if err != nil {
		r.t.Fatal(err)
	}
	cfg := b[spec.AWS].(*awsprovider.Backend).Config()
	if _, err := iam.NewFromConfig(cfg).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("shop-api"),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)}); err != nil {
		r.t.Fatal(err)
	}
}

func actionOf(p *engine.Plan, addr string) (engine.Action, bool) {
	for _, a := range p.Actions {
		if a.Address.String() == addr {
			return a, true
		}
	}
	return engine.Action{}, false
}

// The acceptance of docs/components.md, against the emulator: two
// instances of web-app apply and plan empty; shop-b then cuts its private
// database and wires its api to pg-shared, and the plan deletes the cut
// member's resources under their own heading, sends the api's connection
// string again and changes nothing on the function, a contract.
func TestComponentsApplyAndCutAMember(t *testing.T) {
	r := newWiringRig(t)
	ctx := context.Background()
	r.apiRole()
	r.apply(r.doc("pg-shared", nil))

	res := r.apply(r.docAt("components/shop", nil))
	if n := res.Plan.Summary.Create; n != 12 {
		t.Fatalf("the first apply creates %d resources, want 12: %+v", n, res.Plan.Actions)
	}
	if a, _ := actionOf(res.Plan, "aws/postgres/shop-a-db-pg"); a.Component != "shop-a" || a.Member != "db.pg" {
		t.Fatalf("the database's action is not placed in its component: %+v", a)
	}
	p, err := r.plan(r.docAt("components/shop", nil))
	if err != nil || p.HasChanges() {
		t.Fatalf("the plan after the apply: %v %+v", err, p.Actions)
	}
	st, err := state.OpenFile(r.dir, "shop")
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := st.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if row, _ := ledger.Get(spec.Address{Provider: spec.AWS, Kind: spec.Postgres, Name: "shop-b-db-pg"}); row.Member != "shop-b.db.pg" {
		t.Fatalf("the ledger does not record the database's member: %+v", row)
	}

	p, err = r.plan(r.docAt("components/shop-moved", nil))
	if err != nil {
		t.Fatalf("plan of the cut: %v\n%s", err, rows(p, err))
	}
	for _, addr := range []string{"aws/postgres/shop-b-db-pg", "aws/secrets/shop-b-db-password"} {
		a, ok := actionOf(p, addr)
		if !ok || a.Action != engine.Delete || a.Cut != "shop-b.db" || a.Cause != "cut: members.db" {
			t.Errorf("%s: %+v, want a delete caused by the cut of shop-b.db", addr, a)
		}
	}
	if a, ok := actionOf(p, "aws/secrets/shop-b-api-db-url"); !ok || a.Action != engine.Update {
		t.Errorf("the api's connection string is not sent again: %+v", a)
	}
	if _, ok := actionOf(p, "aws/compute/shop-b-api-service"); ok {
		t.Errorf("the function that reads the connection string at run time has an action")
	}
	var contract bool
	for _, c := range p.Contracts {
		contract = contract || (c.Address.String() == "aws/compute/shop-b-api-service" && c.Reads.String() == "aws/secrets/shop-b-api-db-url")
	}
	if !contract || p.Summary.Delete != 2 || p.Summary.Changes() != 3 {
		t.Errorf("want 2 deletes, 1 update and the function's contract: %+v %+v", p.Summary, p.Contracts)
	}
	var text bytes.Buffer
	if err := render.Text(&text, p, render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := text.String(); !strings.Contains(out, "Deleted because a component member was cut:") || !strings.Contains(out, "cut: members.db") {
		t.Errorf("the text plan has no heading for the cut:\n%s", out)
	}
	if md := render.Markdown(p, render.MarkdownOptions{}); !strings.Contains(md, "cut: members.db") {
		t.Errorf("the PR comment does not name the cut:\n%s", md)
	}

	r.apply(r.docAt("components/shop-moved", nil))
	out, err := r.ops.Output(ctx, OutputRequest{Fleet: "pg-shared"})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, _ := out.Capabilities["eu"].Exports["endpoint"].Value.(string)
	b, _, err := r.ops.env.Backends(ctx, []spec.Provider{spec.AWS})
	if err != nil {
		t.Fatal(err)
	}
	secrets, _ := providers.ResourcesOf(b[spec.AWS], spec.Secrets)
	got, err := secrets.ReadSecretValue(ctx, "eu-west-3", "shop-b-api-db-url")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://shop:" + canary + "@" + endpoint + "/app"; endpoint == "" || got.Reveal() != want {
		t.Fatalf("shop-b's connection string is %q, want it to point at pg-shared: %q", got.Reveal(), want)
	}
	if p, err := r.plan(r.docAt("components/shop-moved", nil)); err != nil || p.HasChanges() {
		t.Fatalf("the plan after the cut: %v %+v", err, p.Actions)
	}
}

// cutEverythingBut edits the shop document to keep only instance keep,
// then cuts its members db and api: what is left is its bucket and queue.
func cutMembers(instance string, members ...string) func(m map[string]any) {
	return func(m map[string]any) {
		var kept []any
		for _, res := range m["resources"].([]any) {
			addr := res.(map[string]any)["address"].(string)
			drop := false
			for _, mem := range members {
				drop = drop || strings.Contains(addr, "/"+instance+"-"+mem+"-")
			}
			if !drop {
				kept = append(kept, res)
			}
		}
		m["resources"] = kept
		in := m["components"].(map[string]any)[instance].(map[string]any)["members"].(map[string]any)
		for path := range in {
			for _, mem := range members {
				if strings.HasPrefix(path, mem+".") {
					delete(in, path)
				}
			}
		}
		for _, mem := range members {
			in[mem] = map[string]any{"component": in[mem].(map[string]any)["component"], "cut": true}
		}
	}
}

// A cut is counted by the brake like any other delete.
func TestTheBrakeCountsACut(t *testing.T) {
	r := newWiringRig(t)
	r.apiRole()
	r.apply(r.docAt("components/shop", nil))
	both := cutMembers("shop-a", "db", "api")
	edit := func(m map[string]any) {
		both(m)
		cutMembers("shop-b", "db", "api")(m)
	}
	_, err := r.ops.Apply(context.Background(), ApplyRequest{Document: r.docAt("components/shop", edit), Confirm: func(*engine.Plan) error { return nil }})
	var brake *BrakeError
	if !errors.As(err, &brake) || brake.Destructive != 8 || brake.Managed != 12 {
		t.Fatalf("cutting 8 of 12: %v, want the brake", err)
	}
}

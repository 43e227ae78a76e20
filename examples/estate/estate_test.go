package estate_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

func TestMain(m *testing.M) { moto.Main(m) }

const region = "eu-west-3"

// TestTheEstateAppliesConvergesAndGoes applies the three fleets against
// moto in the order their wires need (network, dns, then app, which reads
// both), holds the function's environment to what the two providers
// published, plans each again and finds nothing to do, then destroys them
// in the reverse order and finds none of their resources left.
func TestTheEstateAppliesConvergesAndGoes(t *testing.T) {
	srv := moto.Fresh(t)
	// moto takes any bytes as a zip with its Docker off; it never runs
	// the function here.
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..") // where infra runs: the app's zip path is relative to it
	ctx := context.Background()
	dir := t.TempDir()
	ops := operations.New(operations.Env{
		Backends: operations.DefaultBackends(nil),
		Store:    func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) },
	})
	apply := func(doc *spec.Document, destroy bool) {
		t.Helper()
		res, err := ops.Apply(ctx, operations.ApplyRequest{Document: doc, Destroy: destroy, Confirm: func(*engine.Plan) error { return nil }})
		if err != nil {
			t.Fatalf("apply %s (destroy %v): %v %v", doc.Fleet, destroy, err, rows(res))
		}
	}
	network, dns, app := synth(t, "network"), synth(t, "dns"), synth(t, "app")
	estate := []*spec.Document{network, dns, app}
	for _, doc := range estate {
		apply(doc, false)
	}

	// The wires carried the values: the function's environment holds what
	// the network and the dns fleets published.
	net := published(t, ops, "estate-network", "network")
	zone := published(t, ops, "estate-dns", "zone")
	for _, k := range []string{"vpc-id", "zone-a", "subnet-a", "zone-b", "subnet-b"} {
		if net[k] == "" {
			t.Fatalf("estate-network published no %s: %v", k, net)
		}
	}
	if net["zone-a"] != region+"a" || net["zone-b"] != region+"b" {
		t.Errorf("the subnets' zones are %s and %s, want %sa and %sb", net["zone-a"], net["zone-b"], region, region)
	}
	fn := read(t, ctx, spec.LambdaFunction, "estate-app")
	env, _ := fn.Fields["env"].(map[string]any)
	want := map[string]string{
		"TABLE":   "estate-requests",
		"VPC_ID":  net["vpc-id"],
		"SUBNETS": net["zone-a"] + "=" + net["subnet-a"] + "," + net["zone-b"] + "=" + net["subnet-b"],
		"ZONE_ID": zone["zone-id"],
		"DOMAIN":  "estate.example.com",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("the function's %s is %v, want %q (env %v)", k, env[k], v, env)
		}
	}

	// The load balancer stands in the subnets the network published.
	lb := read(t, ctx, spec.ALB, "estate-app")
	wantSubnets := map[string]any{net["zone-a"]: net["subnet-a"], net["zone-b"]: net["subnet-b"]}
	if got := lb.Fields["subnets"]; !reflect.DeepEqual(got, wantSubnets) {
		t.Errorf("the load balancer's subnets are %v, want %v", got, wantSubnets)
	}
	if tg := read(t, ctx, spec.ALBTargetGroup, "estate-app"); tg.Fields["function"] != "estate-app" {
		t.Errorf("the target group forwards to %v, want the function estate-app", tg.Fields["function"])
	}
	// The record in the dns fleet's zone is the app fleet's, and points at
	// the load balancer.
	rec := read(t, ctx, spec.Route53Record, "api.estate.example.com:A")
	if rec.Owner != "estate-app" || rec.Fields["zone"] != zone["zone-id"] || rec.Fields["aliasDnsName"] != strings.ToLower(lb.Attributes["dnsName"]) {
		t.Errorf("the record is %s's, in zone %v, aliasing %v; want estate-app's, in %s, aliasing %s",
			rec.Owner, rec.Fields["zone"], rec.Fields["aliasDnsName"], zone["zone-id"], lb.Attributes["dnsName"])
	}
	if z := read(t, ctx, spec.Route53Zone, "estate.example.com"); z.Owner != "estate-dns" {
		t.Errorf("the zone is %s's, want estate-dns's", z.Owner)
	}
	if lb.Attributes["vpcId"] != net["vpc-id"] {
		t.Errorf("the load balancer is in %s, want the network's %s", lb.Attributes["vpcId"], net["vpc-id"])
	}
	// Its security group is the app's, in the network's VPC, open on 80.
	sg := read(t, ctx, spec.SecurityGroup, "estate-app-lb")
	if sg.Owner != "estate-app" || sg.Fields["vpc"] != net["vpc-id"] || !reflect.DeepEqual(sg.Fields["ingress"], []any{map[string]any{"port": 80.0, "cidr": "0.0.0.0/0"}}) {
		t.Errorf("the load balancer's group is %s's, in %v, with ingress %v; want estate-app's, in %s, open on 80", sg.Owner, sg.Fields["vpc"], sg.Fields["ingress"], net["vpc-id"])
	}
	// Reported under their ids: the labels are the declaration's.
	if got, want := lb.Fields["securityGroups"], map[string]any{sg.Attributes["groupId"]: sg.Attributes["groupId"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("the load balancer's security groups are %v, want %v", got, want)
	}

	for _, doc := range estate {
		p, err := ops.Plan(ctx, operations.PlanRequest{Document: doc})
		if err != nil {
			t.Fatalf("plan %s again: %v", doc.Fleet, err)
		}
		if p.HasChanges() {
			t.Errorf("%s does not converge: its next plan has changes: %+v", doc.Fleet, p.Actions)
		}
	}

	// Every resource of the estate, listed as the drivers list them: all
	// there before the destroys (so the listing can see them), none after.
	estateNames := map[spec.Kind][]string{
		spec.VPC:             {"estate-vpc"},
		spec.Subnet:          {"estate-a", "estate-b"},
		spec.InternetGateway: {"estate-igw"},
		spec.RouteTable:      {"estate-public"},
		spec.ALB:             {"estate-app"},
		spec.SecurityGroup:   {"estate-app-lb"},
		spec.ALBTargetGroup:  {"estate-app"},
		spec.ALBListener:     {"estate-app-http"},
		spec.Route53Record:   {"api.estate.example.com:A"},
		spec.Route53Zone:     {"estate.example.com"},
		spec.LambdaFunction:  {"estate-app"},
		spec.IAMRole:         {"estate-app"},
		spec.IAMPolicy:       {"estate-app-write"},
		spec.DynamoDBTable:   {"estate-requests"},
	}
	for k, names := range estateNames {
		seen := listed(t, ctx, k)
		for _, n := range names {
			if !seen[n] {
				t.Errorf("aws/%s/%s is not listed after the applies", k, n)
			}
		}
	}
	// While app claims network's capability, network cannot go first.
	res, err := ops.Apply(ctx, operations.ApplyRequest{Document: network, Destroy: true, Confirm: func(*engine.Plan) error { return nil }})
	if err == nil {
		t.Fatal("estate-network's destroy went through while estate-app reads its network")
	}
	if !slices.ContainsFunc(rows(res), func(r string) bool { return strings.Contains(r, "consumer-protected") }) {
		t.Fatalf("estate-network's destroy was refused, but not by a consumer-protected row: %v", err)
	}
	if !listed(t, ctx, spec.VPC)["estate-vpc"] {
		t.Fatal("the refused destroy of estate-network deleted its VPC")
	}
	for _, doc := range []*spec.Document{app, dns, network} {
		apply(doc, true)
	}
	for k, names := range estateNames {
		seen := listed(t, ctx, k)
		for _, n := range names {
			if seen[n] {
				t.Errorf("aws/%s/%s is left after the destroys", k, n)
			}
		}
	}
}

// rows are the diagnostics of an apply's plan, as printed.
func rows(res *operations.ApplyResult) []string {
	var out []string
	if res != nil && res.Plan != nil {
		for _, d := range res.Plan.Diagnostics {
			out = append(out, d.String())
		}
	}
	return out
}

// listed is the names the AWS driver of kind k lists in the region.
func listed(t *testing.T, ctx context.Context, k spec.Kind) map[string]bool {
	t.Helper()
	d := driver(t, ctx, k)
	rs, err := d.List(ctx, region)
	if err != nil {
		t.Fatalf("list aws/%s: %v", k, err)
	}
	out := map[string]bool{}
	for _, r := range rs {
		out[r.Name] = true
	}
	return out
}

// driver is the AWS driver of kind k, as infra makes it.
func driver(t *testing.T, ctx context.Context, k spec.Kind) providers.Driver {
	t.Helper()
	backends, _, err := operations.DefaultBackends(nil)(ctx, []spec.Provider{spec.AWS})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := backends[spec.AWS].Driver(k)
	if !ok {
		t.Fatalf("aws has no driver for %s", k)
	}
	return d
}

// TestTheZipIsTheHandler: handler.zip is app.py as it is, so the code the
// function runs is the code the repository shows. Rebuild it after editing
// app.py (a fixed timestamp keeps its codeSha256 steady):
//
//	cd examples/estate/app && python3 -c 'import zipfile; i = zipfile.ZipInfo("app.py", (2020, 1, 1, 0, 0, 0)); i.external_attr = 0o644 << 16; i.compress_type = zipfile.ZIP_DEFLATED; zipfile.ZipFile("handler.zip", "w").writestr(i, open("app.py", "rb").read())'
func TestTheZipIsTheHandler(t *testing.T) {
	src, err := os.ReadFile("app/app.py")
	if err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader("app/handler.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if len(z.File) != 1 || z.File[0].Name != "app.py" {
		t.Fatalf("handler.zip holds %d file(s), want app.py alone", len(z.File))
	}
	rc, err := z.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Error("handler.zip's app.py is not app/app.py: rebuild the zip (see this test's comment)")
	}
}

// synth synthesizes the fleet program examples/estate/NAME as infra does:
// by running it.
func synth(t *testing.T, name string) *spec.Document {
	t.Helper()
	doc, err := operations.LoadDocument(context.Background(), "examples/estate/"+name, operations.SynthProgram)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// published is the exports a fleet's last apply published for capability,
// as strings.
func published(t *testing.T, ops *operations.Operations, fleet, capability string) map[string]string {
	t.Helper()
	out, err := ops.Output(context.Background(), operations.OutputRequest{Fleet: fleet})
	if err != nil {
		t.Fatalf("output %s: %v", fleet, err)
	}
	c, ok := out.Capabilities[capability]
	if !ok {
		t.Fatalf("%s published no capability %q", fleet, capability)
	}
	m := map[string]string{}
	for k, e := range c.Exports {
		s, _ := e.Value.(string)
		m[k] = strings.TrimSpace(s)
	}
	return m
}

// read is the resource as the AWS driver of kind k reads it.
func read(t *testing.T, ctx context.Context, k spec.Kind, name string) providers.Resource {
	t.Helper()
	r, err := driver(t, ctx, k).Read(ctx, region, name)
	if err != nil {
		t.Fatalf("read aws/%s/%s: %v", k, name, err)
	}
	return r
}

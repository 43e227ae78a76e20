package operations

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/testbin"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// awsCLI runs awscli against the emulator, as a person building an
// estate by hand would.
func awsCLI(t *testing.T, srv *moto.Server, args ...string) string {
	t.Helper()
	cmd := exec.Command("aws", append(args, "--region", "eu-west-3", "--endpoint-url", srv.URL)...)
	cmd.Env = append(os.Environ(), srv.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// handMadeEstate is what a team made with awscli before infra: queues,
// buckets, secrets, a security group and a database, with settings and
// tags; and a queue another fleet owns.
func handMadeEstate(t *testing.T, srv *moto.Server) {
	awsCLI(t, srv, "sqs", "create-queue", "--queue-name", "mail", "--attributes", "VisibilityTimeout=45", "--tags", "team=mail")
	awsCLI(t, srv, "sqs", "create-queue", "--queue-name", "reports", "--attributes", "DelaySeconds=5")
	awsCLI(t, srv, "sqs", "create-queue", "--queue-name", "billing-jobs", "--tags", spec.OwnershipTagKey+"=billing")
	awsCLI(t, srv, "s3api", "create-bucket", "--bucket", "shop-assets", "--create-bucket-configuration", "LocationConstraint=eu-west-3")
	awsCLI(t, srv, "s3api", "put-bucket-versioning", "--bucket", "shop-assets", "--versioning-configuration", "Status=Enabled")
	awsCLI(t, srv, "s3api", "put-bucket-tagging", "--bucket", "shop-assets", "--tagging", "TagSet=[{Key=team,Value=web}]")
	awsCLI(t, srv, "s3api", "create-bucket", "--bucket", "shop-logs", "--create-bucket-configuration", "LocationConstraint=eu-west-3")
	awsCLI(t, srv, "secretsmanager", "create-secret", "--name", "shop-db-password", "--description", "the database's master password",
		"--secret-string", "hand-made-password", "--tags", "Key=team,Value=data")
	awsCLI(t, srv, "ec2", "create-security-group", "--group-name", "shop-web", "--description", "shop web tier")
	awsCLI(t, srv, "ec2", "authorize-security-group-ingress", "--group-name", "shop-web", "--protocol", "tcp", "--port", "443", "--cidr", "0.0.0.0/0")
	awsCLI(t, srv, "ec2", "create-security-group", "--group-name", "shop-dns", "--description", "shop resolvers")
	awsCLI(t, srv, "ec2", "authorize-security-group-ingress", "--group-name", "shop-dns", "--protocol", "udp", "--port", "53", "--cidr", "10.0.0.0/8")
	awsCLI(t, srv, "ec2", "authorize-security-group-ingress", "--group-name", "shop-dns", "--protocol", "tcp", "--port", "53", "--cidr", "10.0.0.0/8")
	awsCLI(t, srv, "rds", "create-db-cluster", "--db-cluster-identifier", "shop-db", "--engine", "aurora-postgresql", "--engine-version", "16.6",
		"--master-username", "dbadmin", "--master-user-password", "hand-made-password",
		"--serverless-v2-scaling-configuration", "MinCapacity=0.5,MaxCapacity=2", "--tags", "Key=team,Value=data")
}

// The round trip of issue 16 against the emulator: an estate made with
// awscli is imported into an empty fleet; the declarations compile, and
// the plan adopts every resource with the ownership tag as its only
// change, zero updates and zero creates; apply tags and records them, and
// the next plan is empty. The queue another fleet owns is never offered.
func TestImportRoundTripOfAnEstateMadeByHand(t *testing.T) {
	srv := moto.Fresh(t)
	handMadeEstate(t, srv)
	dir := t.TempDir()
	ops := New(Env{Backends: DefaultBackends(nil),
		Store:  func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) },
		Getenv: func(string) string { return "" }})
	ctx := context.Background()
	empty := &spec.Document{APIVersion: spec.APIVersion, Fleet: "shop", Accounts: map[spec.Provider]string{spec.AWS: "123456789012"},
		Placement: map[spec.Provider]string{spec.AWS: "eu-west-3"}, Resources: []spec.Resource{}}

	res, err := ops.Import(ctx, ImportRequest{Document: empty})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Declarations {
		got = append(got, d.Resource.Address)
		if !d.Adopt {
			t.Errorf("%s: declared new, want adopted", d.Resource.Address)
		}
	}
	want := "aws/object-store/shop-assets aws/object-store/shop-logs aws/postgres/shop-db aws/queues/mail aws/queues/reports aws/secrets/shop-db-password aws/security-group/shop-dns aws/security-group/shop-web"
	if strings.Join(got, " ") != want {
		t.Fatalf("import offers\n  %s\nwant\n  %s", strings.Join(got, " "), want)
	}
	if res.Owned != 1 {
		t.Errorf("passed over %d owned, want 1 (billing's queue)", res.Owned)
	}
	byAddr := map[string]Declaration{}
	for _, d := range res.Declarations {
		byAddr[d.Resource.Address] = d
	}
	if s := byAddr["aws/queues/mail"].Resource.Spec; s["visibilityTimeoutSec"] != 45.0 || asMap(s["tags"])["team"] != "mail" {
		t.Errorf("the mail queue's fields: %v", s)
	}
	if s := byAddr["aws/postgres/shop-db"].Resource.Spec; asMap(s["masterPasswordSecret"])["ref"] != "aws/secrets/shop-db-password" || s["masterUsername"] != "dbadmin" {
		t.Errorf("the database's fields: %v", s)
	}
	if notes := byAddr["aws/secrets/shop-db-password"].Notes; len(notes) == 0 || !strings.Contains(notes[0], "never reveals") {
		t.Errorf("the secret's notes: %v", notes)
	}

	if notes := strings.Join(byAddr["aws/queues/reports"].Notes, " "); !strings.Contains(notes, "DelaySeconds=5") {
		t.Errorf("the reports queue's notes do not name its delay: %v", notes)
	}
	if notes := strings.Join(byAddr["aws/security-group/shop-dns"].Notes, " "); !strings.Contains(notes, "1 rule(s) the spec cannot express (cidr 10.0.0.0/8, port 53, protocol udp") {
		t.Errorf("the resolvers group's notes do not name its UDP rule: %v", notes)
	}

	// The groups are in the default VPC, whose id no address has: vpc is
	// left unset (that VPC, never compared), not a dangling reference.
	if web := byAddr["aws/security-group/shop-web"]; web.Resource.Spec["vpc"] != nil || !strings.Contains(strings.Join(web.Notes, " "), "vpc: the cloud records it by identity") {
		t.Errorf("the web group's vpc is %v, notes %v; want it unset, saying why", web.Resource.Spec["vpc"], web.Notes)
	}

	doc, err := MergeImport(empty, res.Declarations)
	if err != nil {
		t.Fatal(err)
	}
	if _, diags := spec.Compile(doc); len(diags) != 0 {
		t.Fatalf("the imported document does not check clean: %v", diags)
	}
	goDoc := importedProgram(t, doc, res.Declarations)
	if g, w := resourcesOf(t, goDoc), resourcesOf(t, doc); g != w {
		t.Fatalf("the Go program declares\n%s\nthe document\n%s", g, w)
	}
	if !slices.Equal(slices.Sorted(slices.Values(goDoc.Adopt)), slices.Sorted(slices.Values(doc.Adopt))) {
		t.Fatalf("the Go program adopts %v, the document %v", goDoc.Adopt, doc.Adopt)
	}
	plan, err := ops.Plan(ctx, PlanRequest{Document: goDoc})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Applicable || len(plan.Actions) != len(res.Declarations) {
		t.Fatalf("applicable %v, %d actions for %d declarations: %+v %v", plan.Applicable, len(plan.Actions), len(res.Declarations), plan.Actions, plan.Diagnostics)
	}
	for _, a := range plan.Actions {
		if a.Action != engine.Adopt {
			t.Errorf("%s: %s, want adopt", a.Address, a.Action)
			continue
		}
		for _, c := range a.Changes {
			if a.Address.String() == "aws/security-group/shop-dns" && c.Field == "ingress" {
				continue // the UDP rule the spec cannot hold, revoked, as its note says
			}
			if c.Field != spec.TagsField {
				t.Errorf("%s: changes %s (%v -> %v): the declaration should match what exists", a.Address, c.Field, c.Before, c.After)
			}
		}
	}
	if got, _ := ops.Import(ctx, ImportRequest{Document: doc}); len(got.Declarations) != 0 {
		t.Fatalf("import of the imported fleet offers %v again", got.Declarations)
	}

	if _, err := ops.Apply(ctx, ApplyRequest{Document: doc, Confirm: func(*engine.Plan) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	tags := awsCLI(t, srv, "sqs", "list-queue-tags", "--queue-url", queueURL(t, srv, "mail"), "--output", "json")
	if !strings.Contains(tags, `"`+spec.OwnershipTagKey+`": "shop"`) || !strings.Contains(tags, `"team": "mail"`) {
		t.Fatalf("after apply the mail queue's tags are %s", tags)
	}
	again, err := ops.Plan(ctx, PlanRequest{Document: doc})
	if err != nil || again.HasChanges() {
		t.Fatalf("the plan after the apply: %v %+v", err, again.Actions)
	}
	st, _ := state.OpenFile(dir, "shop")
	ledger, err := st.LoadLedger(ctx)
	if err != nil || len(ledger.Rows) != len(res.Declarations) {
		t.Fatalf("the ledger records %d rows, want %d: %v", len(ledger.Rows), len(res.Declarations), err)
	}
}

func queueURL(t *testing.T, srv *moto.Server, name string) string {
	out := awsCLI(t, srv, "sqs", "get-queue-url", "--queue-name", name, "--query", "QueueUrl", "--output", "text")
	return strings.TrimSpace(out)
}

// importedProgram writes the declarations as Go, the way `infra import`
// does for a Go fleet, builds the program and returns what it synthesizes.
func importedProgram(t *testing.T, doc *spec.Document, decls []Declaration) *spec.Document {
	t.Helper()
	in := render.GoImport{Fleet: doc.Fleet, Accounts: doc.Accounts, Placement: doc.Placement, Main: true, Notes: map[string][]string{}}
	for _, d := range decls {
		in.Resources = append(in.Resources, d.Resource)
		if d.Adopt {
			in.Adopt = append(in.Adopt, d.Resource.Address)
		}
		in.Notes[d.Resource.Address] = d.Notes
	}
	files, err := render.GoSource(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := spec.DecodeDocument(testbin.FleetProgram(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if _, diags := spec.Compile(out); len(diags) != 0 {
		t.Fatalf("the Go program does not check clean: %v\n%s", diags, files["imported.go"])
	}
	return out
}

// resourcesOf is the document's resources, one encoded line each, sorted.
func resourcesOf(t *testing.T, doc *spec.Document) string {
	var lines []string
	for _, r := range doc.Resources {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

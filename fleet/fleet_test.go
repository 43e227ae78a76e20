package fleet_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/gcp"
	"github.com/infra-iac/infra/fleet/scaleway"
	"github.com/infra-iac/infra/internal/sdkshape"
	"github.com/infra-iac/infra/spec"
)

const (
	awsAccount = "123456789012"
	scwProject = "11111111-2222-3333-4444-555555555555"
	gcpProject = "infra-tests-1"
)

// synth returns the document as JSON trees and the diagnostics.
func synth(t *testing.T, f *fleet.Fleet) (*spec.Document, []spec.Diagnostic) {
	t.Helper()
	doc, diags := f.Synth()
	// The document must survive the JSON round trip unchanged: what Synth
	// returns is what synth prints.
	data, err := spec.EncodeDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := spec.DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, doc) {
		t.Fatalf("the document changes in a JSON round trip:\n%s", data)
	}
	return doc, diags
}

func specOf(t *testing.T, doc *spec.Document, addr string) map[string]any {
	t.Helper()
	r, ok := doc.Lookup(addr)
	if !ok {
		t.Fatalf("%s is not in the document", addr)
	}
	return r.Spec
}

// wantRow fails unless some diagnostic at addr contains every fragment.
func wantRow(t *testing.T, diags []spec.Diagnostic, addr string, fragments ...string) {
	t.Helper()
	for _, d := range diags {
		if d.Subject != addr {
			continue
		}
		all := true
		for _, f := range fragments {
			if !strings.Contains(d.Message, f) {
				all = false
			}
		}
		if all {
			return
		}
	}
	t.Errorf("no diagnostic at %s containing %q; got:\n%s", addr, fragments, table(diags))
}

func table(diags []spec.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

func noErrors(t *testing.T, diags []spec.Diagnostic) {
	t.Helper()
	if spec.HasErrors(diags) {
		t.Fatalf("unexpected errors:\n%s", table(diags))
	}
}

func TestUnsetOptionalStaysUnknown(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	cloud.ObjectStore("a", fleet.ObjectStoreSpec{})
	cloud.ObjectStore("b", fleet.ObjectStoreSpec{Versioning: fleet.Set(false), Tags: map[string]string{}})
	doc, diags := synth(t, f)
	noErrors(t, diags)
	if s := specOf(t, doc, "aws/object-store/a"); len(s) != 0 {
		t.Errorf("an unset spec wrote %v; every field must stay absent", s)
	}
	// Go's zero values, set explicitly, are enforced: false is not unknown,
	// and an empty non-nil map says "no tags".
	want := map[string]any{"versioning": false, "tags": map[string]any{}}
	if s := specOf(t, doc, "aws/object-store/b"); !reflect.DeepEqual(s, want) {
		t.Errorf("spec = %v, want %v", s, want)
	}
}

func TestOptionalGet(t *testing.T) {
	var unset fleet.Optional[int]
	if _, ok := unset.Get(); ok || unset.IsSet() {
		t.Error("the zero Optional is set")
	}
	if v, ok := fleet.Set(3).Get(); !ok || v != 3 {
		t.Errorf("Set(3).Get() = %v, %v", v, ok)
	}
}

func TestPlacementAndRegions(t *testing.T) {
	f := fleet.New("spread")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	scw := scaleway.Use(f, scwProject, scaleway.Paris)
	cloud.Queues("paris", fleet.QueuesSpec{})
	cloud.In(aws.Oregon).Queues("oregon", fleet.QueuesSpec{})
	cloud.In(aws.RegionRaw("us-gov-west-1")).Queues("gov", fleet.QueuesSpec{})
	scw.In(scaleway.Warsaw).Queues("spread-warsaw", fleet.QueuesSpec{})
	doc, diags := synth(t, f)
	noErrors(t, diags)
	if doc.Accounts[spec.AWS] != awsAccount || doc.Accounts[spec.Scaleway] != scwProject {
		t.Errorf("accounts = %v", doc.Accounts)
	}
	if doc.Placement[spec.AWS] != "eu-west-3" || doc.Placement[spec.Scaleway] != "fr-par" {
		t.Errorf("placement = %v", doc.Placement)
	}
	for addr, want := range map[string]string{
		"aws/queues/paris":              "",
		"aws/queues/oregon":             "us-west-2",
		"aws/queues/gov":                "raw:us-gov-west-1",
		"scaleway/queues/spread-warsaw": "pl-waw",
	} {
		r, _ := doc.Lookup(addr)
		if r == nil || r.Region != want {
			t.Errorf("%s: region = %+v, want %q", addr, r, want)
		}
	}
}

func TestUseTwiceDifferently(t *testing.T) {
	f := fleet.New("shop")
	aws.Use(f, awsAccount, aws.Paris)
	aws.Use(f, awsAccount, aws.Paris) // the same again is harmless
	aws.Use(f, "210987654321", aws.Ireland)
	_, diags := f.Synth()
	wantRow(t, diags, "accounts.aws", "given twice", awsAccount, "210987654321")
	wantRow(t, diags, "placement.aws", "given twice", "eu-west-3", "eu-west-1")
}

func TestInstanceTypes(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	sg := cloud.SecurityGroup("web", "web tier", aws.SecurityGroupSpec{})
	cloud.Instance("typed", "latest", aws.T3.Nano(), sg, aws.InstanceSpec{})
	cloud.Instance("raw", "latest", aws.InstanceTypeRaw("p5e.48xlarge"), sg, aws.InstanceSpec{})
	cloud.Instance("unset", "latest", aws.InstanceType{}, sg, aws.InstanceSpec{})
	doc, diags := synth(t, f)
	if got := specOf(t, doc, "aws/aws-instance/typed")["instanceType"]; got != "t3.nano" {
		t.Errorf("instanceType = %v", got)
	}
	if got := specOf(t, doc, "aws/aws-instance/raw")["instanceType"]; got != "raw:p5e.48xlarge" {
		t.Errorf("instanceType = %v", got)
	}
	if aws.T3.Nano().String() != "t3.nano" || aws.InstanceTypeRaw("p5e.48xlarge").String() != "p5e.48xlarge" {
		t.Error("InstanceType.String is not the AWS name")
	}
	// The zero InstanceType is the only way to leave it out, and check
	// names it.
	wantRow(t, diags, "aws/aws-instance/unset", `missing required field "instanceType"`)
	if n := len(diags); n != 1 {
		t.Errorf("want exactly one row, got:\n%s", table(diags))
	}
}

// TestEveryInstanceTypeIsKnown holds the generated methods to spec's table:
// every family's every size is a type check accepts.
func TestEveryInstanceTypeIsKnown(t *testing.T) {
	n := 0
	for _, fam := range spec.InstanceFamilies() {
		for _, size := range fam.Sizes {
			if !spec.InstanceTypeKnown(fam.Name + "." + size) {
				t.Errorf("%s.%s unknown", fam.Name, size)
			}
			n++
		}
	}
	// The generated methods are checked against the table by the gen test;
	// here, one method per ladder shape is called to be sure they compile to
	// the right names.
	for typ, want := range map[aws.InstanceType]string{
		aws.T3.Nano():          "t3.nano",
		aws.T3.X2Large():       "t3.2xlarge",
		aws.M6i.X32Large():     "m6i.32xlarge",
		aws.M7i.Metal24XL():    "m7i.metal-24xl",
		aws.M7iFlex.X16Large(): "m7i-flex.16xlarge",
		aws.C5.X9Large():       "c5.9xlarge",
		aws.R8g.Metal48XL():    "r8g.metal-48xl",
		aws.M5.Metal():         "m5.metal",
		aws.T4g.Micro():        "t4g.micro",
		aws.C7a.X48Large():     "c7a.48xlarge",
		aws.I4i.XLarge():       "i4i.xlarge",
		aws.M6g.Medium():       "m6g.medium",
		aws.R6a.X48Large():     "r6a.48xlarge",
		aws.C8g.X24Large():     "c8g.24xlarge",
		aws.T3a.Small():        "t3a.small",
		aws.C7iFlex.Large():    "c7i-flex.large",
		aws.R7g.X16Large():     "r7g.16xlarge",
		aws.M7a.Metal48XL():    "m7a.metal-48xl",
		aws.T2.Medium():        "t2.medium",
	} {
		if typ.String() != want {
			t.Errorf("%v, want %s", typ, want)
		}
	}
	if n == 0 {
		t.Fatal("spec has no instance types")
	}
}

func TestZeroRefIsReportedNotPanicked(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	var sg fleet.Ref[aws.SecurityGroup]
	cloud.Instance("web", "latest", aws.T3.Micro(), sg, aws.InstanceSpec{})
	var never fleet.Ref[aws.Postgres]
	cloud.Queues("q", fleet.QueuesSpec{})
	cloud.Compute("api", fleet.Format("{}", aws.EndpointOf(never)), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{})
	var pw fleet.Ref[aws.Secrets]
	cloud.Secrets("url", fleet.Composed("x{}", aws.SecretValueOf(pw)), fleet.SecretsSpec{})
	scw := scaleway.Use(f, scwProject, scaleway.Paris)
	ns := scw.FunctionNamespace("ns", scaleway.FunctionNamespaceSpec{})
	var bucket fleet.Ref[aws.ObjectStore]
	scw.Function("fn", ns, "python311", scaleway.FunctionSpec{SourceBucket: fleet.Bucket(bucket)})

	_, diags := f.Synth()
	wantRow(t, diags, "aws/aws-instance/web", `field "securityGroup"`, "zero fleet.Ref")
	wantRow(t, diags, "aws/compute/api", `field "image"`, "endpoint", "zero fleet.Ref")
	wantRow(t, diags, "aws/secrets/url", `field "value"`, "secret never declared")
	wantRow(t, diags, "scaleway/scaleway-function/fn", `field "sourceBucket"`, "zero fleet.Ref")
	if s := (fleet.Ref[aws.Queues]{}).String(); s != "(zero fleet.Ref)" {
		t.Errorf("zero Ref prints %q", s)
	}
}

func TestNilFleetAndCloudDoNotPanic(t *testing.T) {
	var f *fleet.Fleet
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := cloud.Queues("jobs", fleet.QueuesSpec{})
	if q.Address().String() != "aws/queues/jobs" {
		t.Errorf("a handle from a nil fleet still names its resource, got %v", q)
	}
	fleet.Forget[aws.Queues](f, "old")
	fleet.Exclude[aws.Queues](f, "x", "y")
	if f.Name() != "" {
		t.Error("nil fleet has a name")
	}
	_, diags := f.Synth()
	wantRow(t, diags, "fleet", "no fleet")

	var c *aws.Cloud
	if r := c.In(aws.Paris).ObjectStore("x", fleet.ObjectStoreSpec{}); !r.Address().IsZero() {
		t.Error("a nil Cloud declared something")
	}
	var s *scaleway.Cloud
	s.In(scaleway.Paris).Queues("x", fleet.QueuesSpec{})

	var out, errs bytes.Buffer
	if code := fleet.Run(nil, []string{"synth"}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "no fleet") {
		t.Errorf("Run(nil) = %d, stderr %q", code, errs.String())
	}
}

// The problems types cannot rule out are in the document, so check finds
// them with its own rows; Synth reports them together with the SDK's.
func TestWhatOnlyCheckCatches(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	cloud.Queues("jobs", fleet.QueuesSpec{})
	cloud.Queues("jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(60)})
	fleet.Forget[aws.Queues](f, "jobs")
	cloud.Secrets("plain", fleet.Composed("hunter2"), fleet.SecretsSpec{})
	cloud.Secrets("lit", fleet.Composed("{}", fleet.Lit("hunter2")), fleet.SecretsSpec{})
	fleet.Exclude[aws.ObjectStore](f, "legacy-*", "")
	sg := cloud.In(aws.Ireland).SecurityGroup("web", "web tier", aws.SecurityGroupSpec{})
	cloud.Instance("app", "latest", aws.T3.Micro(), sg, aws.InstanceSpec{})
	cloud.In("pl-waw").Queues("typo", fleet.QueuesSpec{})
	cloud.ObjectStore("Bad Name", fleet.ObjectStoreSpec{})
	cloud.ObjectStore("both", fleet.ObjectStoreSpec{})
	cloud.S3Bucket("both", aws.S3BucketSpec{})

	doc, diags := f.Synth()
	wantRow(t, diags, "aws/queues/jobs", "duplicate address")
	wantRow(t, diags, "aws/queues/jobs", "forget of a resource that is still declared")
	wantRow(t, diags, "aws/secrets/plain", "plaintext in disguise")
	wantRow(t, diags, "aws/secrets/lit", "plaintext in disguise")
	wantRow(t, diags, "aws/object-store/legacy-*", "without why")
	wantRow(t, diags, "aws/aws-instance/app", "cannot cross regions")
	wantRow(t, diags, "aws/queues/typo", `"pl-waw"`, "scaleway")
	wantRow(t, diags, "aws/object-store/Bad Name", "space")
	wantRow(t, diags, "aws/s3-bucket/both", "same physical resource")
	// Synth's rows are exactly check's: the SDK adds none of its own here.
	if want := spec.Validate(doc); !reflect.DeepEqual(diags, want) {
		t.Errorf("Synth's rows differ from check's:\n%s\nvs\n%s", table(diags), table(want))
	}
}

func TestForgetAndExclude(t *testing.T) {
	f := fleet.New("shop")
	aws.Use(f, awsAccount, aws.Paris)
	fleet.Forget[aws.Queues](f, "old-jobs")
	fleet.Forget[scaleway.Function](f, "old-fn")
	fleet.Exclude[aws.ObjectStore](f, "legacy-*", "owned by the data team")
	doc, diags := synth(t, f)
	noErrors(t, diags)
	if want := []string{"aws/queues/old-jobs", "scaleway/scaleway-function/old-fn"}; !reflect.DeepEqual(doc.Forget, want) {
		t.Errorf("forget = %v", doc.Forget)
	}
	if want := []spec.Exclusion{{Address: "aws/object-store/legacy-*", Why: "owned by the data team"}}; !reflect.DeepEqual(doc.Exclusions, want) {
		t.Errorf("exclusions = %v", doc.Exclusions)
	}
}

func TestFormat(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := cloud.Queues("jobs", fleet.QueuesSpec{})
	pw := cloud.Secrets("pw", fleet.FromEnv("PW"), fleet.SecretsSpec{})
	db := cloud.Postgres("db", "admin", pw, fleet.PostgresSpec{})
	cases := []struct {
		name string
		out  fleet.Output[string]
		want any
	}{
		{"implicit", fleet.Format("{}:{}", aws.EndpointOf(db), aws.PortOf(db)), map[string]any{"composed": map[string]any{
			"format": "{0}:{1}", "args": []any{
				map[string]any{"observed": "aws/postgres/db", "attribute": "endpoint"},
				map[string]any{"observed": "aws/postgres/db", "attribute": "port"},
			}}}},
		{"explicit and escaped", fleet.Format("{{{0}}}-{0}", aws.URLOf(q)), map[string]any{"composed": map[string]any{
			"format": "{{{0}}}-{0}", "args": []any{map[string]any{"observed": "aws/queues/jobs", "attribute": "url"}}}}},
		{"literal number", fleet.Format("port {}", fleet.Lit(5432)), map[string]any{"composed": map[string]any{
			"format": "port {0}", "args": []any{"5432"}}}},
		{"join", fleet.Join("/", aws.URLOf(q), fleet.Lit("x")), map[string]any{"composed": map[string]any{
			"format": "{0}/{1}", "args": []any{map[string]any{"observed": "aws/queues/jobs", "attribute": "url"}, "x"}}}},
		{"join braces", fleet.Join("{}", fleet.Lit("a"), fleet.Lit("b")), map[string]any{"composed": map[string]any{
			"format": "{0}{{}}{1}", "args": []any{"a", "b"}}}},
		{"lit", fleet.Lit("nginx"), "nginx"},
	}
	for i, c := range cases {
		cloud.Compute(fmt.Sprintf("c%d", i), c.out, fleet.Lit("arn:aws:iam::123456789012:role/x"), fleet.ComputeSpec{})
	}
	doc, diags := synth(t, f)
	noErrors(t, diags)
	for i, c := range cases {
		got := specOf(t, doc, fmt.Sprintf("aws/compute/c%d", i))["image"]
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: image = %#v, want %#v", c.name, got, c.want)
		}
	}
}

func TestFormatMistakes(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := cloud.Queues("jobs", fleet.QueuesSpec{})
	role := fleet.Lit("arn:aws:iam::123456789012:role/x")
	for name, out := range map[string]fleet.Output[string]{
		"unclosed":  fleet.Format("{", aws.URLOf(q)),
		"unmatched": fleet.Format("}{}", aws.URLOf(q)),
		"named":     fleet.Format("{url}", aws.URLOf(q)),
		"too-few":   fleet.Format("{}{}", aws.URLOf(q)),
		"too-many":  fleet.Format("{}", aws.URLOf(q), aws.ARNOf(q)),
		"unset-arg": fleet.Format("{}", fleet.Output[string]{}),
		"nil-arg":   fleet.Format("{}", nil),
	} {
		cloud.Compute(name, out, role, fleet.ComputeSpec{})
	}
	var out, errs bytes.Buffer
	code := fleet.Run(f, []string{"synth"}, &out, &errs)
	_, diags := f.Synth()
	wantRow(t, diags, "aws/compute/unclosed", "unclosed {")
	wantRow(t, diags, "aws/compute/unmatched", "unmatched }")
	wantRow(t, diags, "aws/compute/named", "{url} is not a placeholder")
	wantRow(t, diags, "aws/compute/too-few", "placeholder 1 but only 1 argument")
	wantRow(t, diags, "aws/compute/too-many", "argument 1 is not used")
	wantRow(t, diags, "aws/compute/unset-arg", "unset fleet.Output")
	wantRow(t, diags, "aws/compute/nil-arg", "argument 0: nil")
	// synth still prints the document, but says the program is wrong.
	if code != 1 || out.Len() == 0 || !strings.Contains(errs.String(), "unclosed {") {
		t.Errorf("synth = %d, stdout %d bytes, stderr %q", code, out.Len(), errs.String())
	}
}

func TestOutputCannotBePrinted(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	pw := cloud.Secrets("pw", fleet.FromEnv("PW"), fleet.SecretsSpec{})
	db := cloud.Postgres("db", "admin", pw, fleet.PostgresSpec{})
	for _, s := range []string{fmt.Sprint(aws.EndpointOf(db)), fmt.Sprintf("%v %s %+v %#v", aws.EndpointOf(db), aws.EndpointOf(db), aws.EndpointOf(db), aws.EndpointOf(db))} {
		if strings.Contains(s, "aws/postgres") || !strings.Contains(s, "(known after apply)") {
			t.Errorf("an Output printed as %q", s)
		}
	}
	if s := fmt.Sprintf("%v|%#v", aws.SecretValueOf(pw), aws.SecretValueOf(pw)); s != "(sensitive)|(sensitive)" {
		t.Errorf("a SecretValue printed as %q", s)
	}
	if s := fmt.Sprint(fleet.Lit("nginx")); s != "nginx" {
		t.Errorf("a literal Output printed as %q", s)
	}
}

func TestEnv(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := cloud.Queues("jobs", fleet.QueuesSpec{})
	base := fleet.Literals(map[string]string{"MODE": "prod", "LEVEL": "info"})
	env := base.Merge(fleet.Env{"QUEUE_URL": aws.URLOf(q)}, fleet.Env{"LEVEL": fleet.Lit("debug")})
	if len(base) != 2 {
		t.Error("Merge changed its receiver")
	}
	role := fleet.Lit("arn:aws:iam::123456789012:role/x")
	cloud.Compute("api", fleet.Lit("nginx"), role, fleet.ComputeSpec{Env: env})
	cloud.Compute("hole", fleet.Lit("nginx"), role, fleet.ComputeSpec{Env: fleet.Env{"X": {}}})
	cloud.Compute("none", fleet.Lit("nginx"), role, fleet.ComputeSpec{Env: fleet.Literals(nil)})
	doc, diags := synth(t, f)
	want := map[string]any{
		"MODE": "prod", "LEVEL": "debug",
		"QUEUE_URL": map[string]any{"observed": "aws/queues/jobs", "attribute": "url"},
	}
	if got := specOf(t, doc, "aws/compute/api")["env"]; !reflect.DeepEqual(got, want) {
		t.Errorf("env = %v", got)
	}
	if _, set := specOf(t, doc, "aws/compute/none")["env"]; set {
		t.Error("a nil Env was written")
	}
	wantRow(t, diags, "aws/compute/hole", `"X" has no value`)
}

func TestMultiCloudBucketReference(t *testing.T) {
	f := fleet.New("multi")
	a := aws.Use(f, awsAccount, aws.Paris)
	s := scaleway.Use(f, scwProject, scaleway.Paris)
	assets := fleet.ObjectStoreSpec{Versioning: fleet.Set(true)}
	onAWS := a.ObjectStore("assets-aws", assets)
	s.ObjectStore("assets-scw", assets)
	locked := a.S3Bucket("locked", aws.S3BucketSpec{ObjectLock: fleet.Set(true)})
	ns := s.FunctionNamespace("fns", scaleway.FunctionNamespaceSpec{})
	s.Function("reader", ns, "python311", scaleway.FunctionSpec{SourceBucket: fleet.Bucket(onAWS)})
	s.Function("locked-reader", ns, "python311", scaleway.FunctionSpec{SourceBucket: fleet.Bucket(locked)})
	doc, diags := synth(t, f)
	noErrors(t, diags)
	if got := specOf(t, doc, "scaleway/scaleway-function/reader")["sourceBucket"]; !reflect.DeepEqual(got, map[string]any{"ref": "aws/object-store/assets-aws"}) {
		t.Errorf("sourceBucket = %v", got)
	}
	if !reflect.DeepEqual(specOf(t, doc, "aws/object-store/assets-aws"), specOf(t, doc, "scaleway/object-store/assets-scw")) {
		t.Error("one portable spec gave two different documents")
	}
}

// TestSynthIsASnapshot: a returned document is the caller's; changing it
// does not change the fleet, and later declarations do not change it.
func TestSynthIsASnapshot(t *testing.T) {
	f := fleet.New("shop")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	tags := map[string]string{"team": "web"}
	cloud.Queues("jobs", fleet.QueuesSpec{Tags: tags})
	tags["team"] = "changed after declaring"
	doc, _ := f.Synth()
	doc.Resources[0].Spec["visibilityTimeoutSec"] = 1.0
	doc.Accounts[spec.AWS] = "x"
	cloud.Queues("more", fleet.QueuesSpec{})
	again, _ := f.Synth()
	if len(doc.Resources) != 1 || len(again.Resources) != 2 {
		t.Error("a later declaration changed an earlier document")
	}
	if _, ok := again.Resources[0].Spec["visibilityTimeoutSec"]; ok || again.Accounts[spec.AWS] != awsAccount {
		t.Error("editing a document changed the fleet")
	}
	if got := again.Resources[0].Spec["tags"]; !reflect.DeepEqual(got, map[string]any{"team": "web"}) {
		t.Errorf("tags = %v: a value is taken when it is declared", got)
	}
}

func TestRunVerbs(t *testing.T) {
	f := fleet.New("shop")
	aws.Use(f, awsAccount, aws.Paris).Queues("jobs", fleet.QueuesSpec{})
	var out, errs bytes.Buffer
	if code := fleet.Run(f, []string{"synth"}, &out, &errs); code != 0 || errs.Len() != 0 {
		t.Fatalf("synth = %d, stderr %q", code, errs.String())
	}
	doc, err := spec.DecodeDocument(out.Bytes())
	if err != nil || doc.Fleet != "shop" || len(doc.Resources) != 1 {
		t.Errorf("synth printed %s (%v)", out.String(), err)
	}
	out.Reset()
	if code := fleet.Run(f, []string{"--state", "synth-dir", "synth"}, &out, &errs); code != 0 || out.Len() == 0 {
		t.Errorf("a global flag's value was taken for the verb: %d", code)
	}

	// With a problem the document cannot carry, every other verb refuses,
	// and shows check's rows with the SDK's.
	bad := fleet.New("shop")
	cloud := aws.Use(bad, awsAccount, aws.Paris)
	cloud.Instance("web", "latest", aws.T3.Micro(), fleet.Ref[aws.SecurityGroup]{}, aws.InstanceSpec{})
	cloud.Queues("dup", fleet.QueuesSpec{})
	cloud.Queues("dup", fleet.QueuesSpec{})
	errs.Reset()
	if code := fleet.Run(bad, []string{"check"}, &out, &errs); code != 1 {
		t.Errorf("check = %d", code)
	}
	for _, want := range []string{"zero fleet.Ref", "duplicate address", "cannot carry", "3 error(s), 0 warning(s)"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs.String())
		}
	}
	// synth too, since `infra check --fleet DIR` sees only what synth says.
	out.Reset()
	errs.Reset()
	if code := fleet.Run(bad, []string{"synth"}, &out, &errs); code != 1 || out.Len() == 0 || !strings.Contains(errs.String(), "duplicate address") {
		t.Errorf("synth = %d, stdout %d bytes, stderr:\n%s", code, out.Len(), errs.String())
	}
}

// TestEveryFieldIsReachable declares kinds on every cloud with every
// field set, and checks that each of their fields reaches the document and
// that check accepts it all: the generated constructors cover the table.
// The generator writes a field's code from its shape (its Go form, and
// whether it is a parameter), not from its kind, so a kind the sink leaves
// out is covered when each of its fields' shapes is one the sink reaches;
// a field of a new shape must be declared here.
func TestEveryFieldIsReachable(t *testing.T) {
	doc, diags := synth(t, kitchenSink())
	noErrors(t, diags)
	seen := map[string]bool{}
	declared := map[string]bool{}
	for _, r := range doc.Resources {
		a, _ := spec.ParseAddress(r.Address)
		declared[string(a.Provider)+"/"+string(a.Kind)] = true
		for name := range r.Spec {
			seen[string(a.Provider)+"/"+string(a.Kind)+"."+name] = true
		}
	}
	shapes := map[string]bool{}
	for _, p := range spec.Providers {
		for _, info := range spec.KindsOf(p) {
			for _, field := range info.Fields {
				if shape, ok := fieldShape(t, p, info, field); ok && seen[string(p)+"/"+string(info.Kind)+"."+field.Name] {
					shapes[shape] = true
				}
			}
		}
	}
	for _, p := range spec.Providers {
		for _, info := range spec.KindsOf(p) {
			for _, field := range info.Fields {
				key := string(p) + "/" + string(info.Kind) + "." + field.Name
				// A field the cloud cannot express or has no use for is
				// never written there (spec's OnlyOn, IgnoredOn).
				shape, ok := fieldShape(t, p, info, field)
				switch {
				case !ok || seen[key]:
				case declared[string(p)+"/"+string(info.Kind)]:
					t.Errorf("%s is never written by the SDK", key)
				case !shapes[shape]:
					t.Errorf("%s is of a shape (%s) no field of the kitchen sink has: declare its kind there", key, shape)
				}
			}
		}
	}
}

// fieldShape is what the generator's code for field f of kind info on p
// depends on; false for a field the SDK never writes there.
func fieldShape(t *testing.T, p spec.Provider, info *spec.KindInfo, f spec.Field) (string, bool) {
	if !f.UsedOn(p) {
		return "", false
	}
	param := f.RequiredFor(p)
	typ, err := sdkshape.GoType(string(p), p, info, f, param)
	if err != nil {
		t.Fatalf("%s/%s.%s: %v", p, info.Kind, f.Name, err)
	}
	return fmt.Sprintf("form %d, %s, param %v, secret %v", typ.Form, f.Type, param, f.Secret), true
}

func kitchenSink() *fleet.Fleet {
	f := fleet.New("everything")
	tags := map[string]string{"team": "platform"}
	a := aws.Use(f, awsAccount, aws.Paris)
	s := scaleway.Use(f, scwProject, scaleway.Paris)
	iam := fleet.IAMSpec{Policies: []string{"ReadOnly"}, Tags: tags}
	store := fleet.ObjectStoreSpec{Versioning: fleet.Set(true), ForceDestroy: fleet.Set(true), Tags: tags}
	queues := fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(45), Tags: tags}
	registry := fleet.ImageRegistrySpec{ImmutableTags: fleet.Set(true), Tags: tags}
	secrets := fleet.SecretsSpec{Description: fleet.Set("a secret"), Tags: tags}
	pg := fleet.PostgresSpec{EngineVersion: fleet.Set("16"), MinCapacity: fleet.Set(0.5), MaxCapacity: fleet.Set(4.0), Tags: tags}

	a.IAM("ci", iam)
	bucket := a.ObjectStore("assets", store)
	aq := a.Queues("jobs", queues)
	repo := a.ImageRegistry("app", registry)
	apw := a.Secrets("pw", fleet.FromEnv("PW"), secrets)
	adb := a.Postgres("db", "admin", apw, pg)
	a.Secrets("url", fleet.Composed("postgres://admin:{}@{}/main", aws.SecretValueOf(apw), aws.EndpointOf(adb)), secrets)
	a.Compute("api", fleet.Format("{}:1", aws.URIOf(repo)), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{
		MemoryMB: fleet.Set(512), TimeoutSec: fleet.Set(10), Env: fleet.Env{"QUEUE": aws.URLOf(aq)}, Tags: tags,
	})
	a.S3Bucket("locked", aws.S3BucketSpec{Versioning: fleet.Set(true), ObjectLock: fleet.Set(true), ForceDestroy: fleet.Set(false), Tags: tags})
	vpc := a.VPC("net", "10.0.0.0/16", aws.VPCSpec{EnableDnsSupport: fleet.Set(true), EnableDnsHostnames: fleet.Set(true), Tags: tags})
	// The load balancer's group, in its subnets' VPC.
	sg := a.SecurityGroup("web", "web tier", aws.SecurityGroupSpec{VPC: vpc, Ingress: []aws.Ingress{{Port: 443, CIDR: "0.0.0.0/0"}}, Tags: tags})
	a.Instance("box", "latest", aws.T3.Micro(), sg, aws.InstanceSpec{KeyName: fleet.Set("ops"), SubnetID: fleet.Set("subnet-1"), Tags: tags})
	a.LogGroup("app-api", aws.LogGroupSpec{RetentionDays: fleet.Set(14), Tags: tags})
	// A table with an index: the field of named items.
	a.DynamodbTable("orders", "id", aws.DynamodbTableSpec{HashKeyType: fleet.Set("S"), RangeKey: fleet.Set("at"), RangeKeyType: fleet.Set("N"),
		BillingMode: fleet.Set("PROVISIONED"), ReadCapacity: fleet.Set(5), WriteCapacity: fleet.Set(5), TtlAttribute: fleet.Set("expires"),
		PointInTimeRecovery: fleet.Set(true), DeletionProtection: fleet.Set(false),
		GlobalSecondaryIndexes: map[string]aws.GlobalSecondaryIndex{"by-owner": {HashKey: "owner", HashKeyType: fleet.Set("S"),
			RangeKey: fleet.Set("at"), RangeKeyType: fleet.Set("N"), Projection: fleet.Set("INCLUDE"), NonKeyAttributes: []string{"total"},
			ReadCapacity: fleet.Set(1), WriteCapacity: fleet.Set(1)}}, Tags: tags})
	logs := a.IAMPolicy("write-logs", aws.PolicyDocument{Statements: []aws.Statement{{Effect: aws.Allow,
		Actions: []string{"logs:PutLogEvents"}, Resources: fleet.Outputs{aws.ARNOf(a.LogGroup("app-worker", aws.LogGroupSpec{}))}}}}.JSON(),
		aws.IAMPolicySpec{Description: fleet.Set("writes the app's logs"), Tags: tags})
	role := a.IAMRole("app", aws.AssumedBy("lambda.amazonaws.com").JSON(), aws.IAMRoleSpec{Description: fleet.Set("runs the app"),
		MaxSessionDurationSec: fleet.Set(3600), Policies: fleet.Outputs{aws.ARNOf(logs)}, Tags: tags})
	// A load balancer in two zones, with an HTTPS listener: the map of
	// references, the integer parameter, the optional reference and the
	// optional expression string.
	subnets := map[string]fleet.RefField[aws.Subnet]{}
	for i, zone := range []string{"eu-west-3a", "eu-west-3b"} {
		subnets[zone] = a.Subnet("net-"+zone, vpc, fmt.Sprintf("10.0.%d.0/24", i+1), zone, aws.SubnetSpec{MapPublicIPOnLaunch: fleet.Set(true), Tags: tags})
	}
	lb := a.ALB("web", subnets, aws.ALBSpec{SecurityGroups: map[string]fleet.RefField[aws.SecurityGroup]{"web": sg}, Scheme: fleet.Set("internet-facing"),
		IdleTimeoutSec: fleet.Set(120), DeletionProtection: fleet.Set(false), Tags: tags})
	tg := a.ALBTargetGroup("web", aws.ALBTargetGroupSpec{TargetType: fleet.Set("instance"), VPC: vpc, Protocol: fleet.Set("HTTP"), Port: fleet.Set(8080),
		HealthCheckPath: fleet.Set("/health"), HealthCheckIntervalSec: fleet.Set(30), HealthyThreshold: fleet.Set(3), Tags: tags})
	a.ALBListener("https", lb, 443, tg, aws.ALBListenerSpec{Protocol: fleet.Set("HTTPS"),
		CertificateARN: fleet.Lit("arn:aws:acm:eu-west-3:123456789012:certificate/web"), Tags: tags})
	// A function of each code, one behind a lambda target group, which
	// leaves the VPC out: an optional reference unset.
	a.LambdaFunction("worker", role, aws.LambdaFunctionSpec{PackageType: fleet.Set("Zip"), Zip: fleet.Set("worker.zip"),
		CodeSha256: fleet.Set("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="), Runtime: fleet.Set("python3.13"), Handler: fleet.Set("app.handler"),
		MemoryMB: fleet.Set(256), TimeoutSec: fleet.Set(30), Architecture: fleet.Set("arm64"), Env: fleet.Env{"QUEUE": aws.URLOf(aq)}, Tags: tags})
	fn := a.LambdaFunction("web", role, aws.LambdaFunctionSpec{Image: fleet.Format("{}:1", aws.URIOf(repo))})
	a.ALBTargetGroup("web-fn", aws.ALBTargetGroupSpec{TargetType: fleet.Set("lambda"), Function: fn, Tags: tags})

	s.IAM("ci", iam)
	s.ObjectStore("assets", store)
	// Scaleway's queues and databases are owned by their name prefix and
	// take no tags; its registry has no immutable tags; its databases scale
	// in whole vCPUs.
	s.Queues("everything-jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(45)})
	srepo := s.ImageRegistry("app", fleet.ImageRegistrySpec{Tags: tags})
	spw := s.Secrets("pw", fleet.FromEnv("PW"), secrets)
	s.Postgres("everything-db", fleet.PostgresSpec{EngineVersion: fleet.Set("16"), MinCapacity: fleet.Set(1.0), MaxCapacity: fleet.Set(4.0)})
	_ = spw
	cns := s.ContainerNamespace("apps", scaleway.ContainerNamespaceSpec{Description: fleet.Set("apps"), Tags: tags})
	s.Compute("api", fleet.Format("{}/api:1", scaleway.URIOf(srepo)), cns, fleet.ComputeSpec{MemoryMB: fleet.Set(512), TimeoutSec: fleet.Set(10), Env: fleet.Literals(tags), Tags: tags})
	fns := s.FunctionNamespace("fns", scaleway.FunctionNamespaceSpec{Description: fleet.Set("functions"), Tags: tags})
	s.Function("reader", fns, "python311", scaleway.FunctionSpec{
		Handler: fleet.Set("main.handle"), Code: fleet.Set("def handle(e, c): return 1"),
		SourceBucket: fleet.Bucket(bucket), Env: fleet.Env{"ARN": aws.ARNOf(bucket)}, Tags: tags,
	})
	s.Container("web", cns, fleet.Lit("nginx:1.27"), scaleway.ContainerSpec{
		Port: fleet.Set(80), MinScale: fleet.Set(0), MaxScale: fleet.Set(2), MemoryMB: fleet.Set(256),
		CPULimit: fleet.Set(140), TimeoutSec: fleet.Set(30), Env: fleet.Env{"URL": scaleway.RegistryEndpointOf(cns)},
		SecretEnv: map[string]fleet.SecretField[scaleway.Secrets]{"PW": spw}, Tags: tags,
	})

	// GCP's databases have a fixed machine, so min and max capacity agree.
	g := gcp.Use(f, gcpProject, gcp.Warsaw)
	g.IAM("ci-deploy", fleet.IAMSpec{Policies: []string{"roles/storage.objectViewer"}, Tags: tags})
	g.ObjectStore("assets", store)
	gq := g.Queues("jobs", queues)
	grepo := g.ImageRegistry("app", registry)
	gpw := g.Secrets("pw", fleet.FromEnv("PW"), secrets)
	g.Postgres("db", "admin", gpw, fleet.PostgresSpec{EngineVersion: fleet.Set("16"), MinCapacity: fleet.Set(2.0), MaxCapacity: fleet.Set(2.0), Tags: tags})
	g.Compute("api", fleet.Format("{}/api:1", gcp.URIOf(grepo)), fleet.ComputeSpec{
		MemoryMB: fleet.Set(512), TimeoutSec: fleet.Set(10), Env: fleet.Env{"QUEUE": gcp.URLOf(gq), "BUCKET": aws.ARNOf(bucket)}, Tags: tags,
	})
	return f
}

package render

import (
	"bytes"
	"go/format"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/infra-iac/infra/internal/golden"
	"github.com/infra-iac/infra/internal/testbin"
	"github.com/infra-iac/infra/spec"
)

// hostile is a name as a cloud may report it: quotes, a backslash, a
// newline, a tab, a backquote, non-ASCII letters and a bidirectional
// control (an address may not hold a slash).
const hostile = "as\"s\\ets\n\t`ü中*\u202e"

// importFixture has every AWS kind, Scaleway kinds referring across kinds
// and to an AWS bucket, hostile names, tags and notes.
func importFixture() GoImport {
	ref := func(a string) map[string]any { return map[string]any{"ref": a} }
	tags := map[string]any{"team": "a \"quoted\" \\ value\n*/ é", "empty": ""}
	return GoImport{
		Fleet:     "shop",
		Accounts:  map[spec.Provider]string{spec.AWS: "123456789012", spec.Scaleway: "6a0c2ca8-917a-418a-90a3-05949b55a7ae"},
		Placement: map[spec.Provider]string{spec.AWS: "eu-west-3", spec.Scaleway: "fr-par"},
		Resources: []spec.Resource{
			{Address: "aws/aws-instance/bastion", Spec: map[string]any{"imageId": "ami-0123", "instanceType": "t3.micro",
				"securityGroup": ref("aws/security-group/web"), "keyName": "ops", "tags": tags}},
			{Address: "aws/aws-instance/gpu", Spec: map[string]any{"imageId": "latest", "instanceType": "raw:p5e.48xlarge",
				"securityGroup": ref("aws/security-group/web")}},
			{Address: "aws/queues/mail", Spec: map[string]any{"visibilityTimeoutSec": 60.0, "tags": tags}},
			{Address: "aws/queues/gov", Region: "raw:us-gov-west-1", Spec: map[string]any{}},
			{Address: "aws/object-store/" + hostile, Spec: map[string]any{"versioning": true, "forceDestroy": false, "tags": map[string]any{}}},
			{Address: "aws/s3-bucket/logs", Region: "eu-west-1", Spec: map[string]any{"objectLock": true, "versioning": false}},
			{Address: "aws/secrets/db-password", Spec: map[string]any{"value": map[string]any{"fromEnv": "DB_PASSWORD"},
				"description": "the \x00 password\u202e", "tags": tags}},
			{Address: "aws/security-group/web", Spec: map[string]any{"description": "web `tier` \"front\"",
				"ingress": []any{map[string]any{"port": 443.0, "cidr": "0.0.0.0/0"}, map[string]any{"port": 22.0, "cidr": "10.0.0.0/8"}}}},
			{Address: "aws/postgres/main", Spec: map[string]any{"masterUsername": "admin", "masterPasswordSecret": ref("aws/secrets/db-password"),
				"engineVersion": "16", "minCapacity": 0.5, "maxCapacity": 2.0, "tags": tags}},
			{Address: "aws/iam/deployer", Region: "eu-west-3", Spec: map[string]any{"policies": []any{"arn:aws:iam::aws:policy/ReadOnlyAccess"}, "tags": tags}},
			{Address: "aws/iam/nobody", Spec: map[string]any{"policies": []any{}}},
			{Address: "aws/image-registry/app", Spec: map[string]any{"immutableTags": true}},
			{Address: "aws/dynamodb-table/orders", Spec: map[string]any{"hashKey": "id", "billingMode": "PROVISIONED", "readCapacity": 5.0, "writeCapacity": 5.0,
				"globalSecondaryIndexes": map[string]any{"by-owner": map[string]any{"hashKey": "owner", "rangeKey": "", "projection": "INCLUDE",
					"nonKeyAttributes": []any{"total"}, "readCapacity": 1.0, "writeCapacity": 1.0}, "by-day": map[string]any{"hashKey": "day"}}}},
			{Address: "aws/iam-policy/read", Spec: map[string]any{"description": "reads \"it\"",
				"document": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`, "tags": tags}},
			{Address: "aws/iam-role/api", Spec: map[string]any{"description": "runs the api", "maxSessionDurationSec": 7200.0,
				"trust":    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
				"policies": []any{"arn:aws:iam::aws:policy/ReadOnlyAccess", "arn:aws:iam::123456789012:policy/read"}, "tags": tags}},
			{Address: "aws/iam-role/bare", Spec: map[string]any{"trust": "{}", "policies": []any{}}},
			{Address: "aws/compute/api", Spec: map[string]any{"image": "123456789012.dkr.ecr.eu-west-3.amazonaws.com/app:1",
				"executionRole": "arn:aws:iam::123456789012:role/api", "memoryMb": 512.0, "timeoutSec": 10.0,
				"env": map[string]any{"A": "1", "B": "x\"y\n"}, "tags": tags}},
			{Address: "scaleway/secrets/api-key", Spec: map[string]any{"value": map[string]any{"fromEnv": "API_KEY"}}},
			{Address: "scaleway/scaleway-container-namespace/ns", Spec: map[string]any{"description": "containers"}},
			{Address: "scaleway/scaleway-container/web", Spec: map[string]any{"namespace": ref("scaleway/scaleway-container-namespace/ns"),
				"image": "rg.fr-par.scw.cloud/shop/web:1", "port": 8080.0, "env": map[string]any{},
				"secretEnv": map[string]any{"API_KEY": ref("scaleway/secrets/api-key")}}},
			{Address: "scaleway/scaleway-function-namespace/fns", Region: "nl-ams", Spec: map[string]any{}},
			{Address: "scaleway/scaleway-function/fn", Region: "nl-ams", Spec: map[string]any{"namespace": ref("scaleway/scaleway-function-namespace/fns"),
				"runtime": "go124", "sourceBucket": ref("aws/object-store/" + hostile)}},
			{Address: "scaleway/queues/mail", Spec: map[string]any{"visibilityTimeoutSec": 30.0}},
		},
		Adopt: []string{"aws/queues/mail", "aws/postgres/main", "aws/object-store/" + hostile, "scaleway/scaleway-container/web"},
		Notes: map[string][]string{
			"aws/queues/mail": {"Found by infra import; no fleet's ownership tag.",
				"tag owner=\"x\" */ \n// injected\r\u202e\u2028\x00\xff\ufeff end",
				"", "A long note that goes on and on past the width of one comment line, so that it is wrapped onto the next."},
			"aws/object-store/" + hostile: {"name " + hostile},
		},
		Main: true,
	}
}

// TestGoSourceRoundTrip writes the fixture's program, runs its synth in a
// module of its own, and checks that the document is the fixture.
func TestGoSourceRoundTrip(t *testing.T) {
	in := importFixture()
	files, err := GoSource(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		if again, err := format.Source(src); err != nil || !bytes.Equal(again, src) {
			t.Errorf("%s is not gofmt'ed (err %v)", name, err)
		}
	}
	golden.Check(t, "gosource-imported.go.golden", string(files["imported.go"]))
	if testing.Short() {
		t.Skip("builds a Go module")
	}
	doc := synthProgram(t, files)
	if doc.Fleet != in.Fleet || !reflect.DeepEqual(doc.Accounts, in.Accounts) || !reflect.DeepEqual(doc.Placement, in.Placement) {
		t.Errorf("fleet %q accounts %v placement %v; want %q %v %v", doc.Fleet, doc.Accounts, doc.Placement, in.Fleet, in.Accounts, in.Placement)
	}
	got := map[string]spec.Resource{}
	for _, r := range doc.Resources {
		got[r.Address] = r
	}
	if len(got) != len(in.Resources) || len(doc.Resources) != len(in.Resources) {
		t.Errorf("synthesized %d resources, want %d", len(doc.Resources), len(in.Resources))
	}
	for _, want := range in.Resources {
		if want.Region == in.Placement[spec.Provider(strings.Split(want.Address, "/")[0])] {
			want.Region = "" // the placement, written as such
		}
		g, ok := got[want.Address]
		if !ok {
			t.Errorf("%q not synthesized", want.Address)
			continue
		}
		if g.Region != want.Region || !reflect.DeepEqual(g.Spec, want.Spec) {
			t.Errorf("%q synthesized as region %q spec %#v\nwant region %q spec %#v", want.Address, g.Region, g.Spec, want.Region, want.Spec)
		}
	}
	if a, b := slices.Sorted(slices.Values(doc.Adopt)), slices.Sorted(slices.Values(in.Adopt)); !slices.Equal(a, b) {
		t.Errorf("adopt %q, want %q", doc.Adopt, in.Adopt)
	}
}

// synthProgram runs `go run . synth` on files in a throwaway module.
func synthProgram(t *testing.T, files map[string][]byte) *spec.Document {
	t.Helper()
	out := testbin.FleetProgram(t, files)
	doc, err := spec.DecodeDocument(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return doc
}

func TestGoSourceRefusesWhatItCannotWrite(t *testing.T) {
	for name, tc := range map[string]struct {
		res  spec.Resource
		want string
	}{
		"unresolvable reference": {spec.Resource{Address: "aws/postgres/db", Spec: map[string]any{"masterUsername": "a",
			"masterPasswordSecret": map[string]any{"ref": "aws/secrets/gone"}}}, "aws/postgres/db: field masterPasswordSecret refers to aws/secrets/gone"},
		"reference to the wrong kind": {spec.Resource{Address: "aws/aws-instance/i", Spec: map[string]any{"imageId": "latest", "instanceType": "t3.micro",
			"securityGroup": map[string]any{"ref": "aws/queues/q"}}}, "aws/aws-instance/i: field securityGroup: refers to aws/queues/q"},
		"field the cloud's constructor lacks": {spec.Resource{Address: "scaleway/postgres/db", Spec: map[string]any{"masterUsername": "a"}},
			"scaleway/postgres/db: field masterUsername"},
		"absent parameter": {spec.Resource{Address: "aws/secrets/s", Spec: map[string]any{}}, "aws/secrets/s: field value"},
		"expression":       {spec.Resource{Address: "aws/compute/c", Spec: map[string]any{"image": map[string]any{"observed": "aws/queues/q", "attribute": "url"}, "executionRole": "r"}}, "aws/compute/c: field image"},
		"int out of range": {spec.Resource{Address: "aws/queues/big", Spec: map[string]any{"visibilityTimeoutSec": 1e300}}, "aws/queues/big: field visibilityTimeoutSec"},
	} {
		in := GoImport{Fleet: "f", Resources: []spec.Resource{tc.res, {Address: "aws/queues/q", Spec: map[string]any{}}}}
		_, err := GoSource(in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one containing %q", name, err, tc.want)
		}
	}
	if _, err := GoSource(GoImport{Adopt: []string{"aws/queues/q"}}); err == nil {
		t.Error("adopting a resource that is not imported: no error")
	}
}

// TestGoSourceNotes: a note becomes // lines only; nothing in it ends the
// comment, hides text or makes the file invalid, and the text survives
// escaped.
func TestGoSourceNotes(t *testing.T) {
	note := "a\nfunc evil() {}\r*/ /* \u202eb\u2066\x00\xff\ufeff\u2028c"
	files, err := GoSource(GoImport{Fleet: "f", Resources: []spec.Resource{{Address: "aws/queues/q", Spec: map[string]any{}}},
		Notes: map[string][]string{"aws/queues/q": {note}}})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files["imported.go"])
	want := `// a\nfunc evil() {}\r*/ /* \u202eb\u2066\x00` + "\uFFFD" + `\ufeff\u2028c`
	if !strings.Contains(src, "\t"+want+"\n\tcloud.Queues(") {
		t.Errorf("the note is not written escaped, above the declaration:\n%s", src)
	}
	for _, r := range src {
		if r != '\n' && r != '\t' && (r < ' ' || r == '\u202e' || r == '\u2066' || r == '\ufeff' || r == '\u2028' || r == 0x7f) {
			t.Errorf("the source holds %U raw", r)
		}
	}
}

// TestGoSourceSpellings: the table's constants where it has one, the raw
// escapes otherwise; only referenced kinds return their handles.
func TestGoSourceSpellings(t *testing.T) {
	files, err := GoSource(GoImport{Fleet: "f", Placement: map[spec.Provider]string{spec.AWS: "eu-west-3"},
		Resources: []spec.Resource{
			{Address: "aws/security-group/sg", Spec: map[string]any{"description": "d"}},
			{Address: "aws/aws-instance/a", Region: "us-east-1", Spec: map[string]any{"imageId": "latest", "instanceType": "m7i-flex.2xlarge", "securityGroup": map[string]any{"ref": "aws/security-group/sg"}}},
			{Address: "aws/aws-instance/b", Region: "xx-new-1", Spec: map[string]any{"imageId": "latest", "instanceType": "p9.huge", "securityGroup": map[string]any{"ref": "aws/security-group/sg"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files["imported.go"])
	for _, want := range []string{
		`aws.Use(f, "", aws.Paris)`,
		`cloud.In(aws.NVirginia).Instance("a", "latest", aws.M7iFlex.X2Large(), awsSecurityGroup["sg"], aws.InstanceSpec{})`,
		`cloud.In(aws.Region("xx-new-1")).Instance("b", "latest", aws.InstanceTypeRaw("p9.huge")`,
		`func importAWSSecurityGroup(f *fleet.Fleet, cloud *aws.Cloud) map[string]fleet.Ref[aws.SecurityGroup] {`,
		`func importAWSInstance(f *fleet.Fleet, cloud *aws.Cloud, awsSecurityGroup map[string]fleet.Ref[aws.SecurityGroup]) {`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("no %s in\n%s", want, src)
		}
	}
	if _, ok := files["main.go"]; ok {
		t.Error("main.go written though Main is false")
	}
}

package spec

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// row is the part of a diagnostic a rule test pins down: where and what.
// Every row must also carry a hint; checkRows asserts that separately so the
// tables stay readable.
type row struct{ addr, msg string }

// header is a valid document header; a test replaces the keys it is about.
var header = [][2]string{
	{"apiVersion", `"infra/v1"`},
	{"fleet", `"shop"`},
	{"accounts", `{"aws": "123456789012", "scaleway": "11111111-2222-3333-4444-555555555555"}`},
	{"placement", `{"aws": "eu-west-3", "scaleway": "fr-par"}`},
}

// docJSON builds a document from the header, with the keys in over replaced
// or added (an empty value removes the key), and the given resources.
func docJSON(over map[string]string, resources ...string) string {
	var parts []string
	seen := map[string]bool{}
	for _, kv := range header {
		v := kv[1]
		if o, ok := over[kv[0]]; ok {
			v = o
		}
		seen[kv[0]] = true
		if v != "" {
			parts = append(parts, fmt.Sprintf("%q: %s", kv[0], v))
		}
	}
	for _, k := range sortedKeys(over) {
		if !seen[k] && over[k] != "" {
			parts = append(parts, fmt.Sprintf("%q: %s", k, over[k]))
		}
	}
	parts = append(parts, `"resources": [`+strings.Join(resources, ",\n")+`]`)
	return "{" + strings.Join(parts, ",\n") + "}"
}

func validateJSON(t *testing.T, doc string) []Diagnostic {
	t.Helper()
	d, err := DecodeDocument([]byte(doc))
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, doc)
	}
	rows := Validate(d)
	checkRowIDs(t, rows)
	return rows
}

// checkRows asserts that got holds exactly the wanted error rows, in order,
// each with a hint that says how to fix it.
func checkRows(t *testing.T, got []Diagnostic, want ...row) {
	t.Helper()
	var gotRows []row
	for _, d := range got {
		gotRows = append(gotRows, row{d.Subject, d.Message})
		if d.Severity != Error {
			t.Errorf("row %v: severity %s, want error", d, d.Severity)
		}
		if strings.TrimSpace(d.Resolution) == "" {
			t.Errorf("row %v has no hint", d)
		}
	}
	if !slices.Equal(gotRows, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", fmtRows(gotRows), fmtRows(want))
	}
}

func fmtRows(rs []row) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %s: %s\n", r.addr, r.msg)
	}
	if len(rs) == 0 {
		b.WriteString("  (none)\n")
	}
	return b.String()
}

const (
	sgWeb     = `{"address": "aws/security-group/web", "spec": {"description": "web tier"}}`
	queueJobs = `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30}}`
	dbSecret  = `{"address": "aws/secrets/db-password", "spec": {"value": {"fromEnv": "DB_PASSWORD"}}}`
)

func instance(name, extra string) string {
	return `{"address": "aws/aws-instance/` + name + `", ` + extra + `"spec": {"imageId": "latest",
		"instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/web"}}}`
}

func TestValidAcceptsBaseDocument(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, sgWeb, queueJobs, dbSecret, instance("web-1", ""))))
}

func TestCheckRefusesUnknownAPIVersion(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(map[string]string{"apiVersion": `"infra/v2"`}, queueJobs)),
		row{"apiVersion", `unknown apiVersion "infra/v2"`})
	checkRows(t, validateJSON(t, docJSON(map[string]string{"apiVersion": ""}, queueJobs)),
		row{"apiVersion", "the document has no apiVersion"})
}

func TestCheckRefusesUnknownProvider(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "azure/queues/jobs", "spec": {}}`)),
		row{"azure/queues/jobs", `unknown provider "azure"`})
	checkRows(t, validateJSON(t, docJSON(map[string]string{"placement": `{"aws": "eu-west-3", "azure": "westeurope"}`}, queueJobs)),
		row{"placement.azure", `unknown provider "azure"`})
}

func TestCheckRefusesUnknownKind(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/queue/jobs", "spec": {}}`)),
		row{"aws/queue/jobs", `unknown kind "queue"`})
	// A kind that exists, on a cloud that does not offer it.
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/scaleway-function/f", "spec": {}}`)),
		row{"aws/scaleway-function/f", `aws has no kind "scaleway-function"`})
}

func TestCheckRefusesUnknownField(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/queues/jobs", "spec": {"visibilityTimeout": 30}}`)),
		row{"aws/queues/jobs", `unknown field "visibilityTimeout" for kind queues`})
	// A field written beside spec instead of inside it.
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/queues/jobs", "visibilityTimeoutSec": 30, "spec": {}}`)),
		row{"aws/queues/jobs", `unknown key "visibilityTimeoutSec"`})
	// An unknown top-level key.
	checkRows(t, validateJSON(t, docJSON(map[string]string{"resource": `[]`}, queueJobs)),
		row{"resource", `unknown key "resource"`})
}

func TestCheckRefusesMissingRequiredField(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/security-group/web", "spec": {}}`)),
		row{"aws/security-group/web", `missing required field "description"`})
}

func TestCheckRefusesDuplicateAddress(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, queueJobs, queueJobs)),
		row{"aws/queues/jobs", "duplicate address"})
	// An S3 bucket is both object-store and s3-bucket.
	checkRows(t, validateJSON(t, docJSON(nil,
		`{"address": "aws/object-store/assets", "spec": {}}`,
		`{"address": "aws/s3-bucket/assets", "spec": {}}`)),
		row{"aws/s3-bucket/assets", "aws/object-store/assets and aws/s3-bucket/assets are the same physical resource"})
}

// A duplicate's own mistakes come out in the same run, not after the rename.
func TestCheckDuplicateStillChecksFields(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, queueJobs, `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": "long"}}`)),
		row{"aws/queues/jobs", "duplicate address"},
		row{"aws/queues/jobs", `field "visibilityTimeoutSec": want an integer, got the string "long"`})
}

func TestCheckRefusesReferenceNotInDocument(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, instance("web-1", ""))),
		row{"aws/aws-instance/web-1", `field "securityGroup" refers to aws/security-group/web, which is not in the document`})
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/compute/api", "spec": {"image": "app:1",
		"executionRole": "arn:aws:iam::123456789012:role/api", "env": {"Q": {"observed": "aws/queues/gone", "attribute": "url"}}}}`)),
		row{"aws/compute/api", `field "env" reads aws/queues/gone, which is not in the document`})
}

func TestCheckRefusesReferenceOfWrongKind(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, queueJobs, `{"address": "aws/postgres/main", "spec": {"masterUsername": "dbadmin",
		"masterPasswordSecret": {"ref": "aws/queues/jobs"}}}`)),
		row{"aws/postgres/main", `field "masterPasswordSecret" refers to aws/queues/jobs, which is of kind queues`})
	checkRows(t, validateJSON(t, docJSON(nil, queueJobs, `{"address": "aws/secrets/url", "spec": {"value":
		{"composed": {"format": "{0}", "args": [{"secretValue": "aws/queues/jobs"}]}}}}`)),
		row{"aws/secrets/url", `field "value" reads the secret value of aws/queues/jobs, which is of kind queues`})
	checkRows(t, validateJSON(t, docJSON(nil, queueJobs, `{"address": "aws/secrets/url", "spec": {"value":
		{"composed": {"format": "{0}", "args": [{"observed": "aws/queues/jobs", "attribute": "endpoint"}]}}}}`)),
		row{"aws/secrets/url", `field "value" reads attribute "endpoint", which aws/queues/jobs does not publish`})
}

func TestCheckRefusesCycleNamingMembers(t *testing.T) {
	// a reads the database's endpoint, the database's password is b, and b
	// is composed from a: nothing can be created first.
	got := validateJSON(t, docJSON(nil,
		`{"address": "aws/secrets/a", "spec": {"value": {"composed": {"format": "{0}",
			"args": [{"observed": "aws/postgres/db", "attribute": "endpoint"}]}}}}`,
		`{"address": "aws/postgres/db", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "aws/secrets/b"}}}`,
		`{"address": "aws/secrets/b", "spec": {"value": {"composed": {"format": "{0}", "args": [{"secretValue": "aws/secrets/a"}]}}}}`,
		dbSecret))
	checkRows(t, got, row{"aws/postgres/db", "dependency cycle among: aws/postgres/db, aws/secrets/a, aws/secrets/b"})
	// A resource that depends on itself is a cycle of one.
	checkRows(t, validateJSON(t, docJSON(nil,
		`{"address": "aws/secrets/a", "spec": {"value": {"composed": {"format": "{0}", "args": [{"secretValue": "aws/secrets/a"}]}}}}`)),
		row{"aws/secrets/a", "dependency cycle among: aws/secrets/a"})
}

func TestCheckRefusesAdoptOfUndeclared(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(map[string]string{"adopt": `["aws/queues/jobs", "aws/queues/old", "aws/queues/jobs", "queues"]`}, queueJobs)),
		row{"aws/queues/jobs", "adopt names the resource twice"},
		row{"aws/queues/old", "adopt of a resource the document does not declare"},
		row{"queues", `adopt: address "queues": want provider/kind/name`})
	checkRows(t, validateJSON(t, docJSON(map[string]string{"adopt": `["aws/queues/jobs"]`}, queueJobs)))
}

func TestCheckRefusesForgetOfDeclared(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(map[string]string{"forget": `["aws/queues/jobs", "aws/queues/old"]`}, queueJobs)),
		row{"aws/queues/jobs", "forget of a resource that is still declared"})
	checkRows(t, validateJSON(t, docJSON(map[string]string{"forget": `["aws/queue/old"]`}, queueJobs)),
		row{"aws/queue/old", `forget: aws has no kind "queue"`})
}

func TestCheckRefusesComposedSecretWithNoDependency(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/secrets/token", "spec": {"value":
		{"composed": {"format": "hunter{0}", "args": ["2"]}}}}`)),
		row{"aws/secrets/token", "composed secret with no dependency is a plaintext in disguise"})
	// A plain string is refused by the decoder's own rule.
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/secrets/token", "spec": {"value": "hunter2"}}`)),
		row{"aws/secrets/token", `field "value": a secret's value is never written in the document: use {"fromEnv": "VAR"} or {"composed": …}`})
}

func TestCheckRefusesRegionNotInTable(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(map[string]string{"placement": `{"aws": "eu-west-9"}`}, queueJobs)),
		row{"placement.aws", `unknown aws region "eu-west-9"`})
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/queues/jobs", "region": "mars-1", "spec": {}}`)),
		row{"aws/queues/jobs", `unknown aws region "mars-1"`})
	// The empty code is in no table, though some rows of it have no code
	// for a cloud.
	checkRows(t, validateJSON(t, docJSON(map[string]string{"placement": `{"aws": ""}`})),
		row{"placement.aws", `unknown aws region ""`})
}

func TestCheckRefusesAWSRegionForScaleway(t *testing.T) {
	got := validateJSON(t, docJSON(nil, `{"address": "scaleway/queues/shop-jobs", "region": "eu-west-3", "spec": {}}`))
	checkRows(t, got, row{"scaleway/queues/shop-jobs", `"eu-west-3" is a region of aws, not of scaleway`})
	if len(got) == 1 && got[0].Resolution != "the scaleway region at paris is fr-par" {
		t.Errorf("hint: %q", got[0].Resolution)
	}
	got = validateJSON(t, docJSON(map[string]string{"placement": `{"scaleway": "eu-west-1"}`}))
	checkRows(t, got, row{"placement.scaleway", `"eu-west-1" is a region of aws, not of scaleway`})
	if len(got) == 1 && !strings.HasPrefix(got[0].Resolution, "scaleway has no region at ireland") {
		t.Errorf("hint: %q", got[0].Resolution)
	}
}

func TestCheckRefusesInvalidInstanceType(t *testing.T) {
	got := validateJSON(t, docJSON(nil, sgWeb, `{"address": "aws/aws-instance/big", "spec": {"imageId": "latest",
		"instanceType": "t3.32xlarge", "securityGroup": {"ref": "aws/security-group/web"}}}`))
	checkRows(t, got, row{"aws/aws-instance/big", `invalid instance type "t3.32xlarge"`})
	if len(got) == 1 && (!strings.Contains(got[0].Resolution, "t3 sizes: nano,") || !strings.Contains(got[0].Resolution, `"raw:t3.32xlarge"`)) {
		t.Errorf("hint should list t3's sizes and the raw escape: %q", got[0].Resolution)
	}
}

func TestCheckRefusesBadFleetName(t *testing.T) {
	for _, name := range []string{"Shop", "", "1shop", "shop.prod", "-shop", strings.Repeat("a", 64)} {
		checkRows(t, validateJSON(t, docJSON(map[string]string{"fleet": fmt.Sprintf("%q", name)}, queueJobs)),
			row{"fleet", fmt.Sprintf("invalid fleet name %q", name)})
	}
	for _, name := range []string{"s", "shop_prod-2", strings.Repeat("a", 63)} {
		checkRows(t, validateJSON(t, docJSON(map[string]string{"fleet": fmt.Sprintf("%q", name)}, queueJobs)))
	}
}

func TestCheckRefusesExclusionWithoutWhy(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(map[string]string{"exclusions": `[{"address": "aws/queues/legacy*", "why": " "},
		{"address": "aws/queues/kept", "why": "the data team's"}]`}, queueJobs)),
		row{"aws/queues/legacy*", "exclusion without why"})
	checkRows(t, validateJSON(t, docJSON(map[string]string{"exclusions": `[{"address": "aws/queues/legacy", "reason": "x"}]`}, queueJobs)),
		// Rows of one subject and severity are in the order of their ids.
		row{"aws/queues/legacy", "exclusion without why"},
		row{"aws/queues/legacy", "exclusion 1: unknown key \"reason\""})
}

func TestCheckRefusesRegionLocalReferenceAcrossRegions(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, sgWeb, instance("web-1", `"region": "eu-west-1", `))),
		row{"aws/aws-instance/web-1", `field "securityGroup" refers to aws/security-group/web in eu-west-3, ` +
			`but this resource is in eu-west-1; a security-group cannot cross regions`})
	// The raw escape resolves before the comparison: the same region
	// written two ways is one region.
	checkRows(t, validateJSON(t, docJSON(nil, sgWeb, instance("web-1", `"region": "raw:eu-west-3", `))))
}

func TestCheckRefusesCrossCloudWhereSameProvider(t *testing.T) {
	checkRows(t, validateJSON(t, docJSON(nil, `{"address": "scaleway/secrets/shop-db-password", "spec": {"value": {"fromEnv": "DB"}}}`,
		`{"address": "aws/postgres/main", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "scaleway/secrets/shop-db-password"}}}`)),
		row{"aws/postgres/main", `field "masterPasswordSecret" refers to scaleway/secrets/shop-db-password on another cloud; it must refer to a aws resource`})
}

// Every rule at once: one document, one row per mistake, sorted.
func TestCheckReportsEverythingAtOnceSorted(t *testing.T) {
	got := validateJSON(t, docJSON(map[string]string{
		"apiVersion": `"infra/v9"`,
		"fleet":      `"Shop"`,
		"forget":     `["aws/queues/jobs"]`,
		"exclusions": `[{"address": "aws/queues/x"}]`,
	},
		queueJobs,
		`{"address": "azure/queues/jobs", "spec": {}}`,
		`{"address": "aws/security-group/web", "spec": {"colour": "red"}}`,
		instance("web-1", `"region": "eu-west-1", `),
	))
	checkRows(t, got,
		row{"apiVersion", `unknown apiVersion "infra/v9"`},
		row{"aws/aws-instance/web-1", `field "securityGroup" refers to aws/security-group/web in eu-west-3, ` +
			`but this resource is in eu-west-1; a security-group cannot cross regions`},
		row{"aws/queues/jobs", "forget of a resource that is still declared"},
		row{"aws/queues/x", "exclusion without why"},
		row{"aws/security-group/web", `missing required field "description"`},
		row{"aws/security-group/web", `unknown field "colour" for kind security-group`},
		row{"azure/queues/jobs", `unknown provider "azure"`},
		row{"fleet", `invalid fleet name "Shop"`},
	)
	// The same document, its resources in the opposite order, gives the
	// same table.
	again := validateJSON(t, docJSON(map[string]string{
		"apiVersion": `"infra/v9"`,
		"fleet":      `"Shop"`,
		"forget":     `["aws/queues/jobs"]`,
		"exclusions": `[{"address": "aws/queues/x"}]`,
	},
		instance("web-1", `"region": "eu-west-1", `),
		`{"address": "aws/security-group/web", "spec": {"colour": "red"}}`,
		`{"address": "azure/queues/jobs", "spec": {}}`,
		queueJobs,
	))
	if !slices.Equal(got, again) {
		t.Errorf("order depends on the document's order:\n%v\n%v", got, again)
	}
}

// The acceptance fixture of issue 2: 20 resources, six different mistakes,
// six rows each with its address; the fixed document has none. The CLI
// tests reuse these files.
func TestCheckFixtures(t *testing.T) {
	broken := readDoc(t, "testdata/check-broken.json")
	fixed := readDoc(t, "testdata/check-fixed.json")
	for _, d := range []*Document{broken, fixed} {
		if len(d.Resources) != 21 {
			t.Errorf("fixture has %d resources, want 21", len(d.Resources))
		}
	}
	checkRows(t, Validate(broken),
		row{"aws/aws-instance/web-2", `invalid instance type "t3.32xlarge"`},
		row{"aws/postgres/main", `field "masterPasswordSecret" refers to aws/secrets/db-pasword, which is not in the document`},
		row{"aws/queues/emails", `unknown field "visibilityTimeout" for kind queues`},
		row{"aws/secrets/db-url", "composed secret with no dependency is a plaintext in disguise"},
		row{"aws/security-group/web", `missing required field "description"`},
		row{"scaleway/object-store/shop-media", `"eu-west-3" is a region of aws, not of scaleway`},
	)
	checkRows(t, Validate(fixed))
	// Every kind's own coverage is its row's Example
	// (TestEveryKindsExampleChecks), so a new kind leaves these fixtures,
	// and the CLI tests that share them, as they are.
}

func readDoc(t testing.TB, path string) *Document {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeDocument(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

func TestValidateNilDocument(t *testing.T) {
	checkRows(t, Validate(nil), row{"document", "no fleet document"})
}

// A name holds no space or control character: the C1 controls and the
// bidirectional controls, which reorder what a reviewer reads, included.
func TestCheckRefusesControlCharacterInName(t *testing.T) {
	for _, name := range []string{`a b`, `a\u001bb`, `a\u007fb`, `a\u009bb`, `a\u0085b`, `evil\u202egnp`, `a\u2066b`} {
		checkRows(t, validateJSON(t, docJSON(nil, `{"address": "aws/queues/`+name+`"}`)),
			row{"aws/queues/" + mustUnquote(t, name), "name contains a space or a control character"})
	}
}

func mustUnquote(t *testing.T, s string) string {
	t.Helper()
	var out string
	if err := json.Unmarshal([]byte(`"`+s+`"`), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckRefusesAGCPRegionForAWSAndTheReverse(t *testing.T) {
	got := validateJSON(t, docJSON(nil, `{"address": "aws/queues/jobs", "region": "europe-west9", "spec": {}}`))
	checkRows(t, got, row{"aws/queues/jobs", `"europe-west9" is a region of gcp, not of aws`})
	got = validateJSON(t, docJSON(map[string]string{"accounts": `{"gcp": "shop-prod-1"}`},
		`{"address": "gcp/queues/jobs", "region": "eu-west-3", "spec": {}}`))
	checkRows(t, got, row{"gcp/queues/jobs", `"eu-west-3" is a region of aws, not of gcp`})
	if len(got) == 1 && got[0].Resolution != "the gcp region at paris is europe-west9" {
		t.Errorf("hint: %q", got[0].Resolution)
	}
}

// TestCheckGCPNames: each kind's name rule on GCP, at its edges.
func TestCheckGCPNames(t *testing.T) {
	header := map[string]string{"accounts": `{"gcp": "shop-prod-1"}`, "placement": `{"gcp": "europe-west9"}`}
	for _, c := range []struct {
		kind      Kind
		good, bad string
	}{
		{ObjectStore, "a.b_c-0", "-starts-with-a-dash"},
		{ObjectStore, strings.Repeat("b", 63), strings.Repeat("b", 64)},
		{Queues, "Jobs.v1~x", "goog-jobs"},
		{Queues, "job", "jo"},
		{ImageRegistry, "app-images", "App"},
		{IAM, "ci-deployer", "ci"},
	} {
		for _, name := range []string{c.good, c.bad} {
			got := validateJSON(t, docJSON(header, `{"address": "gcp/`+string(c.kind)+`/`+name+`", "spec": {}}`))
			var refused bool
			for _, d := range got {
				refused = refused || d.ID == RowInvalidNameForCloud
			}
			if refused != (name == c.bad) {
				t.Errorf("gcp/%s/%s: refused %v, rows %v", c.kind, name, refused, got)
			}
		}
	}
}

// TestCheckGCPPostgresCapacity: a Cloud SQL custom machine has 1 or an even
// number of vCPUs, up to 96.
func TestCheckGCPPostgresCapacity(t *testing.T) {
	header := map[string]string{"accounts": `{"gcp": "shop-prod-1"}`, "placement": `{"gcp": "europe-west9"}`}
	for n, refused := range map[string]bool{"1": false, "2": false, "4": false, "96": false, "3": true, "2.5": true, "0": true, "98": true} {
		got := validateJSON(t, docJSON(header, `{"address": "gcp/secrets/pw", "spec": {"value": {"fromEnv": "PW"}}}`,
			`{"address": "gcp/postgres/db", "spec": {"masterUsername": "app", "masterPasswordSecret": {"ref": "gcp/secrets/pw"}, "minCapacity": `+n+`, "maxCapacity": `+n+`}}`))
		var rows int
		for _, d := range got {
			if d.ID == RowFractionalCapacity {
				rows++
			}
		}
		if (rows > 0) != refused {
			t.Errorf("capacity %s: rows %v", n, got)
		}
	}
}

// TestCheckAMarkInADescriptionFits: a GCP service account and a Scaleway
// registry namespace have no tags or labels; the description holds the
// ownership mark and the tags, and check refuses tags that overflow it, at
// its edge, rather than the driver at apply. Their tags are not labels:
// no label rule holds them.
func TestCheckAMarkInADescriptionFits(t *testing.T) {
	gcp := map[string]string{"accounts": `{"gcp": "shop-prod-1"}`, "placement": `{"gcp": "europe-west9"}`}
	for _, c := range []struct {
		header  map[string]string
		address string
		limit   int
	}{
		{gcp, "gcp/iam/ci-deployer", 256},
		{nil, "scaleway/image-registry/shop-images", 255},
	} {
		// "managed-by-infra=shop&note=" is 27 characters.
		for value, refused := range map[string]bool{strings.Repeat("x", c.limit-27): false, strings.Repeat("x", c.limit-26): true} {
			got := validateJSON(t, docJSON(c.header, `{"address": "`+c.address+`", "spec": {"tags": {"note": "`+value+`"}}}`))
			var rows []Diagnostic
			for _, d := range got {
				if d.ID == RowMarkDoesNotFit {
					rows = append(rows, d)
				}
				if d.ID == RowTagNotLabel {
					t.Errorf("%s: a tag held to the label rules: %v", c.address, d)
				}
			}
			if (len(rows) > 0) != refused {
				t.Errorf("%s with a %d-character tag: rows %v", c.address, len(value), got)
			}
		}
	}
	// A tag known only at apply is the driver's to hold.
	got := validateJSON(t, docJSON(gcp, `{"address": "gcp/secrets/pw", "spec": {"value": {"fromEnv": "PW"}}}`,
		`{"address": "gcp/iam/ci-deployer", "spec": {"tags": {"note": {"observed": "gcp/secrets/pw", "attribute": "arn"}}}}`))
	for _, d := range got {
		if d.ID == RowMarkDoesNotFit {
			t.Errorf("a tag known at apply: %v", d)
		}
	}
}

package spec

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// docs/fleet-document.md is a public contract. The parts of it that restate
// the code — the kinds and their fields, the region and instance-type
// tables, and an example row for every rule check refuses — are rendered
// from spec's own tables and from real Validate output, and this test fails
// when the file no longer says what the code does. To rewrite them after a
// deliberate change:
//
//	INFRA_UPDATE_DOCS=1 go test ./spec -run TestFleetDocumentDoc
const fleetDocPath = "../docs/fleet-document.md"

func TestFleetDocumentDoc(t *testing.T) {
	data, err := os.ReadFile(fleetDocPath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	blocks := map[string]string{
		"kinds":          renderKinds(),
		"fields":         renderFields(),
		"regions":        renderRegions(),
		"instance-types": renderInstanceTypes(),
		"check-rules":    renderCheckRules(t),
	}
	update := os.Getenv("INFRA_UPDATE_DOCS") == "1"
	for _, name := range sortedKeys(blocks) {
		begin := "<!-- generated:" + name + " -->\n"
		end := "<!-- end:" + name + " -->"
		i := strings.Index(text, begin)
		j := strings.Index(text, end)
		if i < 0 || j < i {
			t.Errorf("%s: no %q … %q block", fleetDocPath, begin, end)
			continue
		}
		got := text[i+len(begin) : j]
		if got == blocks[name] {
			continue
		}
		if update {
			text = text[:i+len(begin)] + blocks[name] + text[j:]
			continue
		}
		t.Errorf("%s: the %s block is not what the code says; run INFRA_UPDATE_DOCS=1 go test ./spec -run TestFleetDocumentDoc and review the diff",
			fleetDocPath, name)
	}
	if update {
		if err := os.WriteFile(fleetDocPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Said plainly, whatever the blocks hold: every kind has its section and
	// every field its row.
	for _, k := range Kinds() {
		section := "\n### `" + string(k.Kind) + "`\n"
		i := strings.Index(text, section)
		if i < 0 {
			t.Errorf("%s: kind %s has no section %q", fleetDocPath, k.Kind, strings.TrimSpace(section))
			continue
		}
		body := text[i+len(section):]
		if next := strings.Index(body, "\n### "); next >= 0 {
			body = body[:next]
		}
		for _, f := range k.Fields {
			if !strings.Contains(body, "| `"+f.Name+"` |") {
				t.Errorf("%s: kind %s: field %s has no row", fleetDocPath, k.Kind, f.Name)
			}
		}
	}
	for _, p := range Providers {
		if !strings.Contains(text, "`"+string(p)+"`") {
			t.Errorf("%s: provider %s is not mentioned", fleetDocPath, p)
		}
	}
}

func renderKinds() string {
	var b strings.Builder
	b.WriteString("| kind |" + providerColumns() + " portable | what it is |\n|---|" + strings.Repeat("---|", len(Providers)) + "---|---|\n")
	for _, k := range Kinds() {
		fmt.Fprintf(&b, "| [`%s`](#%s) |", k.Kind, k.Kind)
		for _, p := range Providers {
			if k.OfferedBy(p) {
				b.WriteString(" yes |")
			} else {
				b.WriteString(" — |")
			}
		}
		portable := "no"
		if k.Portable {
			portable = "yes"
		}
		fmt.Fprintf(&b, " %s | %s |\n", portable, k.Doc)
	}
	return b.String()
}

func renderFields() string {
	var b strings.Builder
	for _, k := range Kinds() {
		fmt.Fprintf(&b, "### `%s`\n\n", k.Kind)
		var offered []string
		for _, p := range k.Providers {
			offered = append(offered, "`"+string(p)+"`")
		}
		fmt.Fprintf(&b, "%s. Offered by %s.", upperFirst(k.Doc), listInProse(offered))
		if k.Physical != "" {
			var same []string
			for _, o := range Kinds() {
				if o.Physical == k.Physical && o.Kind != k.Kind {
					same = append(same, "`"+string(o.Kind)+"`")
				}
			}
			fmt.Fprintf(&b, " The same physical resource as %s: a name may be declared under one of them only.", strings.Join(same, ", "))
		}
		attrs := make([]string, len(k.Attributes))
		for i, a := range k.Attributes {
			attrs[i] = "`" + a + "`"
		}
		fmt.Fprintf(&b, " Attributes for `observed`: %s.\n\n", strings.Join(attrs, ", "))
		b.WriteString("| field | type | required | default | on change | compared | expressions | secret | notes |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
		var rows []Field
		for _, f := range k.Fields {
			rows = append(rows, f)
			for _, sub := range f.Of {
				// An item's fields are rows of their own, under the
				// item's path.
				sub.Name = f.Name + ".NAME." + sub.Name
				rows = append(rows, sub)
			}
		}
		for _, f := range rows {
			required := "optional"
			if f.Required {
				required = "required"
			}
			def := "—"
			if f.Default != nil {
				j, _ := json.Marshal(f.Default)
				def = "`" + string(j) + "`"
			}
			change := "update"
			if f.Replace {
				change = "replace"
				if strings.Contains(f.Name, ".NAME.") {
					change = "remakes the item"
				}
			}
			compared := map[Compare]string{CompareExact: "exact", CompareSet: "as a set", CompareVersion: "by version prefix", CompareNever: "never",
				ComparePolicy: "as a policy document", CompareValues: "as a set of its values", CompareJSON: "as JSON"}[f.Compare]
			if f.Compare == CompareNever {
				change = "—"
			}
			secret := "no"
			if f.Secret {
				secret = "yes"
			}
			notes := f.Doc
			if f.RunTime {
				notes += "; read at run time: a plan that changes what it references lists a contract, not an action"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				f.Name, typeName(f.Type), required, def, change, compared, exprs(f), secret, notes)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func typeName(t Type) string {
	return map[Type]string{
		TypeString: "string", TypeInt: "integer", TypeNumber: "number", TypeBool: "boolean",
		TypeStringList: "list of strings", TypeStringMap: "object of strings", TypeRef: "reference",
		TypeSecretSource: "secret source", TypeIngress: "list of `{port, cidr}`", TypeRefMap: "object of references",
		TypeObjects: "object of items (the rows `NAME.…` below)",
	}[t]
}

// exprs says which expressions a field may hold.
func exprs(f Field) string {
	switch f.Type {
	case TypeRef, TypeRefMap:
		s := "`ref` to " + kindList(f.RefKinds)
		if f.Type == TypeRefMap {
			s = "each value: " + s
		}
		var where []string
		if f.SameProvider {
			where = append(where, "same cloud")
		}
		if f.RegionLocal {
			where = append(where, "same region")
		}
		if len(where) > 0 {
			s += " (" + strings.Join(where, ", ") + ")"
		}
		if f.Wired {
			s += ", or `use` of another fleet's export of its identity"
		}
		return s
	case TypeSecretSource:
		return "`fromEnv`, or `composed` over `secretValue` and `observed`"
	}
	if !f.Expr {
		return "—"
	}
	if f.Type == TypeStringMap || f.Type == TypeStringList {
		return "each value: `observed`, `composed`"
	}
	return "`observed`, `composed`"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func renderRegions() string {
	var b strings.Builder
	b.WriteString("| locality |" + providerColumns() + "\n|---|" + strings.Repeat("---|", len(Providers)) + "\n")
	for _, l := range Localities() {
		fmt.Fprintf(&b, "| %s |", l)
		for _, p := range Providers {
			if c, ok := RegionAt(p, l); ok {
				b.WriteString(" `" + c + "` |")
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// providerColumns is one table column heading per provider.
func providerColumns() string {
	var b strings.Builder
	for _, p := range Providers {
		b.WriteString(" " + string(p) + " |")
	}
	return b.String()
}

// listInProse joins "a", "a and b", "a, b and c".
func listInProse(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func renderInstanceTypes() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d families, %d sizes, %d valid types.\n\n", len(InstanceFamilies()), len(InstanceSizes()), len(InstanceTypes()))
	b.WriteString("| family | category | sizes |\n|---|---|---|\n")
	for _, f := range InstanceFamilies() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name, f.Category, strings.Join(f.Sizes, ", "))
	}
	return b.String()
}

// checkExamples is one small document per rule of "check refuses", in the
// contract's order. The doc shows the row Validate really gives for each.
var checkExamples = []struct{ rule, doc string }{
	{"unknown apiVersion", docJSON(map[string]string{"apiVersion": `"infra/v2"`}, queueJobs)},
	{"unknown top-level key", docJSON(map[string]string{"resource": `[]`}, queueJobs)},
	{"unknown provider", docJSON(nil, `{"address": "azure/queues/jobs", "spec": {}}`)},
	{"unknown kind", docJSON(nil, `{"address": "aws/queue/jobs", "spec": {}}`)},
	{"kind the cloud does not offer", docJSON(nil, `{"address": "aws/scaleway-function/thumbs", "spec": {}}`)},
	{"unknown field", docJSON(nil, `{"address": "aws/queues/jobs", "spec": {"visibilityTimeout": 30}}`)},
	{"unknown resource key", docJSON(nil, `{"address": "aws/queues/jobs", "regoin": "eu-west-1", "spec": {}}`)},
	{"value of the wrong type", docJSON(nil, `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": "30"}}`)},
	{"missing required field", docJSON(nil, `{"address": "aws/security-group/web", "spec": {}}`)},
	{"portable kind missing what one cloud requires", docJSON(nil, `{"address": "aws/compute/api", "spec": {"image": "app:1"}}`)},
	{"duplicate address", docJSON(nil, queueJobs, queueJobs)},
	{"one physical resource declared twice", docJSON(nil, `{"address": "aws/object-store/assets", "spec": {}}`,
		`{"address": "aws/s3-bucket/assets", "spec": {}}`)},
	{"reference to an address not in the document", docJSON(nil, instance("web-1", ""))},
	{"reference of the wrong kind", docJSON(nil, queueJobs, `{"address": "aws/postgres/main", "spec": {"masterUsername": "dbadmin",
		"masterPasswordSecret": {"ref": "aws/queues/jobs"}}}`)},
	{"attribute the target does not publish", docJSON(nil, queueJobs, `{"address": "aws/compute/api", "spec": {"image": "app:1",
		"executionRole": "arn:aws:iam::123456789012:role/api", "env": {"Q": {"observed": "aws/queues/jobs", "attribute": "endpoint"}}}}`)},
	{"reference to another cloud where the field needs the same one", docJSON(nil, `{"address": "scaleway/secrets/shop-db-password", "spec": {"value": {"fromEnv": "DB"}}}`,
		`{"address": "aws/postgres/main", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "scaleway/secrets/shop-db-password"}}}`)},
	{"cycle", docJSON(nil,
		`{"address": "aws/secrets/a", "spec": {"value": {"composed": {"format": "{0}", "args": [{"observed": "aws/postgres/db", "attribute": "endpoint"}]}}}}`,
		`{"address": "aws/postgres/db", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "aws/secrets/b"}}}`,
		`{"address": "aws/secrets/b", "spec": {"value": {"composed": {"format": "{0}", "args": [{"secretValue": "aws/secrets/a"}]}}}}`)},
	{"forget of an address still declared", docJSON(map[string]string{"forget": `["aws/queues/jobs"]`}, queueJobs)},
	{"composed secret with no dependency", docJSON(nil, `{"address": "aws/secrets/token", "spec": {"value":
		{"composed": {"format": "hunter2", "args": []}}}}`)},
	{"secret written as a plain string", docJSON(nil, `{"address": "aws/secrets/token", "spec": {"value": "hunter2"}}`)},
	{"placeholder with no argument", docJSON(nil, `{"address": "aws/compute/api", "spec": {"executionRole": "arn:aws:iam::123456789012:role/api",
		"image": {"composed": {"format": "{0}:{1}", "args": ["app"]}}}}`)},
	{"region not in the cloud's table", docJSON(map[string]string{"placement": `{"aws": "eu-west-3", "scaleway": "fr-pra"}`}, queueJobs)},
	{"an AWS region for Scaleway", docJSON(nil, `{"address": "scaleway/queues/shop-jobs", "region": "eu-west-3", "spec": {}}`)},
	{"no region at all", docJSON(map[string]string{"placement": `{"aws": "eu-west-3"}`}, `{"address": "scaleway/queues/shop-jobs", "spec": {}}`)},
	{"invalid instance type", docJSON(nil, sgWeb, `{"address": "aws/aws-instance/big", "spec": {"imageId": "latest",
		"instanceType": "t3.32xlarge", "securityGroup": {"ref": "aws/security-group/web"}}}`)},
	{"bad fleet name", docJSON(map[string]string{"fleet": `"Shop"`}, queueJobs)},
	{"bad account id", docJSON(map[string]string{"accounts": `{"aws": "1234"}`}, queueJobs)},
	{"exclusion without why", docJSON(map[string]string{"exclusions": `[{"address": "aws/queues/legacy*"}]`}, queueJobs)},
	{"a subnet's CIDR block outside its VPC's", docJSON(nil, `{"address": "aws/vpc/main", "spec": {"cidr": "10.0.0.0/16"}}`,
		`{"address": "aws/subnet/a", "spec": {"vpc": {"ref": "aws/vpc/main"}, "cidr": "10.1.0.0/24", "availabilityZone": "eu-west-3a"}}`)},
	{"a CIDR block with host bits set", docJSON(nil, `{"address": "aws/vpc/main", "spec": {"cidr": "10.0.0.1/16"}}`)},
	{"region-local reference across regions", docJSON(nil, sgWeb, instance("web-1", `"region": "eu-west-1", `))},
	{"a GCP region for AWS", docJSON(nil, `{"address": "aws/queues/jobs", "region": "europe-west9", "spec": {}}`)},
	{"bad GCP project id", docJSON(map[string]string{"accounts": `{"gcp": "123456789012"}`}, queueJobs)},
	{"a name the GCP product refuses", docJSON(gcpHeader, `{"address": "gcp/iam/ci", "spec": {}}`)},
	{"a tag GCP cannot hold as a label", docJSON(gcpHeader, `{"address": "gcp/object-store/assets", "spec": {"tags": {"Team": "web"}}}`)},
	{"a Pub/Sub ack deadline out of range", docJSON(gcpHeader, `{"address": "gcp/queues/jobs", "spec": {"visibilityTimeoutSec": 900}}`)},
	{"a Cloud SQL capacity range (a warning)", docJSON(gcpHeader, `{"address": "gcp/secrets/db", "spec": {"value": {"fromEnv": "DB"}}}`,
		`{"address": "gcp/postgres/main", "spec": {"masterUsername": "app", "masterPasswordSecret": {"ref": "gcp/secrets/db"}, "minCapacity": 1, "maxCapacity": 4}}`)},
	{"an AWS policy for a GCP service account", docJSON(gcpHeader, `{"address": "gcp/iam/ci-deployer", "spec": {"policies": ["arn:aws:iam::aws:policy/ReadOnlyAccess"]}}`)},
	{"tags that overflow a service account's description", docJSON(gcpHeader, `{"address": "gcp/iam/ci-deployer", "spec": {"tags": {"purpose": "`+
		strings.Repeat("deploys the shop from CI; ", 10)+`"}}}`)},
}

// gcpHeader places a document on GCP.
var gcpHeader = map[string]string{"accounts": `{"gcp": "shop-prod-1"}`, "placement": `{"gcp": "europe-west9"}`}

func renderCheckRules(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| rule | id | subject | message | resolution |\n|---|---|---|---|---|\n")
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	for _, ex := range checkExamples {
		rows := validateJSON(t, ex.doc)
		if len(rows) != 1 {
			t.Errorf("example %q gives %d rows, want 1: %v", ex.rule, len(rows), rows)
			continue
		}
		r := rows[0]
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s |\n", ex.rule, r.ID, r.Subject, esc.Replace(r.Message), esc.Replace(r.Resolution))
	}
	return b.String()
}

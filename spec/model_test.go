package spec

import (
	"reflect"
	"testing"
)

// What the engine reads from a compiled model: regions resolved (the raw
// escape stripped), instance types resolved, exclusions parsed, edges.
func TestCompileModel(t *testing.T) {
	d, err := DecodeDocument([]byte(docJSON(map[string]string{
		"exclusions": `[{"address": "aws/queues/legacy-*", "why": "theirs"}, {"address": "aws/queues/kept", "why": "ours"}]`,
		"forget":     `["aws/queues/old"]`,
	},
		sgWeb,
		`{"address": "aws/aws-instance/gov", "region": "raw:us-gov-west-1", "spec": {"imageId": "ami-1",
			"instanceType": "raw:p5.48xlarge", "securityGroup": {"ref": "aws/security-group/gov"}}}`,
		`{"address": "aws/security-group/gov", "region": "raw:us-gov-west-1", "spec": {"description": "gov"}}`,
		instance("web-1", ""),
		`{"address": "scaleway/queues/shop-jobs", "region": "nl-ams", "spec": {}}`,
	)))
	if err != nil {
		t.Fatal(err)
	}
	m, diags := Compile(d)
	checkRows(t, diags)

	gov, ok := m.Lookup(mustAddress("aws/aws-instance/gov"))
	if !ok {
		t.Fatal("aws/aws-instance/gov not in the model")
	}
	if gov.Region != "us-gov-west-1" {
		t.Errorf("raw region: got %q", gov.Region)
	}
	if got := gov.Fields["instanceType"]; got != (Lit{"p5.48xlarge"}) {
		t.Errorf("raw instance type: got %#v", got)
	}
	if got, want := gov.Deps(), []Address{mustAddress("aws/security-group/gov")}; !reflect.DeepEqual(got, want) {
		t.Errorf("deps: got %v, want %v", got, want)
	}
	web, _ := m.Lookup(mustAddress("aws/aws-instance/web-1"))
	if web == nil || web.Region != "eu-west-3" {
		t.Errorf("placement should give eu-west-3: %+v", web)
	}
	if got, want := m.Regions(), map[Provider][]string{AWS: {"eu-west-3", "us-gov-west-1"}, Scaleway: {"nl-ams"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("regions: got %v, want %v", got, want)
	}
	if got, want := m.Providers(), []Provider{AWS, Scaleway}; !reflect.DeepEqual(got, want) {
		t.Errorf("providers: got %v, want %v", got, want)
	}
	if !reflect.DeepEqual(m.Forget, []Address{mustAddress("aws/queues/old")}) {
		t.Errorf("forget: %v", m.Forget)
	}
	for addr, want := range map[string]bool{
		"aws/queues/legacy-1": true, "aws/queues/legacy-": true, "aws/queues/legacy": false,
		"aws/queues/kept": true, "aws/queues/kept-2": false, "aws/object-store/legacy-1": false,
	} {
		if _, got := m.Excluded(mustAddress(addr)); got != want {
			t.Errorf("Excluded(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestRegionTables(t *testing.T) {
	if RegionKnown(AWS, "") || RegionKnown(Scaleway, "") {
		t.Error("the empty code is no region")
	}
	if _, ok := LocalityOf(AWS, ""); ok {
		t.Error("LocalityOf(aws, \"\") found a locality")
	}
	if code, ok := RegionAt(AWS, "warsaw"); ok {
		t.Errorf("AWS has no Warsaw, got %q", code)
	}
	if code, _ := RegionAt(Scaleway, "paris"); code != "fr-par" {
		t.Errorf("Scaleway at paris: %q", code)
	}
	if owner, _ := RegionOwner("eu-west-3"); owner != AWS {
		t.Errorf("owner of eu-west-3: %q", owner)
	}
	// Each cloud's list is derived from the one table: every code maps back
	// to its locality.
	for _, p := range Providers {
		for _, code := range Regions(p) {
			l, ok := LocalityOf(p, code)
			if back, _ := RegionAt(p, l); !ok || back != code {
				t.Errorf("%s %s: locality %q maps back to %q", p, code, l, back)
			}
		}
	}
}

// mustAddress parses an address written in this test.
func mustAddress(s string) Address {
	a, err := ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

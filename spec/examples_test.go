package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every kind has an example, and a document of every kind's example on
// each provider that offers it checks with no row: the example is the one
// coverage a new kind's row brings to the tests built from it.
func TestEveryKindsExampleChecks(t *testing.T) {
	for _, info := range Kinds() {
		if info.Example == nil {
			t.Errorf("%s has no Example in its row", info.Kind)
		}
	}
	accounts := map[Provider]string{AWS: "123456789012", Scaleway: "11111111-2222-3333-4444-555555555555", GCP: "example-project"}
	placement := map[Provider]string{AWS: "eu-west-3", Scaleway: "fr-par", GCP: "europe-west1"}
	for _, p := range Providers {
		var kinds []Kind
		for _, info := range KindsOf(p) {
			kinds = append(kinds, info.Kind)
		}
		rs := Examples(p, "examples", kinds...)
		made := map[string]bool{}
		for _, r := range rs {
			made[r.Address] = true
		}
		// Each kind's example, and each of its MoreExamples, which some
		// other example must need.
		for _, info := range KindsOf(p) {
			if a := (example{kind: info.Kind}).address(p, "examples"); !made[a] {
				t.Errorf("%s: no %s", p, a)
			}
			for suffix := range info.MoreExamples {
				if a := (example{kind: info.Kind, more: suffix}).address(p, "examples"); !made[a] {
					t.Errorf("%s: no example refers to %s/%s/example-%s, so %s is never made", p, p, info.Kind, suffix, a)
				}
			}
		}
		// Through JSON, as a document arrives.
		b, err := json.Marshal(Document{APIVersion: "infra/v1", Fleet: "examples", Accounts: map[Provider]string{p: accounts[p]},
			Placement: map[Provider]string{p: placement[p]}, Resources: rs})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := DecodeDocument(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, d := range Validate(doc) {
			t.Errorf("%s: %s: %s", p, d.Subject, d.Message)
		}
	}
}

// The referenced come first, each once, on the provider asked for.
func TestExamplesBringWhatTheyReferTo(t *testing.T) {
	rs := Examples(AWS, "ex", AWSInstance, SecurityGroup)
	if len(rs) != 2 || rs[0].Address != "aws/security-group/ex-security-group" || rs[1].Address != "aws/aws-instance/ex-aws-instance" ||
		rs[1].Spec["securityGroup"].(map[string]any)["ref"] != rs[0].Address {
		t.Fatalf("Examples = %v", rs)
	}
	sc := Examples(Scaleway, "ex", Compute)
	if len(sc) != 2 || sc[0].Address != "scaleway/scaleway-container-namespace/ex-scaleway-container-namespace" {
		t.Fatalf("Scaleway compute examples = %v", sc)
	}
	if _, ok := sc[1].Spec["executionRole"]; ok {
		t.Errorf("the Scaleway example kept an AWS-only field: %v", sc[1].Spec)
	}
	if len(Examples(AWS, "ex", ScalewayFunction)) != 0 {
		t.Error("a kind AWS does not offer has an AWS example")
	}
}

// An ALB needs two zones: the subnet's second example is another subnet,
// in eu-west-3b.
func TestMoreExamplesAreResourcesOfTheirOwn(t *testing.T) {
	rs := Examples(AWS, "ex", ALB)
	specs := map[string]map[string]any{}
	for _, r := range rs {
		specs[r.Address] = r.Spec
	}
	a, b := specs["aws/subnet/ex-subnet"], specs["aws/subnet/ex-subnet-b"]
	if a == nil || b == nil || a["availabilityZone"] != "eu-west-3a" || b["availabilityZone"] != "eu-west-3b" ||
		b["cidr"] != "10.0.2.0/24" || b["vpc"].(map[string]any)["ref"] != "aws/vpc/ex-vpc" {
		t.Fatalf("subnet examples: %v, %v", a, b)
	}
	subnets := specs["aws/alb/ex-alb"]["subnets"].(map[string]any)
	if subnets["eu-west-3a"].(map[string]any)["ref"] != "aws/subnet/ex-subnet" || subnets["eu-west-3b"].(map[string]any)["ref"] != "aws/subnet/ex-subnet-b" {
		t.Errorf("the ALB's subnets: %v", subnets)
	}
}

// A kind with names of its own shape is named its ExampleName, and a
// record's FQDN is inside its zone's domain.
func TestExampleNamesAreKept(t *testing.T) {
	rs := Examples(AWS, "ex", Route53Record)
	if len(rs) != 2 || rs[0].Address != "aws/route53-zone/example.com" || rs[1].Address != "aws/route53-record/www.example.com:A" ||
		rs[1].Spec["zone"].(map[string]any)["ref"] != rs[0].Address {
		t.Fatalf("Examples = %v", rs)
	}
	zone := strings.TrimPrefix(rs[0].Address, "aws/route53-zone/")
	fqdn, _, _ := strings.Cut(strings.TrimPrefix(rs[1].Address, "aws/route53-record/"), ":")
	if fqdn != zone && !strings.HasSuffix(fqdn, "."+zone) {
		t.Errorf("the record %s is not inside its zone %s", fqdn, zone)
	}
	for _, info := range Kinds() {
		for _, p := range info.Providers {
			if info.ExampleName != "" && info.MarkOn(p) == MarkNamePrefix {
				t.Errorf("%s: ExampleName %q on %s, where the name carries the mark: it must start with the fleet", info.Kind, info.ExampleName, p)
			}
		}
		if info.ExampleName != "" && info.MoreExamples != nil {
			t.Errorf("%s: MoreExamples with an ExampleName: their names would not be of the kind's shape", info.Kind)
		}
	}
}

package spec

import (
	"encoding/json"
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
		if len(rs) != len(kinds) {
			t.Errorf("%s: %d examples for %d kinds", p, len(rs), len(kinds))
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

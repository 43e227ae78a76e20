package fleet_test

import (
	"reflect"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

// A slot's public export of a resource's identity fills a field that takes
// a reference by identity (fleet.RefFrom), alone or in a map of
// references, beside this fleet's own handles; spec reads it as the
// referent's identity.
func TestASlotsExportFillsAReferenceField(t *testing.T) {
	f := fleet.New("app")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	jobs := fleet.Use(f, "jobs", jobQueue)
	fleet.Wire(f, jobs, "jobs", "main")
	x := jobs.Exports()
	vpc := cloud.VPC("own", "10.1.0.0/16", aws.VPCSpec{})
	own := cloud.Subnet("own-b", vpc, "10.1.2.0/24", "eu-west-3b", aws.SubnetSpec{})
	cloud.ALB("web", map[string]fleet.RefField[aws.Subnet]{"eu-west-3a": fleet.RefFrom[aws.Subnet](x.URL), "eu-west-3b": own}, aws.ALBSpec{})
	cloud.ALBTargetGroup("tg", aws.ALBTargetGroupSpec{VPC: fleet.RefFrom[aws.VPC](x.URL), Protocol: fleet.Set("HTTP"), Port: fleet.Set(80)})
	// Left out, as nil or as a zero handle, an optional one is unset.
	cloud.ALBTargetGroup("nil", aws.ALBTargetGroupSpec{TargetType: fleet.Set("lambda")})
	cloud.ALBTargetGroup("zero", aws.ALBTargetGroupSpec{TargetType: fleet.Set("lambda"), VPC: fleet.Ref[aws.VPC]{}})
	doc, diags := synth(t, f)
	noErrors(t, diags)
	for _, name := range []string{"nil", "zero"} {
		if v, set := specOf(t, doc, "aws/alb-target-group/"+name)["vpc"]; set {
			t.Errorf("%s: vpc = %v, want it unset", name, v)
		}
	}

	imported := map[string]any{"use": "jobs", "export": "url"}
	want := map[string]any{"eu-west-3a": imported, "eu-west-3b": map[string]any{"ref": "aws/subnet/own-b"}}
	if got := specOf(t, doc, "aws/alb/web")["subnets"]; !reflect.DeepEqual(got, want) {
		t.Errorf("subnets = %v, want %v", got, want)
	}
	if got := specOf(t, doc, "aws/alb-target-group/tg")["vpc"]; !reflect.DeepEqual(got, imported) {
		t.Errorf("vpc = %v, want %v", got, imported)
	}
	m, diags := spec.Compile(doc)
	noErrors(t, diags)
	tg, _ := m.Lookup(spec.Address{Provider: spec.AWS, Kind: spec.ALBTargetGroup, Name: "tg"})
	if im, ok := tg.Fields["vpc"].(spec.Import); !ok || !im.RefField || im.Export != "url" {
		t.Errorf("spec reads vpc as %#v", tg.Fields["vpc"])
	}
}

// What is not a slot's export is refused by RefFrom: a value of this
// fleet's has a handle, which is what the field takes.
func TestRefFromRefusesWhatIsNoSlotExport(t *testing.T) {
	f := fleet.New("app")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	vpc := cloud.VPC("own", "10.1.0.0/16", aws.VPCSpec{})
	cloud.ALBTargetGroup("lit", aws.ALBTargetGroupSpec{VPC: fleet.RefFrom[aws.VPC](fleet.Lit("vpc-0abc")), Protocol: fleet.Set("HTTP"), Port: fleet.Set(80)})
	cloud.ALBTargetGroup("observed", aws.ALBTargetGroupSpec{VPC: fleet.RefFrom[aws.VPC](aws.ARNOf(vpc)), Protocol: fleet.Set("HTTP"), Port: fleet.Set(80)})
	cloud.ALBTargetGroup("definition", aws.ALBTargetGroupSpec{VPC: fleet.RefFrom[aws.VPC](jobQueue.Exports().URL), Protocol: fleet.Set("HTTP"), Port: fleet.Set(80)})
	_, diags := f.Synth()
	for _, name := range []string{"lit", "observed"} {
		wantRow(t, diags, "aws/alb-target-group/"+name, `field "vpc"`, "fleet.RefFrom takes a slot's export")
	}
	wantRow(t, diags, "aws/alb-target-group/definition", `field "vpc"`, "the interface's definition, not a value")
}

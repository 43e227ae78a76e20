package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// wiredConsumer puts a target group in the VPC, and a load balancer in the
// subnets, that a network fleet publishes.
const wiredConsumer = `{"apiVersion": "infra/v1", "fleet": "app", "accounts": {"aws": "` + acct + `"},
	"placement": {"aws": "eu-west-3"},
	"interfaces": {"network": {"exports": {
		"vpc-id": {"type": "string", "lifecycle": "apply", "locality": ["region"]},
		"subnet-a": {"type": "string", "lifecycle": "apply", "locality": ["region"]},
		"subnet-b": {"type": "string", "lifecycle": "apply", "locality": ["region"]}}}},
	"uses": {"net": {"interface": "network"}},
	"wires": {"net": {"fleet": "network", "provides": "main"}},
	"resources": [
		{"address": "aws/alb-target-group/tg", "spec": {"vpc": {"use": "net", "export": "vpc-id"}, "protocol": "HTTP", "port": 80}},
		{"address": "aws/alb/web", "spec": {"subnets": {
			"eu-west-3a": {"use": "net", "export": "subnet-a"}, "eu-west-3b": {"use": "net", "export": "subnet-b"}}}}]}`

func wiredModel(t *testing.T, vpc string) *spec.Model {
	t.Helper()
	m := model(t, wiredConsumer)
	export := func(v string) spec.PublishedExport {
		return spec.PublishedExport{Type: spec.ExportString, Lifecycle: spec.LifecycleApply, Locality: spec.LocalityRegion, Region: "eu-west-3", Provider: spec.AWS, Value: v}
	}
	rec := &spec.Published{Fleet: "network", Capabilities: map[string]spec.PublishedCapability{"main": {
		Interface: "network", InterfaceHash: m.Interfaces["network"].Hash, Consumers: "many", Exposed: true,
		Exports: map[string]spec.PublishedExport{"vpc-id": export(vpc), "subnet-a": export("subnet-0aaa"), "subnet-b": export("subnet-0bbb")}}}}
	if diags := spec.ResolveWires(m, map[string]spec.Far{"network": {Record: rec}}); len(diags) != 0 {
		t.Fatalf("rows: %v", diags)
	}
	return m
}

// A Wired field's export reaches the driver as the referent's identity, in
// Target.Identities under the name the field holds, so that a driver which
// takes references by identity never looks another fleet's resource up by
// a name this fleet does not know. The next plan compares the identities
// and is empty; a new export value is an update.
func TestWiredExportIsTheReferentsIdentity(t *testing.T) {
	f := newFixture(t)
	plan := func(m *spec.Model) *Plan { return f.planWith(m, PlanOptions{}) }
	p := plan(wiredModel(t, "vpc-0abc"))
	if _, err := f.engine().Apply(context.Background(), p, ApplyOptions{Store: f.store}); err != nil {
		t.Fatal(err)
	}
	tg, _ := f.cloud.Get(spec.AWS, spec.ALBTargetGroup, "eu-west-3", "tg")
	if tg.Fields["vpc"] != "vpc-0abc" {
		t.Fatalf("the target group records %v", tg)
	}
	web, _ := f.cloud.Get(spec.AWS, spec.ALB, "eu-west-3", "web")
	if subnets, _ := web.Fields["subnets"].(map[string]any); subnets["eu-west-3b"] != "subnet-0bbb" {
		t.Fatalf("the load balancer records %v", web)
	}
	if p := plan(wiredModel(t, "vpc-0abc")); p.HasChanges() {
		t.Fatalf("the plan after the apply: %+v", p.Actions)
	}
	moved := plan(wiredModel(t, "vpc-0def"))
	var what []string
	for _, a := range moved.Actions {
		what = append(what, a.Address.String()+" "+string(a.Action))
	}
	// vpc forces a replace, as a reference of this fleet's would.
	if got := strings.Join(what, ", "); got != "aws/alb-target-group/tg replace" {
		t.Fatalf("a new VPC plans %s", got)
	}
}

package lifecycle

import (
	"context"
	"fmt"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// groupsDocument declares VPCs of the given names and two groups: web,
// which leaves vpc unset (the region's default VPC), and app, in appVPC.
func groupsDocument(appVPC string, vpcs ...string) string {
	rs := ""
	for i, v := range vpcs {
		rs += fmt.Sprintf(`{"address": "aws/vpc/%s", "spec": {"cidr": "10.%d.0.0/16"}}, `, v, 50+i)
	}
	rs += `{"address": "aws/security-group/ci-sg-web", "spec": {"description": "web", "ingress": [{"port": 443, "cidr": "0.0.0.0/0"}]}}, ` +
		fmt.Sprintf(`{"address": "aws/security-group/ci-sg-app", "spec": {"description": "app", "vpc": {"ref": "aws/vpc/%s"}}}`, appVPC)
	return `{"apiVersion": "infra/v1", "fleet": "groups", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": [` + rs + `]}`
}

// A group that leaves vpc unset is made in the default VPC and reports
// that VPC's id as its vpc; unset, the field is never compared, so its
// next plan is empty, as a group declaring its VPC's is. A group moved to
// another VPC is replaced (EC2 cannot move one), and the teardown leaves
// nothing.
func TestAWSSecurityGroupsConvergeInTheDefaultVPCAndADeclaredOne(t *testing.T) {
	moto.Fresh(t)
	ctx := context.Background()
	b, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenFile(t.TempDir(), "groups")
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
	RunStages(t, e, store, []Stage{
		{"both", groupsDocument("ci-sg-a", "ci-sg-a"), engine.Summary{Create: 3}, 3},
	})
	d, _ := b.Driver(spec.SecurityGroup)
	web, err := d.Read(ctx, "eu-west-3", "ci-sg-web")
	if err != nil {
		t.Fatal(err)
	}
	if web.Fields["vpc"] == nil || web.Fields["vpc"] != web.Attributes["vpcId"] {
		t.Errorf("the default VPC's group reports vpc %v (vpcId %q): the empty plan above did not compare a reported vpc", web.Fields["vpc"], web.Attributes["vpcId"])
	}
	RunStages(t, e, store, []Stage{
		{"moved", groupsDocument("ci-sg-b", "ci-sg-a", "ci-sg-b"), engine.Summary{Create: 1, Replace: 1}, 4},
		{"empty", emptyGroups, engine.Summary{Delete: 4}, 0},
	})
	rs, err := d.List(ctx, "eu-west-3")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		t.Errorf("left behind: aws/security-group/%s", r.Name)
	}
}

const emptyGroups = `{"apiVersion": "infra/v1", "fleet": "groups", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": []}`

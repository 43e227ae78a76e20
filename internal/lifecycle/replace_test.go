package lifecycle

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/infra-iac/infra/engine"
)

// A replace on the emulator: what refers to the replaced resource comes
// along, and after each apply every reference points at a live resource
// and the next plan is empty. moto, unlike AWS, lets a group in use be
// deleted; the engine's tests on the memory cloud show the order, these
// show the identities.

const (
	replGroup    = `{"address": "aws/security-group/repl-web", "spec": {"description": "%s"}}`
	replInstance = `{"address": "aws/aws-instance/repl-app", "spec": {"imageId": "ami-0e96f8459c59b3ff6", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/repl-web"}}}`
	replGroupRef = `{"address": "aws/secrets/repl-group", "spec": {"value": {"composed": {"format": "sg={0}", "args": [{"observed": "aws/security-group/repl-web", "attribute": "groupId"}]}}}}`
	replPassword = `{"address": "aws/secrets/repl-password", "spec": {"value": {"fromEnv": "REPL_PASSWORD"}}}`
	replDB       = `{"address": "aws/postgres/repl-db", "spec": {"masterUsername": "%s", "masterPasswordSecret": {"ref": "aws/secrets/repl-password"}, "minCapacity": 0.5, "maxCapacity": 2}}`
	replURL      = `{"address": "aws/secrets/repl-url", "spec": {"value": {"composed": {"format": "postgres://{0}", "args": [{"observed": "aws/postgres/repl-db", "attribute": "endpoint"}]}}}}`
)

func sprintf(format, arg string) string { return strings.Replace(format, "%s", arg, 1) }

func (f *ownFixture) forceApply(doc string) *engine.Plan {
	f.t.Helper()
	p := f.plan(doc)
	if _, err := f.e.Apply(f.ctx, p, engine.ApplyOptions{Store: f.store, Force: true}); err != nil {
		f.t.Fatalf("apply: %v\n%s", err, Render(p))
	}
	return p
}

func (f *ownFixture) planIsEmpty(doc string) {
	f.t.Helper()
	if p := f.plan(doc); len(p.Actions) != 0 {
		f.t.Errorf("next plan is not empty:\n%s", Render(p))
	}
}

// liveGroupOf returns the id of the group the instance is attached to,
// failing unless that group exists and is the one named name.
func (f *ownFixture) liveGroupOf(instance, name string) string {
	f.t.Helper()
	c := ec2.NewFromConfig(f.b.Config(), func(o *ec2.Options) { o.Region = "eu-west-3" })
	out, err := c.DescribeInstances(f.ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:Name"), Values: []string{instance}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	var ids []string
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			for _, g := range i.SecurityGroups {
				ids = append(ids, aws.ToString(g.GroupId))
			}
		}
	}
	if len(ids) != 1 {
		f.t.Fatalf("instance %s: attached to %v, want one group", instance, ids)
	}
	groups, err := c.DescribeSecurityGroups(f.ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{
		{Name: aws.String("group-name"), Values: []string{name}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(groups.SecurityGroups) != 1 || aws.ToString(groups.SecurityGroups[0].GroupId) != ids[0] {
		f.t.Fatalf("instance %s is attached to %s, which is not the live group %s (%d of that name)", instance, ids[0], name, len(groups.SecurityGroups))
	}
	return ids[0]
}

func (f *ownFixture) secretValue(name string) string {
	f.t.Helper()
	c := secretsmanager.NewFromConfig(f.b.Config(), func(o *secretsmanager.Options) { o.Region = "eu-west-3" })
	out, err := c.GetSecretValue(f.ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)})
	if err != nil {
		f.t.Fatal(err)
	}
	return aws.ToString(out.SecretString)
}

func TestReplacedGroupTakesItsInstanceAlong(t *testing.T) {
	f := newOwnFixture(t)
	f.forceApply(ownDoc("", sprintf(replGroup, "web"), replInstance))
	before := f.liveGroupOf("repl-app", "repl-web")

	doc := ownDoc("", sprintf(replGroup, "web tier"), replInstance)
	p := f.forceApply(doc)
	if got := strings.Join(actionNames(p), ", "); got != "replace aws/security-group/repl-web, replace aws/aws-instance/repl-app" {
		t.Fatalf("plan: %s\n%s", got, Render(p))
	}
	if after := f.liveGroupOf("repl-app", "repl-web"); after == before {
		t.Errorf("the group kept its id %s", before)
	}
	f.planIsEmpty(doc)
}

func TestReplacedGroupWithDependentsOfDifferentMutability(t *testing.T) {
	f := newOwnFixture(t)
	f.forceApply(ownDoc("", sprintf(replGroup, "web"), replInstance, replGroupRef))
	doc := ownDoc("", sprintf(replGroup, "web tier"), replInstance, replGroupRef)
	p := f.forceApply(doc)
	if got := strings.Join(actionNames(p), ", "); got != "replace aws/security-group/repl-web, replace aws/aws-instance/repl-app, update aws/secrets/repl-group" {
		t.Fatalf("plan: %s\n%s", got, Render(p))
	}
	id := f.liveGroupOf("repl-app", "repl-web")
	if got := f.secretValue("repl-group"); got != "sg="+id {
		t.Errorf("the secret holds %q, want sg=%s", got, id)
	}
	f.planIsEmpty(doc)
}

func TestReplacedDatabaseRewritesTheSecretThatReadsIt(t *testing.T) {
	os.Setenv("REPL_PASSWORD", "repl-password-1")
	f := newOwnFixture(t)
	f.forceApply(ownDoc("", replPassword, sprintf(replDB, "dbadmin"), replURL))
	// moto names a cluster's automated snapshot by the minute and keeps it
	// after the cluster is deleted, so a cluster made again under the same
	// name within that minute is refused (AWS does not do this). Deleting
	// it here, as only the emulator allows, spares waiting for the minute.
	c := rds.NewFromConfig(f.b.Config(), func(o *rds.Options) { o.Region = "eu-west-3" })
	snaps, err := c.DescribeDBClusterSnapshots(f.ctx, &rds.DescribeDBClusterSnapshotsInput{DBClusterIdentifier: aws.String("repl-db")})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps.DBClusterSnapshots {
		if _, err := c.DeleteDBClusterSnapshot(f.ctx, &rds.DeleteDBClusterSnapshotInput{DBClusterSnapshotIdentifier: s.DBClusterSnapshotIdentifier}); err != nil {
			t.Fatalf("delete moto's snapshot %s: %v", aws.ToString(s.DBClusterSnapshotIdentifier), err)
		}
	}
	doc := ownDoc("", replPassword, sprintf(replDB, "owner"), replURL)
	p := f.forceApply(doc)
	if got := strings.Join(actionNames(p), ", "); got != "replace aws/postgres/repl-db, update aws/secrets/repl-url" {
		t.Fatalf("plan: %s\n%s", got, Render(p))
	}
	out, err := c.DescribeDBClusters(f.ctx, &rds.DescribeDBClustersInput{DBClusterIdentifier: aws.String("repl-db")})
	if err != nil || len(out.DBClusters) != 1 {
		t.Fatalf("describe repl-db: %v", err)
	}
	if aws.ToString(out.DBClusters[0].MasterUsername) != "owner" {
		t.Errorf("the cluster was not replaced: master user %s", aws.ToString(out.DBClusters[0].MasterUsername))
	}
	if got, want := f.secretValue("repl-url"), fmt.Sprintf("postgres://%s:%d", aws.ToString(out.DBClusters[0].Endpoint), aws.ToInt32(out.DBClusters[0].Port)); got != want {
		t.Errorf("the secret holds %q, want %q", got, want)
	}
	f.planIsEmpty(doc)
}

func actionNames(p *engine.Plan) []string {
	var out []string
	for _, a := range p.Actions {
		out = append(out, string(a.Action)+" "+a.Address.String())
	}
	return out
}

// An instance moved out of band to another group is drift, compared by
// the group's id, and the next apply puts it back.
func TestInstanceOnAnotherGroupIsRepaired(t *testing.T) {
	f := newOwnFixture(t)
	doc := ownDoc("", sprintf(replGroup, "web"), replInstance)
	f.forceApply(doc)
	c := ec2.NewFromConfig(f.b.Config(), func(o *ec2.Options) { o.Region = "eu-west-3" })
	other, err := c.CreateSecurityGroup(f.ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("repl-other"), Description: aws.String("not declared")})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.DescribeInstances(f.ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:Name"), Values: []string{"repl-app"}}}})
	if err != nil || len(out.Reservations) != 1 {
		t.Fatalf("describe: %v", err)
	}
	id := out.Reservations[0].Instances[0].InstanceId
	if _, err := c.ModifyInstanceAttribute(f.ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: id, Groups: []string{aws.ToString(other.GroupId)}}); err != nil {
		t.Fatal(err)
	}
	p := f.plan(doc)
	if got := strings.Join(actionNames(p), ", "); got != "update aws/aws-instance/repl-app" || p.Actions[0].Changes[0].Before != aws.ToString(other.GroupId) {
		t.Fatalf("plan: %s\n%s", got, Render(p))
	}
	f.forceApply(doc)
	f.liveGroupOf("repl-app", "repl-web")
	f.planIsEmpty(doc)
}

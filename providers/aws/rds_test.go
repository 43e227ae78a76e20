package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/rds"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

const testPassword = "correct-horse-battery-1"

func TestPostgresConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend: motoRDS{b}, Region: testRegion, OtherRegion: otherRegion,
		Reset: func(t *testing.T) {
			if err := srv.Reset(); err != nil {
				t.Fatal(err)
			}
		},
		// No PageSize: moto answers DescribeDBClusters in one page whatever
		// MaxRecords says.
		Cases: []drivertest.Case{{
			Kind: spec.Postgres,
			Create: map[string]any{
				"masterUsername": "app", "masterPasswordSecret": spec.NewSensitive(testPassword),
				"engineVersion": "16", "minCapacity": 0.5, "maxCapacity": 2.0,
			},
			Updates: []map[string]any{
				{"engineVersion": "16.4"},
				{"minCapacity": 1.0},
				{"maxCapacity": 8.0},
				{"minCapacity": 2.0, "maxCapacity": 4.0},
			},
			Replaces: []map[string]any{{"masterUsername": "owner"}},
			OddNames: []string{"pg-0-with-digits-9", strings.Repeat("p", 63)},
		}},
	})
}

// motoRDS works around one emulator bug: moto keeps a deleted cluster's
// automated snapshot (rds:<name>-<minute>), so a replace within the same
// minute fails with DBClusterSnapshotAlreadyExistsFault. AWS deletes
// automated snapshots with the cluster.
type motoRDS struct{ *Backend }

func (b motoRDS) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	if pg, isPG := d.(*postgres); isPG {
		return motoPostgres{pg}, ok
	}
	return d, ok
}

type motoPostgres struct{ *postgres }

func (d motoPostgres) Delete(ctx context.Context, t providers.Target) error {
	if err := d.postgres.Delete(ctx, t); err != nil {
		return err
	}
	c := d.clients.get(t.Region)
	out, err := c.DescribeDBClusterSnapshots(ctx, &rds.DescribeDBClusterSnapshotsInput{DBClusterIdentifier: aws.String(t.Name), SnapshotType: aws.String("automated")})
	if err != nil {
		return err
	}
	for _, s := range out.DBClusterSnapshots {
		// moto lists a snapshot it then cannot find when a second cluster of
		// the name was deleted within the same minute: gone is what is wanted.
		_, err := c.DeleteDBClusterSnapshot(ctx, &rds.DeleteDBClusterSnapshotInput{DBClusterSnapshotIdentifier: s.DBClusterSnapshotIdentifier})
		if err != nil && !isCode(err, "DBClusterSnapshotNotFoundFault") {
			return err
		}
	}
	return nil
}

func pgTarget(name string) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: map[string]any{
		"masterUsername": "app", "masterPasswordSecret": spec.NewSensitive(testPassword), "engineVersion": "16",
	}}
}

// The cluster gets a db.serverless writer, without which nothing answers
// on its endpoint; delete takes the writer first, then the cluster.
func TestPostgresWriterAndDelete(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.Postgres)
	c := d.(*postgres).clients.get(testRegion)
	ctx := context.Background()
	res, err := d.Create(ctx, pgTarget("orders"))
	if err != nil {
		t.Fatal(err)
	}
	if ep := res.Attributes["endpoint"]; !strings.HasSuffix(ep, ":5432") || !strings.HasPrefix(ep, "orders.") {
		t.Errorf("endpoint = %q, want orders.…:5432", ep)
	}
	if res.Attributes["port"] != "5432" || !strings.HasSuffix(res.Attributes["arn"], ":cluster:orders") {
		t.Errorf("attributes = %v", res.Attributes)
	}
	if res.Fields["minCapacity"] != defaultMinACU || res.Fields["maxCapacity"] != defaultMaxACU {
		t.Errorf("capacity = %v..%v, want the defaults", res.Fields["minCapacity"], res.Fields["maxCapacity"])
	}
	inst, err := c.DescribeDBInstances(ctx, &rds.DescribeDBInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inst.DBInstances) != 1 || aws.ToString(inst.DBInstances[0].DBInstanceIdentifier) != "orders-writer" ||
		aws.ToString(inst.DBInstances[0].DBInstanceClass) != "db.serverless" {
		t.Fatalf("instances = %+v, want one db.serverless writer", inst.DBInstances)
	}
	if err := d.Delete(ctx, providers.Target{Name: "orders", Region: testRegion}); err != nil {
		t.Fatal(err)
	}
	if inst, err = c.DescribeDBInstances(ctx, &rds.DescribeDBInstancesInput{}); err != nil || len(inst.DBInstances) != 0 {
		t.Errorf("instances after delete = %v (%v), want none", inst.DBInstances, err)
	}
	if _, err := d.Read(ctx, testRegion, "orders"); errorCode(err) != providers.NotFound {
		t.Errorf("Read after delete = %v, want not found", err)
	}
}

// Names RDS would refuse or lower-case, and passwords it would refuse, are
// refused before any call, without the password in the message.
func TestPostgresRefusesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.Postgres)
	ctx := context.Background()
	for _, name := range []string{"Orders", "1orders", "orders-", "or--ders", "or_ders", strings.Repeat("p", 64)} {
		if _, err := d.Create(ctx, pgTarget(name)); errorCode(err) != providers.InvalidArgument {
			t.Errorf("Create(%q) = %v, want invalid argument", name, err)
		}
	}
	for _, pw := range []string{"short", "has@sign-in-it", "has space in it", `quote"d-password`} {
		tg := pgTarget("orders")
		tg.Fields["masterPasswordSecret"] = spec.NewSensitive(pw)
		_, err := d.Create(ctx, tg)
		if errorCode(err) != providers.InvalidArgument || strings.Contains(err.Error(), pw) {
			t.Errorf("Create with a bad password = %v, want invalid argument without the password", err)
		}
	}
	tg := pgTarget("orders")
	delete(tg.Fields, "masterPasswordSecret")
	if _, err := d.Create(ctx, tg); errorCode(err) != providers.InvalidArgument {
		t.Errorf("Create without a password = %v, want invalid argument", err)
	}
	if n := calls.count("CreateDBCluster"); n != 0 {
		t.Errorf("CreateDBCluster was called %d times", n)
	}
}

// DescribeDBClusters also answers for MySQL (and Neptune, DocumentDB)
// clusters: they are not this kind's.
func TestPostgresIgnoresOtherEngines(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.Postgres)
	c := d.(*postgres).clients.get(testRegion)
	ctx := context.Background()
	if _, err := c.CreateDBCluster(ctx, &rds.CreateDBClusterInput{
		DBClusterIdentifier: aws.String("shop"), Engine: aws.String("aurora-mysql"),
		MasterUsername: aws.String("admin"), MasterUserPassword: aws.String(testPassword),
	}); err != nil {
		t.Fatal(err)
	}
	rs, err := d.List(ctx, testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 0 {
		t.Errorf("List = %v, want no MySQL cluster", drivertest.Names(rs))
	}
	if _, err := d.Read(ctx, testRegion, "shop"); errorCode(err) != providers.NotFound {
		t.Errorf("Read(shop) = %v, want not found", err)
	}
}

func TestWriterID(t *testing.T) {
	for name, want := range map[string]string{
		"orders":                         "orders-writer",
		strings.Repeat("p", 63):          strings.Repeat("p", 56) + "-writer",
		strings.Repeat("p", 55) + "-abc": strings.Repeat("p", 55) + "-writer",
	} {
		got := writerID(name)
		if got != want || len(got) > 63 {
			t.Errorf("writerID(%q) = %q, want %q", name, got, want)
		}
	}
}

// A declared major version names the minor RDS picked for it.
func TestSameVersion(t *testing.T) {
	for _, tc := range []struct {
		declared, running string
		want              bool
	}{
		{"16", "16.6", true}, {"16", "16", true}, {"16.6", "16.6", true},
		{"16", "17.1", false}, {"1", "16.6", false}, {"16.6", "16.4", false},
	} {
		if got := sameVersion(tc.declared, tc.running); got != tc.want {
			t.Errorf("sameVersion(%q, %q) = %v", tc.declared, tc.running, got)
		}
	}
}

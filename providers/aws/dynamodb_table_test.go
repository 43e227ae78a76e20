package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestDynamoDBTableConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:   spec.DynamoDBTable,
		Create: map[string]any{"hashKey": "pk", "globalSecondaryIndexes": map[string]any{"by-a": map[string]any{"hashKey": "a"}}},
		Updates: []map[string]any{
			// An index added.
			{"globalSecondaryIndexes": map[string]any{"by-a": map[string]any{"hashKey": "a"},
				"by-b": map[string]any{"hashKey": "b", "hashKeyType": "N", "projection": "KEYS_ONLY"}}},
			// To PROVISIONED, the indexes' capacities with it.
			{"billingMode": "PROVISIONED", "readCapacity": 5.0, "writeCapacity": 5.0, "globalSecondaryIndexes": map[string]any{
				"by-a": map[string]any{"hashKey": "a", "readCapacity": 2.0, "writeCapacity": 3.0},
				"by-b": map[string]any{"hashKey": "b", "hashKeyType": "N", "projection": "KEYS_ONLY", "readCapacity": 1.0, "writeCapacity": 1.0}}},
			// The table's and an index's capacities change in place.
			{"readCapacity": 10.0, "writeCapacity": 7.0, "globalSecondaryIndexes": map[string]any{
				"by-a": map[string]any{"hashKey": "a", "readCapacity": 4.0, "writeCapacity": 6.0},
				"by-b": map[string]any{"hashKey": "b", "hashKeyType": "N", "projection": "KEYS_ONLY", "readCapacity": 1.0, "writeCapacity": 1.0}}},
			// An index's keys and projection change: it is made again.
			{"globalSecondaryIndexes": map[string]any{
				"by-a": map[string]any{"hashKey": "a", "hashKeyType": "S", "rangeKey": "c", "rangeKeyType": "N",
					"projection": "INCLUDE", "nonKeyAttributes": []any{"x", "y"}, "readCapacity": 4.0, "writeCapacity": 6.0},
				"by-b": map[string]any{"hashKey": "b", "hashKeyType": "N", "projection": "KEYS_ONLY", "readCapacity": 1.0, "writeCapacity": 1.0}}},
			{"ttlAttribute": "expires", "pointInTimeRecovery": true, "deletionProtection": true},
			// An index removed.
			{"deletionProtection": false, "pointInTimeRecovery": false, "globalSecondaryIndexes": map[string]any{
				"by-b": map[string]any{"hashKey": "b", "hashKeyType": "N", "projection": "KEYS_ONLY", "readCapacity": 1.0, "writeCapacity": 1.0}}},
			// The last one removed.
			{"globalSecondaryIndexes": map[string]any{}},
		},
		Replaces: []map[string]any{
			{"hashKey": "id", "hashKeyType": "N"},
			{"rangeKey": "sk", "rangeKeyType": "B"},
		},
		OddNames: []string{"Mixed_Case.dots-and_underscores", strings.Repeat("t", 255), "abc"},
	})
}

func ddbTarget(name string, fields map[string]any) providers.Target {
	return kindTarget(spec.DynamoDBTable, name, map[string]any{"hashKey": "pk"}, fields)
}

// What CreateTable or UpdateTable would refuse is refused before any call,
// naming the table.
func TestDynamoDBTableRefusesBadDeclarationsBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.DynamoDBTable)
	for why, f := range map[string]map[string]any{
		"provisioned without capacity": {"billingMode": "PROVISIONED"},
		"provisioned, one capacity":    {"billingMode": "PROVISIONED", "readCapacity": 5.0},
		"fractional capacity":          {"billingMode": "PROVISIONED", "readCapacity": 5.5, "writeCapacity": 1.0},
		"capacity on demand":           {"readCapacity": 5.0, "writeCapacity": 5.0},
		"unknown billing":              {"billingMode": "ON_DEMAND"},
		"bad key type":                 {"hashKeyType": "string"},
		"range type without range key": {"rangeKeyType": "N"},
		"range key is the hash key":    {"rangeKey": "pk"},
	} {
		_, err := d.Create(context.Background(), ddbTarget("t1", f))
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "aws/dynamodb-table: t1:") {
			t.Errorf("%s: Create = %v, want invalid argument naming the table", why, err)
		}
		_, err = d.Update(context.Background(), ddbTarget("t1", f), []string{providers.DynamodbTableBillingMode})
		if errorCode(err) != providers.InvalidArgument {
			t.Errorf("%s: Update = %v, want invalid argument", why, err)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// A protected table's delete fails with an error that names the field and
// the fix, and a code the engine does not retry; once lifted, it deletes.
func TestDynamoDBTableProtectedDeleteFailsClearly(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.DynamoDBTable)
	ctx := context.Background()
	tg := ddbTarget("kept", map[string]any{"deletionProtection": true})
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	err := d.Delete(ctx, tg)
	if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "aws/dynamodb-table: kept: DeleteTable") ||
		!strings.Contains(err.Error(), "set deletionProtection: false, apply") {
		t.Fatalf("Delete = %v (code %s), want invalid argument naming the table, the field and the fix", err, errorCode(err))
	}
	if _, err := d.Read(ctx, testRegion, "kept"); err != nil {
		t.Fatalf("Read after the refused delete = %v, want the table", err)
	}
	tg.Fields["deletionProtection"] = false
	if _, err := d.Update(ctx, tg, []string{providers.DynamodbTableDeletionProtection}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, tg); err != nil {
		t.Fatalf("Delete after lifting protection = %v", err)
	}
	if _, err := d.Read(ctx, testRegion, "kept"); errorCode(err) != providers.NotFound {
		t.Errorf("Read after delete = %v, want not found", err)
	}
}

// A create of a name in use is AlreadyExists (DynamoDB says
// ResourceInUseException, its code for busy too), so the engine can adopt.
func TestDynamoDBTableCreateOfExistingIsAlreadyExists(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.DynamoDBTable)
	ctx := context.Background()
	tg := ddbTarget("twice", nil)
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create(ctx, tg); errorCode(err) != providers.AlreadyExists {
		t.Errorf("second Create = %v (code %s), want already exists", err, errorCode(err))
	}
}

// A table goes to PROVISIONED and back to PAY_PER_REQUEST, and an update
// that finds the table as declared sends no UpdateTable.
func TestDynamoDBTableBillingModeSwitchesBack(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.DynamoDBTable)
	ctx := context.Background()
	tg := ddbTarget("billing", map[string]any{"billingMode": "PROVISIONED", "readCapacity": 3.0, "writeCapacity": 2.0})
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Update(ctx, tg, []string{providers.DynamodbTableReadCapacity}); err != nil {
		t.Fatal(err)
	}
	if n := calls.count("UpdateTable"); n != 0 {
		t.Errorf("an update to what the table already is sent UpdateTable %d times", n)
	}
	back := ddbTarget("billing", nil)
	res, err := d.Update(ctx, back, []string{providers.DynamodbTableBillingMode, providers.DynamodbTableReadCapacity, providers.DynamodbTableWriteCapacity})
	if err != nil {
		t.Fatal(err)
	}
	if res.Fields["billingMode"] != "PAY_PER_REQUEST" {
		t.Errorf("billingMode = %v, want PAY_PER_REQUEST", res.Fields["billingMode"])
	}
	if _, ok := res.Fields["readCapacity"]; ok {
		t.Errorf("an on-demand table reports readCapacity %v", res.Fields["readCapacity"])
	}
}

// A new TTL attribute is the old one disabled and the new one enabled;
// none turns TTL off.
func TestDynamoDBTableTTLAttributeChanges(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.DynamoDBTable)
	ctx := context.Background()
	tg := ddbTarget("ttl", map[string]any{"ttlAttribute": "a"})
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	tg.Fields["ttlAttribute"] = "b"
	res, err := d.Update(ctx, tg, []string{providers.DynamodbTableTtlAttribute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Fields["ttlAttribute"] != "b" {
		t.Errorf("ttlAttribute = %v, want b", res.Fields["ttlAttribute"])
	}
	if n := calls.count("UpdateTimeToLive"); n != 3 {
		t.Errorf("UpdateTimeToLive was called %d times, want 3 (enable a; disable a, enable b)", n)
	}
	delete(tg.Fields, "ttlAttribute")
	if res, err = d.Update(ctx, tg, []string{providers.DynamodbTableTtlAttribute}); err != nil {
		t.Fatal(err)
	}
	if v, ok := res.Fields["ttlAttribute"]; ok {
		t.Errorf("ttlAttribute = %v after removing it, want none", v)
	}
}

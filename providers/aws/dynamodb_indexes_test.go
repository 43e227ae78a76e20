package aws

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// indexCloud stands between the driver and moto, which makes and drops an
// index at once: after each UpdateTable that creates or deletes one, the
// next describe shows the index CREATING or DELETING (or, with stuck, every
// describe does), as DynamoDB does while it builds or drops it. It records
// each UpdateTable, and whether one was sent while the last describe showed
// an index not yet ACTIVE.
type indexCloud struct {
	mu      sync.Mutex
	stuck   bool
	pending string // the index last created or deleted, until a describe shows it busy
	busy    bool   // the last describe showed an index not ACTIVE
	updates []*dynamodb.UpdateTableInput
	early   int // UpdateTables sent while busy
}

func (x *indexCloud) option() func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("index cloud", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			op := middleware.GetOperationName(ctx)
			if u, ok := in.Parameters.(*dynamodb.UpdateTableInput); ok && op == "UpdateTable" {
				x.mu.Lock()
				x.updates = append(x.updates, u)
				if x.busy {
					x.early++
				}
				for _, g := range u.GlobalSecondaryIndexUpdates {
					if g.Create != nil {
						x.pending = aws.ToString(g.Create.IndexName)
					}
					if g.Delete != nil {
						x.pending = aws.ToString(g.Delete.IndexName)
					}
				}
				x.mu.Unlock()
			}
			out, md, err := next.HandleInitialize(ctx, in)
			if d, ok := out.Result.(*dynamodb.DescribeTableOutput); ok && err == nil && d.Table != nil {
				x.mu.Lock()
				x.busy = false
				if x.pending != "" || x.stuck {
					x.busy = x.show(d.Table)
					x.pending = ""
				}
				x.mu.Unlock()
			}
			return out, md, err
		}), middleware.After)
	}})
}

// show makes the pending index (every index, when stuck) read as being
// built, or a deleted one as being dropped, and says whether it did.
func (x *indexCloud) show(tb *ddbtypes.TableDescription) bool {
	for i, g := range tb.GlobalSecondaryIndexes {
		if x.stuck || aws.ToString(g.IndexName) == x.pending {
			tb.GlobalSecondaryIndexes[i].IndexStatus = ddbtypes.IndexStatusCreating
			return true
		}
	}
	if x.pending != "" {
		tb.GlobalSecondaryIndexes = append(tb.GlobalSecondaryIndexes, ddbtypes.GlobalSecondaryIndexDescription{
			IndexName: aws.String(x.pending), IndexStatus: ddbtypes.IndexStatusDeleting})
		return true
	}
	return false
}

// index actions of one UpdateTable: creates, deletes, updates.
func indexActions(u *dynamodb.UpdateTableInput) (c, d, up int) {
	for _, g := range u.GlobalSecondaryIndexUpdates {
		switch {
		case g.Create != nil:
			c++
		case g.Delete != nil:
			d++
		case g.Update != nil:
			up++
		}
	}
	return
}

// Two indexes added, one made again and one removed in one update: one
// index created or deleted per UpdateTable, each sent only once the last is
// built or gone, deletes first.
func TestDynamoDBTableIndexesOneAtATime(t *testing.T) {
	var cloud indexCloud
	b, _ := newTestBackend(t, cloud.option())
	d, _ := b.Driver(spec.DynamoDBTable)
	d.(*dynamoTables).pollDelay = 100 * time.Millisecond
	ctx := context.Background()
	tg := ddbTarget("gsi", map[string]any{"globalSecondaryIndexes": map[string]any{
		"keep": map[string]any{"hashKey": "k"}, "gone": map[string]any{"hashKey": "g"}, "remade": map[string]any{"hashKey": "r"}}})
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	tg.Fields["globalSecondaryIndexes"] = map[string]any{"keep": map[string]any{"hashKey": "k"},
		"remade": map[string]any{"hashKey": "r", "projection": "KEYS_ONLY"},
		"new-1":  map[string]any{"hashKey": "n", "hashKeyType": "N"}, "new-2": map[string]any{"hashKey": "m", "rangeKey": "k"}}
	res, err := d.Update(ctx, tg, []string{providers.DynamodbTableGlobalSecondaryIndexes})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, u := range cloud.updates {
		c, del, up := indexActions(u)
		if c+del != 1 || up != 0 {
			t.Errorf("an UpdateTable creates %d, deletes %d and updates %d indexes, want one create or one delete", c, del, up)
		}
		for _, g := range u.GlobalSecondaryIndexUpdates {
			if g.Create != nil {
				order = append(order, "create "+aws.ToString(g.Create.IndexName))
			} else if g.Delete != nil {
				order = append(order, "delete "+aws.ToString(g.Delete.IndexName))
			}
		}
	}
	if got, want := strings.Join(order, ", "), "delete gone, delete remade, create new-1, create new-2, create remade"; got != want {
		t.Errorf("UpdateTable calls: %s, want %s", got, want)
	}
	if cloud.early != 0 {
		t.Errorf("%d UpdateTables were sent while an index was still being built or dropped", cloud.early)
	}
	got := res.Fields["globalSecondaryIndexes"].(map[string]any)
	if len(got) != 4 || got["remade"].(map[string]any)["projection"] != "KEYS_ONLY" || got["new-1"].(map[string]any)["hashKeyType"] != "N" ||
		got["new-2"].(map[string]any)["rangeKey"] != "k" {
		t.Errorf("indexes after the update: %v", got)
	}
	info, _ := spec.Lookup(spec.DynamoDBTable)
	f, _ := info.Field("globalSecondaryIndexes")
	if !spec.Equal(f, tg.Fields["globalSecondaryIndexes"], got) {
		t.Errorf("the indexes read %v, which differs from the declaration %v", got, tg.Fields["globalSecondaryIndexes"])
	}
	// The same again sends nothing.
	n := len(cloud.updates)
	if _, err := d.Update(ctx, tg, []string{providers.DynamodbTableGlobalSecondaryIndexes}); err != nil {
		t.Fatal(err)
	}
	if len(cloud.updates) != n {
		t.Errorf("an update to the indexes as they are sent %d UpdateTables", len(cloud.updates)-n)
	}
}

// A capacity change is an UpdateTable Update of the index, never a delete.
func TestDynamoDBTableIndexCapacityUpdatesInPlace(t *testing.T) {
	var cloud indexCloud
	b, _ := newTestBackend(t, cloud.option())
	d, _ := b.Driver(spec.DynamoDBTable)
	ctx := context.Background()
	index := func(r, w float64) map[string]any {
		return map[string]any{"idx": map[string]any{"hashKey": "a", "readCapacity": r, "writeCapacity": w}}
	}
	tg := ddbTarget("cap", map[string]any{"billingMode": "PROVISIONED", "readCapacity": 1.0, "writeCapacity": 1.0,
		"globalSecondaryIndexes": index(1, 1)})
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	tg.Fields["globalSecondaryIndexes"] = index(3, 2)
	res, err := d.Update(ctx, tg, []string{providers.DynamodbTableGlobalSecondaryIndexes})
	if err != nil {
		t.Fatal(err)
	}
	if len(cloud.updates) != 1 {
		t.Fatalf("%d UpdateTables, want 1", len(cloud.updates))
	}
	if c, del, up := indexActions(cloud.updates[0]); c != 0 || del != 0 || up != 1 {
		t.Errorf("the UpdateTable creates %d, deletes %d, updates %d indexes; want one update", c, del, up)
	}
	if i := res.Fields["globalSecondaryIndexes"].(map[string]any)["idx"].(map[string]any); i["readCapacity"] != 3.0 || i["writeCapacity"] != 2.0 {
		t.Errorf("the index reads %v, want capacities 3 and 2", i)
	}
}

// An index that stays CREATING is waited for up to the driver's bound,
// and then the update fails saying what it waited for.
func TestDynamoDBTableIndexWaitIsBounded(t *testing.T) {
	cloud := indexCloud{}
	b, _ := newTestBackend(t, cloud.option())
	dr, _ := b.Driver(spec.DynamoDBTable)
	dr.(*dynamoTables).wait, dr.(*dynamoTables).pollDelay = 2*time.Second, 100*time.Millisecond
	ctx := context.Background()
	tg := ddbTarget("stuck", nil)
	if _, err := dr.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	cloud.mu.Lock()
	cloud.stuck = true
	cloud.mu.Unlock()
	tg.Fields["globalSecondaryIndexes"] = map[string]any{"slow": map[string]any{"hashKey": "a"}}
	start := time.Now()
	_, err := dr.Update(ctx, tg, []string{providers.DynamodbTableGlobalSecondaryIndexes})
	if err == nil || !strings.Contains(err.Error(), "waiting for the table and its indexes to be ACTIVE") {
		t.Fatalf("Update = %v, want the wait to fail", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("the wait took %v, past its bound", time.Since(start))
	}
}

// A key attribute with two types, INCLUDE without nonKeyAttributes and the
// other index rules are refused before any call, naming the index.
func TestDynamoDBTableRefusesBadIndexesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.DynamoDBTable)
	idx := func(name string, f map[string]any) map[string]any {
		return map[string]any{"globalSecondaryIndexes": map[string]any{name: f}}
	}
	many := map[string]any{}
	for i := range 21 {
		many[strings.Repeat("i", 3+i)] = map[string]any{"hashKey": "a"}
	}
	for why, tc := range map[string]struct {
		fields map[string]any
		want   string
	}{
		"type clash with the table's key": {idx("by-pk", map[string]any{"hashKey": "pk", "hashKeyType": "N"}),
			`attribute "pk" is "S" as the table's hashKey but "N" as index "by-pk"'s hashKey`},
		"type clash between indexes": {map[string]any{"globalSecondaryIndexes": map[string]any{
			"one": map[string]any{"hashKey": "a"}, "two": map[string]any{"hashKey": "b", "rangeKey": "a", "rangeKeyType": "B"}}},
			`attribute "a" is "S" as index "one"'s hashKey but "B" as index "two"'s rangeKey`},
		"INCLUDE without nonKeyAttributes": {idx("inc", map[string]any{"hashKey": "a", "projection": "INCLUDE"}),
			`index "inc": projection "INCLUDE" needs nonKeyAttributes`},
		"nonKeyAttributes with ALL": {idx("all", map[string]any{"hashKey": "a", "nonKeyAttributes": []any{"x"}}),
			`index "all": nonKeyAttributes is for projection "INCLUDE" only`},
		"unknown projection": {idx("prj", map[string]any{"hashKey": "a", "projection": "SOME"}), `projection is "SOME"`},
		"capacity on demand": {idx("cap", map[string]any{"hashKey": "a", "readCapacity": 1.0, "writeCapacity": 1.0}),
			"for a table of billingMode PROVISIONED"},
		"provisioned index without capacity": {map[string]any{"billingMode": "PROVISIONED", "readCapacity": 1.0, "writeCapacity": 1.0,
			"globalSecondaryIndexes": map[string]any{"cap": map[string]any{"hashKey": "a", "readCapacity": 1.0}}},
			"needs the index's readCapacity and writeCapacity"},
		"short name":         {idx("ab", map[string]any{"hashKey": "a"}), "an index name is 3 to 255"},
		"bad name":           {idx("by user", map[string]any{"hashKey": "a"}), "an index name is 3 to 255"},
		"21 indexes":         {map[string]any{"globalSecondaryIndexes": many}, "at most 20 per table"},
		"bad key type":       {idx("key", map[string]any{"hashKey": "a", "hashKeyType": "string"}), `hashKeyType is "string"`},
		"range is the hash":  {idx("key", map[string]any{"hashKey": "a", "rangeKey": "a"}), "rangeKey and hashKey are both"},
		"range type no key":  {idx("key", map[string]any{"hashKey": "a", "rangeKeyType": "N"}), "there is no rangeKey"},
		"too many non-keys":  {idx("inc", map[string]any{"hashKey": "a", "projection": "INCLUDE", "nonKeyAttributes": make101()}), "at most 100"},
		"missing hash key":   {idx("key", map[string]any{"rangeKey": "a"}), "hashKey is required"},
		"item not an object": {map[string]any{"globalSecondaryIndexes": map[string]any{"key": "a"}}, `item "key"`},
	} {
		for _, call := range []string{"Create", "Update"} {
			var err error
			if call == "Create" {
				_, err = d.Create(context.Background(), ddbTarget("t1", tc.fields))
			} else {
				_, err = d.Update(context.Background(), ddbTarget("t1", tc.fields), []string{providers.DynamodbTableGlobalSecondaryIndexes})
			}
			if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "aws/dynamodb-table: t1:") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s = %v, want invalid argument naming the table and saying %q", why, call, err, tc.want)
			}
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

func make101() []any {
	out := make([]any, 101)
	for i := range out {
		out[i] = strings.Repeat("x", i+1)
	}
	return out
}

// A switch to PROVISIONED sends the indexes' capacities in the same
// UpdateTable, as DynamoDB requires; an index the declaration does not
// give capacities for stops the switch before any change.
func TestDynamoDBTableSwitchToProvisionedCarriesIndexCapacities(t *testing.T) {
	var cloud indexCloud
	b, _ := newTestBackend(t, cloud.option())
	d, _ := b.Driver(spec.DynamoDBTable)
	ctx := context.Background()
	tg := ddbTarget("switch", map[string]any{"globalSecondaryIndexes": map[string]any{"idx": map[string]any{"hashKey": "a"}}})
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	undeclared := ddbTarget("switch", map[string]any{"billingMode": "PROVISIONED", "readCapacity": 2.0, "writeCapacity": 2.0})
	_, err := d.Update(ctx, undeclared, []string{providers.DynamodbTableBillingMode})
	if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), `global secondary index "idx"`) {
		t.Errorf("switch without the index's capacities = %v, want invalid argument naming the index", err)
	}
	if len(cloud.updates) != 0 {
		t.Errorf("%d UpdateTables were sent for a switch refused", len(cloud.updates))
	}
	tg.Fields["billingMode"], tg.Fields["readCapacity"], tg.Fields["writeCapacity"] = "PROVISIONED", 2.0, 2.0
	tg.Fields["globalSecondaryIndexes"] = map[string]any{"idx": map[string]any{"hashKey": "a", "readCapacity": 1.0, "writeCapacity": 1.0}}
	res, err := d.Update(ctx, tg, []string{providers.DynamodbTableBillingMode, providers.DynamodbTableGlobalSecondaryIndexes})
	if err != nil {
		t.Fatal(err)
	}
	if len(cloud.updates) != 1 || cloud.updates[0].BillingMode != ddbtypes.BillingModeProvisioned {
		t.Fatalf("UpdateTables: %d, want one switching the billing mode", len(cloud.updates))
	}
	if _, _, up := indexActions(cloud.updates[0]); up != 1 {
		t.Errorf("the switch updates %d indexes' capacities, want 1", up)
	}
	if i := res.Fields["globalSecondaryIndexes"].(map[string]any)["idx"].(map[string]any); i["readCapacity"] != 1.0 {
		t.Errorf("the index reads %v, want readCapacity 1", i)
	}
}

package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/infra-iac/infra/providers"
)

// The limits of global secondary indexes: CreateTable's documentation
// gives "the maximum is 20" indexes and at most 100 NonKeyAttributes summed
// over a table's indexes; the API reference's IndexName is 3 to 255 of
// a-z, A-Z, 0-9, '_', '-' and '.'.
const (
	maxIndexes          = 20
	maxNonKeyAttributes = 100
)

var indexName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// indexDecl is one declared global secondary index, checked.
type indexDecl struct {
	name              string
	in                providers.DynamodbTableGlobalSecondaryIndexesItem
	keySchema         []ddbtypes.KeySchemaElement
	attributes        []ddbtypes.AttributeDefinition
	projection        *ddbtypes.Projection
	readCap, writeCap int64
}

// keyType is a key's attribute type: S when unset.
func keyType(v string) (ddbtypes.ScalarAttributeType, bool) {
	switch v {
	case "", "S":
		return ddbtypes.ScalarAttributeTypeS, true
	case "N", "B":
		return ddbtypes.ScalarAttributeType(v), true
	}
	return "", false
}

// decodeKeys checks a table's or an index's keys, as CreateTable would,
// and returns their key schema and attribute definitions: a partition
// key, and a sort key of another name or no sort key type but the default.
func decodeKeys(hashKey, hashType, rangeKey, rangeType string) ([]ddbtypes.KeySchemaElement, []ddbtypes.AttributeDefinition, error) {
	if hashKey == "" {
		return nil, nil, errors.New("hashKey is required")
	}
	ht, ok := keyType(hashType)
	if !ok {
		return nil, nil, fmt.Errorf(`hashKeyType is %q; a DynamoDB key is "S", "N" or "B"`, hashType)
	}
	rt, ok := keyType(rangeType)
	if !ok {
		return nil, nil, fmt.Errorf(`rangeKeyType is %q; a DynamoDB key is "S", "N" or "B"`, rangeType)
	}
	schema := []ddbtypes.KeySchemaElement{{AttributeName: aws.String(hashKey), KeyType: ddbtypes.KeyTypeHash}}
	attrs := []ddbtypes.AttributeDefinition{{AttributeName: aws.String(hashKey), AttributeType: ht}}
	switch {
	case rangeKey == hashKey:
		return nil, nil, fmt.Errorf("rangeKey and hashKey are both %q; they must differ", hashKey)
	case rangeKey != "":
		schema = append(schema, ddbtypes.KeySchemaElement{AttributeName: aws.String(rangeKey), KeyType: ddbtypes.KeyTypeRange})
		attrs = append(attrs, ddbtypes.AttributeDefinition{AttributeName: aws.String(rangeKey), AttributeType: rt})
	case rt != ddbtypes.ScalarAttributeTypeS:
		return nil, nil, fmt.Errorf("rangeKeyType is %q but there is no rangeKey: set rangeKey or remove rangeKeyType", rangeType)
	}
	return schema, attrs, nil
}

// attributeSet is the attribute definitions of a table and its indexes,
// one per name, with who defined each, for the error when two disagree.
type attributeSet struct {
	defs []ddbtypes.AttributeDefinition
	by   map[string]string
}

// define adds name's type; a name already defined with another type is
// the error DynamoDB would give at CreateTable, said before any call.
func (s *attributeSet) define(name string, t ddbtypes.ScalarAttributeType, what string) error {
	if s.by == nil {
		s.by = map[string]string{}
	}
	for _, d := range s.defs {
		if aws.ToString(d.AttributeName) != name {
			continue
		}
		if d.AttributeType != t {
			return fmt.Errorf("attribute %q is %q as %s but %q as %s: DynamoDB keeps one type per attribute",
				name, d.AttributeType, s.by[name], t, what)
		}
		return nil
	}
	s.defs = append(s.defs, ddbtypes.AttributeDefinition{AttributeName: aws.String(name), AttributeType: t})
	s.by[name] = what
	return nil
}

// decodeIndexes checks the declared indexes, before any call, against what
// CreateTable and UpdateTable refuse, and adds their keys to attrs.
func decodeIndexes(items map[string]providers.DynamodbTableGlobalSecondaryIndexesItem, provisioned bool, attrs *attributeSet) ([]indexDecl, error) {
	if len(items) > maxIndexes {
		return nil, fmt.Errorf("globalSecondaryIndexes has %d indexes; DynamoDB takes at most %d per table", len(items), maxIndexes)
	}
	var out []indexDecl
	nonKey := 0
	for _, n := range slices.Sorted(maps.Keys(items)) {
		in := items[n]
		refuse := func(format string, args ...any) ([]indexDecl, error) {
			return nil, fmt.Errorf("global secondary index %q: "+format, append([]any{n}, args...)...)
		}
		if !indexName.MatchString(n) {
			return refuse("an index name is 3 to 255 of a-z, A-Z, 0-9, '_', '-' and '.'")
		}
		idx := indexDecl{name: n, in: in}
		var err error
		if idx.keySchema, idx.attributes, err = decodeKeys(in.HashKey, in.HashKeyType, in.RangeKey, in.RangeKeyType); err != nil {
			return refuse("%v", err)
		}
		for i, a := range idx.attributes {
			role := "hashKey"
			if i == 1 {
				role = "rangeKey"
			}
			if err := attrs.define(aws.ToString(a.AttributeName), a.AttributeType, fmt.Sprintf("index %q's %s", n, role)); err != nil {
				return nil, err
			}
		}
		switch p := ddbtypes.ProjectionType(in.Projection); p {
		case "", ddbtypes.ProjectionTypeAll, ddbtypes.ProjectionTypeKeysOnly:
			if in.HasNonKeyAttributes() {
				return refuse(`nonKeyAttributes is for projection "INCLUDE" only`)
			}
			if p == "" {
				p = ddbtypes.ProjectionTypeAll
			}
			idx.projection = &ddbtypes.Projection{ProjectionType: p}
		case ddbtypes.ProjectionTypeInclude:
			if len(in.NonKeyAttributes) == 0 {
				return refuse(`projection "INCLUDE" needs nonKeyAttributes, the attributes it copies besides the keys`)
			}
			nonKey += len(in.NonKeyAttributes)
			idx.projection = &ddbtypes.Projection{ProjectionType: p, NonKeyAttributes: in.NonKeyAttributes}
		default:
			return refuse(`projection is %q; it is "ALL", "KEYS_ONLY" or "INCLUDE"`, in.Projection)
		}
		switch {
		case !provisioned && (in.HasReadCapacity() || in.HasWriteCapacity()):
			return refuse("readCapacity and writeCapacity are for a table of billingMode PROVISIONED; remove them")
		case provisioned && (in.ReadCapacity < 1 || in.WriteCapacity < 1 ||
			in.ReadCapacity != float64(int64(in.ReadCapacity)) || in.WriteCapacity != float64(int64(in.WriteCapacity))):
			return refuse("a table of billingMode PROVISIONED needs the index's readCapacity and writeCapacity, whole numbers of at least 1")
		case provisioned:
			idx.readCap, idx.writeCap = int64(in.ReadCapacity), int64(in.WriteCapacity)
		}
		out = append(out, idx)
	}
	if nonKey > maxNonKeyAttributes {
		return nil, fmt.Errorf("the indexes' nonKeyAttributes number %d; DynamoDB takes at most %d over a table's indexes", nonKey, maxNonKeyAttributes)
	}
	return out, nil
}

func (x indexDecl) throughput() *ddbtypes.ProvisionedThroughput {
	if x.readCap == 0 {
		return nil
	}
	return &ddbtypes.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(x.readCap), WriteCapacityUnits: aws.Int64(x.writeCap)}
}

func (d tableDecl) createIndexes() []ddbtypes.GlobalSecondaryIndex {
	var out []ddbtypes.GlobalSecondaryIndex
	for _, x := range d.indexes {
		out = append(out, ddbtypes.GlobalSecondaryIndex{IndexName: aws.String(x.name), KeySchema: x.keySchema,
			Projection: x.projection, ProvisionedThroughput: x.throughput()})
	}
	return out
}

// liveIndexes are the table's indexes by name, without those being
// deleted: they are gone for the driver, as a table being deleted is.
func liveIndexes(tb *ddbtypes.TableDescription) map[string]ddbtypes.GlobalSecondaryIndexDescription {
	out := map[string]ddbtypes.GlobalSecondaryIndexDescription{}
	for _, g := range tb.GlobalSecondaryIndexes {
		if g.IndexStatus != ddbtypes.IndexStatusDeleting {
			out[aws.ToString(g.IndexName)] = g
		}
	}
	return out
}

// attributeTypes are the table's attribute definitions by name.
func attributeTypes(tb *ddbtypes.TableDescription) map[string]string {
	types := map[string]string{}
	for _, a := range tb.AttributeDefinitions {
		types[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	return types
}

// reportedIndexes is the globalSecondaryIndexes field as the table is: the
// key types from the table's definitions, the capacities only on a
// provisioned table (moto answers 0 for an on-demand one's).
func reportedIndexes(tb *ddbtypes.TableDescription) map[string]any {
	types := attributeTypes(tb)
	out := map[string]any{}
	for n, g := range liveIndexes(tb) {
		// Without a sort key, it reads as none and its type as the default.
		item := map[string]any{"rangeKey": "", "rangeKeyType": string(ddbtypes.ScalarAttributeTypeS)}
		for _, k := range g.KeySchema {
			a := aws.ToString(k.AttributeName)
			if k.KeyType == ddbtypes.KeyTypeHash {
				item["hashKey"], item["hashKeyType"] = a, types[a]
			} else {
				item["rangeKey"], item["rangeKeyType"] = a, types[a]
			}
		}
		if p := g.Projection; p != nil {
			item["projection"] = string(p.ProjectionType)
			if len(p.NonKeyAttributes) > 0 {
				attrs := make([]any, len(p.NonKeyAttributes))
				for i, a := range p.NonKeyAttributes {
					attrs[i] = a
				}
				item["nonKeyAttributes"] = attrs
			}
		}
		if billingOf(tb) == ddbtypes.BillingModeProvisioned && g.ProvisionedThroughput != nil {
			item["readCapacity"] = float64(aws.ToInt64(g.ProvisionedThroughput.ReadCapacityUnits))
			item["writeCapacity"] = float64(aws.ToInt64(g.ProvisionedThroughput.WriteCapacityUnits))
		}
		out[n] = item
	}
	return out
}

// remade reports whether DynamoDB cannot make cur into x in place: a key or
// the projection differs. Only what the declaration sets is compared, as
// the engine compares an item, so an unset field never remakes an index.
func (x indexDecl) remade(cur map[string]any) bool {
	differs := func(set bool, field, want string) bool {
		got, _ := cur[field].(string)
		return set && got != want
	}
	in := x.in
	return differs(true, "hashKey", in.HashKey) ||
		differs(in.HasHashKeyType(), "hashKeyType", in.HashKeyType) ||
		differs(in.HasRangeKey(), "rangeKey", in.RangeKey) ||
		differs(in.HasRangeKeyType(), "rangeKeyType", in.RangeKeyType) ||
		differs(in.HasProjection(), "projection", in.Projection) ||
		(in.HasNonKeyAttributes() && !sameStrings(cur["nonKeyAttributes"], in.NonKeyAttributes))
}

// sameStrings compares a reported list with a declared one as sets.
func sameStrings(got any, want []string) bool {
	l, _ := got.([]any)
	have := make([]string, 0, len(l))
	for _, v := range l {
		s, _ := v.(string)
		have = append(have, s)
	}
	w := slices.Clone(want)
	slices.Sort(have)
	slices.Sort(w)
	return slices.Equal(slices.Compact(have), slices.Compact(w))
}

// reindex brings the table's indexes to the declaration (when indexes), in
// the order DynamoDB allows: one index created or deleted per UpdateTable,
// the table and its indexes ACTIVE before each. Indexes that go or are
// remade are deleted first, so the table stays within its 20; then
// between sends the table's own update with the capacity updates of kept,
// the indexes that stay; then the new and remade are created.
func (d *dynamoTables) reindex(ctx context.Context, c *dynamodb.Client, name string, decl tableDecl, indexes bool,
	between func(cur *ddbtypes.TableDescription, kept map[string]indexDecl) error) error {
	cur, err := d.active(ctx, c, name)
	if err != nil {
		return err
	}
	want := map[string]indexDecl{}
	for _, x := range decl.indexes {
		want[x.name] = x
	}
	kept := map[string]indexDecl{}
	if indexes {
		reported := reportedIndexes(cur)
		for _, n := range slices.Sorted(maps.Keys(reported)) {
			x, ok := want[n]
			if ok && !x.remade(reported[n].(map[string]any)) {
				kept[n] = x
				continue
			}
			if cur, err = d.indexUpdate(ctx, c, name, "delete", n, &dynamodb.UpdateTableInput{TableName: aws.String(name),
				GlobalSecondaryIndexUpdates: []ddbtypes.GlobalSecondaryIndexUpdate{{Delete: &ddbtypes.DeleteGlobalSecondaryIndexAction{IndexName: aws.String(n)}}}}); err != nil {
				return err
			}
		}
	} else {
		for n := range liveIndexes(cur) {
			if x, ok := want[n]; ok {
				kept[n] = x
			}
		}
	}
	if err := between(cur, kept); err != nil {
		return err
	}
	if !indexes {
		return nil
	}
	cur, err = d.active(ctx, c, name)
	if err != nil {
		return err
	}
	for _, x := range decl.indexes {
		if _, ok := kept[x.name]; ok {
			continue
		}
		// The definitions of every key the table has after the create:
		// DynamoDB's UpdateTable asks for the new index's, and moto
		// replaces the table's with what it is sent.
		var attrs attributeSet
		for _, g := range cur.KeySchema {
			n := aws.ToString(g.AttributeName)
			if err := attrs.define(n, ddbtypes.ScalarAttributeType(attributeTypes(cur)[n]), "the table's key"); err != nil {
				return providers.Errorf(providers.InvalidArgument, "aws/dynamodb-table: %s: %v", name, err)
			}
		}
		for n, g := range liveIndexes(cur) {
			for _, k := range g.KeySchema {
				a := aws.ToString(k.AttributeName)
				if err := attrs.define(a, ddbtypes.ScalarAttributeType(attributeTypes(cur)[a]), fmt.Sprintf("index %q's key", n)); err != nil {
					return providers.Errorf(providers.InvalidArgument, "aws/dynamodb-table: %s: %v", name, err)
				}
			}
		}
		for _, a := range x.attributes {
			if err := attrs.define(aws.ToString(a.AttributeName), a.AttributeType, fmt.Sprintf("index %q's key", x.name)); err != nil {
				return providers.Errorf(providers.InvalidArgument, "aws/dynamodb-table: %s: %v", name, err)
			}
		}
		if cur, err = d.indexUpdate(ctx, c, name, "create", x.name, &dynamodb.UpdateTableInput{TableName: aws.String(name), AttributeDefinitions: attrs.defs,
			GlobalSecondaryIndexUpdates: []ddbtypes.GlobalSecondaryIndexUpdate{{Create: &ddbtypes.CreateGlobalSecondaryIndexAction{
				IndexName: aws.String(x.name), KeySchema: x.keySchema, Projection: x.projection, ProvisionedThroughput: x.throughput()}}}}); err != nil {
			return err
		}
	}
	return nil
}

// indexUpdate sends one UpdateTable that creates or deletes one index and
// waits for the table and its indexes to be ACTIVE again (a deleted index
// gone), as DynamoDB requires before the next.
func (d *dynamoTables) indexUpdate(ctx context.Context, c *dynamodb.Client, name, what, index string, in *dynamodb.UpdateTableInput) (*ddbtypes.TableDescription, error) {
	if _, err := c.UpdateTable(ctx, in); err != nil {
		return nil, fmt.Errorf("aws/dynamodb-table: %s: UpdateTable (%s global secondary index %q): %w", name, what, index, err)
	}
	return d.active(ctx, c, name)
}

// indexCapacities are the GlobalSecondaryIndexUpdates of the kept indexes
// whose capacity is not as declared; on a switch to PROVISIONED, every
// index's, which DynamoDB requires in that call. An index the table has
// that the declaration does not give capacities for cannot switch.
func indexCapacities(cur *ddbtypes.TableDescription, decl tableDecl, kept map[string]indexDecl, switching bool) ([]ddbtypes.GlobalSecondaryIndexUpdate, error) {
	if !decl.provisioned {
		return nil, nil
	}
	var out []ddbtypes.GlobalSecondaryIndexUpdate
	live := liveIndexes(cur)
	for _, n := range slices.Sorted(maps.Keys(live)) {
		x, ok := kept[n]
		if !ok {
			if switching {
				return nil, fmt.Errorf("billingMode PROVISIONED needs the capacities of global secondary index %q: declare it in globalSecondaryIndexes with readCapacity and writeCapacity", n)
			}
			continue
		}
		have := live[n].ProvisionedThroughput
		if switching || have == nil || aws.ToInt64(have.ReadCapacityUnits) != x.readCap || aws.ToInt64(have.WriteCapacityUnits) != x.writeCap {
			out = append(out, ddbtypes.GlobalSecondaryIndexUpdate{Update: &ddbtypes.UpdateGlobalSecondaryIndexAction{
				IndexName: aws.String(n), ProvisionedThroughput: x.throughput()}})
		}
	}
	return out, nil
}

// settled is the TableExists waiter's test made stricter: the table ACTIVE
// and every index ACTIVE, so a created index is built and a deleted one
// gone. Not found is retried, as the waiter's own test does (a create not
// yet visible).
func settled(_ context.Context, _ *dynamodb.DescribeTableInput, out *dynamodb.DescribeTableOutput, err error) (bool, error) {
	if err != nil {
		var nf *ddbtypes.ResourceNotFoundException
		if errors.As(err, &nf) {
			return true, nil
		}
		return false, err
	}
	if out.Table == nil || out.Table.TableStatus != ddbtypes.TableStatusActive {
		return true, nil
	}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		if g.IndexStatus != ddbtypes.IndexStatusActive {
			return true, nil
		}
	}
	return false, nil
}

package aws

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// dynamoTables is the dynamodb-table kind: a DynamoDB table, named by its
// table name, with a partition key, an optional sort key and its global
// secondary indexes (dynamodb_indexes.go).
type dynamoTables struct {
	clients *regional[*dynamodb.Client]
	// pageSize is ListTables' Limit (at most 100).
	pageSize int32
	// wait bounds each TableExists and TableNotExists wait, an index's
	// create or delete included; each polls from every pollDelay to every
	// ten times that (2 to 20 s rather than the waiter's 20 to 120 s: a
	// table without indexes is ACTIVE within seconds).
	wait, pollDelay time.Duration
}

var (
	_ providers.Driver       = (*dynamoTables)(nil)
	_ providers.Releaser     = (*dynamoTables)(nil)
	_ providers.ListedReader = (*dynamoTables)(nil)
)

func init() {
	register(entry{
		kind: spec.DynamoDBTable, service: "dynamodb",
		actions: []string{"dynamodb:ListTables", "dynamodb:DescribeTable", "dynamodb:DescribeTimeToLive",
			"dynamodb:DescribeContinuousBackups", "dynamodb:ListTagsOfResource", "dynamodb:CreateTable",
			"dynamodb:UpdateTable", "dynamodb:UpdateTimeToLive", "dynamodb:UpdateContinuousBackups",
			"dynamodb:TagResource", "dynamodb:UntagResource", "dynamodb:DeleteTable"},
		scopes: map[string][]ActionScope{
			"dynamodb:ListTables":                {{Scope: ScopeAny}},
			"dynamodb:DescribeTable":             {{Scope: ScopeAny}},
			"dynamodb:DescribeTimeToLive":        {{Scope: ScopeAny}},
			"dynamodb:DescribeContinuousBackups": {{Scope: ScopeAny}},
			"dynamodb:ListTagsOfResource":        {{Scope: ScopeAny}},
			"dynamodb:CreateTable":               {{Scope: ScopeCreate}},
			"dynamodb:UpdateTable":               {{Scope: ScopeOwned}},
			"dynamodb:UpdateTimeToLive":          {{Scope: ScopeOwned}},
			"dynamodb:UpdateContinuousBackups":   {{Scope: ScopeOwned}},
			"dynamodb:TagResource":               {{Scope: ScopeTagging}},
			"dynamodb:UntagResource":             {{Scope: ScopeOwned}},
			"dynamodb:DeleteTable":               {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:dynamodb:{region}:{account}:table/{name}",
		// A table's ARN is arn:aws:dynamodb:REGION:ACCOUNT:table/NAME; its
		// indexes and streams are table/NAME/index/… and table/NAME/stream/….
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			name, ok := strings.CutPrefix(resource, "table/")
			return name, "", ok && name != "" && !strings.Contains(name, "/")
		},
		errors: map[string]providers.Code{
			// Too many table operations under way in the account (500):
			// blocked for now, as log-group's LimitExceededException.
			"LimitExceededException": providers.Conflict,
			// PITR asked of a table whose backups are not yet enabled, as
			// just after its create.
			"ContinuousBackupsUnavailableException": providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &dynamoTables{clients: newRegional(cfg, func(c aws.Config) *dynamodb.Client { return dynamodb.NewFromConfig(c) }),
				pageSize: 100, wait: 30 * time.Minute, pollDelay: 2 * time.Second}
		},
	})
}

// tableDecl is a target's table, checked before any call.
type tableDecl struct {
	in                providers.DynamodbTableInput
	provisioned       bool
	readCap, writeCap int64
	keySchema         []ddbtypes.KeySchemaElement
	attributes        []ddbtypes.AttributeDefinition
	indexes           []indexDecl
}

// decodeTable decodes t and refuses, before any call, what CreateTable and
// UpdateTable would refuse: a key type other than S, N or B, a sort key
// named as the partition key, capacities that do not go with the billing
// mode, an index that breaks DynamoDB's rules or gives a key attribute
// another type than the table or another index does.
func decodeTable(t providers.Target) (tableDecl, error) {
	in, err := providers.DecodeDynamodbTable(t.Fields)
	if err != nil {
		return tableDecl{}, providers.Errorf(providers.InvalidArgument, "aws/dynamodb-table: %s: %v", t.Name, err)
	}
	d := tableDecl{in: in}
	refuse := func(format string, args ...any) (tableDecl, error) {
		return d, providers.Errorf(providers.InvalidArgument, "aws/dynamodb-table: %s: "+format, append([]any{t.Name}, args...)...)
	}
	if d.keySchema, d.attributes, err = decodeKeys(in.HashKey, in.HashKeyType, in.RangeKey, in.RangeKeyType); err != nil {
		return refuse("%v", err)
	}
	switch ddbtypes.BillingMode(in.BillingMode) {
	case "", ddbtypes.BillingModePayPerRequest:
		if in.HasReadCapacity() || in.HasWriteCapacity() {
			return refuse("readCapacity and writeCapacity are for billingMode PROVISIONED; remove them or set billingMode: PROVISIONED")
		}
	case ddbtypes.BillingModeProvisioned:
		d.provisioned = true
		if in.ReadCapacity < 1 || in.WriteCapacity < 1 || in.ReadCapacity != float64(int64(in.ReadCapacity)) || in.WriteCapacity != float64(int64(in.WriteCapacity)) {
			return refuse("billingMode PROVISIONED needs readCapacity and writeCapacity, whole numbers of at least 1")
		}
		d.readCap, d.writeCap = int64(in.ReadCapacity), int64(in.WriteCapacity)
	default:
		return refuse(`billingMode is %q; it is "PAY_PER_REQUEST" or "PROVISIONED"`, in.BillingMode)
	}
	var attrs attributeSet
	for i, a := range d.attributes {
		// The table's two keys differ in name, so they cannot clash.
		_ = attrs.define(aws.ToString(a.AttributeName), a.AttributeType, []string{"the table's hashKey", "the table's rangeKey"}[i])
	}
	if d.indexes, err = decodeIndexes(in.GlobalSecondaryIndexes, d.provisioned, &attrs); err != nil {
		return refuse("%v", err)
	}
	d.attributes = attrs.defs
	return d, nil
}

func (d tableDecl) billing() ddbtypes.BillingMode {
	if d.provisioned {
		return ddbtypes.BillingModeProvisioned
	}
	return ddbtypes.BillingModePayPerRequest
}

func (d tableDecl) throughput() *ddbtypes.ProvisionedThroughput {
	if !d.provisioned {
		return nil
	}
	return &ddbtypes.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(d.readCap), WriteCapacityUnits: aws.Int64(d.writeCap)}
}

// billingOf is a table's billing mode: DescribeTable gives no
// BillingModeSummary for a table that was always provisioned.
func billingOf(tb *ddbtypes.TableDescription) ddbtypes.BillingMode {
	if s := tb.BillingModeSummary; s != nil && s.BillingMode != "" {
		return s.BillingMode
	}
	return ddbtypes.BillingModeProvisioned
}

func (d *dynamoTables) List(ctx context.Context, region string) ([]providers.Resource, error) {
	var out []providers.Resource
	p := dynamodb.NewListTablesPaginator(d.clients.get(region), &dynamodb.ListTablesInput{Limit: aws.Int32(d.pageSize)})
	err := eachPage(ctx, p, spec.DynamoDBTable, region, func(page *dynamodb.ListTablesOutput) error {
		for _, n := range page.TableNames {
			out = append(out, providers.Resource{Name: n, Region: region})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/dynamodb-table: ListTables in %s: %w", region, err)
	}
	return out, nil
}

// describe reads the table; one being deleted is not found.
func (d *dynamoTables) describe(ctx context.Context, c *dynamodb.Client, name string) (*ddbtypes.TableDescription, error) {
	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("aws/dynamodb-table: %s: DescribeTable: %w", name, err)
	}
	if out.Table.TableStatus == ddbtypes.TableStatusDeleting {
		return nil, providers.Errorf(providers.NotFound, "aws/dynamodb-table: %s: the table is being deleted", name)
	}
	return out.Table, nil
}

func (d *dynamoTables) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	return d.finish(ctx, region, name, nil)
}

// ReadListed finishes a table ListTables reported, by name only: the
// DescribeTable it always needs, the TTL and the point-in-time recovery
// only when the engine wants them (each a call of its own), and the tags
// unless the tag scan's are given. One gone since the listing is
// DescribeTable's ResourceNotFoundException: absent.
func (d *dynamoTables) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	return d.finish(ctx, listed.Region, listed.Name, tags)
}

// finish reads the table called name: its description, the TTL and the
// point-in-time recovery the engine wants, and its tags (read unless
// given).
func (d *dynamoTables) finish(ctx context.Context, region, name string, tags map[string]string) (providers.Resource, error) {
	c := d.clients.get(region)
	tb, err := d.describe(ctx, c, name)
	if err != nil {
		return providers.Resource{}, err
	}
	res := providers.Resource{Name: name, Region: region, Fields: map[string]any{}, Attributes: map[string]string{"arn": aws.ToString(tb.TableArn)}}
	types := attributeTypes(tb)
	// Without a sort key, its type reads as the default it would have.
	res.Fields[providers.DynamodbTableRangeKeyType] = string(ddbtypes.ScalarAttributeTypeS)
	for _, k := range tb.KeySchema {
		n := aws.ToString(k.AttributeName)
		if k.KeyType == ddbtypes.KeyTypeHash {
			res.Fields[providers.DynamodbTableHashKey], res.Fields[providers.DynamodbTableHashKeyType] = n, types[n]
		} else {
			res.Fields[providers.DynamodbTableRangeKey], res.Fields[providers.DynamodbTableRangeKeyType] = n, types[n]
		}
	}
	mode := billingOf(tb)
	res.Fields[providers.DynamodbTableBillingMode] = string(mode)
	if mode == ddbtypes.BillingModeProvisioned && tb.ProvisionedThroughput != nil {
		res.Fields[providers.DynamodbTableReadCapacity] = float64(aws.ToInt64(tb.ProvisionedThroughput.ReadCapacityUnits))
		res.Fields[providers.DynamodbTableWriteCapacity] = float64(aws.ToInt64(tb.ProvisionedThroughput.WriteCapacityUnits))
	}
	res.Fields[providers.DynamodbTableDeletionProtection] = aws.ToBool(tb.DeletionProtectionEnabled)
	res.Fields[providers.DynamodbTableGlobalSecondaryIndexes] = reportedIndexes(tb)
	if providers.WantsField(ctx, providers.DynamodbTableTtlAttribute) {
		if attr, err := d.ttlOf(ctx, c, name); err != nil {
			return providers.Resource{}, err
		} else if attr != "" {
			res.Fields[providers.DynamodbTableTtlAttribute] = attr
		}
	}
	if providers.WantsField(ctx, providers.DynamodbTablePointInTimeRecovery) {
		pitr, err := d.pitrOf(ctx, c, name)
		if err != nil {
			return providers.Resource{}, err
		}
		res.Fields[providers.DynamodbTablePointInTimeRecovery] = pitr
	}
	if tags == nil {
		if tags, err = d.tags(ctx, c, name, aws.ToString(tb.TableArn)); err != nil {
			return providers.Resource{}, err
		}
	}
	res.Fields[spec.TagsField] = reportedTags(tags)
	res.Owner = tags[spec.OwnershipTagKey]
	return res, nil
}

// pitrOf reports whether the table's point-in-time recovery is on.
func (d *dynamoTables) pitrOf(ctx context.Context, c *dynamodb.Client, name string) (bool, error) {
	cb, err := c.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(name)})
	if err != nil {
		return false, fmt.Errorf("aws/dynamodb-table: %s: DescribeContinuousBackups: %w", name, err)
	}
	s := cb.ContinuousBackupsDescription
	return s != nil && s.PointInTimeRecoveryDescription != nil &&
		s.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == ddbtypes.PointInTimeRecoveryStatusEnabled, nil
}

// ttlOf is the table's TTL attribute: empty when TTL is off or being
// turned off.
func (d *dynamoTables) ttlOf(ctx context.Context, c *dynamodb.Client, name string) (string, error) {
	out, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("aws/dynamodb-table: %s: DescribeTimeToLive: %w", name, err)
	}
	if s := out.TimeToLiveDescription; s != nil && (s.TimeToLiveStatus == ddbtypes.TimeToLiveStatusEnabled || s.TimeToLiveStatus == ddbtypes.TimeToLiveStatusEnabling) {
		return aws.ToString(s.AttributeName), nil
	}
	return "", nil
}

// tags reads every tag of a table. The SDK has no paginator for
// ListTagsOfResource, so its NextToken is followed here, within
// listPageLimit pages.
func (d *dynamoTables) tags(ctx context.Context, c *dynamodb.Client, name, arn string) (map[string]string, error) {
	tags := map[string]string{}
	var token *string
	for pages := 0; ; pages++ {
		if pages == listPageLimit {
			return nil, fmt.Errorf("aws/dynamodb-table: %s: ListTagsOfResource passed %d pages", name, listPageLimit)
		}
		out, err := c.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn), NextToken: token})
		if err != nil {
			return nil, fmt.Errorf("aws/dynamodb-table: %s: ListTagsOfResource: %w", name, err)
		}
		for _, tg := range out.Tags {
			tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
		}
		if token = out.NextToken; aws.ToString(token) == "" {
			return tags, nil
		}
	}
}

func (d *dynamoTables) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	decl, err := decodeTable(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	// Tags go with the create, so a table never exists without its
	// ownership tag.
	_, err = c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(t.Name), KeySchema: decl.keySchema, AttributeDefinitions: decl.attributes,
		BillingMode: decl.billing(), ProvisionedThroughput: decl.throughput(), GlobalSecondaryIndexes: decl.createIndexes(),
		DeletionProtectionEnabled: aws.Bool(decl.in.DeletionProtection), Tags: ddbTags(tags),
	})
	if err != nil {
		// DynamoDB answers a create of a name in use with
		// ResourceInUseException, which is also its "busy": a table that
		// exists is AlreadyExists, so the engine can adopt it if it is ours.
		if errorCode(err) == providers.Conflict {
			if _, derr := d.describe(ctx, c, t.Name); derr == nil {
				return providers.Resource{}, coded(providers.AlreadyExists, err, "aws/dynamodb-table: %s: CreateTable: the table exists", t.Name)
			}
		}
		return providers.Resource{}, fmt.Errorf("aws/dynamodb-table: %s: CreateTable: %w", t.Name, err)
	}
	if _, err := d.active(ctx, c, t.Name); err != nil {
		return providers.Resource{}, err
	}
	if decl.in.TtlAttribute != "" {
		if err := d.setTTL(ctx, c, t.Name, decl.in.TtlAttribute, true); err != nil {
			return providers.Resource{}, err
		}
	}
	if decl.in.PointInTimeRecovery {
		if err := d.setPITR(ctx, c, t.Name, true); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func ddbTags(tags map[string]string) []ddbtypes.Tag {
	out := make([]ddbtypes.Tag, 0, len(tags))
	for k, v := range tags {
		out = append(out, ddbtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out
}

// active waits until the table and its indexes are ACTIVE and returns the
// table: after a create, and before and after an UpdateTable, which is
// asynchronous and which DynamoDB refuses on a table still UPDATING, or
// for a second index while one is being created or deleted.
func (d *dynamoTables) active(ctx context.Context, c *dynamodb.Client, name string) (*ddbtypes.TableDescription, error) {
	out, err := dynamodb.NewTableExistsWaiter(c, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay, o.Retryable = d.pollDelay, 10*d.pollDelay, settled
	}).WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, d.wait)
	if err != nil {
		return nil, fmt.Errorf("aws/dynamodb-table: %s: waiting for the table and its indexes to be ACTIVE: %w", name, err)
	}
	return out.Table, nil
}

func (d *dynamoTables) setTTL(ctx context.Context, c *dynamodb.Client, name, attr string, on bool) error {
	_, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(on)}})
	if err != nil {
		return fmt.Errorf("aws/dynamodb-table: %s: UpdateTimeToLive (DynamoDB takes one TTL change per table per hour): %w", name, err)
	}
	return nil
}

func (d *dynamoTables) setPITR(ctx context.Context, c *dynamodb.Client, name string, on bool) error {
	_, err := c.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String(name),
		PointInTimeRecoverySpecification: &ddbtypes.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(on)}})
	if err != nil {
		return fmt.Errorf("aws/dynamodb-table: %s: UpdateContinuousBackups: %w", name, err)
	}
	return nil
}

func (d *dynamoTables) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	decl, err := decodeTable(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	var table, indexes, ttl, pitr, tags bool
	for _, f := range changed {
		switch f {
		case providers.DynamodbTableBillingMode, providers.DynamodbTableReadCapacity, providers.DynamodbTableWriteCapacity,
			providers.DynamodbTableDeletionProtection:
			table = true
		case providers.DynamodbTableGlobalSecondaryIndexes:
			indexes = true
		case providers.DynamodbTableTtlAttribute:
			ttl = true
		case providers.DynamodbTablePointInTimeRecovery:
			pitr = true
		case providers.DynamodbTableTags:
			tags = true
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/dynamodb-table: %s: field %q cannot be updated in place", t.Name, f)
		}
	}
	if table || indexes {
		if err := d.updateTable(ctx, c, t.Name, decl, table, indexes); err != nil {
			return providers.Resource{}, err
		}
	}
	if ttl {
		if err := d.retime(ctx, c, t.Name, decl.in.TtlAttribute); err != nil {
			return providers.Resource{}, err
		}
	}
	if pitr {
		if err := d.setPITR(ctx, c, t.Name, decl.in.PointInTimeRecovery); err != nil {
			return providers.Resource{}, err
		}
	}
	if tags {
		if err := d.retag(ctx, c, t); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// updateTable brings the table's own settings (when table: billing mode,
// throughput, deletion protection) and its indexes (when indexes) to the
// declaration, reading the table once ACTIVE and sending only what
// differs. The table's own settings and the capacities of the indexes that
// stay go in one UpdateTable, between the indexes' deletes and creates
// (reindex), and it waits for the table to be ACTIVE again.
func (d *dynamoTables) updateTable(ctx context.Context, c *dynamodb.Client, name string, decl tableDecl, table, indexes bool) error {
	return d.reindex(ctx, c, name, decl, indexes, func(cur *ddbtypes.TableDescription, kept map[string]indexDecl) error {
		in := &dynamodb.UpdateTableInput{TableName: aws.String(name)}
		send := false
		mode := billingOf(cur)
		if table {
			if aws.ToBool(cur.DeletionProtectionEnabled) != decl.in.DeletionProtection {
				in.DeletionProtectionEnabled, send = aws.Bool(decl.in.DeletionProtection), true
			}
			if mode != decl.billing() {
				in.BillingMode, send = decl.billing(), true
			}
			if tp := decl.throughput(); tp != nil {
				have := cur.ProvisionedThroughput
				if mode != ddbtypes.BillingModeProvisioned || have == nil ||
					aws.ToInt64(have.ReadCapacityUnits) != decl.readCap || aws.ToInt64(have.WriteCapacityUnits) != decl.writeCap {
					in.ProvisionedThroughput, send = tp, true
				}
			}
		}
		ups, err := indexCapacities(cur, decl, kept, in.BillingMode == ddbtypes.BillingModeProvisioned)
		if err != nil {
			return providers.Errorf(providers.InvalidArgument, "aws/dynamodb-table: %s: %v", name, err)
		}
		in.GlobalSecondaryIndexUpdates, send = ups, send || len(ups) > 0
		if !send {
			return nil
		}
		if _, err := c.UpdateTable(ctx, in); err != nil {
			return fmt.Errorf("aws/dynamodb-table: %s: UpdateTable: %w", name, err)
		}
		_, err = d.active(ctx, c, name)
		return err
	})
}

// retime makes attr the table's TTL attribute (none when empty). A table
// has one, so a new one is the old disabled, then the new enabled: two of
// the changes DynamoDB takes one an hour of.
func (d *dynamoTables) retime(ctx context.Context, c *dynamodb.Client, name, attr string) error {
	on, err := d.ttlOf(ctx, c, name)
	if err != nil || on == attr {
		return err
	}
	if on != "" {
		if err := d.setTTL(ctx, c, name, on, false); err != nil {
			return err
		}
	}
	if attr != "" {
		return d.setTTL(ctx, c, name, attr, true)
	}
	return nil
}

// tableARN is the table's ARN: the one the engine observed, else the
// describe's.
func (d *dynamoTables) tableARN(ctx context.Context, c *dynamodb.Client, name string, attrs map[string]string) (string, error) {
	if a := attrs["arn"]; a != "" {
		return a, nil
	}
	tb, err := d.describe(ctx, c, name)
	if err != nil {
		return "", err
	}
	return aws.ToString(tb.TableArn), nil
}

func (d *dynamoTables) retag(ctx context.Context, c *dynamodb.Client, t providers.Target) error {
	arn, err := d.tableARN(ctx, c, t.Name, t.Attributes)
	if err != nil {
		return err
	}
	have, err := d.tags(ctx, c, t.Name, arn)
	if err != nil {
		return err
	}
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have, want, spec.OwnershipTagKey)
	if len(set) > 0 {
		if _, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: ddbTags(set)}); err != nil {
			return fmt.Errorf("aws/dynamodb-table: %s: TagResource: %w", t.Name, err)
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: remove}); err != nil {
			return fmt.Errorf("aws/dynamodb-table: %s: UntagResource: %w", t.Name, err)
		}
	}
	return nil
}

// Delete deletes the table with its items and waits until it is gone. A
// table with deletion protection is refused by DynamoDB; the error names
// the field and the fix, with a code the engine does not retry.
func (d *dynamoTables) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t.Name)}); err != nil {
		// DynamoDB's code for a protected table is not documented (moto
		// answers ValidationException): whatever refused the delete, a
		// table that reads as protected is said to be.
		if errorCode(err) != providers.NotFound {
			if tb, derr := d.describe(ctx, c, t.Name); derr == nil && aws.ToBool(tb.DeletionProtectionEnabled) {
				return coded(providers.InvalidArgument, err,
					"aws/dynamodb-table: %s: DeleteTable: deletionProtection is on, so DynamoDB refuses to delete the table: "+
						"set deletionProtection: false, apply, then delete or replace it", t.Name)
			}
		}
		return fmt.Errorf("aws/dynamodb-table: %s: DeleteTable: %w", t.Name, err)
	}
	if err := dynamodb.NewTableNotExistsWaiter(c, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = d.pollDelay, 10*d.pollDelay
	}).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name)}, d.wait); err != nil {
		return fmt.Errorf("aws/dynamodb-table: %s: waiting for the table to be deleted: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *dynamoTables) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	arn, err := d.tableARN(ctx, c, name, nil)
	if err != nil {
		return err
	}
	tags, err := d.tags(ctx, c, name, arn)
	if err != nil {
		return err
	}
	if tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	if _, err := c.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{spec.OwnershipTagKey}}); err != nil {
		return fmt.Errorf("aws/dynamodb-table: %s: UntagResource: %w", name, err)
	}
	return nil
}

package aws

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	rdstypes "github.com/aws/aws-sdk-go-v2/service/rds/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// postgres is the postgres kind on AWS: an Aurora PostgreSQL Serverless v2
// cluster named by its identifier, with one db.serverless writer instance,
// without which the cluster has an endpoint but nothing answers on it.
//
// A cluster in the "deleting" state reads as absent: nothing can be changed
// on it any more, and it is on its way to being absent. A create of the same
// name then fails with AlreadyExists until AWS finishes, which is the truth.
type postgres struct {
	clients *regional[*rds.Client]
	// minDelay and maxDelay pace the waiters. The SDK's defaults (30 s,
	// then up to 30 min between polls) overshoot a ten-minute create by a
	// lot.
	minDelay, maxDelay time.Duration
	// pageSize is DescribeDBClusters' MaxRecords (20 to 100); zero leaves
	// the default of 100.
	pageSize int32
}

var (
	_ providers.Driver   = (*postgres)(nil)
	_ providers.Releaser = (*postgres)(nil)
)

func init() {
	register(entry{
		kind: spec.Postgres, service: "rds",
		// The master password is read from its secret at create.
		actions: []string{"rds:DescribeDBClusters", "rds:DescribeDBInstances", "rds:DescribeDBClusterSnapshots", "rds:CreateDBCluster",
			"rds:CreateDBInstance", "rds:ModifyDBCluster", "rds:AddTagsToResource", "rds:RemoveTagsFromResource",
			"rds:DeleteDBInstance", "rds:DeleteDBCluster", "rds:DeleteDBClusterSnapshot",
			"secretsmanager:GetSecretValue"},
		// The cluster carries the tags; its writer instance (db:) none.
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			n, ok := strings.CutPrefix(resource, "cluster:")
			return n, "", ok
		},
		errors: map[string]providers.Code{
			"DBClusterNotFoundFault": providers.NotFound, "DBInstanceNotFound": providers.NotFound,
			"DBClusterAlreadyExistsFault": providers.AlreadyExists, "DBInstanceAlreadyExists": providers.AlreadyExists,
			"InvalidDBClusterStateFault": providers.Conflict, "InvalidDBInstanceState": providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &postgres{
				clients:  newRegional(cfg, func(c aws.Config) *rds.Client { return rds.NewFromConfig(c) }),
				minDelay: 5 * time.Second, maxDelay: 30 * time.Second,
			}
		},
	})
}

const (
	auroraPostgres = "aurora-postgresql"
	// rdsWait bounds each wait: cluster available, writer available,
	// writer deleted, cluster deleted. Each usually takes 5 to 15 minutes.
	rdsWait = time.Hour
	// Serverless v2 needs a range; these are the smallest AWS allows
	// without auto-pause, used when the declaration leaves one out.
	defaultMinACU = 0.5
	defaultMaxACU = 1.0
)

// checkClusterID refuses identifiers RDS would refuse or rewrite. RDS
// lower-cases identifiers, so "MyDB" would be listed as "mydb" and never be
// found under its declared name.
func checkClusterID(name string) error {
	bad := func(why string) error {
		return providers.Errorf(providers.InvalidArgument, "postgres name %q: %s", name, why)
	}
	switch {
	case len(name) == 0 || len(name) > 63:
		return bad("RDS cluster identifiers are 1 to 63 characters")
	case name != strings.ToLower(name):
		return bad(fmt.Sprintf("RDS stores identifiers in lower case; write %q", strings.ToLower(name)))
	case name[0] < 'a' || name[0] > 'z':
		return bad("RDS cluster identifiers start with a letter")
	case strings.HasSuffix(name, "-") || strings.Contains(name, "--"):
		return bad("RDS cluster identifiers neither end with a hyphen nor contain two in a row")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return bad(fmt.Sprintf("character %q: RDS allows letters, digits and hyphens", r))
		}
	}
	return nil
}

// checkPassword applies RDS's rule for master passwords before the cluster
// is asked for, without saying which character offends: the message must
// not leak the secret.
func checkPassword(p string) error {
	if len(p) < 8 || len(p) > 128 {
		return providers.Errorf(providers.InvalidArgument, "postgres master password: RDS wants 8 to 128 characters")
	}
	for _, r := range p {
		if r < '!' || r > '~' || strings.ContainsRune(`/'"@`, r) {
			return providers.Errorf(providers.InvalidArgument, "postgres master password: RDS allows printable ASCII except space, /, ', \" and @")
		}
	}
	return nil
}

// writerID names the cluster's writer instance.
func writerID(cluster string) string {
	const suffix = "-writer"
	if len(cluster)+len(suffix) > 63 {
		cluster = strings.TrimRight(cluster[:63-len(suffix)], "-")
	}
	return cluster + suffix
}

func (d *postgres) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &rds.DescribeDBClustersInput{
		// The API also lists MySQL, Neptune and DocumentDB clusters.
		Filters: []rdstypes.Filter{{Name: aws.String("engine"), Values: []string{auroraPostgres}}},
	}
	if d.pageSize > 0 {
		in.MaxRecords = aws.Int32(d.pageSize)
	}
	var out []providers.Resource
	err := eachPage(ctx, rds.NewDescribeDBClustersPaginator(d.clients.get(region), in), spec.Postgres, region, func(page *rds.DescribeDBClustersOutput) error {
		for _, c := range page.DBClusters {
			if aws.ToString(c.Engine) == auroraPostgres && aws.ToString(c.Status) != "deleting" {
				out = append(out, clusterResource(region, c))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (d *postgres) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, err := d.describe(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	if aws.ToString(c.Status) == "deleting" {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "postgres cluster %s in %s is being deleted", name, region)
	}
	return clusterResource(region, c), nil
}

// describe returns the cluster called name, of any status, or a NotFound
// error; a cluster of another engine is not this kind's.
func (d *postgres) describe(ctx context.Context, region, name string) (rdstypes.DBCluster, error) {
	out, err := d.clients.get(region).DescribeDBClusters(ctx, &rds.DescribeDBClustersInput{DBClusterIdentifier: aws.String(name)})
	if err != nil {
		return rdstypes.DBCluster{}, err
	}
	for _, c := range out.DBClusters {
		if aws.ToString(c.DBClusterIdentifier) == name && aws.ToString(c.Engine) == auroraPostgres {
			return c, nil
		}
	}
	return rdstypes.DBCluster{}, providers.Errorf(providers.NotFound, "no Aurora PostgreSQL cluster %s in %s", name, region)
}

func (d *postgres) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	if err := checkClusterID(t.Name); err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodePostgres(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	user := decl.MasterUsername
	if user == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "postgres %s: masterUsername is required", t.Name)
	}
	password := decl.MasterPasswordSecret.Reveal()
	if password == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "postgres %s: the master password (masterPasswordSecret) is required at create", t.Name)
	}
	if err := checkPassword(password); err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	version := decl.EngineVersion
	min, max := capacity(decl, nil)
	c := d.clients.get(t.Region)
	in := &rds.CreateDBClusterInput{
		DBClusterIdentifier: aws.String(t.Name),
		Engine:              aws.String(auroraPostgres),
		// Serverless v2 runs in provisioned mode, on db.serverless
		// instances.
		EngineMode:                       aws.String("provisioned"),
		MasterUsername:                   aws.String(user),
		MasterUserPassword:               aws.String(password),
		ServerlessV2ScalingConfiguration: &rdstypes.ServerlessV2ScalingConfiguration{MinCapacity: aws.Float64(min), MaxCapacity: aws.Float64(max)},
		StorageEncrypted:                 aws.Bool(true),
		CopyTagsToSnapshot:               aws.Bool(true),
		Tags:                             rdsTags(tags),
	}
	// A major version alone ("16") is accepted: RDS picks that major's
	// default minor and reports it ("16.6").
	if version != "" {
		in.EngineVersion = aws.String(version)
	}
	if _, err := c.CreateDBCluster(ctx, in); err != nil {
		return providers.Resource{}, err
	}
	if err := d.waitCluster(ctx, c, t.Name); err != nil {
		return providers.Resource{}, err
	}
	// A failure from here on leaves a cluster without a writer. It carries
	// the ownership tag, so it is found and deleted as ours; see
	// docs/providers.md.
	writer := writerID(t.Name)
	if _, err := c.CreateDBInstance(ctx, &rds.CreateDBInstanceInput{
		DBInstanceIdentifier: aws.String(writer),
		DBClusterIdentifier:  aws.String(t.Name),
		DBInstanceClass:      aws.String("db.serverless"),
		Engine:               aws.String(auroraPostgres),
	}); err != nil {
		return providers.Resource{}, err
	}
	if err := rds.NewDBInstanceAvailableWaiter(c, d.pace).Wait(ctx,
		&rds.DescribeDBInstancesInput{DBInstanceIdentifier: aws.String(writer)}, rdsWait); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/postgres: wait for writer %s: %w", writer, err)
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *postgres) pace(o *rds.DBInstanceAvailableWaiterOptions) {
	o.MinDelay, o.MaxDelay = d.minDelay, d.maxDelay
}

func (d *postgres) waitCluster(ctx context.Context, c *rds.Client, name string) error {
	err := rds.NewDBClusterAvailableWaiter(c, func(o *rds.DBClusterAvailableWaiterOptions) {
		o.MinDelay, o.MaxDelay = d.minDelay, d.maxDelay
	}).Wait(ctx, &rds.DescribeDBClustersInput{DBClusterIdentifier: aws.String(name)}, rdsWait)
	if err != nil {
		return fmt.Errorf("aws/postgres: wait for cluster %s to be available: %w", name, err)
	}
	return nil
}

// capacity returns the Serverless v2 range to ask for: the target's, else
// the current one, else the defaults; max is never below min.
func capacity(decl providers.PostgresInput, cur *rdstypes.ServerlessV2ScalingConfigurationInfo) (min, max float64) {
	min, max = defaultMinACU, defaultMaxACU
	if cur != nil {
		min, max = aws.ToFloat64(cur.MinCapacity), aws.ToFloat64(cur.MaxCapacity)
	}
	if decl.HasMinCapacity() {
		min = decl.MinCapacity
	}
	if decl.HasMaxCapacity() {
		max = decl.MaxCapacity
	} else if cur == nil && max < min {
		max = min
	}
	return min, max
}

// sameVersion reports whether a declared engine version names the running
// one: equal, or a dot-boundary prefix of it ("16" names "16.6").
func sameVersion(declared, running string) bool {
	return declared == running || strings.HasPrefix(running, declared+".")
}

func major(v string) string {
	m, _, _ := strings.Cut(v, ".")
	return m
}

func (d *postgres) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	decl, err := providers.DecodePostgres(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	var doScale, doVersion, doTags bool
	for _, f := range changed {
		switch f {
		case providers.PostgresMinCapacity, providers.PostgresMaxCapacity:
			doScale = true
		case providers.PostgresEngineVersion:
			doVersion = true
		case spec.TagsField:
			doTags = true
		case providers.PostgresMasterUsername:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "postgres %s: masterUsername forces replacement", t.Name)
		case providers.PostgresMasterPasswordSecret:
			// Never compared: the password is set at create only.
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "postgres %s: unknown field %q", t.Name, f)
		}
	}
	cur, err := d.describe(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	mod := &rds.ModifyDBClusterInput{DBClusterIdentifier: aws.String(t.Name), ApplyImmediately: aws.Bool(true)}
	modify := false
	if doScale {
		min, max := capacity(decl, cur.ServerlessV2ScalingConfiguration)
		mod.ServerlessV2ScalingConfiguration = &rdstypes.ServerlessV2ScalingConfiguration{MinCapacity: aws.Float64(min), MaxCapacity: aws.Float64(max)}
		modify = true
	}
	if v := decl.EngineVersion; doVersion && v != "" && !sameVersion(v, aws.ToString(cur.EngineVersion)) {
		mod.EngineVersion = aws.String(v)
		if major(v) != major(aws.ToString(cur.EngineVersion)) {
			mod.AllowMajorVersionUpgrade = aws.Bool(true)
		}
		modify = true
	}
	if modify {
		if _, err := c.ModifyDBCluster(ctx, mod); err != nil {
			return providers.Resource{}, err
		}
		if err := d.waitCluster(ctx, c, t.Name); err != nil {
			return providers.Resource{}, err
		}
	}
	if doTags {
		want, err := desiredTags(t)
		if err != nil {
			return providers.Resource{}, err
		}
		set, remove := tagChanges(rdsTagMap(cur.TagList), want)
		arn := cur.DBClusterArn
		if len(set) > 0 {
			if _, err := c.AddTagsToResource(ctx, &rds.AddTagsToResourceInput{ResourceName: arn, Tags: rdsTags(set)}); err != nil {
				return providers.Resource{}, err
			}
		}
		if len(remove) > 0 {
			if _, err := c.RemoveTagsFromResource(ctx, &rds.RemoveTagsFromResourceInput{ResourceName: arn, TagKeys: remove}); err != nil {
				return providers.Resource{}, err
			}
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *postgres) Delete(ctx context.Context, t providers.Target) error {
	cur, err := d.describe(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	c := d.clients.get(t.Region)
	if aws.ToString(cur.Status) != "deleting" {
		// RDS refuses to delete a cluster that still has instances. An
		// instance already being deleted answers InvalidDBInstanceState
		// (Conflict): the waiter below sees it through.
		for _, m := range cur.DBClusterMembers {
			id := aws.ToString(m.DBInstanceIdentifier)
			_, err := c.DeleteDBInstance(ctx, &rds.DeleteDBInstanceInput{DBInstanceIdentifier: aws.String(id)})
			if code := errorCode(err); err != nil && code != providers.NotFound && code != providers.Conflict {
				return err
			}
		}
		for _, m := range cur.DBClusterMembers {
			id := aws.ToString(m.DBInstanceIdentifier)
			if err := rds.NewDBInstanceDeletedWaiter(c, func(o *rds.DBInstanceDeletedWaiterOptions) {
				o.MinDelay, o.MaxDelay = d.minDelay, d.maxDelay
			}).Wait(ctx, &rds.DescribeDBInstancesInput{DBInstanceIdentifier: aws.String(id)}, rdsWait); err != nil {
				return fmt.Errorf("aws/postgres: wait for instance %s to be deleted: %w", id, err)
			}
		}
		if _, err := c.DeleteDBCluster(ctx, &rds.DeleteDBClusterInput{
			DBClusterIdentifier: aws.String(t.Name),
			SkipFinalSnapshot:   aws.Bool(true),
		}); err != nil {
			return err
		}
	}
	if err := rds.NewDBClusterDeletedWaiter(c, func(o *rds.DBClusterDeletedWaiterOptions) {
		o.MinDelay, o.MaxDelay = d.minDelay, d.maxDelay
	}).Wait(ctx, &rds.DescribeDBClustersInput{DBClusterIdentifier: aws.String(t.Name)}, rdsWait); err != nil {
		return fmt.Errorf("aws/postgres: wait for cluster %s to be deleted: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *postgres) Release(ctx context.Context, region, name, owner string) error {
	cur, err := d.describe(ctx, region, name)
	if err != nil {
		return err
	}
	if rdsTagMap(cur.TagList)[spec.OwnershipTagKey] != owner {
		return nil
	}
	_, err = d.clients.get(region).RemoveTagsFromResource(ctx, &rds.RemoveTagsFromResourceInput{
		ResourceName: cur.DBClusterArn, TagKeys: []string{spec.OwnershipTagKey},
	})
	return err
}

func clusterResource(region string, c rdstypes.DBCluster) providers.Resource {
	tags := rdsTagMap(c.TagList)
	fields := map[string]any{
		"masterUsername": aws.ToString(c.MasterUsername),
		// What RDS runs, such as "16.6" for a declared "16": the engine
		// compares the declaration as a version prefix.
		"engineVersion": aws.ToString(c.EngineVersion),
		spec.TagsField:  reportedTags(tags),
	}
	if s := c.ServerlessV2ScalingConfiguration; s != nil {
		if s.MinCapacity != nil {
			fields["minCapacity"] = *s.MinCapacity
		}
		if s.MaxCapacity != nil {
			fields["maxCapacity"] = *s.MaxCapacity
		}
	}
	// version is what the engine runs, for another fleet's requirement
	// ("version >= 16").
	attrs := map[string]string{"arn": aws.ToString(c.DBClusterArn), "version": aws.ToString(c.EngineVersion)}
	if c.Endpoint != nil {
		port := strconv.Itoa(int(aws.ToInt32(c.Port)))
		attrs["endpoint"] = aws.ToString(c.Endpoint) + ":" + port
		attrs["port"] = port
	}
	r := providers.Resource{
		Name:       aws.ToString(c.DBClusterIdentifier),
		Region:     region,
		Fields:     fields,
		Attributes: attrs,
		Owner:      tags[spec.OwnershipTagKey],
		// DescribeDBClusters carries the tags and everything else Read
		// reports.
		Complete: true,
	}
	if c.ClusterCreateTime != nil {
		r.Created = *c.ClusterCreateTime
	}
	return r
}

func rdsTags(m map[string]string) []rdstypes.Tag {
	return tagList(m, func(k, v *string) rdstypes.Tag { return rdstypes.Tag{Key: k, Value: v} })
}

func rdsTagMap(tags []rdstypes.Tag) map[string]string {
	return tagMapOf(tags, func(t rdstypes.Tag) (k, v *string) { return t.Key, t.Value })
}

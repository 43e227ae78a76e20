package scaleway

import (
	"context"
	"net/url"
	"strconv"
	"time"

	sdb "github.com/scaleway/scaleway-sdk-go/api/serverless_sqldb/v1alpha1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// postgres is the postgres kind: a Serverless SQL Database. It has no tags
// and no free-text field, so its owner is its name prefix ("<fleet>-").
// Capacity is in whole vCPUs (cpu_min, cpu_max). Serverless SQL
// authenticates with IAM, so masterUsername and the password have nothing
// to set; they are not reported. A deleted database answers 403, not 404.
type postgres struct {
	b   *Backend
	api *sdb.API
}

var _ providers.Driver = (*postgres)(nil)

func init() {
	register(entry{kind: spec.Postgres, new: func(b *Backend) providers.Driver { return &postgres{b: b, api: sdb.NewAPI(b.client)} }})
}

func (d *postgres) all(ctx context.Context, region string, name *string) ([]*sdb.Database, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	dbs, err := allPages(ctx, spec.Postgres, region, func(page int32) ([]*sdb.Database, uint64, error) {
		out, err := d.api.ListDatabases(&sdb.ListDatabasesRequest{Region: scw.Region(region), ProjectID: project, Name: name,
			Page: &page, PageSize: &d.b.opts.PageSize, OrderBy: sdb.ListDatabasesRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Databases, out.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	var live []*sdb.Database
	for _, db := range dbs {
		if db.Status != sdb.DatabaseStatusDeleting {
			live = append(live, db)
		}
	}
	return live, nil
}

func (d *postgres) find(ctx context.Context, region, name string) (*sdb.Database, error) {
	dbs, err := d.all(ctx, region, &name)
	if err != nil {
		return nil, err
	}
	return byName(spec.Postgres, region, name, dbs, func(db *sdb.Database) string { return db.Name })
}

func (d *postgres) resource(region string, db *sdb.Database) providers.Resource {
	fields := map[string]any{"minCapacity": float64(db.CPUMin), "maxCapacity": float64(db.CPUMax)}
	switch {
	case db.Version != nil && db.Version.Name != "":
		fields["engineVersion"] = db.Version.Name
	case db.EngineMajorVersion != nil:
		fields["engineVersion"] = strconv.FormatUint(uint64(*db.EngineMajorVersion), 10)
	}
	r := providers.Resource{Name: db.Name, Region: region, Owner: prefixOwner(d.b.fleetName(), db.Name), Complete: true,
		Fields: fields, Attributes: map[string]string{"id": db.ID}}
	if v, ok := fields["engineVersion"].(string); ok {
		r.Attributes["version"] = v
	}
	// The endpoint is a postgres:// URI; expressions read host:port.
	if u, err := url.Parse(db.Endpoint); err == nil && u.Host != "" {
		r.Attributes["endpoint"] = u.Host
		r.Attributes["port"] = u.Port()
	}
	if db.CreatedAt != nil {
		r.Created = *db.CreatedAt
	}
	return r
}

func (d *postgres) List(ctx context.Context, region string) ([]providers.Resource, error) {
	dbs, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, db := range dbs {
		out = append(out, d.resource(region, db))
	}
	return out, nil
}

func (d *postgres) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	db, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return d.resource(region, db), nil
}

func (d *postgres) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	if err := requirePrefix(spec.Postgres, t); err != nil {
		return providers.Resource{}, err
	}
	if err := noUserTags(spec.Postgres, t); err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodePostgres(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	minCPU, _, err := capacity(providers.PostgresMinCapacity, decl.MinCapacity, decl.HasMinCapacity())
	if err != nil {
		return providers.Resource{}, err
	}
	maxCPU, set, err := capacity(providers.PostgresMaxCapacity, decl.MaxCapacity, decl.HasMaxCapacity())
	if err != nil {
		return providers.Resource{}, err
	}
	if !set {
		maxCPU = 15 // the console's default ceiling
	}
	version := decl.EngineVersion
	db, err := d.api.CreateDatabase(&sdb.CreateDatabaseRequest{Region: scw.Region(t.Region), ProjectID: project, Name: t.Name,
		CPUMin: minCPU, CPUMax: maxCPU, Version: version}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the database to be ready", spec.Postgres, t.Name)
	db, err = d.api.WaitForDatabase(&sdb.WaitForDatabaseRequest{Region: scw.Region(t.Region), DatabaseID: db.ID,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if db.Status != sdb.DatabaseStatusReady {
		return providers.Resource{}, providers.Errorf(providers.Conflict, "scaleway/%s/%s: database is %s", spec.Postgres, t.Name, db.Status)
	}
	return d.resource(t.Region, db), nil
}

func (d *postgres) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	db, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodePostgres(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &sdb.UpdateDatabaseRequest{Region: scw.Region(t.Region), DatabaseID: db.ID}
	for _, f := range changed {
		switch f {
		case providers.PostgresMinCapacity:
			v, _, err := capacity(f, decl.MinCapacity, decl.HasMinCapacity())
			if err != nil {
				return providers.Resource{}, err
			}
			req.CPUMin = &v
		case providers.PostgresMaxCapacity:
			v, _, err := capacity(f, decl.MaxCapacity, decl.HasMaxCapacity())
			if err != nil {
				return providers.Resource{}, err
			}
			req.CPUMax = &v
		case spec.TagsField:
			if err := noUserTags(spec.Postgres, t); err != nil {
				return providers.Resource{}, err
			}
		case providers.PostgresEngineVersion:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "postgres on scaleway cannot change engineVersion in place: Serverless SQL has no major-version upgrade; create a new database")
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "postgres: field %q cannot be updated in place", f)
		}
	}
	if req.CPUMin != nil || req.CPUMax != nil {
		if db, err = d.api.UpdateDatabase(req, scw.WithContext(ctx)); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.resource(t.Region, db), nil
}

// capacity reads a capacity bound: Serverless SQL counts whole vCPUs,
// where Aurora counts half ACUs.
func capacity(field string, v float64, set bool) (uint32, bool, error) {
	n, set, err := targetUint(field, v, set)
	if err != nil {
		return 0, false, providers.Errorf(providers.InvalidArgument,
			"postgres on scaleway needs whole-number %s: Serverless SQL capacity is in whole vCPUs (%v)", field, v)
	}
	return n, set, nil
}

func (d *postgres) Delete(ctx context.Context, t providers.Target) error {
	db, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	if _, err := d.api.DeleteDatabase(&sdb.DeleteDatabaseRequest{Region: scw.Region(t.Region), DatabaseID: db.ID}, scw.WithContext(ctx)); err != nil {
		return err
	}
	// Serverless SQL answers 403 permissions_denied once the database is
	// gone (recorded), so after our own delete a denial means gone.
	return d.b.awaitDeletion(spec.Postgres, t.Name, true, func(timeout, interval *time.Duration) error {
		_, err := d.api.WaitForDatabase(&sdb.WaitForDatabaseRequest{Region: scw.Region(t.Region), DatabaseID: db.ID,
			Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
		return err
	})
}

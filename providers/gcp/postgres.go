package gcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	sqladmin "google.golang.org/api/sqladmin/v1"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// postgres is postgres: a Cloud SQL for PostgreSQL instance in the
// region, of the ENTERPRISE edition on a db-custom-N-<3840·N> machine (N =
// maxCapacity vCPUs with 3.75 GB each), with deletion protection off so
// that infra can delete it. engineVersion "16" is databaseVersion
// POSTGRES_16; the mark and the user tags are settings.userLabels, in the
// insert request itself. The master user is a second step: once the
// instance exists, users.insert makes masterUsername with the password
// (Cloud SQL's own postgres user is separate; a masterUsername of
// postgres gets the password as the insert's rootPassword instead).
// Should the user fail, the instance is deleted again; should the process
// die between the two, Read reports no masterUsername and
// "Users=postgres", and the update that finishes the create (the
// engine's, on the repeated create's AlreadyExists) makes the user.
//
// Every change is a Cloud SQL operation, polled with operations.get until
// DONE, within sqlWait; an operation's error is the call's. Settings
// patches carry the settingsVersion read just before them. Cloud SQL
// keeps a deleted instance's name for up to a week, so a replacement
// under the same name fails until then (docs/providers.md).
type postgres struct {
	b   *Backend
	svc lazy[*sqladmin.Service]
	// minDelay and maxDelay pace the polls of an operation (tests lower
	// them): a create takes minutes, a patch tens of seconds.
	minDelay, maxDelay time.Duration
}

var (
	_ providers.Driver       = (*postgres)(nil)
	_ providers.Releaser     = (*postgres)(nil)
	_ providers.ListedReader = (*postgres)(nil)
)

func init() {
	register(entry{kind: spec.Postgres, new: func(b *Backend) providers.Driver {
		return &postgres{b: b, minDelay: 2 * time.Second, maxDelay: 15 * time.Second}
	}})
}

const (
	// sqlWait bounds each wait for an operation.
	sqlWait = time.Hour
	// pgDefaultUser is the user Cloud SQL makes in every PostgreSQL
	// instance.
	pgDefaultUser = "postgres"
	pgPort        = "5432"
	// sqlMBPerVCPU is the memory of each vCPU of the machine infra asks
	// for: 3.75 GB, which every custom machine allows.
	sqlMBPerVCPU = 3840
)

// client is the Cloud SQL Admin client, made once, and the project.
func (d *postgres) client(ctx context.Context) (*sqladmin.Service, string, error) {
	project, err := d.b.scope(ctx)
	if err != nil {
		return nil, "", err
	}
	svc, err := d.svc.get("Cloud SQL Admin", func() (*sqladmin.Service, error) {
		return restService(ctx, d.b, "sqladmin", sqladmin.NewService)
	})
	return svc, project, err
}

var (
	pgDatabaseVersionRE = regexp.MustCompile(`^POSTGRES_([0-9]+)$`)
	pgInstalledRE       = regexp.MustCompile(`^POSTGRES_([0-9]+)_([0-9]+)$`)
	pgMajorRE           = regexp.MustCompile(`^[0-9]+$`)
	customTierRE        = regexp.MustCompile(`^db-custom-([0-9]+)-([0-9]+)$`)
)

// pgMajor is a databaseVersion's major, "16" for POSTGRES_16; "" for
// another engine.
func pgMajor(databaseVersion string) string {
	if m := pgDatabaseVersionRE.FindStringSubmatch(databaseVersion); m != nil {
		return m[1]
	}
	return ""
}

func isPostgres(inst *sqladmin.DatabaseInstance) bool {
	return strings.HasPrefix(inst.DatabaseVersion, "POSTGRES_")
}

// pgVersion is what the instance runs, as the other clouds write it:
// "16.4" from POSTGRES_16_4, else the major.
func pgVersion(inst *sqladmin.DatabaseInstance) string {
	if m := pgInstalledRE.FindStringSubmatch(inst.DatabaseInstalledVersion); m != nil {
		return m[1] + "." + m[2]
	}
	return pgMajor(inst.DatabaseVersion)
}

// databaseVersion is the declared engineVersion as Cloud SQL names it.
// Cloud SQL takes a major alone and runs its latest minor.
func databaseVersion(name string, decl providers.PostgresInput) (string, error) {
	v := decl.EngineVersion
	if !decl.HasEngineVersion() || v == "" {
		v = "16"
	}
	if !pgMajorRE.MatchString(v) {
		return "", providers.Errorf(providers.InvalidArgument, "gcp/postgres/%s: Cloud SQL takes a major engineVersion such as \"16\", not %q", name, v)
	}
	return "POSTGRES_" + v, nil
}

// sqlTier is the machine of the declared capacity. A custom machine has 1
// or an even number of vCPUs (check holds them to 1–96).
func sqlTier(name string, fields map[string]any) (string, error) {
	n := spec.GCPSQLVCPUs(fields)
	if n != 1 && (n%2 != 0 || n > spec.GCPMaxSQLVCPUs) {
		return "", providers.Errorf(providers.InvalidArgument,
			"gcp/postgres/%s: a Cloud SQL custom machine has 1 or an even number of vCPUs up to %d, not %d", name, spec.GCPMaxSQLVCPUs, n)
	}
	return fmt.Sprintf("db-custom-%d-%d", n, sqlMBPerVCPU*n), nil
}

func sqlInstanceName(project, name string) string {
	return "projects/" + project + "/instances/" + name
}

// instanceResource reports an instance but for its master user, which
// only its users tell (withUsers): a listing carries none.
func instanceResource(project, region string, inst *sqladmin.DatabaseInstance) providers.Resource {
	var l map[string]string
	var tier string
	if s := inst.Settings; s != nil {
		l, tier = s.UserLabels, s.Tier
	}
	tags, owner := reported(l)
	r := providers.Resource{Name: inst.Name, Region: region, Owner: owner,
		Fields:     map[string]any{spec.TagsField: tags, providers.PostgresEngineVersion: pgMajor(inst.DatabaseVersion)},
		Attributes: map[string]string{"arn": sqlInstanceName(project, inst.Name), "port": pgPort, "version": pgVersion(inst)}}
	if m := customTierRE.FindStringSubmatch(tier); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		// Cloud SQL does not scale: the machine is both bounds.
		r.Fields[providers.PostgresMinCapacity], r.Fields[providers.PostgresMaxCapacity] = n, n
		if m[2] != strconv.Itoa(sqlMBPerVCPU*int(n)) {
			r.Unmodelled = append(r.Unmodelled, "Tier="+tier)
		}
	} else if tier != "" {
		r.Unmodelled = append(r.Unmodelled, "Tier="+tier)
	}
	for _, ip := range inst.IpAddresses {
		if ip.Type == "PRIMARY" {
			r.Attributes["endpoint"] = ip.IpAddress + ":" + pgPort
		}
	}
	if inst.State != "RUNNABLE" {
		r.Unmodelled = append(r.Unmodelled, "State="+inst.State)
	}
	if t, err := time.Parse(time.RFC3339, inst.CreateTime); err == nil {
		r.Created = t
	}
	return r
}

// withUsers reports the master user: the one built-in user besides
// postgres. None (a create that stopped before the user) or several is
// not reported, and never drift.
func withUsers(r providers.Resource, users []*sqladmin.User) providers.Resource {
	var names []string
	for _, u := range users {
		if (u.Type == "" || u.Type == "BUILT_IN") && u.Name != pgDefaultUser {
			names = append(names, u.Name)
		}
	}
	switch len(names) {
	case 0:
		// Cloud SQL's own user alone: a masterUsername of postgres, or
		// a create that stopped before its user.
		r.Unmodelled = append(r.Unmodelled, "Users="+pgDefaultUser)
	case 1:
		r.Fields[providers.PostgresMasterUsername] = names[0]
	default:
		slices.Sort(names)
		r.Unmodelled = append(r.Unmodelled, "Users="+strings.Join(names, ","))
	}
	r.Complete = true
	return r
}

func (d *postgres) List(ctx context.Context, region string) ([]providers.Resource, error) {
	svc, project, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	pages := 0
	err = svc.Instances.List(project).MaxResults(int64(d.b.opts.PageSize)).Pages(ctx, func(page *sqladmin.InstancesListResponse) error {
		if pages++; pages > listPageLimit {
			return errors.New("gcp/postgres: listing passed the page budget; refusing to report a prefix of it")
		}
		for _, inst := range page.Items {
			if isPostgres(inst) && inst.Region == region && inst.State != "PENDING_DELETE" {
				out = append(out, instanceResource(project, region, inst))
			}
		}
		return nil
	})
	return out, err
}

func (d *postgres) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	svc, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	inst, err := d.get(ctx, svc, project, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	users, err := svc.Users.List(project, name).Context(ctx).Do()
	if err != nil {
		return providers.Resource{}, err
	}
	return withUsers(instanceResource(project, region, inst), users.Items), nil
}

// ReadListed finishes a listed instance with its users, one call.
func (d *postgres) ReadListed(ctx context.Context, listed providers.Resource, _ map[string]string) (providers.Resource, error) {
	svc, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	users, err := svc.Users.List(project, listed.Name).Context(ctx).Do()
	if err != nil {
		return providers.Resource{}, err
	}
	r := listed
	r.Fields = spec.CloneMap(listed.Fields)
	r.Unmodelled = slices.Clone(listed.Unmodelled)
	return withUsers(r, users.Items), nil
}

// describe reads the instance, which must be PostgreSQL in the region,
// in any state.
func (d *postgres) describe(ctx context.Context, svc *sqladmin.Service, project, region, name string) (*sqladmin.DatabaseInstance, error) {
	inst, err := svc.Instances.Get(project, name).Context(ctx).Do()
	if err != nil {
		return nil, err
	}
	if !isPostgres(inst) {
		return nil, providers.Errorf(providers.NotFound, "gcp/postgres/%s: the instance runs %s, not PostgreSQL", name, inst.DatabaseVersion)
	}
	if inst.Region != region {
		return nil, providers.Errorf(providers.NotFound, "gcp/postgres/%s: the instance is in %s, not %s", name, inst.Region, region)
	}
	return inst, nil
}

// get is describe of an instance that is not being deleted: one that is
// reads as absent, as nothing can change it any more.
func (d *postgres) get(ctx context.Context, svc *sqladmin.Service, project, region, name string) (*sqladmin.DatabaseInstance, error) {
	inst, err := d.describe(ctx, svc, project, region, name)
	if err == nil && inst.State == "PENDING_DELETE" {
		return nil, providers.Errorf(providers.NotFound, "gcp/postgres/%s: the instance is being deleted", name)
	}
	return inst, err
}

func (d *postgres) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	svc, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodePostgres(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	inst, err := insertRequest(t, decl)
	if err != nil {
		return providers.Resource{}, err
	}
	op, err := svc.Instances.Insert(project, inst).Context(ctx).Do()
	if err != nil {
		return providers.Resource{}, d.insertError(ctx, svc, project, t.Name, err)
	}
	if err := d.wait(ctx, svc, project, t.Name, "create", op); err != nil {
		// A create that failed leaves the instance FAILED, under the
		// mark: the next plan finds it; deleting it here would keep its
		// name from being used again for a week.
		return providers.Resource{}, err
	}
	if decl.MasterUsername != pgDefaultUser {
		if err := d.addUser(ctx, svc, project, t.Name, decl); err != nil {
			// An instance without its master user is worth nothing, and
			// no update can add one (the user forces replacement and the
			// password is create only): take the instance back.
			return providers.Resource{}, d.rollback(ctx, svc, project, t.Name, err)
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// insertRequest is the instance a create asks for, checked first.
func insertRequest(t providers.Target, decl providers.PostgresInput) (*sqladmin.DatabaseInstance, error) {
	if decl.MasterUsername == "" {
		return nil, providers.Errorf(providers.InvalidArgument, "gcp/postgres/%s: masterUsername is required", t.Name)
	}
	password := decl.MasterPasswordSecret.Reveal()
	if password == "" {
		return nil, providers.Errorf(providers.InvalidArgument, "gcp/postgres/%s: the master password (masterPasswordSecret) is required at create", t.Name)
	}
	version, err := databaseVersion(t.Name, decl)
	if err != nil {
		return nil, err
	}
	tier, err := sqlTier(t.Name, t.Fields)
	if err != nil {
		return nil, err
	}
	l, err := labels(t)
	if err != nil {
		return nil, err
	}
	inst := &sqladmin.DatabaseInstance{Name: t.Name, Region: t.Region, DatabaseVersion: version,
		// ENTERPRISE, because PostgreSQL 16 and later default to
		// ENTERPRISE_PLUS, which has no custom machines. Deletion
		// protection off (sent: false is omitted otherwise), so that
		// infra can delete what it made.
		Settings: &sqladmin.Settings{Tier: tier, Edition: "ENTERPRISE", UserLabels: l,
			ForceSendFields: []string{"DeletionProtectionEnabled"}}}
	if decl.MasterUsername == pgDefaultUser {
		inst.RootPassword = password
	}
	return inst, nil
}

// insertError explains a refused insert: a 409 for a name no instance
// holds is a name Cloud SQL still keeps for an instance deleted within
// the week.
func (d *postgres) insertError(ctx context.Context, svc *sqladmin.Service, project, name string, err error) error {
	var g *googleapi.Error
	if !errors.As(err, &g) || g.Code != http.StatusConflict {
		return err
	}
	if _, gerr := svc.Instances.Get(project, name).Context(ctx).Do(); errorCode(gerr) == providers.NotFound {
		return fmt.Errorf("gcp/postgres/%s: Cloud SQL keeps the name of a deleted instance for up to a week; "+
			"wait, or declare another name: %w", name, err)
	}
	return err
}

// addUser makes the master user with its password and waits for it.
func (d *postgres) addUser(ctx context.Context, svc *sqladmin.Service, project, name string, decl providers.PostgresInput) error {
	op, err := svc.Users.Insert(project, name, &sqladmin.User{Name: decl.MasterUsername, Password: decl.MasterPasswordSecret.Reveal()}).Context(ctx).Do()
	if err != nil {
		return fmt.Errorf("gcp/postgres/%s: create the master user %s: %w", name, decl.MasterUsername, err)
	}
	return d.wait(ctx, svc, project, name, "create the master user "+decl.MasterUsername, op)
}

// rollback deletes an instance a create made but could not finish, and
// returns the create's error, with the rollback's if it failed too.
func (d *postgres) rollback(ctx context.Context, svc *sqladmin.Service, project, name string, cause error) error {
	ctx = context.WithoutCancel(ctx)
	op, err := svc.Instances.Delete(project, name).Context(ctx).Do()
	if err == nil {
		err = d.wait(ctx, svc, project, name, "delete the unfinished instance", op)
	}
	if err != nil {
		return fmt.Errorf("%w; the instance, made without its master user, could not be deleted again: %v", cause, err)
	}
	return cause
}

func (d *postgres) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	svc, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	inst, err := d.get(ctx, svc, project, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	settings, version, err := d.changes(t, inst, changed)
	if err != nil {
		return providers.Resource{}, err
	}
	if err := d.finishUser(ctx, svc, project, t); err != nil {
		return providers.Resource{}, err
	}
	if settings != nil {
		if err := d.patch(ctx, svc, project, t.Name, "update", &sqladmin.DatabaseInstance{Settings: settings}); err != nil {
			return providers.Resource{}, err
		}
	}
	if version != "" {
		// A later major is an in-place upgrade (pg_upgrade), a patch of
		// databaseVersion alone; it keeps the name, address and data.
		if err := d.patch(ctx, svc, project, t.Name, "upgrade to "+version, &sqladmin.DatabaseInstance{DatabaseVersion: version}); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// finishUser makes the master user of an instance that has none, which
// a create that stopped after the instance leaves: the engine finishes
// such a create with an update of the create's target, password
// included. An instance with a user of its own is left as it is.
func (d *postgres) finishUser(ctx context.Context, svc *sqladmin.Service, project string, t providers.Target) error {
	decl, err := providers.DecodePostgres(t.Fields)
	if err != nil || decl.MasterUsername == "" || decl.MasterUsername == pgDefaultUser || decl.MasterPasswordSecret.Reveal() == "" {
		return err
	}
	users, err := svc.Users.List(project, t.Name).Context(ctx).Do()
	if err != nil {
		return err
	}
	for _, u := range users.Items {
		if u.Name != pgDefaultUser && (u.Type == "" || u.Type == "BUILT_IN") {
			return nil
		}
	}
	return d.addUser(ctx, svc, project, t.Name, decl)
}

// changes are the settings patch (nil for none) and the databaseVersion
// to upgrade to ("" for none) that the changed fields ask for.
func (d *postgres) changes(t providers.Target, inst *sqladmin.DatabaseInstance, changed []string) (*sqladmin.Settings, string, error) {
	decl, err := providers.DecodePostgres(t.Fields)
	if err != nil {
		return nil, "", err
	}
	cur := inst.Settings
	if cur == nil {
		cur = &sqladmin.Settings{}
	}
	patch := &sqladmin.Settings{SettingsVersion: cur.SettingsVersion}
	dirty, version := false, ""
	for _, f := range changed {
		switch f {
		case providers.PostgresMinCapacity, providers.PostgresMaxCapacity:
			tier, err := sqlTier(t.Name, t.Fields)
			if err != nil {
				return nil, "", err
			}
			if tier != cur.Tier {
				patch.Tier, dirty = tier, true
			}
		case spec.TagsField:
			if err := relabelSQL(patch, cur.UserLabels, t); err != nil {
				return nil, "", err
			}
			dirty = true
		case providers.PostgresEngineVersion:
			if version, err = upgradeTo(t.Name, decl, inst); err != nil {
				return nil, "", err
			}
		case providers.PostgresMasterUsername:
			return nil, "", providers.Errorf(providers.InvalidArgument, "gcp/postgres/%s: masterUsername forces replacement", t.Name)
		case providers.PostgresMasterPasswordSecret:
			// Never compared: the password is set at create only.
		default:
			return nil, "", providers.Errorf(providers.InvalidArgument, "gcp/postgres/%s: field %q cannot be updated in place", t.Name, f)
		}
	}
	if !dirty {
		patch = nil
	}
	return patch, version, nil
}

// relabelSQL makes patch set the target's labels: a patch merges
// userLabels key by key, so every label to go is sent as null.
func relabelSQL(patch *sqladmin.Settings, cur map[string]string, t providers.Target) error {
	l, err := labels(t)
	if err != nil {
		return err
	}
	patch.UserLabels = l
	patch.ForceSendFields = append(patch.ForceSendFields, "UserLabels")
	for _, k := range slices.Sorted(maps.Keys(cur)) {
		if _, keep := l[k]; !keep {
			patch.NullFields = append(patch.NullFields, "UserLabels."+k)
		}
	}
	return nil
}

// upgradeTo is the databaseVersion a changed engineVersion moves to: ""
// when it names the major that runs; a lower major is refused, as Cloud
// SQL cannot downgrade in place.
func upgradeTo(name string, decl providers.PostgresInput, inst *sqladmin.DatabaseInstance) (string, error) {
	want, err := databaseVersion(name, decl)
	if err != nil || want == inst.DatabaseVersion {
		return "", err
	}
	from, _ := strconv.Atoi(pgMajor(inst.DatabaseVersion))
	to, _ := strconv.Atoi(pgMajor(want))
	if to < from {
		return "", providers.Errorf(providers.InvalidArgument,
			"gcp/postgres/%s: Cloud SQL cannot downgrade %s to %s in place; replace the instance under another name", name, inst.DatabaseVersion, want)
	}
	return want, nil
}

// patch applies a patch and waits for it. A 409 there says another
// operation runs on the instance, never that it exists: a conflict.
func (d *postgres) patch(ctx context.Context, svc *sqladmin.Service, project, name, what string, inst *sqladmin.DatabaseInstance) error {
	op, err := svc.Instances.Patch(project, name, inst).Context(ctx).Do()
	if err != nil {
		return busy(spec.Postgres, name, err)
	}
	return d.wait(ctx, svc, project, name, what, op)
}

// busy classifies a 409 from a change of an existing resource as a
// conflict (another operation is running on it), keeping the cause.
func busy(kind spec.Kind, name string, err error) error {
	var g *googleapi.Error
	if errors.As(err, &g) && g.Code == http.StatusConflict {
		return fmt.Errorf("gcp/%s/%s: %w: %w", kind, name, providers.Errorf(providers.Conflict, "another change is under way"), err)
	}
	return err
}

// wait polls the operation until it is DONE, within sqlWait, and returns
// its error as one naming the instance and what was being done. A poll
// that fails for a passing reason (throttled, a 5xx) is tried again.
func (d *postgres) wait(ctx context.Context, svc *sqladmin.Service, project, name, what string, op *sqladmin.Operation) error {
	ctx, cancel := context.WithTimeout(ctx, sqlWait)
	defer cancel()
	delay := d.minDelay
	for op.Status != "DONE" {
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("gcp/postgres/%s: %s: operation %s is not done: %w", name, what, op.Name, ctx.Err())
		case <-timer.C:
		}
		delay = min(2*delay, d.maxDelay)
		next, err := svc.Operations.Get(project, op.Name).Context(ctx).Do()
		var g *googleapi.Error
		switch {
		case err == nil:
			op = next
		case errors.As(err, &g) && (g.Code == http.StatusTooManyRequests || g.Code >= 500):
		default:
			return fmt.Errorf("gcp/postgres/%s: %s: read operation %s: %w", name, what, op.Name, err)
		}
	}
	if op.Error == nil || len(op.Error.Errors) == 0 {
		return nil
	}
	var msgs []string
	for _, e := range op.Error.Errors {
		msgs = append(msgs, strings.TrimPrefix(e.Code+": "+e.Message, ": "))
	}
	return fmt.Errorf("gcp/postgres/%s: %s failed (operation %s): %s", name, what, op.Name, strings.Join(msgs, "; "))
}

func (d *postgres) Delete(ctx context.Context, t providers.Target) error {
	svc, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	inst, err := d.describe(ctx, svc, project, t.Region, t.Name)
	if err != nil {
		return err
	}
	if inst.State == "PENDING_DELETE" {
		return nil // on its way
	}
	if inst.Settings != nil && inst.Settings.DeletionProtectionEnabled {
		return providers.Errorf(providers.Conflict, "gcp/postgres/%s: the instance has deletion protection on; "+
			"turn it off (settings.deletionProtectionEnabled) for infra to delete it", t.Name)
	}
	op, err := svc.Instances.Delete(project, t.Name).Context(ctx).Do()
	if err != nil {
		return busy(spec.Postgres, t.Name, err)
	}
	return d.wait(ctx, svc, project, t.Name, "delete", op)
}

// Release removes this fleet's mark and keeps every other label.
func (d *postgres) Release(ctx context.Context, region, name, owner string) error {
	svc, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	inst, err := d.get(ctx, svc, project, region, name)
	if err != nil {
		return err
	}
	if inst.Settings == nil || inst.Settings.UserLabels[spec.OwnershipTagKey] != owner {
		return nil
	}
	patch := &sqladmin.Settings{SettingsVersion: inst.Settings.SettingsVersion,
		ForceSendFields: []string{"UserLabels"}, NullFields: []string{"UserLabels." + spec.OwnershipTagKey}}
	return d.patch(ctx, svc, project, name, "release", &sqladmin.DatabaseInstance{Settings: patch})
}

package gcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// fastEnv is newEnv with operations that finish quickly: Cloud SQL's are
// polled every few milliseconds (each is still pending at its first
// answer, so every wait polls), Cloud Run's are done in the answer that
// starts them (op.Wait's first pause is up to a second; the polling path
// has its own test).
func fastEnv(t testing.TB) *env {
	t.Helper()
	e := newEnv(t)
	e.rest.SetOperationPolls("run", 0)
	d, _ := e.backend.Driver(spec.Postgres)
	pg := d.(*postgres)
	pg.minDelay, pg.maxDelay = time.Millisecond, 5*time.Millisecond
	return e
}

func pgCreate() map[string]any {
	return map[string]any{"masterUsername": "app", "masterPasswordSecret": spec.NewSensitive("s3cr3t-pw-0"),
		"maxCapacity": 2.0, "minCapacity": 2.0}
}

const testImage = "europe-west9-docker.pkg.dev/" + testProject + "/apps/hello"

// TestConformancePostgresCompute runs the shared suite on Cloud SQL and
// Cloud Run, both on the schema-checked fake.
func TestConformancePostgresCompute(t *testing.T) {
	e := fastEnv(t)
	e.backend.opts.PageSize = 2
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend: e.backend, Region: testRegion, OtherRegion: otherRegion, Owner: fleet, Reset: e.reset, Labels: true,
		Cases: []drivertest.Case{
			{Kind: spec.Postgres, Create: pgCreate(), PageSize: 2,
				Updates: []map[string]any{{"maxCapacity": 4.0, "minCapacity": 4.0}, {"engineVersion": "17"}},
				// Cloud SQL keeps a deleted instance's name for a week; the
				// fake does not by default, so the replacement is proven
				// here and its refusal in TestPostgresNameKeptAfterDelete.
				Replaces: []map[string]any{{"masterUsername": "owner"}},
				OddNames: []string{"a", "db-0-with-digits", strings.Repeat("p", 63)}},
			{Kind: spec.Compute, Create: map[string]any{"image": testImage + ":1"}, PageSize: 2,
				Updates: []map[string]any{{"image": testImage + ":2"}, {"memoryMb": 512.0, "timeoutSec": 120.0},
					{"env": map[string]any{"MODE": "test", "LEVEL": "debug"}}, {"env": map[string]any{"MODE": "prod"}}},
				Untested: map[string]string{
					"executionRole": "AWS only (Lambda's execution role); check keeps it off GCP",
					"namespace":     "Scaleway only (the containers namespace); check keeps it off GCP",
				},
				OddNames: []string{"a", "svc-0-with-digits", strings.Repeat("c", 49)}},
		},
	})
}

// TestAFailedOperationNamesTheResource: an operation that ends in error
// is the call's error, naming the resource and carrying Google's words.
func TestAFailedOperationNamesTheResource(t *testing.T) {
	e := fastEnv(t)
	ctx := t.Context()
	pg, _ := e.backend.Driver(spec.Postgres)
	tg := providers.Target{Name: "db-fails", Region: testRegion, Owner: fleet, Fields: pgCreate()}
	if _, err := pg.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	e.rest.FailNextOperation("sql.instances.patch", "the machine type is not available in the zone")
	tg.Fields["maxCapacity"] = 8.0
	_, err := pg.Update(ctx, tg, []string{"maxCapacity"})
	if err == nil || !strings.Contains(err.Error(), "gcp/postgres/db-fails: update failed") || !strings.Contains(err.Error(), "not available in the zone") {
		t.Fatalf("update with a failing operation: %v", err)
	}
	if r, err := pg.Read(ctx, testRegion, "db-fails"); err != nil || r.Fields["maxCapacity"] != 2.0 {
		t.Fatalf("a failed patch changed the instance: %v, %v", r.Fields, err)
	}

	run, _ := e.backend.Driver(spec.Compute)
	e.rest.FailNextOperation("run.projects.locations.services.create", "the container did not listen on PORT=8080")
	ct := providers.Target{Name: "svc-fails", Region: testRegion, Owner: fleet, Fields: map[string]any{"image": testImage + ":1"}}
	_, err = run.Create(ctx, ct)
	if err == nil || !strings.Contains(err.Error(), "gcp/compute/svc-fails: create") || !strings.Contains(err.Error(), "did not listen") {
		t.Fatalf("create with a failing operation: %v", err)
	}
	r, err := run.Read(ctx, testRegion, "svc-fails")
	if err != nil || r.Owner != fleet || !strings.Contains(strings.Join(r.Unmodelled, " "), "Ready=CONDITION_FAILED") {
		t.Fatalf("the failed service, kept under the mark: %+v, %v", r, err)
	}
}

// TestAFailedMasterUserLeavesNoInstance: should the user insert fail, the
// create deletes the instance again, so that a retry makes it whole.
func TestAFailedMasterUserLeavesNoInstance(t *testing.T) {
	e := fastEnv(t)
	ctx := t.Context()
	pg, _ := e.backend.Driver(spec.Postgres)
	e.rest.FailNextOperation("sql.users.insert", "the password does not meet the policy")
	tg := providers.Target{Name: "db-nouser", Region: testRegion, Owner: fleet, Fields: pgCreate()}
	_, err := pg.Create(ctx, tg)
	if err == nil || !strings.Contains(err.Error(), "gcp/postgres/db-nouser: create the master user app failed") {
		t.Fatalf("create: %v", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("the error carries the password: %v", err)
	}
	if _, err := pg.Read(ctx, testRegion, "db-nouser"); e.backend.ErrorCode(err) != providers.NotFound {
		t.Fatalf("read after the failed create: %v, want not found", err)
	}
	rs, err := pg.List(ctx, testRegion)
	if err != nil || len(rs) != 0 {
		t.Fatalf("listed %v, %v", drivertest.Names(rs), err)
	}
	if _, err := pg.Create(ctx, tg); err != nil {
		t.Fatalf("the retry: %v", err)
	}
}

// TestPostgresNameKeptAfterDelete: Cloud SQL refuses, for a week, the
// name of an instance deleted; the create says so.
func TestPostgresNameKeptAfterDelete(t *testing.T) {
	e := fastEnv(t)
	e.rest.ReserveDeletedNames(true)
	ctx := t.Context()
	pg, _ := e.backend.Driver(spec.Postgres)
	tg := providers.Target{Name: "db-again", Region: testRegion, Owner: fleet, Fields: pgCreate()}
	if _, err := pg.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if err := pg.Delete(ctx, tg); err != nil {
		t.Fatal(err)
	}
	_, err := pg.Create(ctx, tg)
	if e.backend.ErrorCode(err) != providers.AlreadyExists || !strings.Contains(err.Error(), "for up to a week") {
		t.Fatalf("create of a kept name: %v (%s)", err, e.backend.ErrorCode(err))
	}
}

// TestPostgresMapping: what the driver sends and reports beyond the
// suite: the machine, the edition, the attributes, the finished listing,
// and the refusals made before any call.
func TestPostgresMapping(t *testing.T) {
	e := fastEnv(t)
	ctx := t.Context()
	d, _ := e.backend.Driver(spec.Postgres)
	tg := providers.Target{Name: "db-map", Region: testRegion, Owner: fleet, Fields: pgCreate()}
	r, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Attributes["arn"] != "projects/"+testProject+"/instances/db-map" || r.Attributes["port"] != "5432" ||
		!strings.HasSuffix(r.Attributes["endpoint"], ":5432") || r.Attributes["version"] != "16.4" {
		t.Fatalf("attributes %v", r.Attributes)
	}
	var insert string
	for _, req := range e.rest.Requests() {
		if req.Method == "POST" && req.Path == "/v1/projects/"+testProject+"/instances" {
			insert = req.Body
		}
	}
	for _, want := range []string{`"tier":"db-custom-2-7680"`, `"edition":"ENTERPRISE"`, `"deletionProtectionEnabled":false`,
		`"managed-by-infra":"` + fleet + `"`, `"databaseVersion":"POSTGRES_16"`} {
		if !strings.Contains(insert, want) {
			t.Errorf("the insert %s lacks %s", insert, want)
		}
	}
	listed, err := d.List(ctx, testRegion)
	if err != nil || len(listed) != 1 || listed[0].Complete {
		t.Fatalf("listed %+v, %v", listed, err)
	}
	full, err := d.(providers.ListedReader).ReadListed(ctx, listed[0], nil)
	if err != nil || !full.Complete || full.Fields["masterUsername"] != "app" || full.Fields["maxCapacity"] != 2.0 {
		t.Fatalf("finished %+v, %v", full, err)
	}
	refusals(t, e, d, tg)
}

func refusals(t *testing.T, e *env, d providers.Driver, tg providers.Target) {
	t.Helper()
	for _, tc := range []struct {
		field string
		value any
		want  string
	}{
		{"maxCapacity", 3.0, "1 or an even number of vCPUs"},
		{"engineVersion", "16.4", "a major engineVersion"},
	} {
		bad := tg
		bad.Name = "db-refused"
		bad.Fields = spec.CloneMap(tg.Fields)
		bad.Fields[tc.field] = tc.value
		if _, err := d.Create(t.Context(), bad); e.backend.ErrorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%v: %v", tc.field, tc.value, err)
		}
	}
	tg.Fields["engineVersion"] = "15"
	if _, err := d.Update(t.Context(), tg, []string{"engineVersion"}); e.backend.ErrorCode(err) != providers.InvalidArgument ||
		!strings.Contains(err.Error(), "cannot downgrade") {
		t.Errorf("downgrade: %v", err)
	}
}

// TestComputeWaitsThroughPolls: with Cloud Run's operation pending at
// first, op.Wait polls operations.get and decodes the Service from the
// Any response.
func TestComputeWaitsThroughPolls(t *testing.T) {
	e := fastEnv(t)
	e.rest.SetOperationPolls("run", 1)
	d, _ := e.backend.Driver(spec.Compute)
	r, err := d.Create(context.Background(), providers.Target{Name: "svc-polled", Region: testRegion, Owner: fleet,
		Fields: map[string]any{"image": testImage + ":1", "memoryMb": 256.0, "timeoutSec": 30.0, "env": map[string]any{"A": "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Attributes["url"], "https://svc-polled-") || r.Attributes["arn"] != runServiceName(testProject, testRegion, "svc-polled") ||
		r.Fields["memoryMb"] != 256.0 || r.Fields["timeoutSec"] != 30.0 {
		t.Fatalf("created %+v", r)
	}
	polls := 0
	for _, req := range e.rest.Requests() {
		if req.Method == "GET" && strings.Contains(req.Path, "/operations/") {
			polls++
		}
	}
	if polls != 1 {
		t.Fatalf("operations.get called %d times, want 1", polls)
	}
}

// TestAnInterruptedPostgresCreateIsFinished: an instance a create made
// before it stopped, without its master user, gets the user from the
// update that finishes it, as the engine finishes a create it finds done.
func TestAnInterruptedPostgresCreateIsFinished(t *testing.T) {
	e := fastEnv(t)
	ctx := t.Context()
	d, _ := e.backend.Driver(spec.Postgres)
	pg := d.(*postgres)
	tg := providers.Target{Name: "db-half", Region: testRegion, Owner: fleet, Fields: pgCreate()}
	svc, project, err := pg.client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decl, _ := providers.DecodePostgres(tg.Fields)
	inst, err := insertRequest(tg, decl)
	if err != nil {
		t.Fatal(err)
	}
	op, err := svc.Instances.Insert(project, inst).Do()
	if err == nil {
		err = pg.wait(ctx, svc, project, tg.Name, "create", op)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r, err := d.Read(ctx, testRegion, tg.Name); err != nil || r.Fields["masterUsername"] != nil ||
		!strings.Contains(strings.Join(r.Unmodelled, " "), "Users=postgres") {
		t.Fatalf("the half-made instance: %+v, %v", r, err)
	}
	_, err = d.Create(ctx, tg)
	if e.backend.ErrorCode(err) != providers.AlreadyExists {
		t.Fatalf("a repeated create: %v", err)
	}
	info, _ := spec.Lookup(spec.Postgres)
	r, err := d.Update(ctx, tg, info.Finishing(spec.GCP, tg.Fields))
	if err != nil || r.Fields["masterUsername"] != "app" {
		t.Fatalf("finished: %+v, %v", r, err)
	}
}

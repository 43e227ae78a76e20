package gcpfake

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1"
)

// sqlClient is the real google.golang.org/api client, authenticated with
// a key the fake issued.
func sqlClient(t *testing.T, srv *Server, project string) *sqladmin.Service {
	t.Helper()
	key := srv.ServiceAccountKey(t, project, "deployer@"+project+".iam.gserviceaccount.com")
	svc, err := sqladmin.NewService(context.Background(),
		option.WithEndpoint(srv.URL()+"/"), option.WithAuthCredentialsFile(option.ServiceAccount, key))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func pgInstance(name string) *sqladmin.DatabaseInstance {
	return &sqladmin.DatabaseInstance{Name: name, DatabaseVersion: "POSTGRES_16", Region: "europe-west9",
		Settings: &sqladmin.Settings{Tier: "db-custom-2-7680", Edition: "ENTERPRISE",
			UserLabels: map[string]string{"team": "a", "env": "dev"}}}
}

// sqlDone polls an operation until it is done, as a driver would, and
// returns it.
func sqlDone(t *testing.T, svc *sqladmin.Service, op *sqladmin.Operation) *sqladmin.Operation {
	t.Helper()
	for range 10 {
		if op.Status == "DONE" {
			return op
		}
		var err error
		if op, err = svc.Operations.Get("p", op.Name).Do(); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("operation %s never done", op.Name)
	return nil
}

func wantCode(t *testing.T, err error, code int, want string) {
	t.Helper()
	var g *googleapi.Error
	if !errors.As(err, &g) || g.Code != code || !strings.Contains(g.Message, want) {
		t.Fatalf("error %v; want HTTP %d with %q", err, code, want)
	}
}

// TestCloudSQLLifecycle: insert, operations, users, patch, upgrade,
// list, delete, through the real client.
func TestCloudSQLLifecycle(t *testing.T) {
	srv := New(t, Options{Projects: []string{"p"}})
	svc := sqlClient(t, srv, "p")
	op, err := svc.Instances.Insert("p", pgInstance("db1")).Do()
	if err != nil {
		t.Fatal(err)
	}
	if op.Status != "PENDING" || op.OperationType != "CREATE" || op.TargetId != "db1" {
		t.Fatalf("insert answered %+v", op)
	}
	if inst, err := svc.Instances.Get("p", "db1").Do(); err != nil || inst.State != "PENDING_CREATE" || len(inst.IpAddresses) != 0 {
		t.Fatalf("before the operation is done: %+v, %v", inst, err)
	}
	_, err = svc.Users.Insert("p", "db1", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	wantCode(t, err, http.StatusConflict, "another operation")
	sqlDone(t, svc, op)
	inst, err := svc.Instances.Get("p", "db1").Do()
	if err != nil || inst.State != "RUNNABLE" || len(inst.IpAddresses) != 1 || inst.IpAddresses[0].Type != "PRIMARY" ||
		inst.DatabaseInstalledVersion != "POSTGRES_16_4" || inst.Settings.SettingsVersion != 1 || inst.ConnectionName != "p:europe-west9:db1" {
		t.Fatalf("after: %+v, %v", inst, err)
	}
	usersAndPatch(t, svc, inst)
	listAndDelete(t, svc)
}

func usersAndPatch(t *testing.T, svc *sqladmin.Service, inst *sqladmin.DatabaseInstance) {
	t.Helper()
	op, err := svc.Users.Insert("p", "db1", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	if err != nil {
		t.Fatal(err)
	}
	sqlDone(t, svc, op)
	users, err := svc.Users.List("p", "db1").Do()
	if err != nil || len(users.Items) != 2 || users.Items[0].Name != "app" || users.Items[1].Name != "postgres" || users.Items[0].Password != "" {
		t.Fatalf("users %+v, %v", users, err)
	}
	patch := &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-4-15360", SettingsVersion: inst.Settings.SettingsVersion,
		UserLabels: map[string]string{"team": "b"}, NullFields: []string{"UserLabels.env"}}}
	if op, err = svc.Instances.Patch("p", "db1", patch).Do(); err != nil {
		t.Fatal(err)
	}
	sqlDone(t, svc, op)
	got, err := svc.Instances.Get("p", "db1").Do()
	if err != nil || got.Settings.Tier != "db-custom-4-15360" || len(got.Settings.UserLabels) != 1 || got.Settings.UserLabels["team"] != "b" ||
		got.Settings.SettingsVersion != 2 || got.Settings.Edition != "ENTERPRISE" {
		t.Fatalf("patched: %+v, %v", got.Settings, err)
	}
	_, err = svc.Instances.Patch("p", "db1", patch).Do() // settingsVersion 1 is stale now
	wantCode(t, err, http.StatusPreconditionFailed, "Condition does not match")
	if op, err = svc.Instances.Patch("p", "db1", &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_17"}).Do(); err != nil {
		t.Fatal(err)
	}
	sqlDone(t, svc, op)
	if got, err = svc.Instances.Get("p", "db1").Do(); err != nil || got.DatabaseVersion != "POSTGRES_17" || got.DatabaseInstalledVersion != "POSTGRES_17_4" {
		t.Fatalf("upgraded: %+v, %v", got, err)
	}
	_, err = svc.Instances.Patch("p", "db1", &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_15"}).Do()
	wantCode(t, err, http.StatusBadRequest, "cannot be downgraded")
}

func listAndDelete(t *testing.T, svc *sqladmin.Service) {
	t.Helper()
	for _, n := range []string{"db2", "db3"} {
		if _, err := svc.Instances.Insert("p", pgInstance(n)).Do(); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	pages := 0
	if err := svc.Instances.List("p").MaxResults(2).Pages(context.Background(), func(r *sqladmin.InstancesListResponse) error {
		pages++
		for _, i := range r.Items {
			names = append(names, i.Name)
		}
		return nil
	}); err != nil || pages != 2 || strings.Join(names, ",") != "db1,db2,db3" {
		t.Fatalf("listed %v in %d pages: %v", names, pages, err)
	}
	op, err := svc.Instances.Delete("p", "db1").Do()
	if err != nil {
		t.Fatal(err)
	}
	if inst, err := svc.Instances.Get("p", "db1").Do(); err != nil || inst.State != "PENDING_DELETE" {
		t.Fatalf("deleting: %+v, %v", inst, err)
	}
	if done := sqlDone(t, svc, op); done.Error != nil || done.OperationType != "DELETE" {
		t.Fatalf("delete operation %+v", done)
	}
	_, err = svc.Instances.Get("p", "db1").Do()
	wantCode(t, err, http.StatusNotFound, "does not exist")
}

// TestCloudSQLRules: what Cloud SQL refuses, and failing operations.
func TestCloudSQLRules(t *testing.T) {
	srv := New(t, Options{Projects: []string{"p"}})
	srv.SetOperationPolls("sqladmin", 0)
	svc := sqlClient(t, srv, "p")
	plus := pgInstance("plus")
	plus.Settings.Edition = ""
	_, err := svc.Instances.Insert("p", plus).Do()
	wantCode(t, err, http.StatusBadRequest, "for (ENTERPRISE_PLUS) Edition")
	odd := pgInstance("odd")
	odd.Settings.Tier = "db-custom-3-11520"
	_, err = svc.Instances.Insert("p", odd).Do()
	wantCode(t, err, http.StatusBadRequest, "1 or an even number of vCPUs")
	if op, err := svc.Instances.Insert("p", pgInstance("db")).Do(); err != nil || op.Status != "DONE" {
		t.Fatalf("insert with polls 0: %+v, %v", op, err)
	}
	_, err = svc.Instances.Insert("p", pgInstance("db")).Do()
	wantCode(t, err, http.StatusConflict, "already exists")
	_, err = sqlClient(t, srv, "q").Instances.Get("q", "db").Do()
	wantCode(t, err, http.StatusForbidden, "Permission denied")

	srv.FailNextOperation("sql.users.insert", "the password does not fit the policy")
	op, err := svc.Users.Insert("p", "db", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	if err != nil || op.Status != "DONE" || op.Error == nil || op.Error.Errors[0].Message != "the password does not fit the policy" {
		t.Fatalf("failed operation %+v, %v", op, err)
	}
	if users, err := svc.Users.List("p", "db").Do(); err != nil || len(users.Items) != 1 {
		t.Fatalf("a failed user insert made a user: %+v, %v", users, err)
	}
	if _, err := svc.Users.Update("p", "db", &sqladmin.User{Password: "new"}).Name("postgres").Do(); err != nil {
		t.Fatal(err)
	}

	protected := &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DeletionProtectionEnabled: true, SettingsVersion: 1}}
	if _, err := svc.Instances.Patch("p", "db", protected).Do(); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Instances.Delete("p", "db").Do()
	wantCode(t, err, http.StatusBadRequest, "protected from deletion")
	reservedNames(t, srv, svc)
}

func reservedNames(t *testing.T, srv *Server, svc *sqladmin.Service) {
	t.Helper()
	srv.ReserveDeletedNames(true)
	if _, err := svc.Instances.Insert("p", pgInstance("gone")).Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Instances.Delete("p", "gone").Do(); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Instances.Insert("p", pgInstance("gone")).Do()
	wantCode(t, err, http.StatusConflict, "can't reuse the name")
	srv.Reset()
	if _, err := svc.Instances.Insert("p", pgInstance("gone")).Do(); err != nil {
		t.Fatalf("Reset forgets reserved names too: %v", err)
	}
}

// TestCloudSQLMismatch: a request field the API lacks, and an answer that
// breaks the schema, are caught.
func TestCloudSQLMismatch(t *testing.T) {
	srv := New(t, Options{mutate: func(id string, m map[string]any) {
		if id == "sql.instances.get" {
			m["state"] = "ASLEEP"
		}
	}})
	code, body := do(t, srv, "POST", "/v1/projects/p/instances", `{"name":"db","settings":{"tier":"db-f1-micro","userLabel":{}}}`)
	wantViolation(t, srv, code, body, "sql.instances.insert", `DatabaseInstance.settings: unknown property "userLabel"`)
	svc := sqlClient(t, srv, "p")
	mysql := &sqladmin.DatabaseInstance{Name: "my", Settings: &sqladmin.Settings{Tier: "db-f1-micro"}}
	if _, err := svc.Instances.Insert("p", mysql).Do(); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Instances.Get("p", "my").Do()
	wantCode(t, err, http.StatusInternalServerError, "sql.instances.get")
	if v := srv.TakeViolations(); len(v) != 1 || !strings.Contains(v[0], `"ASLEEP" is not one of`) {
		t.Fatalf("violations %q", v)
	}
}

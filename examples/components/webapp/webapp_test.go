package webapp_test

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/examples/components/webapp"
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

const image, role = "123456789012.dkr.ecr.eu-west-3.amazonaws.com/shop:1", "arn:aws:iam::123456789012:role/shop-api"

var settings = webapp.Settings{Image: image, Role: role}

// synth declares a fleet in Paris with one web-app instance "shop".
func synth(t *testing.T, region aws.Region, opts ...fleet.InstanceOption) (*spec.Document, []spec.Diagnostic) {
	t.Helper()
	f := fleet.New("shop")
	aws.Use(f, "", region)
	fleet.Instantiate(f, "shop", webapp.WebApp, settings, opts...)
	return f.Synth()
}

func rows(ds []spec.Diagnostic, id spec.RowID) []spec.Diagnostic {
	var out []spec.Diagnostic
	for _, d := range ds {
		if d.ID == id {
			out = append(out, d)
		}
	}
	return out
}

func errorsOf(ds []spec.Diagnostic) []spec.Diagnostic {
	var out []spec.Diagnostic
	for _, d := range ds {
		if d.Severity == spec.Error {
			out = append(out, d)
		}
	}
	return out
}

func TestTwoInstancesWithDifferentSettings(t *testing.T) {
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "a", webapp.WebApp, settings, fleet.Settings("db", webapp.DatabaseSettings{MaxCapacity: 4}))
	fleet.Instantiate(f, "b", webapp.WebApp, settings, fleet.Settings("assets", fleet.ObjectStoreSpec{Versioning: fleet.Set(false)}))
	doc, diags := f.Synth()
	if errs := errorsOf(diags); len(errs) > 0 {
		t.Fatalf("rows: %v", errs)
	}
	spec := map[string]map[string]any{}
	for _, r := range doc.Resources {
		spec[r.Address] = r.Spec
	}
	if got := spec["aws/postgres/a-db-pg"]["maxCapacity"]; got != 4.0 {
		t.Errorf("a's database maxCapacity = %v, want the user's 4", got)
	}
	if got := spec["aws/postgres/b-db-pg"]["maxCapacity"]; got != 2.0 {
		t.Errorf("b's database maxCapacity = %v, want the component's default 2", got)
	}
	if got := spec["aws/object-store/b-assets"]["versioning"]; got != false {
		t.Errorf("b's assets versioning = %v, want the user's false", got)
	}
	a := doc.Components["a"]
	if o := a.Settings["db.maxCapacity"]; o.Origin != "user" || !strings.Contains(o.Source, "webapp_test.go:") {
		t.Errorf("a's db.maxCapacity origin = %+v, want user at this file", o)
	}
	if o := a.Settings["db.engineVersion"]; o.Origin != "fixed" || !strings.Contains(o.Source, "webapp/webapp.go:") {
		t.Errorf("a's db.engineVersion origin = %+v, want fixed at webapp.go", o)
	}
	if o := doc.Components["b"].Settings["assets.versioning"]; o.Origin != "user" {
		t.Errorf("b's assets.versioning origin = %+v, want user", o)
	}
	if m := a.Members["db.pg"]; m.Resource != "aws/postgres/a-db-pg" {
		t.Errorf("member db.pg = %+v", m)
	}
}

func TestSettingAFixedPathNamesBothPlaces(t *testing.T) {
	_, diags := synth(t, aws.Paris, fleet.Settings("db", webapp.DatabaseSettings{EngineVersion: "15"}))
	got := rows(diags, spec.RowComponentFixed)
	if len(got) != 1 {
		t.Fatalf("component-fixed rows = %v, want one", diags)
	}
	if !strings.Contains(got[0].Message, "webapp/webapp.go:") || !strings.Contains(got[0].Message, "webapp_test.go:") || got[0].Subject != "shop.db.engineVersion" {
		t.Errorf("row = %+v, want it to name the component's line, the user's and shop.db.engineVersion", got[0])
	}
}

func TestSettingForAMemberThatDoesNotExist(t *testing.T) {
	_, diags := synth(t, aws.Paris, fleet.Settings("cache", webapp.DatabaseSettings{MaxCapacity: 1}))
	got := rows(diags, spec.RowComponentMemberUnknown)
	if len(got) != 1 || !strings.Contains(got[0].Resolution, "db, db.password, db.pg") {
		t.Fatalf("rows = %v, want one component-member-unknown listing the members", diags)
	}
}

func TestCutWithoutAWireListsTheCandidates(t *testing.T) {
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "a", webapp.WebApp, settings, fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"))
	fleet.Instantiate(f, "b", webapp.WebApp, settings, fleet.Cut("db"))
	_, diags := f.Synth()
	got := rows(diags, spec.RowComponentSlotUnfilled)
	if len(got) != 1 || got[0].Subject != "b.wire.api.db" || !strings.Contains(got[0].Resolution, "pg-shared/eu") {
		t.Fatalf("rows = %v, want one component-slot-unfilled for b.wire.api.db offering pg-shared/eu", got)
	}
}

func TestCutMemberDeclaresNothingAndItsSlotIsWired(t *testing.T) {
	doc, diags := synth(t, aws.Paris, fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"))
	if errs := errorsOf(diags); len(errs) > 0 {
		t.Fatalf("rows: %v", errs)
	}
	for _, r := range doc.Resources {
		if strings.Contains(r.Address, "-db-p") {
			t.Errorf("the cut member still declares %s", r.Address)
		}
	}
	if w := doc.Wires["shop-api-db"]; w.Fleet != "pg-shared" || w.Provides != "eu" {
		t.Errorf("wire = %+v", w)
	}
	if !doc.Components["shop"].Members["db"].Cut {
		t.Errorf("member db is not recorded as cut")
	}
	_, diags = synth(t, aws.Paris, fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"), fleet.Settings("db", webapp.DatabaseSettings{MaxCapacity: 1}))
	if got := rows(diags, spec.RowComponentMemberCut); len(got) != 1 {
		t.Errorf("a setting for the cut member: rows %v, want one component-member-cut", diags)
	}
}

func TestCoPlacement(t *testing.T) {
	// The fleet's default is N. Virginia; the database is placed in Paris.
	doc, diags := synth(t, aws.NVirginia, fleet.Place("db", aws.Paris))
	if errs := errorsOf(diags); len(errs) > 0 {
		t.Fatalf("rows: %v", errs)
	}
	for _, r := range doc.Resources {
		if strings.Contains(r.Address, "shop-api-") && r.Region != "eu-west-3" {
			t.Errorf("%s is in %q, want eu-west-3, the database's region", r.Address, r.Region)
		}
	}
	var followed bool
	for _, d := range rows(diags, spec.RowRegionFollowed) {
		followed = followed || (d.Subject == "shop.api" && strings.Contains(d.Message, "db.main.endpoint"))
	}
	if !followed {
		t.Errorf("no region-followed row for shop.api saying why: %v", diags)
	}

	_, diags = synth(t, aws.NVirginia, fleet.Place("db", aws.Paris), fleet.Place("api", aws.NVirginia))
	got := rows(diags, spec.RowComponentPlacement)
	if len(got) != 1 || !strings.Contains(got[0].Message, "us-east-1") || !strings.Contains(got[0].Message, "eu-west-3") || !strings.Contains(got[0].Message, "db.main.endpoint") {
		t.Fatalf("rows = %v, want one component-placement naming both regions and the export", diags)
	}
}

func TestReceiveHalfCannotDeclareWiring(t *testing.T) {
	bad := fleet.DefineComponent("bad", func(s struct{}) struct{} { return struct{}{} }, func(b *fleet.Body, _ struct{}) {
		fleet.Expose(b.Fleet(), fleet.Capability{})
	})
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "x", bad, struct{}{})
	_, diags := f.Synth()
	if got := rows(diags, spec.RowComponentBodyWiring); len(got) != 1 {
		t.Fatalf("rows = %v, want one component-body-wiring", diags)
	}
}

func TestAReExportFromACutMemberCannotBeOffered(t *testing.T) {
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	a := fleet.Instantiate(f, "a", webapp.WebApp, settings)
	fleet.Expose(f, fleet.ProvideFrom(f, "a-db", a, "database"))
	// Cut, and nothing provides the re-export: silent.
	fleet.Instantiate(f, "b", webapp.WebApp, settings, fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"))
	doc, diags := f.Synth()
	if errs := errorsOf(diags); len(errs) > 0 {
		t.Fatalf("rows: %v", errs)
	}
	if p := doc.Provides["a-db"]; p.Interface != "postgres-database" || p.Exports["endpoint"] == nil {
		t.Fatalf("provides a-db = %+v", p)
	}

	c := fleet.Instantiate(f, "c", webapp.WebApp, settings, fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"))
	fleet.Expose(f, fleet.ProvideFrom(f, "c-db", c, "database"))
	_, diags = f.Synth()
	if got := rows(diags, spec.RowComponentExposeCut); len(got) != 1 || !strings.Contains(got[0].Message, "member db, which is cut") {
		t.Fatalf("rows = %v, want one component-expose-cut", diags)
	}
}

func TestAnOptionGivenTwiceAndABadInstanceName(t *testing.T) {
	_, diags := synth(t, aws.Paris, fleet.Cut("db"), fleet.Cut("db"), fleet.WireMember("api.db", "pg-shared", "eu"))
	if got := rows(diags, spec.RowGivenTwice); len(got) != 1 || got[0].Subject != "shop.db" {
		t.Fatalf("rows = %v, want one given-twice for shop.db", diags)
	}
	f := fleet.New("shop")
	aws.Use(f, "", aws.Paris)
	fleet.Instantiate(f, "Shop.A", webapp.WebApp, settings)
	_, diags = f.Synth()
	if got := rows(diags, spec.RowComponentMap); len(got) == 0 || !strings.Contains(got[0].Message, `invalid component instance name "Shop.A"`) {
		t.Fatalf("rows = %v, want the instance name refused", diags)
	}
}

package spec

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func wiringDoc(t *testing.T, name string, edit func(m map[string]any)) *Document {
	t.Helper()
	data, err := os.ReadFile("testdata/wiring/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		if data, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// rowsText is every row as one string, to search.
func rowsText(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

func TestWiringDocumentsCompile(t *testing.T) {
	for _, name := range []string{"pg-shared", "shop-eu"} {
		m, diags := Compile(wiringDoc(t, name, nil))
		if HasErrors(diags) {
			t.Fatalf("%s: %s", name, rowsText(diags))
		}
		in := m.Interfaces["postgres-database"]
		if len(in.Exports) != 4 || !strings.HasPrefix(in.Hash, "sha256:") {
			t.Fatalf("%s: interface %+v", name, in)
		}
	}
	pg, _ := Compile(wiringDoc(t, "pg-shared", nil))
	eu := pg.Provides["eu"]
	if !eu.One || !eu.Exposed || eu.Bindings["endpoint"].Locality != LocalityRegion || !eu.Bindings["password"].Secret {
		t.Fatalf("capability eu: %+v", eu)
	}
	shop, _ := Compile(wiringDoc(t, "shop-eu", nil))
	if got := shop.Imports(); len(got) != 3 || got[0].Export != "endpoint" {
		t.Fatalf("imports: %+v", got)
	}
}

// Another fleet's secret export fills a field that takes one of this
// fleet's secrets: a database's master password.
func TestSecretExportFillsASecretField(t *testing.T) {
	m, diags := Compile(wiringDoc(t, "shop-eu", func(m map[string]any) {
		m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/postgres/replica",
			"spec": map[string]any{"masterUsername": "shop", "masterPasswordSecret": map[string]any{"use": "db", "export": "password"}}})
	}))
	if HasErrors(diags) {
		t.Fatal(rowsText(diags))
	}
	d, _ := m.Lookup(Address{Provider: AWS, Kind: Postgres, Name: "replica"})
	if im, ok := d.Fields["masterPasswordSecret"].(Import); !ok || !im.SecretField || im.Export != "password" {
		t.Fatalf("masterPasswordSecret is %#v", d.Fields["masterPasswordSecret"])
	}
	if enc := Encode(d.Fields["masterPasswordSecret"]).(map[string]any); enc["use"] != "db" || enc["export"] != "password" {
		t.Fatalf("encoded as %v", enc)
	}
}

func TestDocumentWiringRoundTrips(t *testing.T) {
	for _, name := range []string{"pg-shared", "shop-eu"} {
		doc := wiringDoc(t, name, nil)
		b, err := EncodeDocument(doc)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeDocument(b)
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := EncodeDocument(again)
		if string(b) != string(b2) {
			t.Fatalf("%s: encode/decode changed the document:\n%s\n%s", name, b, b2)
		}
	}
}

func TestInterfaceHashIgnoresOrder(t *testing.T) {
	a := map[string]ExportDef{"x": {Type: ExportString, Lifecycle: []Lifecycle{LifecyclePlan, LifecycleApply}, Locality: []ExportLocality{LocalityRegion}}}
	b := map[string]ExportDef{"x": {Type: ExportString, Lifecycle: []Lifecycle{LifecycleApply, LifecyclePlan}, Locality: []ExportLocality{LocalityRegion}}}
	if InterfaceHash(a) != InterfaceHash(b) {
		t.Fatal("tag order changed the hash")
	}
	b["x"] = ExportDef{Type: ExportNumber, Lifecycle: b["x"].Lifecycle, Locality: b["x"].Locality}
	if InterfaceHash(a) == InterfaceHash(b) {
		t.Fatal("a different type gave the same hash")
	}
}

// Another fleet's public export of a referent's identity fills a Wired
// reference field, alone or as an entry of a map of references: a target
// group in the VPC, and a load balancer in the subnets, a network fleet
// publishes.
func TestWiredExportFillsAReferenceField(t *testing.T) {
	use := map[string]any{"use": "db", "export": "endpoint"}
	m, diags := Compile(wiringDoc(t, "shop-eu", func(m map[string]any) {
		m["resources"] = append(m["resources"].([]any),
			map[string]any{"address": "aws/alb-target-group/tg", "spec": map[string]any{"vpc": use, "protocol": "HTTP", "port": 80.0}},
			map[string]any{"address": "aws/alb/web", "spec": map[string]any{"subnets": map[string]any{"eu-west-3a": use, "eu-west-3b": use}}})
	}))
	if HasErrors(diags) {
		t.Fatal(rowsText(diags))
	}
	tg, _ := m.Lookup(Address{Provider: AWS, Kind: ALBTargetGroup, Name: "tg"})
	if im, ok := tg.Fields["vpc"].(Import); !ok || !im.RefField || im.SecretField || im.Export != "endpoint" {
		t.Fatalf("vpc is %#v", tg.Fields["vpc"])
	}
	if enc := Encode(tg.Fields["vpc"]).(map[string]any); enc["use"] != "db" || enc["export"] != "endpoint" {
		t.Fatalf("encoded as %v", enc)
	}
	web, _ := m.Lookup(Address{Provider: AWS, Kind: ALB, Name: "web"})
	if im, ok := web.Fields["subnets"].(Map)["eu-west-3b"].(Import); !ok || !im.RefField {
		t.Fatalf("subnets are %#v", web.Fields["subnets"])
	}
	if len(web.Deps()) != 0 {
		t.Fatalf("an import is no dependency of this fleet's: %v", web.Deps())
	}
}

func TestWiringRows(t *testing.T) {
	iface := func(m map[string]any) map[string]any {
		return m["interfaces"].(map[string]any)["postgres-database"].(map[string]any)["exports"].(map[string]any)
	}
	cases := []struct {
		name, doc string
		edit      func(m map[string]any)
		want      string
	}{
		{"missing lifecycle bound", "pg-shared", func(m map[string]any) {
			delete(iface(m)["endpoint"].(map[string]any), "lifecycle")
		}, "the export has no lifecycle bound"},
		{"missing locality bound", "pg-shared", func(m map[string]any) {
			delete(iface(m)["version"].(map[string]any), "locality")
		}, "the export has no locality bound"},
		{"widened lifecycle", "pg-shared", func(m map[string]any) {
			iface(m)["endpoint"].(map[string]any)["lifecycle"] = "plan"
		}, "the binding is known at apply, which the export's lifecycle bound does not allow"},
		{"widened locality", "pg-shared", func(m map[string]any) {
			iface(m)["endpoint"].(map[string]any)["locality"] = "global"
		}, "the binding's locality is region, which the export's locality bound does not allow"},
		{"declared locality outside the bound", "pg-shared", func(m map[string]any) {
			ex := m["provides"].(map[string]any)["eu"].(map[string]any)["exports"].(map[string]any)
			ex["endpoint"].(map[string]any)["locality"] = "global"
		}, "the binding's locality is global, which the export's locality bound does not allow"},
		{"lowered secrecy", "pg-shared", func(m map[string]any) {
			m["provides"].(map[string]any)["eu"].(map[string]any)["exports"].(map[string]any)["password"] = "hunter2"
		}, "the export is secret, and this binding is public"},
		{"unbound export", "pg-shared", func(m map[string]any) {
			delete(m["provides"].(map[string]any)["eu"].(map[string]any)["exports"].(map[string]any), "version")
		}, `capability "eu" does not bind export "version"`},
		{"wrong type", "pg-shared", func(m map[string]any) {
			m["provides"].(map[string]any)["eu"].(map[string]any)["exports"].(map[string]any)["username"] = 7.0
		}, "the export is of type string, and this binding is a number"},
		{"exposes what is not provided", "pg-shared", func(m map[string]any) {
			m["exposes"] = []any{"ue"}
		}, `exposes "ue", which the fleet does not provide (the fleet provides: eu)`},
		{"hash edited", "pg-shared", func(m map[string]any) {
			m["interfaces"].(map[string]any)["postgres-database"].(map[string]any)["hash"] = "sha256:000000000000000000000000"
		}, "is written with hash sha256:000000000000000000000000"},
		{"control character in an export name", "pg-shared", func(m map[string]any) {
			ex := iface(m)
			ex["end\x07point"] = ex["endpoint"]
			delete(ex, "endpoint")
		}, `invalid export name "end\u0007point"`},
		{"unfilled slot", "shop-eu", func(m map[string]any) { delete(m, "wires") }, `slot "db" is wired to nothing`},
		{"unknown slot read", "shop-eu", func(m map[string]any) {
			res := m["resources"].([]any)[0].(map[string]any)
			res["spec"].(map[string]any)["value"].(map[string]any)["composed"].(map[string]any)["args"].([]any)[0].(map[string]any)["use"] = "dbx"
		}, `reads slot "dbx", which the fleet does not use`},
		{"secret export outside a secret", "shop-eu", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/compute/api",
				"spec": map[string]any{"env": map[string]any{"PW": map[string]any{"use": "db", "export": "password"}}}})
		}, "which is secret, into a field that does not take a secret"},
		{"public export as a password", "shop-eu", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/postgres/replica",
				"spec": map[string]any{"masterUsername": "shop", "masterPasswordSecret": map[string]any{"use": "db", "export": "endpoint"}}})
		}, `field "masterPasswordSecret" reads db.endpoint, which is public, where it takes a secret`},
		{"secret export as a reference", "shop-eu", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/alb-target-group/tg",
				"spec": map[string]any{"vpc": map[string]any{"use": "db", "export": "password"}, "protocol": "HTTP", "port": 80.0}})
		}, `field "vpc" reads db.password, a secret export, where it takes a vpc's identity (its vpcId), a public string`},
		{"export in a reference that is not wired", "shop-eu", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/alb-listener/l",
				"spec": map[string]any{"loadBalancer": map[string]any{"use": "db", "export": "endpoint"}, "port": 80.0,
					"targetGroup": map[string]any{"ref": "aws/alb-target-group/tg"}}})
		}, `field "loadBalancer": want {"ref": "provider/kind/name"}`},
		{"unknown operator", "shop-eu", func(m map[string]any) {
			m["uses"].(map[string]any)["db"].(map[string]any)["requires"].([]any)[0].(map[string]any)["op"] = "~>"
		}, `unknown operator "~>"`},
		{"wired to itself", "shop-eu", func(m map[string]any) {
			m["wires"].(map[string]any)["db"].(map[string]any)["fleet"] = "shop-eu"
		}, "is wired to this fleet itself"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diags := Validate(wiringDoc(t, tc.doc, tc.edit))
			if got := rowsText(diags); !strings.Contains(got, tc.want) {
				t.Fatalf("want a row with %q, got:\n%s", tc.want, got)
			}
		})
	}
}

// published is pg-shared's record as its apply would write it.
func published(t *testing.T) *Published {
	t.Helper()
	pg, _ := Compile(wiringDoc(t, "pg-shared", nil))
	in := pg.Interfaces["postgres-database"]
	rec := &Published{Fleet: "pg-shared", Capabilities: map[string]PublishedCapability{"eu": {
		Interface: "postgres-database", InterfaceHash: in.Hash, Consumers: "one", Exposed: true,
		Exports: map[string]PublishedExport{
			"endpoint": {Type: ExportString, Lifecycle: LifecycleApply, Locality: LocalityRegion, Region: "eu-west-3", Value: "pg-eu.cluster.eu-west-3.rds.amazonaws.com:5432"},
			"username": {Type: ExportString, Lifecycle: LifecyclePlan, Locality: LocalityGlobal, Value: "shop"},
			"password": {Type: ExportSecret, Lifecycle: LifecycleApply, Locality: LocalityAccount, Secret: true, Provider: AWS, Account: "123456789012", Region: "eu-west-3", Value: "arn:aws:secretsmanager:eu-west-3:123456789012:secret:pg-eu-password-AbCdEf"},
			"version":  {Type: ExportString, Lifecycle: LifecycleApply, Locality: LocalityGlobal, Value: "16.4"},
		}}}}
	rec.Seal()
	return rec
}

func TestResolveWires(t *testing.T) {
	far := func(rec *Published) map[string]Far {
		return map[string]Far{"pg-shared": {Record: rec, Where: "state/pg-shared"}}
	}
	m, _ := Compile(wiringDoc(t, "shop-eu", nil))
	if diags := ResolveWires(m, far(published(t))); len(diags) != 0 {
		t.Fatalf("rows: %s", rowsText(diags))
	}
	w := m.Wired[Import{Slot: "db", Export: "endpoint"}]
	if w.Ref != "pg-shared:eu.endpoint" || w.Export.Value != "pg-eu.cluster.eu-west-3.rds.amazonaws.com:5432" {
		t.Fatalf("endpoint: %+v", w)
	}

	cases := []struct {
		name string
		edit func(m map[string]any)
		rec  func(p *Published) *Published
		want string
	}{
		{"typo in provides", func(m map[string]any) {
			m["wires"].(map[string]any)["db"].(map[string]any)["provides"] = "ue"
		}, nil, `pg-shared provides no capability "ue" (it exposes: eu (postgres-database))`},
		{"version too low", func(m map[string]any) {
			m["uses"].(map[string]any)["db"].(map[string]any)["requires"].([]any)[0].(map[string]any)["value"] = 17.0
		}, nil, `slot "db" requires version >= 17, and pg-shared publishes version = "16.4"`},
		{"unexposed", nil, func(p *Published) *Published {
			c := p.Capabilities["eu"]
			c.Exposed = false
			p.Capabilities["eu"] = c
			return p
		}, "which pg-shared provides but does not expose"},
		{"nothing published", nil, func(*Published) *Published { return nil }, `fleet "pg-shared", which has published nothing at state/pg-shared`},
		{"different definition", nil, func(p *Published) *Published {
			c := p.Capabilities["eu"]
			c.InterfaceHash = "sha256:other"
			p.Capabilities["eu"] = c
			return p
		}, `fleets shop-eu and pg-shared carry different definitions of interface "postgres-database"`},
		{"another account", func(m map[string]any) {
			m["accounts"] = map[string]any{"aws": "999999999999"}
		}, nil, "reads pg-shared:eu.password, which is account-local (aws account 123456789012); aws/secrets/shop-db-url is in account 999999999999"},
		{"another cloud", func(m map[string]any) {
			m["placement"].(map[string]any)["scaleway"] = "fr-par"
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "scaleway/secrets/copy",
				"spec": map[string]any{"value": map[string]any{"composed": map[string]any{"format": "{0}", "args": []any{
					map[string]any{"use": "db", "export": "password"}}}}}})
		}, nil, "reads pg-shared:eu.password, which is account-local (aws account 123456789012); scaleway/secrets/copy is on scaleway"},
		{"raised export read in a plain field", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/compute/api",
				"spec": map[string]any{"env": map[string]any{"DB_USER": map[string]any{"use": "db", "export": "username"}}}})
		}, func(p *Published) *Published {
			e := p.Capabilities["eu"].Exports["username"]
			e.Secret, e.Value = true, "arn:aws:secretsmanager:eu-west-3:123456789012:secret:user-AbCdEf"
			p.Capabilities["eu"].Exports["username"] = e
			return p
		}, `field "env" reads pg-shared:eu.username, which pg-shared publishes as a secret, into a field that does not take a secret`},
		{"wrong region", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), map[string]any{"address": "aws/compute/api", "region": "us-east-1",
				"spec": map[string]any{"runtime": "python3.12", "handler": "app.handler", "code": map[string]any{"zip": "x"},
					"env": map[string]any{"DB_HOST": map[string]any{"use": "db", "export": "endpoint"}}}})
		}, nil, "reads pg-shared:eu.endpoint, which is region-local (eu-west-3); aws/compute/api is in us-east-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, diags := Compile(wiringDoc(t, "shop-eu", tc.edit))
			rec := published(t)
			if tc.rec != nil {
				rec = tc.rec(rec)
			}
			diags = append(diags, ResolveWires(m, far(rec))...)
			if got := rowsText(diags); !strings.Contains(got, tc.want) {
				t.Fatalf("want a row with %q, got:\n%s", tc.want, got)
			}
		})
	}
}

func TestResourceFollowsTheRegionItReads(t *testing.T) {
	m, diags := Compile(wiringDoc(t, "shop-eu", func(m map[string]any) { delete(m, "placement") }))
	if HasErrors(diags) {
		t.Fatal(rowsText(diags))
	}
	diags = ResolveWires(m, map[string]Far{"pg-shared": {Record: published(t)}})
	if d, _ := m.Lookup(Address{Provider: AWS, Kind: Secrets, Name: "shop-db-url"}); d.Region != "eu-west-3" {
		t.Fatalf("region %q; rows:\n%s", d.Region, rowsText(diags))
	}
	if got := rowsText(diags); !strings.Contains(got, "placed in eu-west-3, the region of pg-shared:eu.endpoint") {
		t.Fatalf("rows:\n%s", got)
	}
}

func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want any
		v    any
		ok   bool
	}{
		{">=", 16.0, "16.4", true}, {">=", 17.0, "16.4", false}, {">", "16", "16.0.1", true},
		{"==", "16", "16.0", true}, {"in", []any{"15", "16"}, "16", true}, {"in", []any{"15"}, "16", false},
		{"!=", "a", "b", true}, {"<", 3.0, 2.0, true},
	} {
		got, err := Holds(Predicate{Export: "v", Op: tc.op, Value: tc.want}, tc.v)
		if err != nil || got != tc.ok {
			t.Errorf("%v %s %v: got %v, %v", tc.v, tc.op, tc.want, got, err)
		}
	}
	if _, err := Holds(Predicate{Op: ">=", Value: 16.0}, "latest"); err == nil {
		t.Error(`"latest" >= 16 compared`)
	}
}

// A fleet that declares no account is checked against the account its
// credentials belong to, once the plan knows it.
func TestAccountRowsWithTheCredentialsAccount(t *testing.T) {
	m, _ := Compile(wiringDoc(t, "shop-eu", nil))
	if diags := ResolveWires(m, map[string]Far{"pg-shared": {Record: published(t)}}); len(diags) != 0 {
		t.Fatalf("rows before the account is known: %s", rowsText(diags))
	}
	if diags := AccountRows(m, map[Provider]string{AWS: "123456789012"}); len(diags) != 0 {
		t.Fatalf("the provider's own account: %s", rowsText(diags))
	}
	got := rowsText(AccountRows(m, map[Provider]string{AWS: "999999999999"}))
	if !strings.Contains(got, "reads pg-shared:eu.password, which is account-local (aws account 123456789012); aws/secrets/shop-db-url is in account 999999999999") {
		t.Fatalf("rows: %s", got)
	}
}

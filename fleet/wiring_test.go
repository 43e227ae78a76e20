package fleet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

// queueExports is a small interface of the tests' own, with one export of
// each kind of binding.
type queueExports struct {
	URL     fleet.Output[string]
	Region  fleet.Output[string]
	Shards  fleet.Output[int]
	Zones   fleet.Output[[]string]
	Token   fleet.SecretExport
	Enabled fleet.Output[bool]
}

var jobQueue = fleet.DefineInterface("job-queue", queueExports{
	URL:     fleet.NewExport[string]("url", fleet.AfterApply, fleet.RegionLocal),
	Region:  fleet.NewExport[string]("region", fleet.AtPlan, fleet.Global),
	Shards:  fleet.NewExport[int]("shards", fleet.AtPlan|fleet.AfterApply, fleet.Global),
	Zones:   fleet.NewExport[[]string]("zones", fleet.AtPlan, fleet.Global),
	Token:   fleet.NewSecretExport("token", fleet.AfterApply, fleet.AccountLocal),
	Enabled: fleet.NewExport[bool]("enabled", fleet.AtPlan|fleet.Observed, fleet.Global|fleet.AccountLocal),
})

func queueProvider() (*fleet.Fleet, fleet.Capability) {
	f := fleet.New("jobs")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := cloud.Queues("jobs-main", fleet.QueuesSpec{})
	token := cloud.Secrets("jobs-token", fleet.FromEnv("JOBS_TOKEN"), fleet.SecretsSpec{})
	c := fleet.Provide(f, "main", jobQueue, queueExports{
		URL:     aws.URLOf(q),
		Region:  fleet.Lit("eu-west-3"),
		Shards:  fleet.Lit(4),
		Zones:   fleet.LitList("a", "b"),
		Token:   aws.SecretRefOf(token),
		Enabled: fleet.Lit(true),
	})
	return f, c
}

func TestProvideWritesTheCapability(t *testing.T) {
	f, c := queueProvider()
	fleet.Expose(f, c)
	fleet.Expose(f, c) // harmless
	doc, diags := synth(t, f)
	noErrors(t, diags)
	if c.Name() != "main" || !reflect.DeepEqual(doc.Exposes, []string{"main"}) {
		t.Errorf("exposes %v (capability %q)", doc.Exposes, c.Name())
	}
	p := doc.Provides["main"]
	want := map[string]any{
		"url":     map[string]any{"observed": "aws/queues/jobs-main", "attribute": "url"},
		"region":  "eu-west-3",
		"shards":  float64(4),
		"zones":   []any{"a", "b"},
		"token":   map[string]any{"secret": "aws/secrets/jobs-token"},
		"enabled": true,
	}
	if p.Interface != "job-queue" || p.Consumers != "" || !reflect.DeepEqual(p.Exports, want) {
		t.Errorf("provides.main = %+v", p)
	}

	in := doc.Interfaces["job-queue"]
	if in.Hash != jobQueue.Hash() || jobQueue.Name() != "job-queue" {
		t.Errorf("interface hash %q, Hash() %q", in.Hash, jobQueue.Hash())
	}
	// The hash is spec's, over the definition spec reads back.
	m, _ := spec.Compile(doc)
	if got := m.Interfaces["job-queue"].Hash; got != in.Hash {
		t.Errorf("spec hashes the written interface to %q, the SDK wrote %q", got, in.Hash)
	}
	for name, want := range map[string]spec.ExportDoc{
		"url":     {Type: "string", Lifecycle: spec.Tags{"apply"}, Locality: spec.Tags{"region"}},
		"shards":  {Type: "number", Lifecycle: spec.Tags{"plan", "apply"}, Locality: spec.Tags{"global"}},
		"zones":   {Type: "list<string>", Lifecycle: spec.Tags{"plan"}, Locality: spec.Tags{"global"}},
		"token":   {Type: "secret", Lifecycle: spec.Tags{"apply"}, Locality: spec.Tags{"account"}},
		"enabled": {Type: "bool", Lifecycle: spec.Tags{"plan", "observed"}, Locality: spec.Tags{"global", "account"}},
	} {
		if got := in.Exports[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("export %s = %+v, want %+v", name, got, want)
		}
	}
}

func TestOneConsumer(t *testing.T) {
	f := fleet.New("jobs")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := cloud.Queues("jobs-main", fleet.QueuesSpec{})
	token := cloud.Secrets("jobs-token", fleet.FromEnv("JOBS_TOKEN"), fleet.SecretsSpec{})
	fleet.Provide(f, "main", jobQueue, queueExports{
		URL: aws.URLOf(q), Region: fleet.Lit("eu-west-3"), Shards: fleet.Lit(4), Zones: fleet.LitList("a"),
		Token: aws.SecretRefOf(token), Enabled: fleet.Lit(true),
	}, fleet.OneConsumer)
	doc, diags := synth(t, f)
	noErrors(t, diags)
	if got := doc.Provides["main"].Consumers; got != "one" {
		t.Errorf("consumers %q", got)
	}
}

func TestUseAndWire(t *testing.T) {
	f := fleet.New("worker")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	def := jobQueue.Exports()
	q := fleet.Use(f, "jobs", jobQueue,
		fleet.AtLeast(def.Shards, 2),
		fleet.OneOf(def.Region, "eu-west-3", "eu-west-1").Want(),
		fleet.Equals(def.Enabled, true),
		fleet.NotEquals(def.URL, ""),
		fleet.Above(def.Shards, 1.5),
		fleet.AtMost(def.Shards, 64),
		fleet.Below(def.Shards, 65),
	)
	fleet.Wire(f, q, "jobs", "main", fleet.StateAt("s3://state-bucket/jobs"))
	x := q.Exports()
	cloud.Compute("worker-api", fleet.Format("{}/worker", x.URL), fleet.Lit("arn:aws:iam::123456789012:role/worker"), fleet.ComputeSpec{
		Env: fleet.Env{"QUEUE_URL": x.URL},
	})
	cloud.Secrets("worker-token-url", fleet.Composed("{}?token={}", x.URL, x.Token), fleet.SecretsSpec{})

	doc, diags := synth(t, f)
	noErrors(t, diags)
	if q.Name() != "jobs" {
		t.Errorf("slot name %q", q.Name())
	}
	wantUse := spec.Use{Interface: "job-queue", Requires: []spec.Requirement{
		{Export: "shards", Op: ">=", Value: float64(2)},
		{Export: "region", Op: "in", Value: []any{"eu-west-3", "eu-west-1"}, Severity: "want"},
		{Export: "enabled", Op: "==", Value: true},
		{Export: "url", Op: "!=", Value: ""},
		{Export: "shards", Op: ">", Value: 1.5},
		{Export: "shards", Op: "<=", Value: float64(64)},
		{Export: "shards", Op: "<", Value: float64(65)},
	}}
	if got := doc.Uses["jobs"]; !reflect.DeepEqual(got, wantUse) {
		t.Errorf("uses.jobs = %+v\nwant %+v", got, wantUse)
	}
	if got := doc.Wires["jobs"]; got.Fleet != "jobs" || got.Provides != "main" || got.State != "s3://state-bucket/jobs" {
		t.Errorf("wires.jobs = %+v", got)
	}
	if doc.Interfaces["job-queue"].Hash != jobQueue.Hash() {
		t.Errorf("the consumer writes the interface with another hash")
	}
	env := specOf(t, doc, "aws/compute/worker-api")["env"]
	if want := map[string]any{"QUEUE_URL": map[string]any{"use": "jobs", "export": "url"}}; !reflect.DeepEqual(env, want) {
		t.Errorf("env = %v", env)
	}
	m, _ := spec.Compile(doc)
	var got []string
	for _, im := range m.Imports() {
		got = append(got, im.Slot+"."+im.Export)
	}
	if want := []string{"jobs.token", "jobs.url"}; !reflect.DeepEqual(got, want) {
		t.Errorf("imports %v, want %v", got, want)
	}
}

func TestSlotExportsDoNotChangeTheInterface(t *testing.T) {
	f := fleet.New("worker")
	aws.Use(f, awsAccount, aws.Paris)
	fleet.Use(f, "jobs", jobQueue).Exports()
	g := fleet.New("other")
	cloud := aws.Use(g, awsAccount, aws.Paris)
	// A definition is not a value: reading one in a field is a row, not a
	// silent unset field and not another slot's import.
	cloud.Compute("api", jobQueue.Exports().URL, fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{})
	cloud.Secrets("s", fleet.Composed("{}", jobQueue.Exports().Token), fleet.SecretsSpec{})
	_, diags := g.Synth()
	wantRow(t, diags, "aws/compute/api", `export "url" of interface "job-queue" is the interface's definition, not a value`)
	wantRow(t, diags, "aws/secrets/s", `export "token" of interface "job-queue" is the interface's definition`)
}

func TestWiringTheSDKReports(t *testing.T) {
	f, _ := queueProvider()
	fleet.Provide(f, "main", jobQueue, queueExports{})
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := fleet.Use(f, "jobs", jobQueue, fleet.AtLeast(fleet.Lit(3), 2), fleet.AtLeast(otherQueue.Exports().Shards, 2))
	fleet.Use(f, "jobs", jobQueue)
	fleet.Wire(f, q, "jobs", "main")
	fleet.Wire(f, q, "jobs", "other")
	fleet.Wire(f, fleet.Slot[queueExports]{}, "jobs", "main")
	fleet.Expose(f, fleet.Capability{})
	fleet.Use(f, "clash", clashingQueue)
	token := cloud.Secrets("t", fleet.FromEnv("T"), fleet.SecretsSpec{})
	cloud.Secrets("leak", fleet.Composed("{}", aws.SecretRefOf(token)), fleet.SecretsSpec{})
	fleet.Provide(f, "zero", jobQueue, queueExports{Token: aws.SecretRefOf(fleet.Ref[aws.Secrets]{}), URL: jobQueue.Exports().URL})

	_, diags := f.Synth()
	wantRow(t, diags, "provides.main", `capability "main" provided twice`)
	wantRow(t, diags, "uses.jobs", `slot "jobs" used twice`)
	wantRow(t, diags, "uses.jobs.requires[0]", "not an export of interface")
	wantRow(t, diags, "uses.jobs.requires[1]", `export "shards" of interface "other-queue", and slot "jobs" uses interface "job-queue"`)
	wantRow(t, diags, "wires.jobs", `slot "jobs" wired twice`)
	wantRow(t, diags, "wires", "a zero fleet.Slot")
	wantRow(t, diags, "exposes", "a zero fleet.Capability")
	wantRow(t, diags, "interfaces.job-queue", `two definitions of interface "job-queue" in one fleet`)
	wantRow(t, diags, "aws/secrets/leak", "the reference of aws/secrets/t is what a capability publishes")
	wantRow(t, diags, "provides.zero.exports.token", "a secret never declared")
	wantRow(t, diags, "provides.zero.exports.url", "the interface's definition, not a value")
	// What the document carries is check's: the unbound exports of "zero".
	wantRow(t, diags, "provides.zero", `does not bind export "region"`)
}

var otherQueue = fleet.DefineInterface("other-queue", struct{ Shards fleet.Output[int] }{
	Shards: fleet.NewExport[int]("shards", fleet.AtPlan, fleet.Global),
})

// clashingQueue is a second definition under job-queue's name.
var clashingQueue = fleet.DefineInterface("job-queue", struct{ URL fleet.Output[string] }{
	URL: fleet.NewExport[string]("url", fleet.AfterApply, fleet.Global),
})

func TestBrokenDefinitions(t *testing.T) {
	type broken struct {
		URL      fleet.Output[string]
		Again    fleet.Output[string]
		Missing  fleet.Output[string]
		Plain    string
		hidden   fleet.Output[string]
		Nowhere  fleet.Output[string]
		Sometime fleet.Output[string]
	}
	in := fleet.DefineInterface("broken", broken{
		URL:      fleet.NewExport[string]("url", fleet.AfterApply, fleet.RegionLocal),
		Again:    fleet.NewExport[string]("url", fleet.AfterApply, fleet.RegionLocal),
		hidden:   fleet.NewExport[string]("hidden", fleet.AfterApply, fleet.RegionLocal),
		Nowhere:  fleet.NewExport[string]("nowhere", fleet.AfterApply, 0),
		Sometime: fleet.NewExport[string]("sometime", fleet.Lifecycle(1<<5), fleet.Global),
	})
	f := fleet.New("consumer")
	aws.Use(f, awsAccount, aws.Paris)
	fleet.Use(f, "b", in)
	fleet.Use(f, "b2", in) // the definition's rows are reported once
	_, diags := f.Synth()
	where := "interfaces.broken"
	wantRow(t, diags, where, `field Again defines export "url", which another field defines too`)
	wantRow(t, diags, where, "field Missing has no definition")
	wantRow(t, diags, where, "field Plain is a string, not an export")
	wantRow(t, diags, where, "field hidden is unexported")
	wantRow(t, diags, where, `export "sometime": lifecycle bits 0x20`)
	// A missing bound is written as missing, and check reports it.
	wantRow(t, diags, where+".exports.nowhere", "no locality bound")
	n := 0
	for _, d := range diags {
		if strings.Contains(d.Message, "field Plain") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the definition's row is reported %d times", n)
	}

	notStruct := fleet.DefineInterface("scalar", 3)
	g := fleet.New("consumer")
	fleet.Use(g, "s", notStruct)
	_, diags = g.Synth()
	wantRow(t, diags, "interfaces.scalar", "the exports are a int, not a struct")
}

// TestCheckReportsBindings: what the document can carry about a binding is
// left to check, in check's words.
func TestCheckReportsBindings(t *testing.T) {
	f := fleet.New("jobs")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	q := cloud.Queues("jobs-main", fleet.QueuesSpec{})
	fleet.Provide(f, "main", jobQueue, queueExports{
		URL:     fleet.Lit("https://example.com"), // known at plan, outside the apply-only bound
		Region:  aws.URLOf(q),                     // known after apply, outside the plan-only bound
		Shards:  fleet.Lit(4),
		Zones:   fleet.LitList("a"),
		Enabled: fleet.Lit(true),
	})
	_, diags := f.Synth()
	wantRow(t, diags, "provides.main", `does not bind export "token"`)
	wantRow(t, diags, "provides.main.exports.region", "known at apply")
	wantRow(t, diags, "provides.main.exports.url", "known at plan")
}

func TestWiringOnANilFleet(t *testing.T) {
	var f *fleet.Fleet
	c := fleet.Provide(f, "main", jobQueue, queueExports{})
	fleet.Expose(f, c)
	s := fleet.Use(f, "jobs", jobQueue, fleet.AtLeast(jobQueue.Exports().Shards, 1))
	fleet.Wire(f, s, "jobs", "main")
	if fmt.Sprint(s.Exports().Token) != spec.Redacted || s.Name() != "jobs" {
		t.Errorf("slot %q, token %v", s.Name(), s.Exports().Token)
	}
	// The zero Slot's exports are unset values.
	g := fleet.New("g")
	cloud := aws.Use(g, awsAccount, aws.Paris)
	var zero fleet.Slot[queueExports]
	cloud.Compute("api", fleet.Lit("nginx"), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{Env: fleet.Env{"U": zero.Exports().URL}})
	_, diags := g.Synth()
	wantRow(t, diags, "aws/compute/api", "an unset fleet.Output")
}

// TestWiringDocsQuoteTheExamples keeps docs/sdk.md's wiring section true:
// each of its Go blocks is quoted from examples/wiring, whose fleets are
// tested against spec/testdata/wiring.
func TestWiringDocsQuoteTheExamples(t *testing.T) {
	section := sdkSection(t, "## Wiring fleets together\n")
	var sources []string
	for _, path := range []string{"pgdb/pgdb.go", "pgshared/main.go", "shopeu/main.go"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "wiring", path))
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(b))
	}
	blocks := 0
	for rest := section; ; {
		block := firstBlock(rest, "go")
		if block == "" {
			break
		}
		blocks++
		found := false
		for _, src := range sources {
			found = found || strings.Contains(src, block)
		}
		if !found {
			t.Errorf("docs/sdk.md's wiring block is not quoted from examples/wiring:\n%s", block)
		}
		rest = rest[strings.Index(rest, block)+len(block):]
	}
	if blocks != 3 {
		t.Errorf("the wiring section has %d Go blocks, want 3 (interface, provider, consumer)", blocks)
	}
}

// TestAnywhereNarrowsTheBindingToGlobal: fleet.Anywhere writes the
// binding's locality as global, which check takes within a bound that
// allows it and refuses (bound-widened) within one that does not.
func TestAnywhereNarrowsTheBindingToGlobal(t *testing.T) {
	type bucketExports struct{ URL fleet.Output[string] }
	for _, c := range []struct {
		bound fleet.Locality
		ok    bool
	}{{fleet.Global | fleet.RegionLocal, true}, {fleet.RegionLocal, false}} {
		in := fleet.DefineInterface("public-bucket", bucketExports{URL: fleet.NewExport[string]("url", fleet.AfterApply, c.bound)})
		f := fleet.New("media")
		b := aws.Use(f, awsAccount, aws.Paris).ObjectStore("media-originals", fleet.ObjectStoreSpec{})
		fleet.Provide(f, "media", in, bucketExports{URL: fleet.Anywhere(aws.URLOf(b))})
		doc, _ := f.Synth()
		want := map[string]any{"observed": "aws/object-store/media-originals", "attribute": "url", "locality": "global"}
		if got := doc.Provides["media"].Exports["url"]; !reflect.DeepEqual(got, want) {
			t.Errorf("binding %v, want %v", got, want)
		}
		_, diags := spec.Compile(doc)
		widened := false
		for _, d := range diags {
			widened = widened || d.ID == spec.RowBoundWidened
		}
		if widened == c.ok {
			t.Errorf("bound %v: rows %v", c.bound, diags)
		}
	}
}

package fleet_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/spec"
)

func TestUseAllAndWireAll(t *testing.T) {
	f := fleet.New("worker")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	queues := fleet.UseAll(f, "queues", jobQueue, fleet.AtLeast(jobQueue.Exports().Shards, 2))
	fleet.WireAll(f, queues, fleet.At("a", "main"), fleet.At("b", "main", fleet.StateAt("s3://state-bucket/b")))
	cloud.Compute("worker-api", fleet.Lit("nginx:1.27"), fleet.Lit("arn:aws:iam::123456789012:role/worker"), fleet.ComputeSpec{
		Env: queues.Each(func(q queueExports) fleet.Output[string] { return q.URL }),
	})
	doc, diags := synth(t, f)
	noErrors(t, diags)
	if u := doc.Uses["queues"]; u.Reach != "all" || len(u.Requires) != 1 || queues.Name() != "queues" {
		t.Errorf("uses.queues = %+v", u)
	}
	w := doc.Wires["queues"]
	want := []spec.Wire{{Fleet: "a", Provides: "main"}, {Fleet: "b", Provides: "main", State: "s3://state-bucket/b"}}
	if !w.List || !reflect.DeepEqual(w.Entries, want) {
		t.Errorf("wires.queues = %+v", w)
	}
	if env := specOf(t, doc, "aws/compute/worker-api")["env"]; !reflect.DeepEqual(env, map[string]any{"use": "queues", "export": "url"}) {
		t.Errorf("env = %v, want the whole set", env)
	}
	m, diags := spec.Compile(doc)
	noErrors(t, diags)
	if !m.Uses["queues"].All {
		t.Error("the slot does not reach all")
	}

	// A set of one is still a list.
	g := fleet.New("worker")
	one := fleet.UseAll(g, "queues", jobQueue)
	fleet.WireAll(g, one, fleet.At("a", "main"))
	doc, _ = synth(t, g)
	if w := doc.Wires["queues"]; !w.List || len(w.Entries) != 1 {
		t.Errorf("a set of one is written %+v", w)
	}
}

func TestReachAllTheSDKReports(t *testing.T) {
	cases := []struct {
		name  string
		build func(f *fleet.Fleet, cloud *aws.Cloud)
		want  string
	}{
		{"the set merged with other entries", func(f *fleet.Fleet, cloud *aws.Cloud) {
			queues := fleet.UseAll(f, "queues", jobQueue)
			fleet.WireAll(f, queues, fleet.At("a", "main"))
			env := queues.Each(func(q queueExports) fleet.Output[string] { return q.URL }).Merge(fleet.Literals(map[string]string{"X": "y"}))
			cloud.Compute("api", fleet.Lit("nginx"), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{Env: env})
		}, "fills the whole Env: it cannot be merged with other entries"},
		{"a value that is not the slot's", func(f *fleet.Fleet, cloud *aws.Cloud) {
			queues := fleet.UseAll(f, "queues", jobQueue)
			fleet.WireAll(f, queues, fleet.At("a", "main"))
			env := queues.Each(func(queueExports) fleet.Output[string] { return fleet.Lit("x") })
			cloud.Compute("api", fleet.Lit("nginx"), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{Env: env})
		}, `slot "queues": Each picks a field of the exports it is given`},
		{"an export of the set leaked into one value", func(f *fleet.Fleet, cloud *aws.Cloud) {
			queues := fleet.UseAll(f, "queues", jobQueue)
			fleet.WireAll(f, queues, fleet.At("a", "main"))
			var leaked fleet.Output[string]
			queues.Each(func(q queueExports) fleet.Output[string] { leaked = q.URL; return q.URL })
			cloud.Compute("api", leaked, fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{})
		}, `field "image" reads queues.url, a set keyed by fleet and region`},
		{"wired twice", func(f *fleet.Fleet, cloud *aws.Cloud) {
			queues := fleet.UseAll(f, "queues", jobQueue)
			fleet.WireAll(f, queues, fleet.At("a", "main"))
			fleet.WireAll(f, queues, fleet.At("b", "main"))
		}, `slot "queues" wired twice`},
		{"a zero slot", func(f *fleet.Fleet, cloud *aws.Cloud) {
			fleet.WireAll(f, fleet.SlotAll[queueExports]{}, fleet.At("b", "main"))
		}, "wires a zero fleet.SlotAll"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := fleet.New("worker")
			tc.build(f, aws.Use(f, awsAccount, aws.Paris))
			_, diags := f.Synth()
			if got := table(diags); !strings.Contains(got, tc.want) {
				t.Fatalf("want %q, got:\n%s", tc.want, got)
			}
		})
	}
}

// TestReachDocsQuoteTheTest keeps docs/sdk.md's reach section true: its Go
// block is quoted from TestUseAllAndWireAll.
func TestReachDocsQuoteTheTest(t *testing.T) {
	section := sdkSection(t, "## Reaching all capabilities\n")
	src, err := os.ReadFile("reach_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if block := firstBlock(section, "go"); block == "" || !strings.Contains(string(src), block) {
		t.Errorf("docs/sdk.md's reach block is not quoted from fleet/reach_test.go:\n%s", block)
	}
}

// sdkSection is the section of docs/sdk.md under heading, up to the next.
func sdkSection(t *testing.T, heading string) string {
	t.Helper()
	page, err := os.ReadFile("../docs/sdk.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(page), heading)
	if start < 0 {
		t.Fatalf("docs/sdk.md has no section %q", strings.TrimSpace(heading))
	}
	section := string(page[start+len(heading):])
	return section[:strings.Index(section, "\n## ")]
}

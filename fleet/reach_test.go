package fleet_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/scaleway"
	"github.com/infra-iac/infra/spec"
)

func TestUseAllAndWireAll(t *testing.T) {
	f := fleet.New("worker")
	cloud := aws.Use(f, awsAccount, aws.Paris)
	queues := fleet.UseAll(f, "queues", jobQueue, fleet.AtLeast(jobQueue.Exports().Shards, 2))
	fleet.WireAll(f, queues, fleet.At("a", "main"), fleet.At("b", "main", fleet.StateAt("s3://state-bucket/b")))
	cloud.Queues("worker-in", fleet.QueuesSpec{
		Tags: queues.EachTags(func(q queueExports) fleet.Output[string] { return q.URL }),
	})
	scw := scaleway.Use(f, scwProject, scaleway.Paris)
	ns := scw.ContainerNamespace("worker", scaleway.ContainerNamespaceSpec{})
	scw.Container("worker-api", ns, fleet.Lit("nginx:1.27"), scaleway.ContainerSpec{
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
	set := map[string]any{"use": "queues", "export": "url"}
	if env := specOf(t, doc, "scaleway/scaleway-container/worker-api")["env"]; !reflect.DeepEqual(env, set) {
		t.Errorf("env = %v, want the whole set", env)
	}
	if tags := specOf(t, doc, "aws/queues/worker-in")["tags"]; !reflect.DeepEqual(tags, set) {
		t.Errorf("tags = %v, want the whole set", tags)
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
		{"the set given other tags", func(f *fleet.Fleet, cloud *aws.Cloud) {
			queues := fleet.UseAll(f, "queues", jobQueue)
			fleet.WireAll(f, queues, fleet.At("a", "main"))
			tags := queues.EachTags(func(q queueExports) fleet.Output[string] { return q.URL })
			tags["team"] = "jobs"
			cloud.Queues("in", fleet.QueuesSpec{Tags: tags})
		}, "fills the whole map of tags: it cannot be given other tags"},
		{"tags of a value that is not the slot's", func(f *fleet.Fleet, cloud *aws.Cloud) {
			queues := fleet.UseAll(f, "queues", jobQueue)
			fleet.WireAll(f, queues, fleet.At("a", "main"))
			cloud.Queues("in", fleet.QueuesSpec{Tags: queues.EachTags(func(queueExports) fleet.Output[string] { return fleet.Lit("x") })})
		}, `slot "queues": Each picks a field of the exports it is given`},
		{"a set in a Lambda's environment", func(f *fleet.Fleet, cloud *aws.Cloud) {
			queues := fleet.UseAll(f, "queues", jobQueue)
			fleet.WireAll(f, queues, fleet.At("a", "main"))
			env := queues.Each(func(q queueExports) fleet.Output[string] { return q.URL })
			cloud.Compute("api", fleet.Lit("nginx"), fleet.Lit("arn:aws:iam::123456789012:role/api"), fleet.ComputeSpec{Env: env})
		}, "Lambda takes environment variable names of letters, digits and '_' only"},
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

package fleet_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/scaleway"
	"github.com/infra-iac/infra/spec"
)

// largeFleet declares n resources (n a multiple of 10) the way a real fleet
// would: units of ten over both clouds, with references, Outputs in
// environments and composed secrets, so that synth and check both do all
// their work.
func largeFleet(n int) *fleet.Fleet {
	f := fleet.New("large")
	a := aws.Use(f, "123456789012", aws.Paris)
	s := scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Paris)
	tags := map[string]string{"team": "platform"}
	for i := 0; i < n/10; i++ {
		name := func(kind string) string { return fmt.Sprintf("%s-%04d", kind, i) }
		sg := a.SecurityGroup(name("sg"), "web tier", aws.SecurityGroupSpec{Ingress: []aws.Ingress{{Port: 443, CIDR: "0.0.0.0/0"}}, Tags: tags})
		a.Instance(name("vm"), "latest", aws.T3.Micro(), sg, aws.InstanceSpec{Tags: tags})
		pw := a.Secrets(name("pw"), fleet.FromEnv("DB_PASSWORD"), fleet.SecretsSpec{})
		db := a.Postgres(name("db"), "admin", pw, fleet.PostgresSpec{MinCapacity: fleet.Set(0.5), MaxCapacity: fleet.Set(2.0)})
		a.Secrets(name("url"), fleet.Composed("postgres://admin:{}@{}/main", aws.SecretValueOf(pw), aws.EndpointOf(db)), fleet.SecretsSpec{})
		q := a.Queues(name("q"), fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(60)})
		a.Compute(name("fn"), fleet.Lit("public.ecr.aws/lambda/provided:al2023"), fleet.Lit("arn:aws:iam::123456789012:role/fn"),
			fleet.ComputeSpec{Env: fleet.Env{"QUEUE_URL": aws.URLOf(q)}})
		ns := s.ContainerNamespace(name("ns"), scaleway.ContainerNamespaceSpec{})
		tok := s.Secrets(name("tok"), fleet.FromEnv("TOKEN"), fleet.SecretsSpec{})
		s.Container(name("web"), ns, fleet.Lit("nginx:1.27"), scaleway.ContainerSpec{
			SecretEnv: map[string]fleet.SecretField[scaleway.Secrets]{"TOKEN": tok},
		})
	}
	return f
}

// BenchmarkSynth1000 is the figure docs/performance.md records: declaring a
// 1,000-resource fleet with the SDK and synthesizing it, check included.
func BenchmarkSynth1000(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		doc, diags := largeFleet(1000).Synth()
		if len(doc.Resources) != 1000 || spec.HasErrors(diags) {
			b.Fatalf("%d resources, %v", len(doc.Resources), diags)
		}
	}
}

// TestSynth1000UnderASecond holds the acceptance figure in the ordinary
// test run, with a wide margin: the benchmark shows the real one.
func TestSynth1000UnderASecond(t *testing.T) {
	start := time.Now()
	doc, diags := largeFleet(1000).Synth()
	took := time.Since(start)
	if len(doc.Resources) != 1000 || len(diags) != 0 {
		t.Fatalf("%d resources, diagnostics:\n%s", len(doc.Resources), table(diags))
	}
	if took > time.Second {
		t.Errorf("a 1,000-resource fleet took %v to declare and synthesize; the goal is under a second", took)
	}
}

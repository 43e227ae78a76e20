package scaleway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

const fleet = "conformance"

// TestConformance runs the shared suite on every Scaleway kind, against
// the fake (REST products) and moto behind the region proxy (S3, SQS).
func TestConformance(t *testing.T) {
	e := newEnv(t, fleet)
	ensure := func(kind spec.Kind, name string, fields map[string]any) func(t *testing.T) {
		return func(t *testing.T) {
			d, _ := e.backend.Driver(kind)
			tg := target(kind, name, fields)
			if _, err := d.Create(t.Context(), tg); err != nil {
				t.Fatalf("setup %s %s: %v", kind, name, err)
			}
		}
	}
	prefixed := func(suffix string) string { return fleet + "-ct" + suffix }
	cases := []drivertest.Case{
		{Kind: spec.ObjectStore, Create: map[string]any{"versioning": true},
			Updates:  []map[string]any{{"versioning": false}, {"versioning": true}},
			OddNames: []string{"with.dots-and-digits-0", strings.Repeat("b", 63)}},
		{Kind: spec.Queues, NewName: prefixed, Create: map[string]any{"visibilityTimeoutSec": 30.0},
			Updates: []map[string]any{{"visibilityTimeoutSec": 120.0}}, Unreported: []string{spec.TagsField},
			NoUserTags: "Scaleway Queues take no tags; the owner is the name prefix",
			OddNames:   []string{fleet + "-Q_with-Mixed_case", fleet + "-jobs.fifo"}},
		{Kind: spec.Secrets, Create: map[string]any{"value": spec.NewSensitive("s3cr3t-0"), "description": "first"},
			Updates: []map[string]any{{"description": "second"}, {"value": spec.NewSensitive("s3cr3t-1")}}, PageSize: 2,
			OddNames: []string{"with.dots_and_underscores", "MixedCase-0"}},
		{Kind: spec.IAM, Create: map[string]any{"policies": []any{"ObjectStorageReadOnly"}}, Global: true,
			Updates: []map[string]any{{"policies": []any{"ObjectStorageFullAccess", "SecretManagerReadOnly"}}, {"policies": []any{}}}, PageSize: 2,
			OddNames: []string{"with.dots_and_underscores", "MixedCase-0"}},
		{Kind: spec.ImageRegistry, Create: map[string]any{}, PageSize: 2,
			Untested:   map[string]string{"immutableTags": "Container Registry tags are always mutable: true is refused (TestPortabilityRefusals)"},
			OddNames:   []string{"lower-case-0", strings.Repeat("r", 54)},
			Unreported: nil},
		{Kind: spec.Postgres, NewName: prefixed, Create: map[string]any{"masterUsername": "dbadmin",
			"masterPasswordSecret": spec.NewSensitive("pw"), "minCapacity": 0.0, "maxCapacity": 4.0},
			Updates:    []map[string]any{{"minCapacity": 1.0}, {"maxCapacity": 8.0}},
			Replaces:   []map[string]any{{"masterUsername": "other"}},
			Unreported: []string{spec.TagsField, "masterUsername"},
			NoUserTags: "Serverless SQL has no tags and no description; the owner is the name prefix",
			Untested:   map[string]string{"engineVersion": "Serverless SQL has no major-version upgrade: a change is refused"},
			OddNames:   []string{fleet + "-Mixed_case"}},
		{Kind: spec.ScalewayFunctionNamespace, Create: map[string]any{"description": "first"},
			Updates: []map[string]any{{"description": "second"}}, PageSize: 2, OddNames: []string{"ns-0-odd"}},
		{Kind: spec.ScalewayFunction, Setup: ensure(spec.ScalewayFunctionNamespace, "fn-ns", nil),
			Create: map[string]any{"namespace": "fn-ns", "runtime": "node22", "code": "module.exports.handle = () => 'ok'",
				"env": map[string]any{"A": "1"}, "sourceBucket": "assets"},
			Updates:  []map[string]any{{"env": map[string]any{"A": "2", "B": "3"}}, {"sourceBucket": "other"}, {"handler": "index.main"}},
			Replaces: []map[string]any{{"runtime": "python313"}, {"namespace": "fn-ns-2"}}, PageSize: 2,
			OddNames: []string{"fn-odd-0"}},
		{Kind: spec.ScalewayContainerNS, Create: map[string]any{"description": "first"},
			Updates: []map[string]any{{"description": "second"}}, PageSize: 2, OddNames: []string{"ns-0-odd"}},
		{Kind: spec.ScalewayContainer, Setup: ensure(spec.ScalewayContainerNS, "ct-ns", nil),
			Create: map[string]any{"namespace": "ct-ns", "image": "rg.fr-par.scw.cloud/app/web:1", "env": map[string]any{"A": "1"},
				"secretEnv": map[string]any{"DB": spec.NewSensitive("pw")}},
			Updates: []map[string]any{{"image": "rg.fr-par.scw.cloud/app/web:2", "port": 8081.0}, {"minScale": 1.0, "maxScale": 3.0},
				{"memoryMb": 512.0, "cpuLimit": 280.0, "timeoutSec": 60.0}, {"env": map[string]any{"B": "2"}}},
			Replaces: []map[string]any{{"namespace": "ct-ns-2"}}, PageSize: 2, OddNames: []string{"ct-odd-0"}},
		{Kind: spec.Compute, Setup: ensure(spec.ScalewayContainerNS, "ct-ns", nil),
			Create:   map[string]any{"namespace": "ct-ns", "image": "rg.fr-par.scw.cloud/app/web:1"},
			Updates:  []map[string]any{{"image": "rg.fr-par.scw.cloud/app/web:2"}, {"memoryMb": 1024.0, "timeoutSec": 120.0}, {"env": map[string]any{"K": "v"}}},
			Replaces: []map[string]any{{"namespace": "ct-ns-2"}}, PageSize: 2,
			Untested: map[string]string{"executionRole": "an AWS field: compute on scaleway cannot use executionRole (a named diagnostic)"}},
	}
	// A case whose Replaces name another namespace needs it to exist.
	for i := range cases {
		c := &cases[i]
		setup := c.Setup
		switch c.Kind {
		case spec.ScalewayFunction:
			c.Setup = func(t *testing.T) {
				setup(t)
				ensure(spec.ScalewayFunctionNamespace, "fn-ns-2", nil)(t)
			}
		case spec.ScalewayContainer, spec.Compute:
			c.Setup = func(t *testing.T) {
				setup(t)
				ensure(spec.ScalewayContainerNS, "ct-ns-2", nil)(t)
			}
		}
	}
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend:     e.backend,
		Region:      testRegion,
		OtherRegion: otherRegion,
		Owner:       fleet,
		Reset:       e.reset,
		Cases:       cases,
	})
	e.assertScoped(t)
}

// target builds a create target with the kind's defaults, as the engine
// does.
func target(kind spec.Kind, name string, fields map[string]any) providers.Target {
	info, _ := spec.Lookup(kind)
	f := map[string]any{}
	for k, v := range fields {
		f[k] = v
	}
	for _, field := range info.Fields {
		if _, set := f[field.Name]; !set && field.Default != nil {
			f[field.Name] = field.Default
		}
	}
	return providers.Target{Name: name, Region: testRegion, Fields: f, Owner: fleet}
}

var _ = fmt.Sprint

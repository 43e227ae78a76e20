package gcp

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

const fleet = "conformance"

// TestConformance runs the shared suite on every GCP kind this backend
// has a driver for: Cloud Storage on fake-gcs-server, Pub/Sub on pstest,
// Secret Manager on the schema-checked fake.
func TestConformance(t *testing.T) {
	e := newEnv(t)
	e.backend.opts.PageSize = 2
	cases := []drivertest.Case{
		{Kind: spec.ObjectStore, Create: map[string]any{"versioning": true}, PageSize: 2,
			Updates:  []map[string]any{{"versioning": false}, {"versioning": true}},
			OddNames: []string{"with.dots-and-digits-0", "under_score-0", strings.Repeat("b", 63)}},
		{Kind: spec.Queues, Create: map[string]any{"visibilityTimeoutSec": 30.0}, PageSize: 2,
			Updates:  []map[string]any{{"visibilityTimeoutSec": 120.0}},
			OddNames: []string{"Q_with-Mixed.case~0", "q" + strings.Repeat("Q", 254)}},
		{Kind: spec.Secrets, Create: map[string]any{"value": spec.NewSensitive("s3cr3t-0"), "description": "first"}, PageSize: 2,
			Updates:  []map[string]any{{"description": "second"}, {"value": spec.NewSensitive("s3cr3t-1")}},
			OddNames: []string{"with_underscores-0", "MixedCase-0", strings.Repeat("s", 255)}},
	}
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend:     e.backend,
		Region:      testRegion,
		OtherRegion: otherRegion,
		Owner:       fleet,
		Reset:       e.reset,
		Labels:      true,
		Cases:       cases,
	})
}

// TestEveryKindHasADriver: GCP offers seven kinds in spec; the backend
// registers a driver for each kind it has one for, and for no kind GCP
// does not offer.
func TestEveryRegisteredKindIsOffered(t *testing.T) {
	for _, k := range Kinds() {
		info, ok := spec.Lookup(k)
		if !ok || !info.OfferedBy(spec.GCP) {
			t.Errorf("%s has a GCP driver but spec does not offer it on gcp", k)
		}
	}
}

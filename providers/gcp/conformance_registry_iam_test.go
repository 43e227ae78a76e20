package gcp

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// TestConformanceRegistryIAM runs the shared suite on image-registry (an
// Artifact Registry docker repository) and iam (a service account and its
// roles on the project's policy), both on the schema-checked gcpfake.
func TestConformanceRegistryIAM(t *testing.T) {
	e := newEnv(t)
	e.backend.opts.PageSize = 2
	cases := []drivertest.Case{
		{Kind: spec.ImageRegistry, Create: map[string]any{"immutableTags": false}, PageSize: 2,
			Updates:  []map[string]any{{"immutableTags": true}, {"immutableTags": false}},
			OddNames: []string{"a-0", "r" + strings.Repeat("0", 62)}},
		{Kind: spec.IAM, Global: true, Create: map[string]any{"policies": []any{"roles/logging.logWriter"}}, PageSize: 2,
			Updates: []map[string]any{
				{"policies": []any{"roles/storage.objectViewer"}},
				{"policies": []any{"roles/storage.objectViewer", "roles/pubsub.subscriber"}},
				{"policies": []any{}},
			},
			OddNames: []string{"a" + strings.Repeat("b-0", 9) + "cc", "sa-0-1"}},
	}
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend:     e.backend,
		Region:      testRegion,
		OtherRegion: otherRegion,
		Owner:       fleet,
		Reset:       func(*testing.T) { e.rest.Reset() }, // these kinds live on gcpfake alone
		Labels:      true,
		Cases:       cases,
	})
}

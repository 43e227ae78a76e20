package aws

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestImageRegistryConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.ImageRegistry,
		Create:   map[string]any{"immutableTags": false},
		Updates:  []map[string]any{{"immutableTags": true}, {"immutableTags": false}},
		OddNames: []string{"team/sub/app", "app.v2_x-y", "ab", strings.Repeat("r", 200)},
	})
}

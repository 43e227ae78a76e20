package aws

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestQueuesConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.Queues,
		Create:   map[string]any{"visibilityTimeoutSec": 30.0},
		Updates:  []map[string]any{{"visibilityTimeoutSec": 120.0}, {"visibilityTimeoutSec": 0.0}},
		OddNames: []string{"Q_Mixed-case_0", "ends.fifo", strings.Repeat("q", 80)},
	})
}

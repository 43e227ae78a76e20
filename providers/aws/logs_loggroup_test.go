package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestLogGroupConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.LogGroup,
		Create:   map[string]any{"retentionDays": 7.0},
		Updates:  []map[string]any{{"retentionDays": 30.0}, {"retentionDays": 3653.0}},
		OddNames: []string{"Mixed_Case-0", "dots.and#hash", strings.Repeat("l", 512)},
	})
}

// A retention CloudWatch Logs does not accept is refused before any call,
// with the accepted values named.
func TestLogGroupRefusesRetentionBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.LogGroup)
	_, err := d.Create(context.Background(), providers.Target{Name: "lg", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"retentionDays": 2.0}})
	if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "1, 3, 5, 7") {
		t.Fatalf("Create = %v (code %s), want invalid argument naming the accepted values", err, errorCode(err))
	}
	if n := calls.count("CreateLogGroup"); n != 0 {
		t.Errorf("CreateLogGroup was called %d times", n)
	}
}

package aws

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestALBTargetGroupConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	one := makeNet(t, b, "tgone", "10.30.0.0/16", "10.30.1.0/24", "10.30.2.0/24", "10.30.3.0/24")
	two := makeNet(t, b, "tgtwo", "10.31.0.0/16", "10.31.1.0/24", "10.31.2.0/24", "10.31.3.0/24")
	lambda := map[string]string{"reason": "a lambda target group takes none of them (the driver refuses them)"}
	conformance(t, netReads{b}, srv, drivertest.Case{
		Kind:   spec.ALBTargetGroup,
		Create: map[string]any{"vpc": one.vpc, "protocol": "HTTP", "port": 80.0},
		Updates: []map[string]any{
			{"healthCheckPath": "/health"},
			{"healthCheckIntervalSec": 300.0, "healthyThreshold": 10.0},
			{"healthCheckPath": "/ready?deep=1", "healthCheckIntervalSec": 7.0, "healthyThreshold": 2.0},
		},
		Replaces: []map[string]any{
			{"port": 8080.0},
			{"protocol": "HTTPS", "port": 443.0},
			{"targetType": "ip"},
			{"vpc": two.vpc},
		},
		OddNames: []string{"Mixed-Case-0", strings.Repeat("t", 32), "internal-tg"},
	}, drivertest.Case{
		Kind: spec.ALBTargetGroup, Name: "lambda",
		Create: map[string]any{"targetType": "lambda"},
		Untested: map[string]string{"vpc": lambda["reason"], "protocol": lambda["reason"], "port": lambda["reason"],
			"healthCheckPath": lambda["reason"], "healthCheckIntervalSec": lambda["reason"], "healthyThreshold": lambda["reason"],
			"targetType": "the other case replaces it"},
	})
}

// What CreateTargetGroup's reference refuses is refused before any call.
func TestALBTargetGroupRefusesBadValuesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.ALBTargetGroup)
	ok := func(extra map[string]any) map[string]any {
		f := map[string]any{"vpc": "v", "protocol": "HTTP", "port": 80.0}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	wantRefused(t, d, []refusal{
		{"tg-", ok(nil), "begin or end with a hyphen"},
		{"tg.1", ok(nil), `character '.'`},
		{strings.Repeat("t", 33), ok(nil), "1 to 32 characters"},
		{"tg", map[string]any{"protocol": "HTTP", "port": 80.0}, "vpc, protocol and port are required for instance targets"},
		{"tg", ok(map[string]any{"protocol": "TCP"}), "takes HTTP or HTTPS"},
		{"tg", ok(map[string]any{"targetType": "alb"}), "write instance, ip or lambda"},
		{"tg", ok(map[string]any{"port": 0.0}), "from 1 to 65535"},
		{"tg", ok(map[string]any{"healthCheckPath": "health"}), "starting with /"},
		{"tg", ok(map[string]any{"healthCheckIntervalSec": 301.0}), "from 5 to 300"},
		{"tg", ok(map[string]any{"healthCheckIntervalSec": 6.0}), "longer than the health check's timeout, 6 s for HTTP"},
		{"tg", ok(map[string]any{"protocol": "HTTPS", "healthCheckIntervalSec": 10.0}), "10 s for HTTPS"},
		{"tg", ok(map[string]any{"healthyThreshold": 1.0}), "from 2 to 10"},
		{"tg", map[string]any{"targetType": "lambda", "port": 80.0}, "port does not apply to a lambda target group"},
		{"tg", map[string]any{"targetType": "lambda", "healthCheckPath": "/"}, "healthCheckPath does not apply"},
	})
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

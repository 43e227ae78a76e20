package executor

import (
	"context"
	"strings"
	"testing"
	"time"
)

// options.lockTimeout is a duration, cut to half of what is left of the
// invocation, so that the operation keeps the other half.
func TestLockTimeoutOption(t *testing.T) {
	if d, err := lockTimeout(context.Background(), ""); d != 0 || err != nil {
		t.Fatalf("empty: %v %v", d, err)
	}
	if d, err := lockTimeout(context.Background(), "90s"); d != 90*time.Second || err != nil {
		t.Fatalf("90s without a deadline: %v %v", d, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if d, _ := lockTimeout(ctx, "10m"); d > 30*time.Second || d < 25*time.Second {
		t.Fatalf("10m with a minute left: %v", d)
	}
	for _, bad := range []string{"soon", "-5s"} {
		if _, err := lockTimeout(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "options.lockTimeout") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	h := &Handler{}
	if _, resp := h.prepare(context.Background(), Request{Operation: OpApply, Document: []byte(`{"apiVersion": "infra/v1", "fleet": "shop"}`),
		Options: Options{LockTimeout: "soon"}}); resp.Status != StatusFailed || !strings.Contains(resp.Message, `options.lockTimeout "soon"`) {
		t.Fatalf("a bad lockTimeout: %+v", resp)
	}
}

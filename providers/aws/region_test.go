package aws

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// A call without a region fails at once, naming the resource, and is
// never sent: signed for region "", the SDK would retry the answer for
// the whole retry budget.
func TestCallWithoutRegionIsRefusedAtOnce(t *testing.T) {
	for _, k := range Kinds() {
		// A backend each, so that no kind finds the account another's
		// call looked up.
		var calls callCounter
		b, _ := newTestBackend(t, calls.option())
		rs, ok := providers.ResourcesOf(b, k)
		if !ok {
			t.Fatalf("no driver for %s", k)
		}
		// A name of the kind's shape (a record's FQDN:TYPE), which its
		// driver takes to the call.
		info, _ := spec.Lookup(k)
		name := info.ExampleAddressName()
		start := time.Now()
		_, _, err := rs.Read(context.Background(), "", name)
		if !errors.Is(err, ErrNoRegion) {
			t.Errorf("%s: read without a region: %v, want ErrNoRegion", k, err)
			continue
		}
		if want := "aws/" + string(k) + "/" + name; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not name %s", k, err, want)
		}
		if n := calls.total(); n != 0 {
			t.Errorf("%s: %d calls were sent without a region: %v", k, n, calls.n)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: refused after %s", k, d)
		}
	}
}

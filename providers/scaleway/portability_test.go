package scaleway

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// TestPortabilityRefusals: a field Scaleway cannot express is refused
// with its named diagnostic, before anything is made; never dropped.
func TestPortabilityRefusals(t *testing.T) {
	e := newEnv(t, "shop")
	for _, c := range []struct {
		kind   spec.Kind
		name   string
		fields map[string]any
		want   string
	}{
		{spec.ImageRegistry, "shop-images", map[string]any{"immutableTags": true}, "image-registry on scaleway cannot use immutableTags"},
		{spec.Queues, "shop-jobs", map[string]any{"tags": map[string]any{"team": "web"}}, "queues on scaleway cannot hold tags"},
		{spec.Queues, "jobs", map[string]any{}, "queues on scaleway needs the fleet prefix"},
		{spec.Postgres, "shop-db", map[string]any{"masterUsername": "a", "tags": map[string]any{"team": "web"}}, "postgres on scaleway cannot hold tags"},
		{spec.Postgres, "db", map[string]any{"masterUsername": "a"}, "postgres on scaleway needs the fleet prefix"},
		{spec.Postgres, "shop-db", map[string]any{"masterUsername": "a", "minCapacity": 0.5}, "postgres on scaleway needs whole-number minCapacity"},
		{spec.IAM, "deployer", map[string]any{"policies": []any{"arn:aws:iam::aws:policy/ReadOnlyAccess"}}, "iam on scaleway cannot use AWS policy ARNs"},
		{spec.Compute, "api", map[string]any{"image": "x", "namespace": "ns", "executionRole": "arn:aws:iam::1:role/x"}, "compute on scaleway cannot use executionRole"},
		{spec.Compute, "api", map[string]any{"image": "x"}, "compute on scaleway needs namespace"},
	} {
		d, _ := e.backend.Driver(c.kind)
		tg := target(c.kind, c.name, c.fields)
		tg.Owner = "shop"
		_, err := d.Create(t.Context(), tg)
		if err == nil || !strings.Contains(err.Error(), c.want) || e.backend.ErrorCode(err) != providers.InvalidArgument {
			t.Errorf("%s/%s: got %v, want invalid argument %q", c.kind, c.name, err, c.want)
		}
	}
	if left := e.fake.Leftovers(); len(left) > 0 {
		t.Errorf("a refused create left %v", left)
	}
}

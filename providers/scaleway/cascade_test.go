package scaleway

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// TestNamespaceDeleteSparesForeignChildren: Scaleway deletes a namespace's
// functions or containers with it, so a namespace holding one this fleet
// does not own is not deleted (a predecessor's namespace delete took an
// unmanaged sibling along).
func TestNamespaceDeleteSparesForeignChildren(t *testing.T) {
	e := newEnv(t, "shop")
	ctx := t.Context()
	for _, c := range []struct{ ns, child spec.Kind }{
		{spec.ScalewayFunctionNamespace, spec.ScalewayFunction},
		{spec.ScalewayContainerNS, spec.ScalewayContainer},
	} {
		nsd, _ := e.backend.Driver(c.ns)
		child, _ := e.backend.Driver(c.child)
		ns := target(c.ns, "ns", nil)
		ns.Owner = "shop"
		if _, err := nsd.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		kid := target(c.child, "theirs", map[string]any{"namespace": "ns", "runtime": "node22", "image": "x"})
		kid.Owner = "other"
		if _, err := child.Create(ctx, kid); err != nil {
			t.Fatal(err)
		}
		err := nsd.Delete(ctx, ns)
		if err == nil || e.backend.ErrorCode(err) != providers.Conflict || !strings.Contains(err.Error(), "theirs") {
			t.Fatalf("%s: delete with a foreign %s inside: %v", c.ns, c.child, err)
		}
		if _, err := child.Read(ctx, testRegion, "theirs"); err != nil {
			t.Fatalf("the foreign %s went: %v", c.child, err)
		}
		if err := child.Delete(ctx, kid); err != nil {
			t.Fatal(err)
		}
		if err := nsd.Delete(ctx, ns); err != nil {
			t.Fatalf("%s: delete once empty: %v", c.ns, err)
		}
	}
}

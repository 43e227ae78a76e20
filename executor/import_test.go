package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// The import operation is infra import's listing: what exists with no
// ownership mark and is not declared, narrowed by kind and name prefix,
// without a lock and without a write; a kind infra does not know and a
// broken document are failed.
func TestImportThroughTheExecutor(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	doc := queuesDoc("jobs")
	if resp := f.do(ctx, Request{Operation: OpApply, Document: doc, Options: Options{Unreviewed: true}}); resp.Status != StatusDone {
		t.Fatalf("apply: %s: %s", resp.Status, resp.Message)
	}
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "mail", Region: "eu-west-3", Fields: map[string]any{"visibilityTimeoutSec": 45.0}})
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "reports", Region: "eu-west-3", Fields: map[string]any{}})
	f.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "billing", Region: "eu-west-3", Fields: map[string]any{}, Owner: "billing"})
	before := f.blobs.Len()

	resp := f.do(ctx, decodeRequest(t, `{"operation": "import", "document": `+string(doc)+`, "options": {"kinds": ["queues"], "prefix": "ma"}}`))
	if resp.Status != StatusDone || resp.Import == nil || len(resp.Import.Declarations) != 1 ||
		resp.Import.Declarations[0].Resource.Address != "aws/queues/mail" || !resp.Import.Declarations[0].Adopt {
		t.Fatalf("import: %s: %s %+v", resp.Status, resp.Message, resp.Import)
	}
	all := f.do(ctx, Request{Operation: OpImport, Document: doc})
	if all.Status != StatusDone || len(all.Import.Declarations) != 2 ||
		all.Message != "import: 2 to adopt that no fleet owns, 0 new; passed over 1 owned by fleets and 1 this fleet knows" {
		t.Fatalf("import of every kind: %s: %s %+v", all.Status, all.Message, all.Import)
	}
	// The state is as the apply left it: no lock taken, nothing saved.
	if f.blobs.Len() != before {
		t.Fatalf("import wrote to the state: %d objects (was %d)", f.blobs.Len(), before)
	}
	if bad := f.do(ctx, Request{Operation: OpImport, Document: doc, Options: Options{Kinds: []string{"queue"}}}); bad.Status != StatusFailed ||
		!strings.Contains(bad.Message, `options.kinds: infra knows no kind "queue"`) {
		t.Fatalf("an unknown kind: %s: %s", bad.Status, bad.Message)
	}
	if bad := f.do(ctx, Request{Operation: OpImport, Document: []byte(`{"apiVersion": "infra/v1", "fleet": "Bad Name", "resources": []}`)}); bad.Status != StatusFailed || len(bad.Diagnostics) == 0 {
		t.Fatalf("a broken document: %s: %s", bad.Status, bad.Message)
	}
}

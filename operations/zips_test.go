package operations

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// zipFleet writes a fleet.json in its own directory, with a zip function
// whose zip is build/fn.zip beside it, and returns the document's path and
// a function that writes the zip and returns its base64 SHA-256.
func zipFleet(t *testing.T, extra string) (string, func(content string) string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fleet")
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"},
		"resources": [
		{"address": "aws/iam-role/fn", "spec": {"trust": "{}"}},
		{"address": "aws/lambda-function/fn", "spec": {"role": {"ref": "aws/iam-role/fn"}, "zip": "build/fn.zip",
			"runtime": "python3.13", "handler": "app.handler"` + extra + `}}]}`
	path := filepath.Join(dir, "fleet.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, func(content string) string {
		if err := os.WriteFile(filepath.Join(dir, "build", "fn.zip"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(content))
		return base64.StdEncoding.EncodeToString(sum[:])
	}
}

func zipSpec(t *testing.T, doc *spec.Document) map[string]any {
	t.Helper()
	r, ok := doc.Lookup("aws/lambda-function/fn")
	if !ok {
		t.Fatal("no function in the document")
	}
	return r.Spec
}

// Loading a document fills a zip function's codeSha256 from the file, and
// makes its path relative to where infra runs (the document's directory
// joined to it); a hash written by hand is kept, for the apply to hold the
// file to; a zip that cannot be read is an error naming the resource and
// the path.
func TestLoadDocumentResolvesZips(t *testing.T) {
	path, build := zipFleet(t, "")
	sha := build("v1")
	doc, err := LoadDocument(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := zipSpec(t, doc)
	want := filepath.Join(filepath.Dir(path), "build", "fn.zip")
	if s["zip"] != want || s["codeSha256"] != sha {
		t.Errorf("zip %v, codeSha256 %v; want %s, %s", s["zip"], s["codeSha256"], want, sha)
	}
	if rows := Check(doc, nil); spec.HasErrors(rows) {
		t.Errorf("check: %v", rows)
	}

	written, build := zipFleet(t, `, "codeSha256": "d3JpdHRlbg=="`)
	build("v1")
	doc, err = LoadDocument(context.Background(), written, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := zipSpec(t, doc); s["codeSha256"] != "d3JpdHRlbg==" {
		t.Errorf("a written codeSha256 became %v", s["codeSha256"])
	}

	missing, _ := zipFleet(t, "")
	_, err = LoadDocument(context.Background(), missing, nil)
	var ze *ZipError
	if !errors.As(err, &ze) || ze.Address.String() != "aws/lambda-function/fn" || ze.Path != filepath.Join(filepath.Dir(missing), "build", "fn.zip") ||
		!errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadDocument of a fleet whose zip is missing = %v, want a ZipError naming the function and the path", err)
	}
}

// A plan shows a code change exactly when the zip's bytes change, and an
// apply of a reviewed plan whose zip was rebuilt since is refused, before
// anything changes: the fresh plan carries the new hash, so its id is not
// the reviewed one.
func TestZipChangesArePlannedAndAReviewedPlanHoldsTheZip(t *testing.T) {
	path, build := zipFleet(t, "")
	cloud := memory.NewCloud(map[spec.Provider]string{spec.AWS: "123456789012"})
	dir := t.TempDir()
	ops := New(Env{Backends: memoryBackends(cloud),
		Store: func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) }})
	ctx := context.Background()
	load := func() *spec.Document {
		t.Helper()
		doc, err := LoadDocument(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	accept := func(*engine.Plan) error { return nil }
	v1 := build("v1")
	if _, err := ops.Apply(ctx, ApplyRequest{Document: load(), Confirm: accept}); err != nil {
		t.Fatal(err)
	}
	if p, err := ops.Plan(ctx, PlanRequest{Document: load()}); err != nil || p.HasChanges() {
		t.Fatalf("the same bytes: plan %+v, %v; want no change", p, err)
	}
	v2 := build("v2")
	reviewed, err := ops.Plan(ctx, PlanRequest{Document: load()})
	if err != nil {
		t.Fatal(err)
	}
	if len(reviewed.Actions) != 1 || reviewed.Actions[0].Action != engine.Update || len(reviewed.Actions[0].Changes) != 1 ||
		reviewed.Actions[0].Changes[0].Field != "codeSha256" || reviewed.Actions[0].Changes[0].Before != v1 || reviewed.Actions[0].Changes[0].After != v2 {
		t.Fatalf("new bytes: %+v, want one update of codeSha256 from %s to %s", reviewed.Actions, v1, v2)
	}
	build("v3, rebuilt after the review")
	_, err = ops.Apply(ctx, ApplyRequest{Document: load(), Expect: reviewed.ID})
	var changed *PlanChangedError
	if !errors.As(err, &changed) {
		t.Fatalf("apply of the reviewed plan after a rebuild: %v, want a changed plan", err)
	}
	if r, _ := cloud.Get(spec.AWS, spec.LambdaFunction, "eu-west-3", "fn"); r.Fields["codeSha256"] != v1 {
		t.Errorf("the refused apply left codeSha256 %v, want %s", r.Fields["codeSha256"], v1)
	}
}

// A switch from a zip to an image replaces the function: check derives
// packageType, which forces replacement, from which of the two is set, and
// Lambda cannot change a function's package type.
func TestSwitchingZipToImageReplaces(t *testing.T) {
	path, build := zipFleet(t, "")
	build("v1")
	cloud := memory.NewCloud(map[spec.Provider]string{spec.AWS: "123456789012"})
	dir := t.TempDir()
	ops := New(Env{Backends: memoryBackends(cloud),
		Store: func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) }})
	ctx := context.Background()
	doc, err := LoadDocument(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Apply(ctx, ApplyRequest{Document: doc, Confirm: func(*engine.Plan) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	image, err := spec.DecodeDocument([]byte(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"},
		"resources": [
		{"address": "aws/iam-role/fn", "spec": {"trust": "{}"}},
		{"address": "aws/lambda-function/fn", "spec": {"role": {"ref": "aws/iam-role/fn"}, "image": "123456789012.dkr.ecr.eu-west-3.amazonaws.com/fn:1"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ops.Plan(ctx, PlanRequest{Document: image})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) != 1 || p.Actions[0].Action != engine.Replace {
		t.Fatalf("zip to image: %+v, want one replace", p.Actions)
	}
	forced := false
	for _, c := range p.Actions[0].Changes {
		forced = forced || c.Field == "packageType" && c.ForcesReplacement && c.Before == spec.PackageZip && c.After == spec.PackageImage
	}
	if !forced {
		t.Errorf("changes %+v: want packageType Zip to Image, forcing the replace", p.Actions[0].Changes)
	}
}

package state

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

func testRecord() *spec.Published {
	return &spec.Published{Fleet: "pg-shared", Capabilities: map[string]spec.PublishedCapability{"eu": {
		Interface: "postgres-database", InterfaceHash: "sha256:abc", Consumers: "one", Exposed: true,
		Exports: map[string]spec.PublishedExport{
			"endpoint": {Type: spec.ExportString, Lifecycle: spec.LifecycleApply, Locality: spec.LocalityRegion, Region: "eu-west-3", Value: "db:5432"},
			"password": {Type: spec.ExportSecret, Secret: true, Value: "arn:aws:secretsmanager:eu-west-3:123456789012:secret:pw-AbCdEf"},
		}}}}
}

// Both stores keep the published record beside the ledger; a fleet that
// never published has none, and a record edited by hand is refused.
func TestPublishedRecordInBothStores(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file, err := OpenFile(dir, "pg-shared")
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := OpenBlobs(newMemBlobs(), "prefix", "pg-shared")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Store{file, blobs} {
		if p, err := s.LoadPublished(ctx); err != nil || p != nil {
			t.Fatalf("%s: nothing published yet, got %v, %v", s.Where(), p, err)
		}
		if err := s.SavePublished(ctx, testRecord()); err != nil {
			t.Fatal(err)
		}
		p, err := s.LoadPublished(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Capabilities["eu"].Exports["endpoint"].Value; got != "db:5432" || !strings.HasPrefix(p.Hash, "sha256:") || p.Version != spec.PublishedVersion {
			t.Fatalf("%s: read back %+v", s.Where(), p)
		}
	}
	path := filepath.Join(dir, "pg-shared", PublishedFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "db:5432", "evil:5432", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, _ := OpenFile(dir, "pg-shared")
	if _, err := fresh.LoadPublished(ctx); err == nil || !strings.Contains(err.Error(), "does not match its own hash") || !strings.Contains(err.Error(), path) {
		t.Fatalf("an edited record: %v", err)
	}
}

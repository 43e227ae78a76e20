package state

import (
	"context"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// Each save of the claims moves their generation on and marks it; a
// record put back to an older version (rolled back) loads as such, in
// both stores, and a save over it does not hide that.
func TestClaimsRolledBackLoadAsSuch(t *testing.T) {
	ctx := context.Background()
	blobs := newMemBlobs()
	dir := t.TempDir()
	open := map[string]func() Store{
		"file": func() Store { s, _ := OpenFile(dir, "pg-shared"); return s },
		"blob": func() Store { s, _ := OpenBlobs(blobs, "prefix", "pg-shared"); return s },
	}
	for name, fresh := range open {
		t.Run(name, func(t *testing.T) {
			s := fresh()
			var versions [][]byte
			for _, consumer := range []string{"shop-eu", "shop-us"} {
				c, err := s.LoadClaims(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.RolledBack() {
					t.Fatalf("a record as saved loads as rolled back: %+v", c)
				}
				c.Add("eu", spec.Claim{Fleet: consumer, Slot: "db"})
				if err := s.SaveClaims(ctx, c); err != nil {
					t.Fatal(err)
				}
				data, _ := EncodeClaims(c)
				versions = append(versions, data)
			}
			if c, _ := fresh().LoadClaims(ctx); c.Generation != 2 || c.RolledBack() {
				t.Fatalf("after two saves: generation %d, latest %d", c.Generation, c.Latest)
			}
			// Put generation 1 back: shop-us's claim is lost.
			rollBack(t, name, dir, blobs, versions[0])
			c, err := fresh().LoadClaims(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !c.RolledBack() || c.Generation != 1 || c.Latest != 2 {
				t.Fatalf("rolled back to generation 1: RolledBack %v, generation %d, latest %d", c.RolledBack(), c.Generation, c.Latest)
			}
			// A consumer saving its claim again does not make the record
			// whole: other claims may still be lost.
			s = fresh()
			c, _ = s.LoadClaims(ctx)
			c.Add("eu", spec.Claim{Fleet: "shop-us", Slot: "db"})
			if err := s.SaveClaims(ctx, c); err != nil {
				t.Fatal(err)
			}
			if c, _ := fresh().LoadClaims(ctx); !c.RolledBack() {
				t.Fatalf("a save over a rolled-back record hid it: generation %d, latest %d", c.Generation, c.Latest)
			}
			// Written on past the marks (the provider's --force), it is
			// whole again.
			s = fresh()
			c, _ = s.LoadClaims(ctx)
			c.Generation = c.Latest
			if err := s.SaveClaims(ctx, c); err != nil {
				t.Fatal(err)
			}
			if c, _ := fresh().LoadClaims(ctx); c.RolledBack() || c.Generation != 3 {
				t.Fatalf("written past the marks: generation %d, latest %d", c.Generation, c.Latest)
			}
		})
	}
}

// rollBack puts an older claims record in place, as a restore of an
// earlier object version does.
func rollBack(t *testing.T, store, dir string, blobs *memBlobs, data []byte) {
	t.Helper()
	if store == "blob" {
		blobs.mu.Lock()
		blobs.objs["prefix/pg-shared/"+ClaimsFile] = data
		blobs.tags["prefix/pg-shared/"+ClaimsFile]++
		blobs.mu.Unlock()
		return
	}
	if err := writeAtomic(dir+"/pg-shared", ClaimsFile, data); err != nil {
		t.Fatal(err)
	}
}

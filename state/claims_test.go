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

// countingBlobs counts the requests a store makes of its blobs.
type countingBlobs struct {
	*memBlobs
	gets, puts int
}

func (b *countingBlobs) Get(ctx context.Context, key string) ([]byte, string, error) {
	b.gets++
	return b.memBlobs.Get(ctx, key)
}

func (b *countingBlobs) Put(ctx context.Context, key string, data []byte, c Condition) (string, error) {
	b.puts++
	return b.memBlobs.Put(ctx, key, data, c)
}

// What the generation marks cost on a blob store (S3): a load of the
// claims is the record and one probe for the mark above its generation,
// which finds none while the record is current; a save is the record's
// guarded write and its mark. docs/performance.md quotes these.
func TestClaimsMarksCostOneReadPerLoadAndOneWritePerSave(t *testing.T) {
	ctx := context.Background()
	blobs := &countingBlobs{memBlobs: newMemBlobs()}
	s, _ := OpenBlobs(blobs, "prefix", "pg-shared")
	count := func(what string, wantGets, wantPuts int, f func() error) {
		t.Helper()
		blobs.gets, blobs.puts = 0, 0
		if err := f(); err != nil {
			t.Fatal(err)
		}
		if blobs.gets != wantGets || blobs.puts != wantPuts {
			t.Fatalf("%s: %d read(s) and %d write(s), want %d and %d", what, blobs.gets, blobs.puts, wantGets, wantPuts)
		}
	}
	var c *spec.Claims
	count("a load with no record", 2, 0, func() (err error) { c, err = s.LoadClaims(ctx); return })
	c.Add("eu", spec.Claim{Fleet: "shop-eu", Slot: "db"})
	count("a save", 0, 2, func() error { return s.SaveClaims(ctx, c) })
	fresh, _ := OpenBlobs(blobs, "prefix", "pg-shared")
	count("a load of a current record", 2, 0, func() (err error) { _, err = fresh.LoadClaims(ctx); return })
	count("a ledger load, for comparison", 1, 0, func() (err error) { _, err = fresh.LoadLedger(ctx); return })
}

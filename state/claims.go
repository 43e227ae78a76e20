package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/infra-iac/infra/spec"
)

// The claims record is bound to its generation by marks: each save writes
// claims.N.mark for its generation N, create-only, after the record. A
// rollback of claims.json to an older version (a restore of an earlier
// object version, a copy from a backup) leaves the marks of the
// generations written since, so the next load finds the mark above the
// record's generation and says so (spec.Claims.RolledBack). The provider
// cannot read its consumers' own records instead: they may live at any
// state location, and a rolled-back record no longer names the consumer
// whose claim it lost.

// maxMarkProbes bounds the marks a load reads past a rolled-back record:
// one is enough to know it was rolled back, the rest only say how far.
const maxMarkProbes = 64

func claimsMark(generation int64) string { return fmt.Sprintf("claims.%d.mark", generation) }

// loadClaims loads the claims record and reads the marks above its
// generation: one read (none found) unless it was rolled back.
func loadClaims(ctx context.Context, s recordStore) (*spec.Claims, error) {
	c, err := loadRecord(ctx, s, ClaimsFile, DecodeClaims, newClaims)
	if err != nil {
		return c, err
	}
	c.Latest = c.Generation
	for range maxMarkProbes {
		_, found, err := s.load(ctx, claimsMark(c.Latest+1))
		if err != nil {
			return nil, fmt.Errorf("read the mark of claims generation %d: %w", c.Latest+1, err)
		}
		if !found {
			break
		}
		c.Latest++
	}
	return c, nil
}

// saveClaims writes the record at the next generation, guarded, then its
// mark. A mark that exists already (a save that lost the race for the
// record wrote it) is left as it is: it still says that generation was
// written. A rolled-back record keeps its generation, so that it still
// loads as rolled back: a consumer saving its own claim again does not
// bring back the others the rollback lost. Only writing on past the
// marks (Generation = Latest, the provider's --force) ends that.
func saveClaims(ctx context.Context, s recordStore, c *spec.Claims) error {
	if c.RolledBack() {
		return saveRecord(ctx, s, ClaimsFile, c, EncodeClaims, false)
	}
	c.Generation++
	if err := saveRecord(ctx, s, ClaimsFile, c, EncodeClaims, false); err != nil {
		c.Generation--
		return err
	}
	mark := fmt.Appendf(nil, "{\"generation\": %d}\n", c.Generation)
	err := s.save(ctx, claimsMark(c.Generation), mark, false)
	var conflict *ConflictError
	if err != nil && !errors.As(err, &conflict) {
		return fmt.Errorf("mark claims generation %d: %w", c.Generation, err)
	}
	if c.Latest < c.Generation {
		c.Latest = c.Generation
	}
	return nil
}

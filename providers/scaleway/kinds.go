package scaleway

import (
	"fmt"
	"maps"
	"slices"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// entry is one kind's registration, made from init in the kind's file
// (the AWS backend's pattern): what the backend knows of the kind besides
// spec's row. How the kind carries the ownership mark is a fact of the
// product that check and the ownership package need too, so it is spec's
// (KindInfo.MarkOn), not the entry's.
type entry struct {
	kind spec.Kind
	// scanReads: the listing carries no owner (Object Storage lists buckets
	// without their tags), so the tag scan reads each resource it lists.
	scanReads bool
	new       func(b *Backend) providers.Driver
}

// entries holds every kind's entry, filled by init functions before main.
var entries = map[spec.Kind]*entry{}

// register adds a kind's entry; a kind registered twice is a programming
// error, caught the moment the package loads.
func register(e entry) {
	if _, dup := entries[e.kind]; dup {
		panic(fmt.Sprintf("scaleway: kind %s registered twice", e.kind))
	}
	entries[e.kind] = &e
}

// Kinds lists the kinds this backend has drivers for, sorted.
func Kinds() []spec.Kind { return slices.Sorted(maps.Keys(entries)) }

// scannedAsTwin reports whether kind k's resources are another registered
// kind's on Scaleway (spec's physical class names that kind: a compute is a
// scaleway-container), so the tag scan reports them under that kind once.
func scannedAsTwin(k spec.Kind) bool {
	class := spec.Kind(spec.PhysicalClass(spec.Scaleway, k))
	_, twin := entries[class]
	return class != k && twin
}

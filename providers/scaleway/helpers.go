package scaleway

// Helpers shared by the drivers: target fields, the tag list with the
// ownership tag, the name-prefix rung, pagination with a page budget.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// listPageLimit bounds every listing: reaching it means a runaway
// paginator, and a listing that stopped early would make every resource
// past it look absent.
const listPageLimit = 1000

// allPages calls fetch for page 1, 2, … until the items reach the total the
// API announces (or a page comes back empty), failing past listPageLimit.
func allPages[T any](ctx context.Context, k spec.Kind, region string, fetch func(page int32) ([]T, uint64, error)) ([]T, error) {
	var out []T
	for page := int32(1); ; page++ {
		if page > listPageLimit {
			return nil, fmt.Errorf("scaleway/%s: listing in %s passed %d pages; refusing to report a prefix of it", k, region, listPageLimit)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		items, total, err := fetch(page)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if len(items) == 0 || uint64(len(out)) >= total {
			return out, nil
		}
	}
}

// targetUint is a number field, decoded, as Scaleway takes it: whole and
// non-negative; a fraction or a negative is refused with the field's name.
func targetUint(name string, v float64, set bool) (uint32, bool, error) {
	if !set {
		return 0, false, nil
	}
	if v < 0 || v != float64(uint32(v)) {
		return 0, false, providers.Errorf(providers.InvalidArgument, "field %q: %v is not a whole number Scaleway accepts", name, v)
	}
	return uint32(v), true, nil
}

// tagList is the tag list a driver writes: Scaleway tags are plain
// strings, so each user tag is "key=value" and the ownership tag is
// "managed-by-infra=<fleet>". A key holding "=" could not be read back, so
// it is refused.
func tagList(t providers.Target) ([]string, error) {
	tags, err := providers.FieldStringMap(t.Fields, spec.TagsField)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(tags)+1)
	for k, v := range tags {
		if strings.Contains(k, "=") || k == "" {
			return nil, providers.Errorf(providers.InvalidArgument, "tag key %q: Scaleway tags are strings written key=value, so a key cannot be empty or hold '='", k)
		}
		if k == spec.OwnershipTagKey {
			continue
		}
		out = append(out, k+"="+v)
	}
	if t.Owner != "" {
		out = append(out, spec.OwnershipTagKey+"="+t.Owner)
	}
	sort.Strings(out)
	return out, nil
}

// readTags turns a Scaleway tag list into the reported tags (ownership tag
// included) and the owner. A tag without "=" reads as a key with an empty
// value.
func readTags(tags []string) (map[string]any, string) {
	out := map[string]any{}
	owner := ""
	for _, t := range tags {
		k, v, _ := strings.Cut(t, "=")
		out[k] = v
		if k == spec.OwnershipTagKey {
			owner = v
		}
	}
	return out, owner
}

// withoutOwner returns tags without this fleet's ownership tag, for a
// release.
func withoutOwner(tags []string, owner string) ([]string, bool) {
	out := make([]string, 0, len(tags))
	found := false
	for _, t := range tags {
		if t == spec.OwnershipTagKey+"="+owner {
			found = true
			continue
		}
		out = append(out, t)
	}
	return out, found
}

// prefixOwner is the name-prefix rung: a name starting with "<fleet>-"
// belongs to the fleet.
func prefixOwner(fleet, name string) string {
	if fleet != "" && strings.HasPrefix(name, fleet+"-") && len(name) > len(fleet)+1 {
		return fleet
	}
	return ""
}

// requirePrefix refuses to create a resource of a name-prefix kind whose
// name would not carry its owner: it would exist unowned.
func requirePrefix(k spec.Kind, t providers.Target) error {
	if t.Owner == "" || prefixOwner(t.Owner, t.Name) == t.Owner {
		return nil
	}
	return providers.Errorf(providers.InvalidArgument,
		"%s on scaleway needs the fleet prefix: scaleway/%s/%s carries no tags, so its owner is its name; name it %s-…",
		k, k, t.Name, t.Owner)
}

// noUserTags refuses user tags on a kind whose Scaleway product has no tags
// and no free-text field: they would be silently dropped.
func noUserTags(k spec.Kind, t providers.Target) error {
	tags, err := providers.FieldStringMap(t.Fields, spec.TagsField)
	if err != nil {
		return err
	}
	delete(tags, spec.OwnershipTagKey)
	if len(tags) > 0 {
		return providers.Errorf(providers.InvalidArgument, "%s on scaleway cannot hold tags: the Scaleway product has no tags (ownership is the name prefix); remove tags", k)
	}
	return nil
}

// byName returns the one item named name, NotFound when none, and an error
// when the project holds two (names are not unique on Scaleway, and
// guessing would act on the wrong one).
func byName[T any](k spec.Kind, region, name string, items []T, nameOf func(T) string) (T, error) {
	var found []T
	for _, it := range items {
		if nameOf(it) == name {
			found = append(found, it)
		}
	}
	var zero T
	switch len(found) {
	case 0:
		return zero, providers.Errorf(providers.NotFound, "scaleway/%s/%s not found in %s", k, name, region)
	case 1:
		return found[0], nil
	}
	return zero, providers.Errorf(providers.Conflict, "scaleway/%s/%s: %d resources of that name in the project in %s; infra names resources uniquely, so resolve it by hand", k, name, len(found), region)
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func envAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

package scaleway

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// TestListingFailsPastThePageBudget: a listing whose pages never reach
// the announced total fails rather than return a prefix.
func TestListingFailsPastThePageBudget(t *testing.T) {
	calls := 0
	_, err := allPages(t.Context(), spec.Secrets, "fr-par", func(page int32) ([]int, uint64, error) {
		calls++
		return []int{1}, 1 << 40, nil
	})
	if err == nil || !strings.Contains(err.Error(), "refusing to report a prefix") || calls != listPageLimit {
		t.Fatalf("%d calls, %v", calls, err)
	}
	got, err := allPages(t.Context(), spec.Secrets, "fr-par", func(page int32) ([]int, uint64, error) {
		if page > 3 {
			t.Fatal("read past the total")
		}
		return []int{int(page)}, 3, nil
	})
	if err != nil || len(got) != 3 {
		t.Fatalf("%v, %v", got, err)
	}
}

// TestTagsRoundTrip: user tags are "key=value" strings beside the
// ownership tag; a key Scaleway could not give back is refused.
func TestTagsRoundTrip(t *testing.T) {
	tags, err := tagList(providers.Target{Owner: "shop", Fields: map[string]any{"tags": map[string]any{"team": "web", "note": "a=b:c"}}})
	if err != nil {
		t.Fatal(err)
	}
	read, owner := readTags(tags)
	if owner != "shop" || read["team"] != "web" || read["note"] != "a=b:c" || len(read) != 3 {
		t.Fatalf("%v -> %v, %q", tags, read, owner)
	}
	if _, err := tagList(providers.Target{Fields: map[string]any{"tags": map[string]any{"a=b": "c"}}}); err == nil {
		t.Fatal("a key holding '=' was accepted")
	}
	if prefixOwner("shop", "shop-jobs") != "shop" || prefixOwner("shop", "shopping") != "" || prefixOwner("shop", "shop-") != "" || prefixOwner("", "x-y") != "" {
		t.Fatal("the name-prefix rung is wrong")
	}
}

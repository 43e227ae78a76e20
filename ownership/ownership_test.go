package ownership

import (
	"testing"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
)

func TestJudge(t *testing.T) {
	doc := &spec.Document{APIVersion: spec.APIVersion, Fleet: "shop", Placement: map[spec.Provider]string{spec.AWS: "eu-west-3"},
		Exclusions: []spec.Exclusion{{Address: "aws/queues/legacy-*", Why: "the data team's"}}}
	m, diags := spec.Compile(doc)
	if spec.HasErrors(diags) {
		t.Fatal(diags)
	}
	for _, c := range []struct {
		addr, owner string
		want        Verdict
	}{
		{"aws/queues/jobs", "shop", Ours},
		{"aws/queues/jobs", "billing", Foreign},
		{"aws/queues/jobs", "", Untagged},
		{"aws/queues/legacy-logs", "shop", Excluded}, // an exclusion wins over a tag
		{"aws/queues/legacy", "shop", Ours},          // a prefix, never a substring
		{"aws/object-store/legacy-logs", "shop", Ours},
	} {
		if got := Judge(m, spectest.Address(c.addr), c.owner); got != c.want {
			t.Errorf("%s owned by %q: %s, want %s", c.addr, c.owner, got, c.want)
		}
	}
}

func TestRungsAndPrefix(t *testing.T) {
	if RungOf(spec.AWS, spec.Queues) != Tag || RungOf(spec.Scaleway, spec.Queues) != NamePrefix ||
		RungOf(spec.Scaleway, spec.ImageRegistry) != Description || RungOf(spec.Scaleway, spec.Secrets) != Tag {
		t.Fatal("rungs")
	}
	if OwnerFromPrefix("shop", "shop-jobs") != "shop" || OwnerFromPrefix("shop", "shopping") != "" || OwnerFromPrefix("shop", "shop-") != "" {
		t.Fatal("prefix")
	}
}

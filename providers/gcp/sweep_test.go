package gcp

import (
	"context"
	"sort"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/sweep"
)

// TestSweepOnGCP: of the acceptance names, only the two debris names
// without another fleet's mark go, on every kind; the rest are kept with
// their reason, and a listing again finds the kept ones only.
func TestSweepOnGCP(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	names := map[string]string{"ci-tests-a": "", "ci-tests-b": "", "archive-of-ci-tests-c": "", "CI-TESTS-d": "",
		"ci-testsx": "", "production-billing": "", "ci-tests-old-fleet-thing": "shop"}
	kinds := []spec.Kind{spec.ObjectStore, spec.Queues, spec.Secrets}
	for _, k := range kinds {
		d, _ := e.backend.Driver(k)
		for n, owner := range names {
			if k == spec.ObjectStore && n == "CI-TESTS-d" {
				continue // a bucket name is lower case
			}
			f := map[string]any{}
			if k == spec.Secrets {
				f["value"] = spec.NewSensitive("debris")
			}
			if _, err := d.Create(ctx, providers.Target{Name: n, Region: testRegion, Owner: owner, Fields: f}); err != nil {
				t.Fatalf("%s/%s: %v", k, n, err)
			}
		}
	}
	opts := sweep.Options{Backends: map[spec.Provider]providers.Backend{spec.GCP: e.backend},
		Regions: map[spec.Provider][]string{spec.GCP: {testRegion}}, Accounts: map[spec.Provider]string{spec.GCP: testProject},
		Kinds: kinds, Prefix: "ci-tests-", RoundDelay: -1, Delete: true}
	rep, err := sweep.Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for _, c := range rep.Candidates {
		gone = append(gone, c.Address.String())
		if c.Status != sweep.StatusDeleted {
			t.Errorf("%s: %s", c.Address, c.Status)
		}
	}
	sort.Strings(gone)
	want := []string{"gcp/object-store/ci-tests-a", "gcp/object-store/ci-tests-b", "gcp/queues/ci-tests-a", "gcp/queues/ci-tests-b",
		"gcp/secrets/ci-tests-a", "gcp/secrets/ci-tests-b"}
	if len(gone) != len(want) || len(rep.Errors) > 0 || len(rep.Survivors) > 0 {
		t.Fatalf("deleted %v (errors %v, survivors %v), want %v", gone, rep.Errors, rep.Survivors, want)
	}
	for i := range want {
		if gone[i] != want[i] {
			t.Fatalf("deleted %v, want %v", gone, want)
		}
	}
	for _, k := range kinds {
		d, _ := e.backend.Driver(k)
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(names) - 2 - map[bool]int{true: 1}[k == spec.ObjectStore]; len(rs) != want {
			t.Errorf("%s: %d left, want %d", k, len(rs), want)
		}
	}
}

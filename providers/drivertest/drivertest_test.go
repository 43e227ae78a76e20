package drivertest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
)

// TestSuiteCatchesBrokenDrivers runs the suite on the memory driver broken
// in one way at a time, in a child process (a failing suite fails its
// test), and expects each breakage to fail it with a telling message.
func TestSuiteCatchesBrokenDrivers(t *testing.T) {
	breakages := map[string]string{
		"":                   "",
		"owner-lost":         "lacks managed-by-infra=conformance",
		"first-page":         "is missing from the listing",
		"field-unreported":   `field "visibilityTimeoutSec" is not reported`,
		"update-ignored":     "visibilityTimeoutSec: reported 30, want 120",
		"delete-noop":        "still reads after delete",
		"notfound-unknown":   "want not found",
		"listed-elsewhere":   "List(region-b) shows",
		"tags-not-replaced":  `reported {"added":"x=y:z","cost centre":"42"`,
		"create-wrong-owner": "Create reported owner",
	}
	for mode, want := range breakages {
		t.Run("mode="+mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenDriverChild$", "-test.v")
			cmd.Env = append(os.Environ(), "DRIVERTEST_BROKEN="+mode)
			out, err := cmd.CombinedOutput()
			if mode == "" {
				if err != nil {
					t.Fatalf("the unbroken driver fails the suite:\n%s", out)
				}
				return
			}
			if err == nil {
				t.Fatalf("the suite passes a driver broken by %s", mode)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("broken by %s, the suite fails without saying %q:\n%s", mode, want, out)
			}
		})
	}
}

func TestBrokenDriverChild(t *testing.T) {
	mode, ok := os.LookupEnv("DRIVERTEST_BROKEN")
	if !ok {
		t.Skip("run by TestSuiteCatchesBrokenDrivers")
	}
	cloud := memory.NewCloud(map[spec.Provider]string{spec.AWS: "1"})
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend:     broken{Backend: cloud.Backend(spec.AWS), mode: mode},
		Region:      "region-a",
		OtherRegion: "region-b",
		Cases: []drivertest.Case{{
			Kind:     spec.Queues,
			Create:   map[string]any{"visibilityTimeoutSec": 30.0},
			Updates:  []map[string]any{{"visibilityTimeoutSec": 120.0}},
			OddNames: []string{"Odd_name-1"},
			PageSize: 2,
		}},
	})
}

// broken wraps the memory backend with one deliberate fault.
type broken struct {
	providers.Backend
	mode string
}

func (b broken) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	return brokenDriver{Driver: d, mode: b.mode}, ok
}

type brokenDriver struct {
	providers.Driver
	mode string
}

func (d brokenDriver) List(ctx context.Context, region string) ([]providers.Resource, error) {
	if d.mode == "listed-elsewhere" {
		region = "region-a"
	}
	rs, err := d.Driver.List(ctx, region)
	if d.mode == "first-page" && len(rs) > 2 {
		rs = rs[:2]
	}
	return rs, err
}

func (d brokenDriver) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	r, err := d.Driver.Read(ctx, region, name)
	switch {
	case d.mode == "notfound-unknown" && err != nil:
		return r, os.ErrNotExist
	case d.mode == "field-unreported":
		delete(r.Fields, "visibilityTimeoutSec")
	}
	return r, err
}

func (d brokenDriver) Create(ctx context.Context, tg providers.Target) (providers.Resource, error) {
	r, err := d.Driver.Create(ctx, tg)
	if d.mode == "create-wrong-owner" {
		r.Owner = ""
	}
	return r, err
}

func (d brokenDriver) Update(ctx context.Context, tg providers.Target, changed []string) (providers.Resource, error) {
	switch d.mode {
	case "update-ignored":
		return d.Driver.Read(ctx, tg.Region, tg.Name)
	case "owner-lost":
		tg.Owner = ""
		if rel, ok := d.Driver.(providers.Releaser); ok {
			_ = rel.Release(ctx, tg.Region, tg.Name, "conformance")
		}
	case "tags-not-replaced":
		// Merges instead of replacing: removed keys stay.
		want, ok := tg.Fields[spec.TagsField].(map[string]any)
		if !ok {
			break
		}
		cur, err := d.Driver.Read(ctx, tg.Region, tg.Name)
		if err != nil {
			return cur, err
		}
		merged := map[string]any{}
		old, _ := cur.Fields[spec.TagsField].(map[string]any)
		for k, v := range old {
			merged[k] = v
		}
		for k, v := range want {
			merged[k] = v
		}
		tg.Fields[spec.TagsField] = merged
	}
	return d.Driver.Update(ctx, tg, changed)
}

func (d brokenDriver) Delete(ctx context.Context, tg providers.Target) error {
	if d.mode == "delete-noop" {
		return nil
	}
	return d.Driver.Delete(ctx, tg)
}

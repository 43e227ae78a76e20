package operations

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// withdrawRig runs the wiring fleets on the memory cloud: the provider
// (pg-shared) through a backend whose delete of its database waits at a
// gate, the consumer (shop-eu) through a plain one, both on one state
// directory.
type withdrawRig struct {
	*wiringRig
	provider, consumer *Operations
	// deleting receives when the provider's delete of the database
	// starts; the delete then waits for release, and fails with its value
	// when that is an error.
	deleting chan struct{}
	release  chan error
}

func newWithdrawRig(t *testing.T) *withdrawRig {
	cloud := memory.NewCloud(map[spec.Provider]string{spec.AWS: "123456789012"})
	dir := t.TempDir()
	r := &withdrawRig{wiringRig: &wiringRig{t: t, dir: dir}, deleting: make(chan struct{}, 1), release: make(chan error, 1)}
	env := func(backends BackendsFunc) Env {
		return Env{Backends: backends,
			Store: func(ctx context.Context, fleet string) (state.Store, error) { return state.OpenFile(dir, fleet) },
			Getenv: func(k string) string {
				if k == "PG_EU_PASSWORD" {
					return canary
				}
				return ""
			}}
	}
	r.consumer = New(env(memoryBackends(cloud)))
	r.provider = New(env(func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		return map[spec.Provider]providers.Backend{spec.AWS: &gateBackend{Backend: cloud.Backend(spec.AWS), r: r}}, nil, nil
	}))
	r.ops = r.provider
	return r
}

type gateBackend struct {
	providers.Backend
	r *withdrawRig
}

func (b *gateBackend) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	if k != spec.Postgres {
		return d, ok
	}
	return &gateDriver{Driver: d, r: b.r}, ok
}

type gateDriver struct {
	providers.Driver
	r *withdrawRig
}

func (d *gateDriver) Delete(ctx context.Context, t providers.Target) error {
	d.r.deleting <- struct{}{}
	if err := <-d.r.release; err != nil {
		return err
	}
	return d.Driver.Delete(ctx, t)
}

func (r *withdrawRig) applyWith(ops *Operations, doc *spec.Document, destroy bool) error {
	_, err := ops.Apply(context.Background(), ApplyRequest{Document: doc, Destroy: destroy, Confirm: func(*engine.Plan) error { return nil }})
	return err
}

// A consumer that claims while the provider's destroy is deleting what
// its capability exports is refused: the destroy took the capability out
// of service, by a guarded write of the claims, before its first delete.
// Before, the claim succeeded and the consumer kept it, reading a
// database that was then deleted.
func TestAClaimDuringTheProvidersDestroyIsRefused(t *testing.T) {
	r := newWithdrawRig(t)
	if err := r.applyWith(r.provider, r.doc("pg-shared", nil), false); err != nil {
		t.Fatal(err)
	}
	destroyed := make(chan error, 1)
	go func() { destroyed <- r.applyWith(r.provider, r.doc("pg-shared", nil), true) }()
	select {
	case <-r.deleting:
	case err := <-destroyed:
		t.Fatalf("the destroy ended before deleting the database: %v", err)
	}
	err := r.applyWith(r.consumer, r.doc("shop-eu", nil), false)
	var out *CapabilityWithdrawnError
	if !errors.As(err, &out) || out.Capability != "eu" || !strings.Contains(err.Error(), "removes capability eu") {
		t.Errorf("a claim during the provider's destroy: %v, want *CapabilityWithdrawnError", err)
	}
	r.release <- nil
	if err := <-destroyed; err != nil {
		t.Fatalf("the destroy: %v", err)
	}
	c := r.claims("pg-shared")
	if holders := c.Holders("eu"); len(holders) != 0 {
		t.Errorf("after the destroy, %v hold(s) the capability it deleted", holders)
	}
	if len(c.Withdrawn) != 0 {
		t.Errorf("the destroy left capabilities out of service: %v", c.Withdrawn)
	}
}

// A consumer that claims after the provider planned, before its first
// delete, makes the provider's withdrawal see the claim: the destroy is
// refused with the consumer-protected row, and nothing is deleted.
func TestAClaimBetweenTheProvidersPlanAndItsFirstDeleteRefusesTheDestroy(t *testing.T) {
	r := newWithdrawRig(t)
	if err := r.applyWith(r.provider, r.doc("pg-shared", nil), false); err != nil {
		t.Fatal(err)
	}
	r.release <- nil // a delete, wrongly made, goes on and is seen
	_, err := r.provider.Apply(context.Background(), ApplyRequest{Document: r.doc("pg-shared", nil), Destroy: true,
		Confirm: func(*engine.Plan) error { return r.applyWith(r.consumer, r.doc("shop-eu", nil), false) }})
	if got := errText(err); !strings.Contains(got, "[consumer-protected]") || !strings.Contains(got, "shop-eu") {
		t.Fatalf("the destroy after a claim since its plan: %s", got)
	}
	select {
	case <-r.deleting:
		t.Fatal("the destroy deleted the database a consumer claimed")
	default:
	}
	if c := r.claims("pg-shared"); len(c.Withdrawn) != 0 || len(c.Holders("eu")) != 1 {
		t.Fatalf("claims after the refused destroy: %+v", c)
	}
}

// A destroy that fails gives its capabilities back: a consumer can claim
// what is still there.
func TestAFailedDestroyGivesTheCapabilityBack(t *testing.T) {
	r := newWithdrawRig(t)
	if err := r.applyWith(r.provider, r.doc("pg-shared", nil), false); err != nil {
		t.Fatal(err)
	}
	r.release <- errors.New("throttled")
	if err := r.applyWith(r.provider, r.doc("pg-shared", nil), true); err == nil {
		t.Fatal("the destroy succeeded though its delete failed")
	}
	<-r.deleting
	if c := r.claims("pg-shared"); len(c.Withdrawn) != 0 {
		t.Fatalf("a failed destroy left capabilities out of service: %v", c.Withdrawn)
	}
	if err := r.applyWith(r.consumer, r.doc("shop-eu", nil), false); err != nil {
		t.Fatalf("a claim after the failed destroy: %v", err)
	}
}

// A claims record put back to an older version (the consumer's claim is
// gone from it) no longer lets the provider delete what the consumer
// reads: the destroy is refused with claims-rolled-back; --force goes on
// and writes the record past the rollback.
func TestARolledBackClaimsRecordRefusesTheDestroy(t *testing.T) {
	r := newWithdrawRig(t)
	if err := r.applyWith(r.provider, r.doc("pg-shared", nil), false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.dir, "pg-shared", state.ClaimsFile)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("claims before any consumer: %v", err)
	}
	if err := r.applyWith(r.consumer, r.doc("shop-eu", nil), false); err != nil {
		t.Fatal(err)
	}
	// Rolled back to before the claim: the object's older version is
	// none at all.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	r.release <- nil // for the one delete, wrongly made or forced
	err := r.applyWith(r.provider, r.doc("pg-shared", nil), true)
	if got := errText(err); !strings.Contains(got, "[claims-rolled-back]") || !strings.Contains(got, "generation 1 was written since") {
		t.Fatalf("the destroy over a rolled-back claims record: %s", got)
	}
	select {
	case <-r.deleting:
		t.Fatal("the destroy deleted the database over a rolled-back claims record")
	default:
	}
	_, err = r.provider.Apply(context.Background(), ApplyRequest{Document: r.doc("pg-shared", nil), Destroy: true, Force: true,
		Confirm: func(*engine.Plan) error { return nil }})
	if err != nil {
		t.Fatalf("the forced destroy: %v", err)
	}
	if c := r.claims("pg-shared"); c.RolledBack() {
		t.Fatalf("after the forced destroy the record is still rolled back: generation %d, latest %d", c.Generation, c.Latest)
	}
}

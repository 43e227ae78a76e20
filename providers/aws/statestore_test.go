package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// The S3 state store on the emulator: the lock is exclusive through
// If-None-Match: *, a stale If-Match save fails with 412 and overwrites
// nothing.
func TestStateBlobsOnS3(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	client := s3.NewFromConfig(b.Config(), func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("infra-state"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(b.Config().Region)}}); err != nil {
		t.Fatal(err)
	}
	open := func() *state.BlobStore {
		blobs, prefix, err := b.OpenStateBlobs("s3://infra-state/teams/web")
		if err != nil {
			t.Fatal(err)
		}
		st, err := state.OpenBlobs(blobs, prefix, "shop")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, other := open(), open()
	if a.Where() != "s3://infra-state/teams/web/shop" {
		t.Errorf("where: %s", a.Where())
	}
	lock, err := a.Lock(ctx, state.LockInfo{ID: "first", Holder: "alice", Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Lock(ctx, state.LockInfo{ID: "second"})
	var locked *state.LockedError
	if !errors.As(err, &locked) || locked.Info.Holder != "alice" {
		t.Fatalf("second lock: %v", err)
	}

	la, _ := a.LoadLedger(ctx)
	lo, _ := other.LoadLedger(ctx)
	la.Put(state.Row{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs", Region: "eu-west-3"})
	if err := a.SaveLedger(ctx, la); err != nil {
		t.Fatal(err)
	}
	la.Put(state.Row{Provider: spec.AWS, Kind: spec.Queues, Name: "mail", Region: "eu-west-3"})
	if err := a.SaveLedger(ctx, la); err != nil {
		t.Fatalf("second save: %v", err)
	}
	lo.Put(state.Row{Provider: spec.AWS, Kind: spec.Queues, Name: "intruder", Region: "eu-west-3"})
	var conflict *state.ConflictError
	if err := other.SaveLedger(ctx, lo); !errors.As(err, &conflict) {
		t.Fatalf("stale save: %v", err)
	}
	got, err := open().LoadLedger(ctx)
	if err != nil || len(got.Rows) != 2 || got.Rows[0].Name != "jobs" {
		t.Fatalf("ledger after the race: %+v %v", got, err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Lock(ctx, state.LockInfo{ID: "second"}); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if err := a.Unlock(ctx, "wrong"); err == nil || !strings.Contains(err.Error(), "second") {
		t.Fatalf("unlock with a wrong id: %v", err)
	}
}

// Many runs race for the lock on S3, many times over: each time exactly one
// wins, and every other is told who. On S3 the If-None-Match: * check and
// the write are one step; the emulator serializes its object writes (see
// internal/moto) so that the test shows the lock, not the emulator's race.
func TestStateLockRaceOnS3(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	client := s3.NewFromConfig(b.Config(), func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("infra-lock-race"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(b.Config().Region)}}); err != nil {
		t.Fatal(err)
	}
	const rounds, racers = 30, 24
	for round := range rounds {
		stores := make([]*state.BlobStore, racers)
		for i := range stores {
			blobs, prefix, err := b.OpenStateBlobs("s3://infra-lock-race/teams")
			if err != nil {
				t.Fatal(err)
			}
			if stores[i], err = state.OpenBlobs(blobs, prefix, "shop"); err != nil {
				t.Fatal(err)
			}
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			locks = make([]state.Lock, racers)
			errs  = make([]error, racers)
		)
		for i := range racers {
			wg.Go(func() {
				<-start
				locks[i], errs[i] = stores[i].Lock(ctx, state.LockInfo{ID: fmt.Sprintf("r%d-%d", round, i), Command: "apply"})
			})
		}
		close(start)
		wg.Wait()
		var winners []string
		var winner state.Lock
		for i := range racers {
			if errs[i] == nil {
				winners = append(winners, locks[i].Info().ID)
				winner = locks[i]
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d winners %v; want exactly one", round, len(winners), winners)
		}
		for i := range racers {
			var locked *state.LockedError
			if errs[i] != nil && (!errors.As(errs[i], &locked) || locked.Info.ID != winners[0]) {
				t.Fatalf("round %d, racer %d: %v; want a LockedError naming %s", round, i, errs[i], winners[0])
			}
		}
		if err := winner.Release(ctx); err != nil {
			t.Fatalf("round %d: release: %v", round, err)
		}
	}
}

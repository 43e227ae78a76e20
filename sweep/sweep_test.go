package sweep_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/sweep"
)

// These tests run the rules against the memory cloud, which lets a test set
// any owner and creation time and inject any fault. The same rules run
// against the AWS emulator in moto_test.go.

const region = "eu-west-3"

var accounts = map[spec.Provider]string{spec.AWS: "123456789012", spec.Scaleway: "11111111-2222-3333-4444-555555555555"}

// sevenNames are the acceptance names. ci-tests-old-fleet-thing is tagged by
// the fleet shop.
var sevenNames = []string{"ci-tests-a", "ci-tests-b", "archive-of-ci-tests-c", "CI-TESTS-d", "ci-testsx", "production-billing", "ci-tests-old-fleet-thing"}

func ownerOf(name string) string {
	if name == "ci-tests-old-fleet-thing" {
		return "shop"
	}
	return ""
}

func memoryOptions(c *memory.Cloud, kinds ...spec.Kind) sweep.Options {
	return sweep.Options{
		Backends:   map[spec.Provider]providers.Backend{spec.AWS: c.Backend(spec.AWS)},
		Regions:    map[spec.Provider][]string{spec.AWS: {region}},
		Kinds:      kinds,
		Prefix:     "ci-tests-",
		RoundDelay: -1,
		Settle:     time.Second,
	}
}

func put(c *memory.Cloud, k spec.Kind, name, owner string, created time.Time) {
	c.Put(spec.AWS, k, providers.Resource{Name: name, Region: region, Owner: owner, Created: created})
}

func byAddress(es []sweep.Entry) map[string]sweep.Entry {
	out := map[string]sweep.Entry{}
	for _, e := range es {
		out[e.Address.String()] = e
	}
	return out
}

func TestSevenNamesOnlyTwoGo(t *testing.T) {
	c := memory.NewCloud(accounts)
	kinds := []spec.Kind{spec.ObjectStore, spec.Queues, spec.Secrets}
	old := time.Now().Add(-3 * time.Hour)
	for _, k := range kinds {
		for _, n := range sevenNames {
			put(c, k, n, ownerOf(n), old)
		}
	}
	opts := memoryOptions(c, kinds...)
	rep, err := sweep.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rep.Candidates); got != 6 {
		t.Fatalf("dry run: %d candidates, want 6: %+v", got, rep.Candidates)
	}
	if n := len(c.Addresses()); n != 21 {
		t.Fatalf("a dry run changed the cloud: %d resources", n)
	}
	wantReason := map[string]sweep.Reason{
		"archive-of-ci-tests-c": sweep.ReasonPrefix, "CI-TESTS-d": sweep.ReasonPrefix, "ci-testsx": sweep.ReasonPrefix,
		"production-billing": sweep.ReasonPrefix, "ci-tests-old-fleet-thing": sweep.ReasonForeign,
	}
	kept := byAddress(rep.Kept)
	for _, k := range kinds {
		for n, reason := range wantReason {
			e, ok := kept[spec.Address{Provider: spec.AWS, Kind: k, Name: n}.String()]
			if !ok || e.Reason != reason || e.Why == "" {
				t.Errorf("%s/%s: kept %v, reason %q (%s); want %q", k, n, ok, e.Reason, e.Why, reason)
			}
		}
	}
	if why := kept["aws/queues/archive-of-ci-tests-c"].Why; !strings.Contains(why, "never a substring") {
		t.Errorf("substring reason: %s", why)
	}
	if why := kept["aws/queues/CI-TESTS-d"].Why; !strings.Contains(why, "case-sensitive") {
		t.Errorf("case reason: %s", why)
	}
	if why := kept["aws/queues/ci-tests-old-fleet-thing"].Why; !strings.Contains(why, "managed-by-infra=shop") {
		t.Errorf("foreign reason: %s", why)
	}
	var text bytes.Buffer
	render.SweepText(&text, rep)
	if !strings.Contains(text.String(), "would delete 6\n") {
		t.Errorf("dry-run text:\n%s", text.String())
	}

	opts.Delete = true
	rep, err = sweep.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("%v\n%+v", err, rep)
	}
	if rep.Deleted != 6 || len(rep.Survivors) != 0 {
		t.Fatalf("deleted %d, survivors %v", rep.Deleted, rep.Survivors)
	}
	left := strings.Join(c.Addresses(), " ")
	for _, n := range sevenNames {
		gone := n == "ci-tests-a" || n == "ci-tests-b"
		if strings.Contains(" "+left+" ", "/"+n+" ") == gone {
			t.Errorf("%s: gone=%v, want %v (left: %s)", n, !gone, gone, left)
		}
	}
}

func TestPrefixRefusals(t *testing.T) {
	for _, p := range []string{"", "c", "ci", "éé"} {
		if err := sweep.CheckPrefix(p); err == nil {
			t.Errorf("prefix %q accepted", p)
		}
		c := memory.NewCloud(accounts)
		put(c, spec.Queues, "ci-tests-a", "", time.Time{})
		opts := memoryOptions(c)
		opts.Prefix, opts.Delete = p, true
		if rep, err := sweep.Run(context.Background(), opts); err == nil || rep != nil {
			t.Errorf("Run with prefix %q: %v", p, err)
		}
		if len(c.Calls()) != 0 {
			t.Errorf("prefix %q: calls were made: %v", p, c.Calls())
		}
	}
	for _, p := range []string{"abc", "ci-", "ééé"} {
		if err := sweep.CheckPrefix(p); err != nil {
			t.Errorf("prefix %q: %v", p, err)
		}
	}
}

func TestParseAge(t *testing.T) {
	good := map[string]time.Duration{"0": 0, "": 0, "2h": 2 * time.Hour, "90m": 90 * time.Minute, "7d": 7 * 24 * time.Hour, "1.5d": 36 * time.Hour}
	for s, want := range good {
		if got, err := sweep.ParseAge(s); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"-1h", "2", "d", "xd", "NaNd", "-3d", "1e400d", "2 hours"} {
		if _, err := sweep.ParseAge(s); err == nil {
			t.Errorf("ParseAge(%q) accepted", s)
		}
	}
}

func TestAgeFloor(t *testing.T) {
	c := memory.NewCloud(accounts)
	now := time.Now()
	put(c, spec.Queues, "ci-tests-young", "", now.Add(-time.Minute))
	put(c, spec.Queues, "ci-tests-old", "", now.Add(-3*time.Hour))
	put(c, spec.Queues, "ci-tests-unknown", "", time.Time{})
	opts := memoryOptions(c, spec.Queues)
	opts.OlderThan, opts.Delete = 2*time.Hour, true
	rep, err := sweep.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	kept := byAddress(rep.Kept)
	if e := kept["aws/queues/ci-tests-young"]; e.Reason != sweep.ReasonTooYoung || !strings.Contains(e.Why, "not older than 2h") {
		t.Errorf("young: %+v", e)
	}
	if e := kept["aws/queues/ci-tests-unknown"]; e.Reason != sweep.ReasonAgeUnknown {
		t.Errorf("unknown age: %+v", e)
	}
	if rep.Deleted != 1 || rep.Candidates[0].Address.Name != "ci-tests-old" {
		t.Errorf("deleted %d: %+v", rep.Deleted, rep.Candidates)
	}
	// With no age floor, unknown age is no reason to keep.
	opts.OlderThan = 0
	rep, err = sweep.Run(context.Background(), opts)
	if err != nil || rep.Deleted != 2 {
		t.Fatalf("floor 0: deleted %d, %v", rep.Deleted, err)
	}
}

// TestOwnersWithThePrefix: a test fleet's own tag (ci-tests-shop) does not
// protect its debris; any other fleet's does.
func TestOwnersWithThePrefix(t *testing.T) {
	c := memory.NewCloud(accounts)
	put(c, spec.Secrets, "ci-tests-mine", "ci-tests-shop", time.Time{})
	put(c, spec.Secrets, "ci-tests-theirs", "ci-tests", time.Time{}) // "ci-tests" does not start with "ci-tests-"
	rep, err := sweep.Run(context.Background(), memoryOptions(c, spec.Secrets))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Candidates) != 1 || rep.Candidates[0].Address.Name != "ci-tests-mine" || rep.Candidates[0].Owner != "ci-tests-shop" {
		t.Errorf("candidates: %+v", rep.Candidates)
	}
	if e := byAddress(rep.Kept)["aws/secrets/ci-tests-theirs"]; e.Reason != sweep.ReasonForeign {
		t.Errorf("kept: %+v", e)
	}
}

// TestExclusionCoversThePhysicalThing: an exclusion written for the
// s3-bucket kind protects the same bucket listed as an object-store, and
// the bucket is listed once, not once per kind.
func TestExclusionCoversThePhysicalThing(t *testing.T) {
	c := memory.NewCloud(accounts)
	put(c, spec.ObjectStore, "ci-tests-keep", "", time.Time{})
	put(c, spec.ObjectStore, "ci-tests-go", "", time.Time{})
	opts := memoryOptions(c)
	opts.Exclusions = []spec.ExclusionRule{{Provider: spec.AWS, Kind: spec.S3Bucket, Name: "ci-tests-ke", Prefix: true, Why: "the release archive"}}
	opts.Delete = true
	rep, err := sweep.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	e := byAddress(rep.Kept)["aws/object-store/ci-tests-keep"]
	if e.Reason != sweep.ReasonExcluded || !strings.Contains(e.Why, "aws/s3-bucket/ci-tests-ke*: the release archive") {
		t.Errorf("kept: %+v", e)
	}
	for _, call := range c.Calls() {
		if call.Op == "list" && strings.HasPrefix(call.Address, "aws/s3-bucket/") {
			t.Errorf("s3-bucket listed besides object-store: %+v", call)
		}
		if call.Op == "delete" && call.Address == "aws/object-store/ci-tests-keep" {
			t.Errorf("an excluded bucket was deleted")
		}
	}
	if rep.Deleted != 1 {
		t.Errorf("deleted %d", rep.Deleted)
	}
}

// TestIAMIsListedOnce: IAM is account-wide, so two regions list it once.
func TestIAMIsListedOnce(t *testing.T) {
	c := memory.NewCloud(accounts)
	put(c, spec.IAM, "ci-tests-user", "", time.Time{})
	opts := memoryOptions(c, spec.IAM, spec.Queues)
	opts.Regions[spec.AWS] = []string{region, "us-east-1"}
	rep, err := sweep.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	iamLists, queueLists := 0, 0
	for _, call := range c.Calls() {
		switch {
		case call.Op == "list" && strings.HasPrefix(call.Address, "aws/iam/"):
			iamLists++
		case call.Op == "list" && strings.HasPrefix(call.Address, "aws/queues/"):
			queueLists++
		}
	}
	if iamLists != 1 || queueLists != 2 || len(rep.Candidates) != 1 {
		t.Errorf("iam listed %d times, queues %d; candidates %+v", iamLists, queueLists, rep.Candidates)
	}
}

// TestRefusedListingIsNeverEmpty: a throttled listing makes the sweep
// incomplete; it is never read as an empty account.
func TestRefusedListingIsNeverEmpty(t *testing.T) {
	for _, code := range []providers.Code{providers.Throttled, providers.PermissionDenied} {
		c := memory.NewCloud(accounts)
		c.Inject(memory.Fault{Op: "list", Address: "aws/queues/*", Err: providers.Errorf(code, "ThrottlingException: Rate exceeded")})
		rep, err := sweep.Run(context.Background(), memoryOptions(c, spec.Queues))
		var inc *sweep.IncompleteError
		if !errors.As(err, &inc) || inc.Errors != 1 {
			t.Fatalf("%s: err %v", code, err)
		}
		if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "aws/queues in eu-west-3: list: "+code.String()+": ThrottlingException: Rate exceeded") {
			t.Errorf("errors: %v", rep.Errors)
		}
		var text bytes.Buffer
		render.SweepText(&text, rep)
		if strings.Contains(text.String(), "clean") || !strings.Contains(text.String(), "incomplete") {
			t.Errorf("%s: text:\n%s", code, text.String())
		}
	}
}

// TestUnreadableOwnerIsKept: a resource whose tag cannot be read is never
// deleted, and the sweep says it is incomplete.
func TestUnreadableOwnerIsKept(t *testing.T) {
	c := memory.NewCloud(accounts)
	put(c, spec.Queues, "ci-tests-a", "", time.Time{})
	c.Inject(memory.Fault{Op: "read", Address: "aws/queues/ci-tests-a", Err: providers.Errorf(providers.PermissionDenied, "AccessDenied: not allowed")})
	opts := memoryOptions(c, spec.Queues)
	opts.Delete = true
	rep, err := sweep.Run(context.Background(), opts)
	if err == nil || len(rep.Candidates) != 0 {
		t.Fatalf("err %v, candidates %+v", err, rep.Candidates)
	}
	if e := byAddress(rep.Kept)["aws/queues/ci-tests-a"]; e.Reason != sweep.ReasonUnreadable || !e.OwnerUnknown {
		t.Errorf("kept: %+v", e)
	}
	if len(c.Addresses()) != 1 {
		t.Errorf("deleted: %v", c.Addresses())
	}
}

// TestRefusedDeleteGoesInALaterRound: a delete refused in round 1 is
// retried after the round, and the sweep ends clean.
func TestRefusedDeleteGoesInALaterRound(t *testing.T) {
	c := memory.NewCloud(accounts)
	put(c, spec.IAM, "ci-tests-u1", "", time.Time{})
	put(c, spec.IAM, "ci-tests-u2", "", time.Time{})
	c.Inject(memory.Fault{Op: "delete", Address: "aws/iam/ci-tests-u1", Times: 1,
		Err: providers.Errorf(providers.Conflict, "DeleteConflict: Cannot delete entity, must detach all policies first.")})
	// A security group used by an instance: the memory cloud refuses its
	// delete while the instance exists, whichever goes first.
	put(c, spec.SecurityGroup, "ci-tests-sg", "", time.Time{})
	c.Put(spec.AWS, spec.AWSInstance, providers.Resource{Name: "ci-tests-vm", Region: region, Fields: map[string]any{"securityGroup": "ci-tests-sg"}})
	opts := memoryOptions(c, spec.IAM, spec.SecurityGroup, spec.AWSInstance)
	opts.Delete = true
	var deferred []string
	opts.Progress = func(ev sweep.Event) {
		if ev.Kind == sweep.EventDeferred {
			deferred = append(deferred, ev.Address.String())
		}
	}
	rep, err := sweep.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if rep.Deleted != 4 || rep.Rounds < 2 || len(c.Addresses()) != 0 {
		t.Errorf("deleted %d in %d rounds; left %v", rep.Deleted, rep.Rounds, c.Addresses())
	}
	if len(deferred) == 0 || deferred[0] != "aws/iam/ci-tests-u1" && deferred[0] != "aws/security-group/ci-tests-sg" {
		t.Errorf("deferred: %v", deferred)
	}
	if e := byAddress(rep.Candidates)["aws/iam/ci-tests-u1"]; e.Attempts != 2 || e.Status != sweep.StatusDeleted || e.Error != "" {
		t.Errorf("u1: %+v", e)
	}
}

// TestPermanentRefusal: a delete refused in every round stops the rounds
// once one makes no progress, and the survivor carries the provider's
// words.
func TestPermanentRefusal(t *testing.T) {
	c := memory.NewCloud(accounts)
	put(c, spec.ObjectStore, "ci-tests-full", "", time.Time{})
	put(c, spec.ObjectStore, "ci-tests-empty", "", time.Time{})
	c.Inject(memory.Fault{Op: "delete", Address: "aws/object-store/ci-tests-full",
		Err: providers.Errorf(providers.Conflict, "BucketNotEmpty: The bucket you tried to delete is not empty")})
	opts := memoryOptions(c, spec.ObjectStore)
	opts.Delete = true
	rep, err := sweep.Run(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "aws/object-store/ci-tests-full") {
		t.Fatalf("err: %v", err)
	}
	if len(rep.Survivors) != 1 {
		t.Fatalf("survivors: %+v", rep.Survivors)
	}
	s := rep.Survivors[0]
	if s.Error != "aws/object-store/ci-tests-full: delete: conflict: BucketNotEmpty: The bucket you tried to delete is not empty" {
		t.Errorf("survivor: %+v", s)
	}
	// Round 1 deletes the empty bucket (progress), round 2 is refused
	// again (none): two attempts, then it stops.
	if s.Attempts != 2 || rep.Rounds != 2 {
		t.Errorf("attempts %d, rounds %d", s.Attempts, rep.Rounds)
	}
	var text bytes.Buffer
	render.SweepText(&text, rep)
	if !strings.Contains(text.String(), "left 1:\n  aws/object-store/ci-tests-full (eu-west-3): aws/object-store/ci-tests-full: delete: conflict: BucketNotEmpty") ||
		!strings.HasSuffix(text.String(), "deleted 1 of 2 in 2 round(s); 1 left\n") {
		t.Errorf("text:\n%s", text.String())
	}
}

func TestCleanAccount(t *testing.T) {
	c := memory.NewCloud(accounts)
	put(c, spec.Queues, "production-billing", "", time.Time{})
	rep, err := sweep.Run(context.Background(), memoryOptions(c, spec.Queues))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	render.SweepText(&text, rep)
	if !strings.HasSuffix(text.String(), "\n"+render.SweepCleanLine+"\n") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestWrongAccountRefusedBeforeListing: credentials for another account
// than the fleet states stop the sweep before any listing.
func TestWrongAccountRefusedBeforeListing(t *testing.T) {
	c := memory.NewCloud(accounts)
	opts := memoryOptions(c)
	opts.Accounts = map[spec.Provider]string{spec.AWS: "999999999999"}
	if rep, err := sweep.Run(context.Background(), opts); err == nil || rep != nil || !strings.Contains(err.Error(), "999999999999") {
		t.Fatalf("rep %v, err %v", rep, err)
	}
	for _, call := range c.Calls() {
		if call.Op == "list" {
			t.Fatalf("listed: %+v", call)
		}
	}
}

// TestNoBackendsRefused: with no cloud to sweep, the sweep says why rather
// than report a clean account.
func TestNoBackendsRefused(t *testing.T) {
	_, err := sweep.Run(context.Background(), sweep.Options{Prefix: "ci-tests-", Skipped: map[spec.Provider]string{spec.Scaleway: "no credentials"}})
	if err == nil || !strings.Contains(err.Error(), "scaleway: no credentials") {
		t.Fatalf("err: %v", err)
	}
}

// TestInterruptedSweepClaimsNothing: a sweep cancelled while deleting
// reports only what it saw go, and is never OK.
func TestInterruptedSweepClaimsNothing(t *testing.T) {
	c := memory.NewCloud(accounts)
	for i := 0; i < 20; i++ {
		put(c, spec.Queues, fmt.Sprintf("ci-tests-%02d", i), "", time.Time{})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := memoryOptions(c, spec.Queues)
	opts.Delete, opts.PerKind = true, 1
	opts.Progress = func(ev sweep.Event) {
		if ev.Kind == sweep.EventDeleted {
			cancel()
		}
	}
	rep, err := sweep.Run(ctx, opts)
	if err == nil || rep == nil || rep.OK() {
		t.Fatalf("err %v", err)
	}
	left := len(c.Addresses())
	if rep.Deleted+left != 20 || left == 0 {
		t.Errorf("reported %d deleted, %d left in the cloud", rep.Deleted, left)
	}
	for _, e := range rep.Candidates {
		_, there := c.Get(spec.AWS, spec.Queues, region, e.Address.Name)
		if there == (e.Status == sweep.StatusDeleted) {
			t.Errorf("%s: status %s, in the cloud %v", e.Address, e.Status, there)
		}
	}
}

// slowBackend wraps a backend: each delete takes a moment, and the most
// deletes in flight at once is recorded. With shared set, it names one
// service for every kind.
type slowBackend struct {
	providers.Backend
	shared  bool
	mu      sync.Mutex
	now     int
	maxSeen int
}

func (b *slowBackend) Service(k spec.Kind) string {
	if b.shared {
		return "one-service"
	}
	return ""
}

func (b *slowBackend) Driver(k spec.Kind) (providers.Driver, bool) {
	d, ok := b.Backend.Driver(k)
	return slowDriver{Driver: d, b: b}, ok
}

type slowDriver struct {
	providers.Driver
	b *slowBackend
}

func (d slowDriver) Delete(ctx context.Context, t providers.Target) error {
	d.b.mu.Lock()
	d.b.now++
	d.b.maxSeen = max(d.b.maxSeen, d.b.now)
	d.b.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	d.b.mu.Lock()
	d.b.now--
	d.b.mu.Unlock()
	return d.Driver.Delete(ctx, t)
}

// TestDeletesAreBoundedPerService: at most PerKind deletes run at once
// against one service; kinds of different services run side by side.
func TestDeletesAreBoundedPerService(t *testing.T) {
	for _, shared := range []bool{false, true} {
		c := memory.NewCloud(accounts)
		for i := 0; i < 10; i++ {
			put(c, spec.Queues, fmt.Sprintf("ci-tests-%02d", i), "", time.Time{})
			put(c, spec.Secrets, fmt.Sprintf("ci-tests-%02d", i), "", time.Time{})
		}
		sb := &slowBackend{Backend: c.Backend(spec.AWS), shared: shared}
		opts := memoryOptions(c, spec.Queues, spec.Secrets)
		opts.Backends[spec.AWS] = sb
		opts.Delete, opts.PerKind = true, 2
		rep, err := sweep.Run(context.Background(), opts)
		if err != nil || rep.Deleted != 20 {
			t.Fatalf("shared=%v: deleted %d, %v", shared, rep.Deleted, err)
		}
		want := 4 // two services, two each
		if shared {
			want = 2
		}
		if sb.maxSeen > want {
			t.Errorf("shared=%v: %d deletes at once, bound %d", shared, sb.maxSeen, want)
		}
		t.Logf("shared=%v: at most %d deletes at once", shared, sb.maxSeen)
	}
}

// Package drivertest is the conformance suite every driver passes: the
// memory driver, each AWS driver on moto_server, each Scaleway driver on its
// fake. A kind is done when the suite passes for it on every cloud that
// offers it.
//
// A test describes the backend once and each kind as a Case, then calls
// RunConformanceTests:
//
//	drivertest.RunConformanceTests(t, drivertest.Harness{
//		Backend: backend,
//		Region:  "eu-west-3",
//		Reset:   func(t *testing.T) { srv.Reset() },
//		Cases: []drivertest.Case{{
//			Kind:     spec.Queues,
//			Create:   map[string]any{"visibilityTimeoutSec": 30.0},
//			Updates:  []map[string]any{{"visibilityTimeoutSec": 120.0}},
//			OddNames: []string{"Q_with-Mixed_case"},
//			PageSize: 2, // the test lowered the driver's page size to 2
//		}},
//	})
//
// Each case runs these subtests, each on a fresh cloud (Reset, then the
// case's Setup) and each cleaning up what it made:
//
//   - Coverage: every mutable field of the kind appears in Updates, every
//     forcing field in Replaces, unless the case says why not (Untested).
//   - CreateRead: Create, then Read, report the target under the engine's
//     comparison rules (see below), with Owner set and the ownership tag in
//     Fields["tags"]. A secrets driver that is a providers.SecretReader
//     gives back the value, and no reported field or attribute carries it.
//   - Update: each entry of Updates is applied with Update(target, changed)
//     and read back; the ownership mark stays.
//   - Replace: each entry of Replaces (which changes at least one forcing
//     field, and may change mutable ones with it) is applied as the engine
//     replaces: Delete, Read gives NotFound, Create with the new values,
//     Read.
//   - Tags (kinds with a tags field): tags round-trip through create, a
//     change of value, an added and a removed key, and an emptying; the
//     ownership tag is never among the compared tags and stays throughout.
//   - TagsRefused (cases with NoUserTags, instead of Tags): a create with
//     user tags fails with InvalidArgument and makes nothing.
//   - Delete: delete with the target, and as an orphan (Fields nil); Read
//     then gives NotFound (by the backend's ErrorCode) and List no longer
//     shows it. Deleting what is gone is nil or NotFound.
//   - List: finds exactly what was created (each once, in the region asked,
//     with its owner when the listing names one), across more than one page
//     when the case sets PageSize. A resource the driver marks Complete is
//     checked like a Read, owner included. With OtherRegion set, a regional kind's listing there is empty
//     of them.
//   - OddNames: each odd but legal name is created, read, listed, deleted.
//   - Release (drivers that are a providers.Releaser): releasing for
//     another fleet changes nothing; releasing for ours removes only the
//     ownership tag.
//
// The engine's comparison rules, which the suite applies: a field absent from
// the target is unknown and never compared; CompareNever and secret fields
// are never compared; a field the driver does not report is never drift (the
// suite still fails on it unless the case lists it in Unreported, so that a
// driver cannot pass by reporting nothing); CompareSet lists compare as sets
// and maps as sets of pairs; numbers compare as float64; the ownership tag
// is stripped from the reported tags; reported fields the target does not
// set are ignored.
//
// Targets are built as the engine builds them: the case's fields, with the
// kind's defaults filled in at create, Owner set to the harness's fleet.
package drivertest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// Harness is one backend under test and the kinds to test on it.
type Harness struct {
	// Backend gives the drivers (Backend.Driver) and classifies their errors
	// (Backend.ErrorCode).
	Backend providers.Backend
	// Region is where every resource is made.
	Region string
	// OtherRegion, when set, is a second region whose listing must not show
	// what was made in Region (skipped for cases marked Global).
	OtherRegion string
	// Owner is the fleet written in the ownership tag; "conformance" when
	// empty.
	Owner string
	// Reset, when set, wipes the cloud before each subtest (moto's
	// /moto-api/reset). Without it, subtests rely on fresh names and their
	// own cleanup, as on a real cloud.
	Reset func(t *testing.T)
	// Exclusive says the region holds nothing of the kind but what the
	// suite makes (the test wiped the cloud once before the run), so List
	// must show exactly the subtest's resources even without Reset, and a
	// failed cleanup shows. Without Reset or Exclusive, List checks only
	// the names of this run.
	Exclusive bool
	// Settle is how long a read or a listing may take to reflect a write on
	// an eventually consistent cloud; the suite polls until then. Zero: one
	// try.
	Settle time.Duration
	// Labels says the cloud's tags are GCP labels (lowercase letters,
	// digits, '_' and '-' in keys and values): the Tags subtest then uses
	// tags of that alphabet, where it otherwise uses a space and '=' and
	// ':' in them.
	Labels bool
	// Cases are the kinds to test, one subtest each.
	Cases []Case
	// Created, when set, is shown every resource a create returned: the
	// backend's own checks of what the cloud reported (an AWS ARN against
	// the kind's registered format).
	Created func(t *testing.T, kind spec.Kind, res providers.Resource)
}

// Case is one kind under test.
type Case struct {
	Kind spec.Kind
	// Name is the subtest's name; the kind when empty. Two cases of one kind
	// need different names.
	Name string
	// Setup, when set, runs after each Reset and before each subtest, to make
	// what the kind's targets refer to (a role for a function, a security
	// group for an instance).
	Setup func(t *testing.T)
	// Create is the create target's fields, as the engine resolves them
	// (references are names, secrets are spec.Sensitive). The kind's
	// defaults fill the fields it leaves out.
	Create map[string]any
	// Apart, when set, is applied to the fields of each resource the suite
	// makes (after Create's, before defaults), for a kind whose resources
	// must differ in more than their name to exist at once: subnets of one
	// VPC cannot share a block, nor two internet gateways a VPC.
	Apart func(fields map[string]any)
	// Updates are applied in order, each as one Update call whose changed
	// fields are the entry's keys. Together they must change every mutable
	// field (tags are the suite's own business).
	Updates []map[string]any
	// Replaces are applied in order, each as a replacement. Together they
	// must change every forcing field.
	Replaces []map[string]any
	// OddNames are unusual but legal names for the kind (dots, underscores,
	// the maximum length, mixed case), used as they are.
	OddNames []string
	// NewName returns a fresh legal name ending in suffix; by default a
	// random "ct"-prefixed stem (unique per run) joined to suffix with "-".
	NewName func(suffix string) string
	// ListCount is how many resources the List subtest makes; 3 when zero,
	// and at least 2*PageSize+1.
	ListCount int
	// PageSize, when set, is the page size the test has lowered the driver's
	// listing to (before calling the suite), so the listing spans three
	// pages.
	PageSize int
	// Global marks a kind that is not regional (IAM users): its listing in
	// any region shows every resource, so OtherRegion is not checked.
	Global bool
	// Unreported are compared fields the driver cannot report; the suite
	// does not require them. Say why in the driver's documentation.
	Unreported []string
	// NoUserTags, when set, says why this cloud cannot hold user tags on
	// the kind (Scaleway Queues and Serverless SQL have neither tags nor a
	// free-text field; their owner is the name prefix). Such a driver must
	// refuse user tags rather than drop them: instead of Tags, the
	// TagsRefused subtest checks that a create with user tags fails with
	// InvalidArgument and leaves nothing behind, and that an update to no
	// user tags is accepted.
	NoUserTags string
	// Vary, when set, changes each target's fields by its name before its
	// create, for a kind of which two resources cannot share every field
	// (an SNS subscription: SNS keeps one per topic and queue, so each
	// needs a queue of its own). It may make what the fields then refer to.
	Vary func(t *testing.T, name string, fields map[string]any)
	// Untested are fields the Coverage subtest need not find in Updates or
	// Replaces, each with the reason (a field of another cloud, say).
	Untested map[string]string
}

// RunConformanceTests runs the suite for every case of h.
func RunConformanceTests(t *testing.T, h Harness) {
	t.Helper()
	if h.Backend == nil || h.Region == "" {
		t.Fatal("drivertest: the harness needs a Backend and a Region")
	}
	if h.Owner == "" {
		h.Owner = "conformance"
	}
	for _, c := range h.Cases {
		name := c.Name
		if name == "" {
			name = string(c.Kind)
		}
		t.Run(name, func(t *testing.T) { runCase(t, h, c) })
	}
}

// suite is one case's run: the harness, the driver and the names made.
type suite struct {
	h    Harness
	c    Case
	info *spec.KindInfo
	d    providers.Driver
	stem string
}

func runCase(t *testing.T, h Harness, c Case) {
	info, ok := spec.Lookup(c.Kind)
	if !ok {
		t.Fatalf("unknown kind %q", c.Kind)
	}
	if !info.OfferedBy(h.Backend.Provider()) {
		t.Fatalf("%s does not offer %s", h.Backend.Provider(), c.Kind)
	}
	d, ok := h.Backend.Driver(c.Kind)
	if !ok {
		t.Fatalf("the %s backend has no driver for %s", h.Backend.Provider(), c.Kind)
	}
	s := &suite{h: h, c: c, info: info, d: d, stem: "ct" + randomSuffix(6)}
	t.Run("Coverage", s.coverage)
	s.sub(t, "CreateRead", s.createRead)
	s.sub(t, "Update", s.update)
	s.sub(t, "Replace", s.replace)
	if _, ok := info.Field(spec.TagsField); ok && c.NoUserTags == "" {
		s.sub(t, "Tags", s.tags)
	} else if ok {
		s.sub(t, "TagsRefused", s.tagsRefused)
	}
	s.sub(t, "Delete", s.delete)
	s.sub(t, "List", s.list)
	if len(c.OddNames) > 0 {
		s.sub(t, "OddNames", s.oddNames)
	}
	if _, ok := d.(providers.Releaser); ok {
		s.sub(t, "Release", s.release)
	}
}

// sub runs one subtest on a fresh cloud.
func (s *suite) sub(t *testing.T, name string, fn func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		if s.h.Reset != nil {
			s.h.Reset(t)
		}
		if s.c.Setup != nil {
			s.c.Setup(t)
		}
		fn(t)
	})
}

func (s *suite) coverage(t *testing.T) {
	updated, replaced := map[string]bool{}, map[string]bool{}
	for _, u := range s.c.Updates {
		for k := range u {
			f, ok := s.info.Field(k)
			if !ok {
				t.Errorf("Updates names %q, which %s does not have", k, s.c.Kind)
			} else if f.Replace {
				t.Errorf("Updates names %q, which forces replacement: put it in Replaces", k)
			}
			updated[k] = true
		}
	}
	// A replacement may change mutable fields along with a forcing one (a
	// locked bucket must be versioned), but needs a forcing one.
	for i, u := range s.c.Replaces {
		forcing := false
		for k := range u {
			f, ok := s.info.Field(k)
			if !ok {
				t.Errorf("Replaces names %q, which %s does not have", k, s.c.Kind)
			}
			forcing = forcing || f.Replace
			replaced[k] = true
		}
		if !forcing {
			t.Errorf("Replaces[%d] changes no forcing field: put it in Updates", i)
		}
	}
	for _, f := range s.info.Fields {
		if _, why := s.c.Untested[f.Name]; why || f.Name == spec.TagsField || f.Compare == spec.CompareNever {
			continue
		}
		switch {
		case f.Replace && !replaced[f.Name]:
			t.Errorf("forcing field %q is in no entry of Replaces (or say why in Untested)", f.Name)
		case !f.Replace && !updated[f.Name]:
			t.Errorf("mutable field %q is in no entry of Updates (or say why in Untested)", f.Name)
		}
	}
}

func (s *suite) createRead(t *testing.T) {
	tg := s.target(t, s.name("create"), s.c.Create)
	res := s.create(t, tg)
	if res.Name != tg.Name {
		t.Errorf("Create reported name %q, want %q", res.Name, tg.Name)
	}
	if res.Owner != s.h.Owner {
		t.Errorf("Create reported owner %q, want %q", res.Owner, s.h.Owner)
	}
	s.readBack(t, tg)
	s.checkSecret(t, tg)
}

func (s *suite) update(t *testing.T) {
	tg := s.target(t, s.name("update"), s.c.Create)
	s.create(t, tg)
	for i, u := range s.c.Updates {
		changed := sortedKeys(u)
		for k, v := range u {
			tg.Fields[k] = spec.CloneValue(v)
		}
		res, err := s.d.Update(ctx(t), s.copyTarget(tg), changed)
		if err != nil {
			t.Fatalf("update %d (%s): %v", i, strings.Join(changed, ", "), err)
		}
		if res.Owner != s.h.Owner {
			t.Errorf("update %d: Update reported owner %q, want %q", i, res.Owner, s.h.Owner)
		}
		s.readBack(t, tg)
		s.checkSecret(t, tg)
	}
}

func (s *suite) replace(t *testing.T) {
	tg := s.target(t, s.name("replace"), s.c.Create)
	s.create(t, tg)
	for i, u := range s.c.Replaces {
		if err := s.d.Delete(ctx(t), s.copyTarget(tg)); err != nil {
			t.Fatalf("replace %d: delete: %v", i, err)
		}
		s.gone(t, tg.Name)
		for k, v := range u {
			tg.Fields[k] = spec.CloneValue(v)
		}
		s.create(t, tg)
		s.readBack(t, tg)
	}
}

func (s *suite) tags(t *testing.T) {
	fields := spec.CloneMap(s.c.Create)
	odd, oddValue := "cost centre", "x=y:z"
	if s.h.Labels {
		odd, oddValue = "cost_centre-1", "x-y_z"
	}
	fields[spec.TagsField] = map[string]any{"team": "conformance", odd: "42", "keep": "yes"}
	tg := s.target(t, s.name("tags"), fields)
	s.create(t, tg)
	s.readBack(t, tg)
	steps := []map[string]any{
		{"team": "platform", odd: "42", "keep": "yes"},         // a value changes
		{"team": "platform", "keep": "yes", "added": oddValue}, // one key goes, one comes
		{}, // every user tag goes; the ownership tag stays
	}
	for i, tags := range steps {
		tg.Fields[spec.TagsField] = tags
		if _, err := s.d.Update(ctx(t), s.copyTarget(tg), []string{spec.TagsField}); err != nil {
			t.Fatalf("tags step %d: %v", i, err)
		}
		s.readBack(t, tg)
	}
}

// tagsRefused checks a kind whose cloud cannot hold user tags: they are
// refused, never silently dropped.
func (s *suite) tagsRefused(t *testing.T) {
	fields := spec.CloneMap(s.c.Create)
	fields[spec.TagsField] = map[string]any{"team": "conformance"}
	tg := s.target(t, s.name("notags"), fields)
	_, err := s.d.Create(ctx(t), s.copyTarget(tg))
	if err == nil {
		_ = s.d.Delete(context.Background(), s.copyTarget(tg))
		t.Fatalf("create with user tags succeeded, but the case says the cloud cannot hold them (%s)", s.c.NoUserTags)
	}
	if code := providers.CodeOf(s.h.Backend, err); code != providers.InvalidArgument {
		t.Errorf("create with user tags: %v (code %s), want invalid argument", err, code)
	}
	s.gone(t, tg.Name)
	tg.Fields[spec.TagsField] = map[string]any{}
	s.create(t, tg)
	if _, err := s.d.Update(ctx(t), s.copyTarget(tg), []string{spec.TagsField}); err != nil {
		t.Fatalf("update to no user tags: %v", err)
	}
	s.readBack(t, tg)
}

func (s *suite) delete(t *testing.T) {
	declared := s.target(t, s.name("delete"), s.c.Create)
	orphan := s.target(t, s.name("orphan"), s.c.Create)
	s.create(t, declared)
	s.create(t, orphan)
	if err := s.d.Delete(ctx(t), s.copyTarget(declared)); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// An orphan's declaration is gone: the engine knows only where it is.
	if err := s.d.Delete(ctx(t), providers.Target{Name: orphan.Name, Region: orphan.Region, Owner: s.h.Owner}); err != nil {
		t.Fatalf("delete as an orphan: %v", err)
	}
	for _, name := range []string{declared.Name, orphan.Name} {
		s.gone(t, name)
		s.eventually(t, "the listing to drop "+name, func() error {
			rs, err := s.d.List(ctx(t), s.h.Region)
			if err != nil {
				return err
			}
			for _, r := range rs {
				if r.Name == name {
					return fmt.Errorf("List still shows deleted %s", name)
				}
			}
			return nil
		})
	}
	err := s.d.Delete(ctx(t), s.copyTarget(declared))
	if err != nil && providers.CodeOf(s.h.Backend, err) != providers.NotFound {
		t.Errorf("deleting what is gone: %v (code %s), want nil or not found", err, providers.CodeOf(s.h.Backend, err))
	}
}

func (s *suite) list(t *testing.T) {
	n := s.c.ListCount
	if n == 0 {
		n = 3
	}
	if m := 2*s.c.PageSize + 1; s.c.PageSize > 0 && n < m {
		n = m
	}
	targets := map[string]providers.Target{}
	for i := 0; i < n; i++ {
		tg := s.target(t, s.name(fmt.Sprintf("list%d", i)), s.c.Create)
		s.create(t, tg)
		targets[tg.Name] = tg
	}
	s.eventually(t, "the listing to show what was made", func() error {
		rs, err := s.d.List(ctx(t), s.h.Region)
		if err != nil {
			return err
		}
		return s.checkListing(rs, targets)
	})
	if s.h.OtherRegion != "" && !s.c.Global {
		rs, err := s.d.List(ctx(t), s.h.OtherRegion)
		if err != nil {
			t.Fatalf("list %s: %v", s.h.OtherRegion, err)
		}
		for _, r := range rs {
			if _, ok := targets[r.Name]; ok {
				t.Errorf("List(%s) shows %s, made in %s", s.h.OtherRegion, r.Name, s.h.Region)
			}
		}
	}
}

// checkListing compares a listing with what the List subtest made.
func (s *suite) checkListing(rs []providers.Resource, targets map[string]providers.Target) error {
	var problems []string
	seen := map[string]int{}
	for _, r := range rs {
		seen[r.Name]++
		tg, ours := targets[r.Name]
		switch {
		case ours:
		case s.h.Reset != nil || s.h.Exclusive:
			problems = append(problems, fmt.Sprintf("listed %q, which the test did not make", r.Name))
			continue
		case strings.HasPrefix(r.Name, s.stem):
			problems = append(problems, fmt.Sprintf("listed %q, which this run made but did not list", r.Name))
			continue
		default:
			continue
		}
		if r.Region != s.h.Region {
			problems = append(problems, fmt.Sprintf("%s listed in region %q, want %q", r.Name, r.Region, s.h.Region))
		}
		// A listing may not know the owner (SQS lists URLs only); when it
		// names one, it must be right.
		if r.Owner != "" && r.Owner != s.h.Owner {
			problems = append(problems, fmt.Sprintf("%s listed with owner %q, want %q", r.Name, r.Owner, s.h.Owner))
		}
		if r.Complete {
			problems = append(problems, s.checkResource(r, tg)...)
		}
	}
	for _, name := range sortedKeys(targets) {
		switch seen[name] {
		case 1:
		case 0:
			problems = append(problems, fmt.Sprintf("%s is missing from the listing (%d listed)", name, len(rs)))
		default:
			problems = append(problems, fmt.Sprintf("%s is listed %d times", name, seen[name]))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func (s *suite) oddNames(t *testing.T) {
	for _, name := range s.c.OddNames {
		tg := s.target(t, name, s.c.Create)
		s.create(t, tg)
		s.readBack(t, tg)
		s.eventually(t, "the listing to show "+name, func() error {
			rs, err := s.d.List(ctx(t), s.h.Region)
			if err != nil {
				return err
			}
			for _, r := range rs {
				if r.Name == name {
					return nil
				}
			}
			return fmt.Errorf("List does not show %q", name)
		})
		if err := s.d.Delete(ctx(t), s.copyTarget(tg)); err != nil {
			t.Fatalf("delete %q: %v", name, err)
		}
		s.gone(t, name)
	}
}

func (s *suite) release(t *testing.T) {
	fields := spec.CloneMap(s.c.Create)
	if _, ok := s.info.Field(spec.TagsField); ok {
		fields[spec.TagsField] = map[string]any{"team": "conformance"}
	}
	tg := s.target(t, s.name("release"), fields)
	s.create(t, tg)
	r := s.d.(providers.Releaser)
	if err := r.Release(ctx(t), tg.Region, tg.Name, s.h.Owner+"-other"); err != nil {
		t.Fatalf("release for another fleet: %v", err)
	}
	s.readBack(t, tg)
	if err := r.Release(ctx(t), tg.Region, tg.Name, s.h.Owner); err != nil {
		t.Fatalf("release: %v", err)
	}
	s.eventually(t, "the ownership tag to go", func() error {
		res, err := s.d.Read(ctx(t), tg.Region, tg.Name)
		if err != nil {
			return err
		}
		var problems []string
		if res.Owner != "" {
			problems = append(problems, fmt.Sprintf("released resource still reads as owned by %q", res.Owner))
		}
		if tags, ok := res.Fields[spec.TagsField].(map[string]any); ok {
			if _, still := tags[spec.OwnershipTagKey]; still {
				problems = append(problems, "released resource still carries the ownership tag")
			}
		}
		problems = append(problems, diverging(s.info, tg.Fields, res.Fields, s.identity)...)
		if len(problems) > 0 {
			return errors.New(strings.Join(problems, "\n"))
		}
		return nil
	})
}

// create makes tg and deletes it when the test ends (ignoring not found).
func (s *suite) create(t *testing.T, tg providers.Target) providers.Resource {
	t.Helper()
	res, err := s.d.Create(ctx(t), s.copyTarget(tg))
	if err != nil && providers.CodeOf(s.h.Backend, err) == providers.AlreadyExists {
		// The SDK retried a create whose first attempt the cloud had
		// carried out (a connection dropped under load), which may have
		// stopped before its later calls (a group's rules). The engine
		// adopts such a resource when it carries the fleet's mark, and
		// finishes it with an update; so does the suite, and it says so.
		if got, rerr := s.d.Read(ctx(t), tg.Region, tg.Name); rerr == nil && got.Owner == tg.Owner {
			t.Logf("create %s: %v; it carries our mark, so it is adopted and finished as the engine would", tg.Name, err)
			res, err = s.d.Update(ctx(t), s.copyTarget(tg), s.info.Finishing(s.h.Backend.Provider(), tg.Fields))
		}
	}
	if err != nil {
		t.Fatalf("create %s: %v", tg.Name, err)
	}
	if s.h.Created != nil {
		s.h.Created(t, s.c.Kind, res)
	}
	t.Cleanup(func() {
		err := s.d.Delete(context.Background(), s.copyTarget(tg))
		if err != nil && providers.CodeOf(s.h.Backend, err) != providers.NotFound {
			t.Logf("cleanup: delete %s: %v", tg.Name, err)
		}
	})
	return res
}

// readBack reads tg's resource until it matches tg or Settle runs out.
func (s *suite) readBack(t *testing.T, tg providers.Target) {
	t.Helper()
	s.eventually(t, "a read to match the target", func() error {
		res, err := s.d.Read(ctx(t), tg.Region, tg.Name)
		if err != nil {
			return err
		}
		if p := s.checkResource(res, tg); len(p) > 0 {
			return errors.New(strings.Join(p, "\n"))
		}
		return nil
	})
}

// identity is what the cloud records a reference to v, a name, by: the
// referenced kind's identity attribute, read through the backend's own
// driver for that kind, or the name itself.
func (s *suite) identity(f spec.Field, v any) any {
	name, _ := v.(string)
	for _, k := range f.RefKinds {
		info, ok := spec.Lookup(k)
		if !ok || info.Identity == "" {
			continue
		}
		d, ok := s.h.Backend.Driver(k)
		if !ok {
			continue
		}
		r, err := d.Read(context.Background(), s.h.Region, name)
		if err != nil {
			return fmt.Sprintf("(%s %q: %v)", k, name, err)
		}
		return r.Attributes[info.Identity]
	}
	return v
}

// checkResource compares a read (or complete listed) resource with its
// target.
func (s *suite) checkResource(res providers.Resource, tg providers.Target) []string {
	var p []string
	if res.Name != tg.Name {
		p = append(p, fmt.Sprintf("name %q, want %q", res.Name, tg.Name))
	}
	if res.Region != tg.Region {
		p = append(p, fmt.Sprintf("%s: region %q, want %q", tg.Name, res.Region, tg.Region))
	}
	if res.Owner != s.h.Owner {
		p = append(p, fmt.Sprintf("%s: owner %q, want %q", tg.Name, res.Owner, s.h.Owner))
	}
	if _, taggable := s.info.Field(spec.TagsField); taggable && !s.unreported(spec.TagsField) {
		tags, _ := res.Fields[spec.TagsField].(map[string]any)
		if tags[spec.OwnershipTagKey] != s.h.Owner {
			p = append(p, fmt.Sprintf("%s: Fields[%q] = %s lacks %s=%s", tg.Name, spec.TagsField,
				show(res.Fields[spec.TagsField]), spec.OwnershipTagKey, s.h.Owner))
		}
	}
	for _, d := range diverging(s.info, tg.Fields, res.Fields, s.identity) {
		p = append(p, tg.Name+": "+d)
	}
	for _, f := range missing(s.info, tg.Fields, res.Fields) {
		if !s.unreported(f) {
			p = append(p, fmt.Sprintf("%s: field %q is not reported (list it in Unreported if the cloud cannot)", tg.Name, f))
		}
	}
	return p
}

// checkSecret reads a secret's value back through SecretReader, and looks
// for it in everything the driver reports.
func (s *suite) checkSecret(t *testing.T, tg providers.Target) {
	t.Helper()
	want, ok := tg.Fields["value"].(spec.Sensitive)
	if !ok {
		return
	}
	res, err := s.d.Read(ctx(t), tg.Region, tg.Name)
	if err != nil {
		t.Fatalf("read %s: %v", tg.Name, err)
	}
	if v := want.Reveal(); v != "" && (strings.Contains(fmt.Sprintf("%#v", res.Fields), v) || strings.Contains(fmt.Sprintf("%#v", res.Attributes), v)) {
		t.Errorf("%s: a reported field or attribute carries the secret's value", tg.Name)
	}
	r, ok := s.d.(providers.SecretReader)
	if !ok {
		return
	}
	s.eventually(t, "the secret's value to read back", func() error {
		got, err := r.ReadSecretValue(ctx(t), tg.Region, tg.Name)
		if err != nil {
			return err
		}
		if got.Reveal() != want.Reveal() {
			return fmt.Errorf("%s: ReadSecretValue gives another value than the one written", tg.Name)
		}
		return nil
	})
}

// gone checks that a read of name gives NotFound.
func (s *suite) gone(t *testing.T, name string) {
	t.Helper()
	s.eventually(t, name+" to read as not found", func() error {
		_, err := s.d.Read(ctx(t), s.h.Region, name)
		if err == nil {
			return fmt.Errorf("%s still reads after delete", name)
		}
		if code := providers.CodeOf(s.h.Backend, err); code != providers.NotFound {
			return fmt.Errorf("read after delete: %v (code %s), want not found", err, code)
		}
		return nil
	})
}

// eventually retries fn until it succeeds or Settle has passed, and fails
// the test with fn's last error.
func (s *suite) eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(s.h.Settle)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s:\n%v", what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (s *suite) unreported(field string) bool {
	for _, f := range s.c.Unreported {
		if f == field {
			return true
		}
	}
	return false
}

func (s *suite) name(suffix string) string {
	if s.c.NewName != nil {
		return s.c.NewName(suffix)
	}
	return s.stem + "-" + suffix
}

// target builds a create target the way the engine does: the fields, the
// kind's defaults for the ones left out, the fleet as owner; then the
// case's Vary.
func (s *suite) target(t *testing.T, name string, fields map[string]any) providers.Target {
	t.Helper()
	f := spec.CloneMap(fields)
	if s.c.Apart != nil {
		s.c.Apart(f)
	}
	for _, field := range s.info.Fields {
		if _, set := f[field.Name]; !set && field.Default != nil {
			f[field.Name] = spec.CloneValue(field.Default)
		}
	}
	if s.c.Vary != nil {
		s.c.Vary(t, name, f)
	}
	return providers.Target{Name: name, Region: s.h.Region, Fields: f, Owner: s.h.Owner}
}

// copyTarget gives the driver its own copy, so that a driver keeping or
// changing the maps it is handed cannot change the suite's expectations.
func (s *suite) copyTarget(tg providers.Target) providers.Target {
	tg.Fields = spec.CloneMap(tg.Fields)
	return tg
}

func ctx(t *testing.T) context.Context { return t.Context() }

// randomSuffix returns n random lowercase letters and digits: legal in
// every kind's names, and unique enough that runs on a real cloud do not
// collide.
func randomSuffix(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Names returns the sorted names of rs, for tests that compare listings.
func Names(rs []providers.Resource) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

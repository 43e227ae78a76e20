package sweep

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// listParallelism bounds concurrent listings across all kinds and regions.
const listParallelism = 8

// job is one listing: a kind in a region.
type job struct {
	provider spec.Provider
	kind     spec.Kind
	region   string
	backend  providers.Backend
	res      *providers.Resources
	// failed: the first listing failed, so verification cannot compare.
	failed bool
}

func (j *job) where() string {
	return fmt.Sprintf("%s/%s in %s", j.provider, j.kind, j.region)
}

// judged is one listed resource with the sweep's decision.
type judged struct {
	job       *job
	res       providers.Resource
	entry     Entry
	candidate bool
	// gone: it vanished between the listing and the read.
	gone bool
}

// jobs is every listing to make, in a stable order. A kind that shares its
// physical class with one already listed (object-store and s3-bucket are
// one S3 bucket) is listed once, under the first kind. A kind the cloud
// offers but this build has no driver for is a warning: a kind nobody
// looks at is exactly how debris hides (a predecessor wired ownership for
// two kinds and enumerated the rest by hand).
func (s *sweeper) jobs() ([]*job, error) {
	want := map[spec.Kind]bool{}
	for _, k := range s.opts.Kinds {
		want[k] = true
	}
	var out []*job
	offered := map[spec.Kind]bool{}
	for _, p := range sortedProviders(s.opts.Backends) {
		b := s.opts.Backends[p]
		regions := uniqueSorted(s.opts.Regions[p])
		classes := map[string]bool{}
		for _, info := range spec.KindsOf(p) {
			k := info.Kind
			if len(want) > 0 && !want[k] {
				continue
			}
			offered[k] = true
			class := spec.PhysicalClass(p, k)
			if classes[class] {
				continue
			}
			res, ok := providers.ResourcesOf(b, k)
			if !ok {
				s.warn(fmt.Sprintf("%s/%s is not swept: this build has no %s driver for it", p, k, p))
				continue
			}
			classes[class] = true
			rs := regions
			if info.Global {
				// IAM is account-wide on AWS and organization-wide on
				// Scaleway: every region's listing shows the same
				// identities, and listing each would report (and delete)
				// them once per region.
				rs = regions[:1]
			}
			for _, region := range rs {
				out = append(out, &job{provider: p, kind: k, region: region, backend: b, res: res})
			}
		}
	}
	for _, k := range s.opts.Kinds {
		if !offered[k] {
			return nil, fmt.Errorf("no cloud being swept offers kind %s", k)
		}
	}
	return out, nil
}

// survey lists every job and judges what it finds.
func (s *sweeper) survey(ctx context.Context, jobs []*job) []*judged {
	var (
		mu  sync.Mutex
		all []*judged
		wg  sync.WaitGroup
	)
	sem := make(chan struct{}, listParallelism)
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !acquire(ctx, sem) {
				j.failed = true
				return
			}
			got, err := s.list(ctx, j)
			<-sem
			if err != nil {
				j.failed = true
				return
			}
			mu.Lock()
			all = append(all, got...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

// list makes one listing and judges each resource in it. A listing that
// fails is a problem, never an empty listing: a throttled or refused
// listing read as "nothing there" is how a sweeper reports a dirty account
// clean.
func (s *sweeper) list(ctx context.Context, j *job) ([]*judged, error) {
	t := s.now()
	rs, err := j.res.List(ctx, j.region)
	if err != nil {
		s.problem(err.Error())
		s.emit(Event{Kind: EventFailed, Region: j.region, Message: "list " + j.where(), Err: err})
		return nil, err
	}
	seen := map[string]bool{}
	out := make([]*judged, 0, len(rs))
	var wg sync.WaitGroup
	for _, r := range rs {
		// A page boundary that moved under a paginator can repeat a name.
		if seen[r.Name] {
			continue
		}
		seen[r.Name] = true
		f := &judged{job: j, res: r}
		out = append(out, f)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.judge(ctx, f)
		}()
	}
	wg.Wait()
	kept := out[:0]
	prefixed := 0
	for _, f := range out {
		if f.gone {
			continue
		}
		kept = append(kept, f)
		if f.entry.Reason != ReasonPrefix {
			prefixed++
		}
	}
	s.emit(Event{Kind: EventListed, Region: j.region, Elapsed: s.now().Sub(t),
		Message: fmt.Sprintf("listed %s: %d resource(s), %d with the prefix", j.where(), len(kept), prefixed)})
	return kept, nil
}

// judge applies the rules, in the order that reports the strongest reason:
// the name, an exclusion, the ownership tag (read from the resource itself
// when the listing does not carry it), then the age.
func (s *sweeper) judge(ctx context.Context, f *judged) {
	j := f.job
	a := spec.Address{Provider: j.provider, Kind: j.kind, Name: f.res.Name}
	f.entry = Entry{Address: a, Region: f.res.Region}
	if why, ok := prefixMiss(f.res.Name, s.opts.Prefix); ok {
		f.entry.Reason, f.entry.Why = ReasonPrefix, why
		if f.res.Complete {
			f.entry.Owner = f.res.Owner
		}
		s.setCreated(f, f.res.Created)
		return
	}
	if rule, ok := s.excluded(a); ok {
		f.entry.Reason, f.entry.Why = ReasonExcluded, fmt.Sprintf("excluded by %s: %s", ruleText(rule), rule.Why)
		s.setCreated(f, f.res.Created)
		return
	}
	r := f.res
	if !r.Complete {
		// The listing does not carry the ownership tag: read it from the
		// resource. A tag scan (AWS's Tagging API) would be fewer calls,
		// but absence from a scan is not absence of a tag — it lags, and it
		// misses kinds — and a tag missed is a resource deleted anyway.
		full, found, err := s.read(ctx, j, r.Name, &r)
		switch {
		case err == nil && found:
			if full.Created.IsZero() {
				full.Created = r.Created
			}
			if full.Region == "" {
				full.Region = r.Region
			}
			r = full
		case err == nil:
			// Gone between the listing and the read: nothing to judge.
			f.gone = true
			return
		default:
			s.problem(err.Error())
			f.entry.Reason, f.entry.OwnerUnknown = ReasonUnreadable, true
			f.entry.Why = "its ownership tag could not be read, so whose it is is unknown; left alone (" + err.Error() + ")"
			s.setCreated(f, r.Created)
			return
		}
	}
	f.res = r
	f.entry.Owner = r.Owner
	s.setCreated(f, r.Created)
	if why, ok := foreign(r.Owner, s.opts.Prefix); ok {
		f.entry.Reason, f.entry.Why = ReasonForeign, why
		return
	}
	if reason, why, ok := s.tooYoung(r.Created); ok {
		f.entry.Reason, f.entry.Why = reason, why
		return
	}
	f.candidate = true
}

func (s *sweeper) setCreated(f *judged, t time.Time) {
	if !t.IsZero() {
		c := t.UTC()
		f.entry.Created = &c
	}
}

// read reads one resource within its service's bound: one just listed
// (listed set), or one whose delete is awaited. The sweep's rules need the
// mark, and the age when there is a floor; nothing a spec sets.
func (s *sweeper) read(ctx context.Context, j *job, name string, listed *providers.Resource) (providers.Resource, bool, error) {
	sem := s.sem(j)
	if !acquire(ctx, sem) {
		return providers.Resource{}, false, ctx.Err()
	}
	defer func() { <-sem }()
	// The age floor is the one rule that needs the creation time; without
	// it no call is made for it (a queue's GetQueueAttributes).
	ctx = providers.WithWant(ctx, providers.Want{Created: s.opts.OlderThan > 0})
	if listed != nil && j.res.ReadsListed() {
		// The listing just said it is there: no second lookup (a queue's
		// GetQueueUrl, a bucket's HeadBucket).
		return j.res.ReadListed(ctx, *listed, nil)
	}
	return j.res.Read(ctx, j.region, name)
}

// excluded finds an exclusion covering a under any kind of its physical
// class: an exclusion written for aws/s3-bucket/x protects the bucket the
// sweep lists as aws/object-store/x.
func (s *sweeper) excluded(a spec.Address) (spec.ExclusionRule, bool) {
	class := spec.PhysicalClass(a.Provider, a.Kind)
	for _, r := range s.opts.Exclusions {
		if r.Provider != a.Provider || spec.PhysicalClass(r.Provider, r.Kind) != class {
			continue
		}
		if r.Matches(spec.Address{Provider: r.Provider, Kind: r.Kind, Name: a.Name}) {
			return r, true
		}
	}
	return spec.ExclusionRule{}, false
}

func ruleText(r spec.ExclusionRule) string {
	name := r.Name
	if r.Prefix {
		name += "*"
	}
	return spec.Address{Provider: r.Provider, Kind: r.Kind, Name: name}.String()
}

// tooYoung applies the age floor. Unknown age is never old enough, unless
// the floor is 0: "I could not tell" must not delete what a live test run
// made a minute ago.
func (s *sweeper) tooYoung(created time.Time) (Reason, string, bool) {
	if s.opts.OlderThan <= 0 {
		return "", "", false
	}
	if created.IsZero() {
		return ReasonAgeUnknown, fmt.Sprintf("the cloud does not say when it was created, so it is not known to be older than %s", FormatAge(s.opts.OlderThan)), true
	}
	age := s.start.Sub(created)
	if age <= s.opts.OlderThan {
		return ReasonTooYoung, fmt.Sprintf("created %s ago, not older than %s", FormatAge(age), FormatAge(s.opts.OlderThan)), true
	}
	return "", "", false
}

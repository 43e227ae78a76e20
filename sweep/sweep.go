// Package sweep deletes the debris test fleets leave behind: resources whose
// names start with a prefix (ci-tests-), in the accounts whose credentials
// it is given. It earns the right to delete by refusing what other sweepers
// got wrong: a name that merely contains the prefix, a resource another
// fleet's tag claims, one younger than the age floor or of unknown age, an
// exclusion, a listing that failed and was read as empty. Everything it
// lists is reported, kept ones with the reason; deletion is opt-in, retried
// in rounds while refused deletes make progress, and verified by listing
// again. docs/sweep.md gives each rule and why it exists.
//
// Sweep sits beside the engine (cmd -> sweep -> providers -> spec): it has
// no plan and no graph, because debris has no declaration to order it by.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// MinPrefix is the shortest prefix a sweep accepts. An empty prefix matches
// everything, and one or two characters ("c", "ci") match names nobody
// meant as debris.
const MinPrefix = 3

// Options say what to sweep and how.
type Options struct {
	// Backends are the clouds to sweep, each with working credentials.
	Backends map[spec.Provider]providers.Backend
	// Skipped names the clouds that are not swept, and why (no
	// credentials, no driver in this build); the report repeats it so that
	// "clean" never silently means "not looked at".
	Skipped map[spec.Provider]string
	// Regions are the regions to list, per provider. A provider with a
	// backend and no region is an error.
	Regions map[spec.Provider][]string
	// Kinds restricts the sweep to these kinds; empty means every kind
	// each backend offers.
	Kinds []spec.Kind
	// Prefix is what a candidate's name starts with (case-sensitive, at
	// least MinPrefix characters).
	Prefix string
	// OlderThan is the age floor: a candidate is older than this, and a
	// resource whose creation time the cloud does not say is never old
	// enough unless OlderThan is 0.
	OlderThan time.Duration
	// Exclusions are never touched, whatever their name or tag.
	Exclusions []spec.ExclusionRule
	// Accounts are the accounts the credentials must belong to, per
	// provider, when stated (a fleet's accounts).
	Accounts map[spec.Provider]string
	// Delete deletes the candidates; without it the sweep is a dry run.
	Delete bool
	// PerKind bounds concurrent calls to one kind's service (reads and
	// deletes); 5 when zero. Listings run 8 at a time.
	PerKind int
	// RoundDelay is the pause before a retry round, so that what the last
	// round deleted has time to let go of its dependants; 2s when zero,
	// none when negative.
	RoundDelay time.Duration
	// Settle is how long a resource whose delete succeeded may still be
	// listed (eventual consistency) before it counts as a survivor; 30s
	// when zero.
	Settle time.Duration
	// Heartbeat is how often a long deletion names what it is still
	// waiting for; 15s when zero.
	Heartbeat time.Duration
	// Progress receives events as the sweep works; it must be safe for
	// concurrent use. Nil discards them.
	Progress func(Event)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// ErrNoPrefix refuses a sweep without a prefix. Each front end names its
// own way to give one (a flag, a payload field).
var ErrNoPrefix = errors.New("sweep needs a prefix (such as ci-tests-): without one every resource in the account would be a candidate")

// AgeError is an age floor that does not parse, or is negative.
type AgeError struct {
	Value    string
	Negative bool
}

func (e *AgeError) Error() string {
	if e.Negative {
		return fmt.Sprintf("age %q: an age cannot be negative", e.Value)
	}
	return fmt.Sprintf("age %q: want a duration such as 90m, 2h or 7d", e.Value)
}

// CheckPrefix refuses a prefix that would sweep more than debris.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return ErrNoPrefix
	}
	if n := utf8.RuneCountInString(prefix); n < MinPrefix {
		return fmt.Errorf("the prefix %q is %d character(s) long; a sweep needs at least %d, so that it cannot match names nobody meant as debris", prefix, n, MinPrefix)
	}
	return nil
}

// ParseAge reads an age floor: a Go duration ("90m", "2h") or a
// number of days ("7d"). "0" means no age floor.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n > 100*365 {
			return 0, &AgeError{Value: s}
		}
		d = time.Duration(n * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, &AgeError{Value: s}
		}
	}
	if d < 0 {
		return 0, &AgeError{Value: s, Negative: true}
	}
	return d, nil
}

// Run sweeps: it checks the accounts, lists every kind in every region,
// judges each resource, and with Options.Delete deletes the candidates in
// rounds, then lists again to verify. A refusal before anything is listed
// (bad prefix, wrong account, nothing to sweep with) returns a nil report.
// Otherwise the report is complete as far as the sweep got, and the error
// is non-nil whenever a listing or a read failed or a candidate is left,
// so that no caller can read a partial sweep as a clean account.
func Run(ctx context.Context, opts Options) (*Report, error) {
	s, err := newSweeper(opts)
	if err != nil {
		return nil, err
	}
	started := s.now()
	rep := s.report
	if err := s.checkAccounts(ctx); err != nil {
		return nil, err
	}
	jobs, err := s.jobs()
	if err != nil {
		return nil, err
	}
	all := s.survey(ctx, jobs)
	for _, f := range all {
		if f.candidate {
			f.entry.Status = StatusWouldDelete
			rep.Candidates = append(rep.Candidates, f.entry)
		} else {
			rep.Kept = append(rep.Kept, f.entry)
		}
	}
	if opts.Delete && ctx.Err() == nil {
		var cands []*judged
		for _, f := range all {
			if f.candidate {
				cands = append(cands, f)
			}
		}
		s.deleteRounds(ctx, cands)
		s.verify(ctx, jobs, cands)
		rep.Candidates = rep.Candidates[:0]
		for _, f := range cands {
			rep.Candidates = append(rep.Candidates, f.entry)
			if f.entry.Status == StatusDeleted {
				rep.Deleted++
			}
		}
	}
	if err := ctx.Err(); err != nil {
		s.problem(fmt.Sprintf("the sweep was interrupted: %v", err))
	}
	rep.sort()
	rep.ElapsedMs = s.now().Sub(started).Milliseconds()
	return rep, rep.Err()
}

// sweeper is one run.
type sweeper struct {
	opts   Options
	now    func() time.Time
	start  time.Time
	report *Report
	// kindSem bounds calls per service: one channel per provider and
	// service (or physical class: object-store and s3-bucket are both S3).
	kindSem map[string]chan struct{}
	mu      sync.Mutex
}

func newSweeper(opts Options) (*sweeper, error) {
	if err := CheckPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if opts.OlderThan < 0 {
		return nil, fmt.Errorf("the age floor %s is negative", opts.OlderThan)
	}
	if len(opts.Backends) == 0 {
		why := []string{}
		for _, p := range sortedProviders(opts.Skipped) {
			why = append(why, fmt.Sprintf("%s: %s", p, opts.Skipped[p]))
		}
		msg := "no cloud to sweep: no backend was given"
		if len(why) > 0 {
			msg = "no cloud to sweep (" + strings.Join(why, "; ") + ")"
		}
		return nil, errors.New(msg)
	}
	for _, k := range opts.Kinds {
		if _, ok := spec.Lookup(k); !ok {
			return nil, fmt.Errorf("unknown kind %q; known kinds: %s", k, kindNames())
		}
	}
	if opts.PerKind <= 0 {
		opts.PerKind = 5
	}
	if opts.RoundDelay == 0 {
		opts.RoundDelay = 2 * time.Second
	}
	if opts.Settle <= 0 {
		opts.Settle = 30 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &sweeper{opts: opts, now: opts.Now, kindSem: map[string]chan struct{}{}}
	s.start = s.now()
	s.report = &Report{Prefix: opts.Prefix, OlderThan: FormatAge(opts.OlderThan), Delete: opts.Delete, At: s.start.UTC()}
	for _, p := range sortedProviders(opts.Skipped) {
		if _, swept := opts.Backends[p]; !swept {
			s.report.Clouds = append(s.report.Clouds, Cloud{Provider: p, Skipped: opts.Skipped[p]})
		}
	}
	return s, nil
}

// checkAccounts establishes the account of every backend before anything
// is listed, and refuses credentials for another account than the one
// stated: sweeping the wrong account is the one mistake a prefix cannot
// catch.
func (s *sweeper) checkAccounts(ctx context.Context) error {
	for _, p := range sortedProviders(s.opts.Backends) {
		b := s.opts.Backends[p]
		if b == nil {
			return fmt.Errorf("%s: no backend", p)
		}
		regions := uniqueSorted(s.opts.Regions[p])
		if len(regions) == 0 {
			return fmt.Errorf("%s: no region to sweep", p)
		}
		got, err := b.Account(ctx)
		if err != nil {
			return fmt.Errorf("%s: cannot establish the account of the credentials, so nothing was listed: %w", p, err)
		}
		if want, stated := s.opts.Accounts[p]; stated && want != "" && want != got {
			return fmt.Errorf("%s: the credentials belong to account %s, but the fleet is for %s; refusing before listing anything", p, got, want)
		}
		s.report.Clouds = append(s.report.Clouds, Cloud{Provider: p, Account: got, Regions: regions})
		s.emit(Event{Kind: EventAccount, Message: fmt.Sprintf("%s: %s in %s ok", p, got, strings.Join(regions, ", "))})
	}
	sort.Slice(s.report.Clouds, func(i, j int) bool { return s.report.Clouds[i].Provider < s.report.Clouds[j].Provider })
	return nil
}

func (s *sweeper) emit(ev Event) {
	if s.opts.Progress != nil {
		s.opts.Progress(ev)
	}
}

// problem records something that makes the sweep incomplete.
func (s *sweeper) problem(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.report.Errors = append(s.report.Errors, msg)
}

func (s *sweeper) warn(msg string) {
	s.mu.Lock()
	s.report.Warnings = append(s.report.Warnings, msg)
	s.mu.Unlock()
	s.emit(Event{Kind: EventWarning, Message: msg})
}

// services is implemented by a backend that names the service whose rate
// limits each kind's calls spend (EC2 for both security groups and
// instances). It is asked structurally, so a backend without it still
// works: its kinds are then bounded per physical class.
type services interface {
	Service(k spec.Kind) string
}

// serviceOf names the service behind j's kind: its provider and service
// (or physical class).
func serviceOf(j *job) string {
	service := spec.PhysicalClass(j.provider, j.kind)
	if sv, ok := j.backend.(services); ok {
		if name := sv.Service(j.kind); name != "" {
			service = name
		}
	}
	return string(j.provider) + "/" + service
}

// sem returns the bound of the service behind kind k of j's provider.
func (s *sweeper) sem(j *job) chan struct{} {
	key := serviceOf(j)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.kindSem[key]
	if !ok {
		c = make(chan struct{}, s.opts.PerKind)
		s.kindSem[key] = c
	}
	return c
}

// acquire waits for a slot of c, or for ctx.
func acquire(ctx context.Context, c chan struct{}) bool {
	select {
	case c <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// callError is err as a *providers.CallError: a driver call's error
// already is one; another (a cancellation before the call) is wrapped the
// same way, so every problem reads "aws/queues/jobs: delete: …".
func callError(b providers.Backend, a spec.Address, op string, err error) error {
	var c *providers.CallError
	if errors.As(err, &c) {
		return err
	}
	return &providers.CallError{Address: a, Op: op, Code: providers.CodeOf(b, err), Err: err}
}

func sortedProviders[V any](m map[spec.Provider]V) []spec.Provider {
	out := make([]spec.Provider, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func uniqueSorted(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func kindNames() string {
	var names []string
	for _, k := range spec.Kinds() {
		names = append(names, string(k.Kind))
	}
	return strings.Join(names, ", ")
}

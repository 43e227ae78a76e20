package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/infra-iac/infra/internal/walk"
	"github.com/infra-iac/infra/ownership"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// Records is what an apply writes to: the ledger and the cache. A
// state.Store is one; the engine needs nothing else of it.
type Records interface {
	SaveLedger(ctx context.Context, l *state.Ledger) error
	SaveCache(ctx context.Context, c *state.Cache) error
	Where() string
}

// ApplyOptions shape an apply.
type ApplyOptions struct {
	// Force overrides the brake.
	Force bool
	// Store receives the ledger before the first action, as actions
	// change it (paced: see applyRun), and at the end; and the cache at
	// the end.
	Store Records
	// StopAt, when set, is the time after which no new action starts; the
	// report is then Incomplete and a re-run resumes (the executor uses it
	// to return before its Lambda deadline).
	StopAt time.Time
	// RunID names the run in the intents it records before creating
	// anything; the time and process id when empty.
	RunID string
}

// Status of one applied action.
type Status string

const (
	StatusDone       Status = "done"
	StatusFailed     Status = "failed"
	StatusSkipped    Status = "skipped"     // a dependency failed
	StatusNotStarted Status = "not-started" // stopped before its turn (StopAt)
)

// Applied is what happened to one action.
type Applied struct {
	Address   spec.Address `json:"address"`
	Action    ActionKind   `json:"action"`
	Status    Status       `json:"status"`
	Error     string       `json:"error,omitempty"`
	ElapsedMs int64        `json:"elapsedMs"`
}

// Report is the outcome of an apply.
type Report struct {
	PlanID     string    `json:"planId"`
	Applied    []Applied `json:"applied"`
	Incomplete bool      `json:"incomplete,omitempty"`
	ElapsedMs  int64     `json:"elapsedMs"`
}

// BrakeError is the refusal to destroy most of what a fleet manages while
// it still declares things.
type BrakeError struct {
	Destructive, Managed int
}

// Error says what the brake refused, not how to override it: that is each
// front end's remedy (a flag, a payload field).
func (e *BrakeError) Error() string {
	return fmt.Sprintf("this would destroy %d of %d managed resources while still declaring others, which is not a teardown",
		e.Destructive, e.Managed)
}

// AccountMismatchError is credentials that belong to another account than
// the one the fleet declares. Nothing was listed.
type AccountMismatchError struct {
	Provider  spec.Provider
	Got, Want string
}

func (e *AccountMismatchError) Error() string {
	return fmt.Sprintf("%s: the credentials belong to account %s, but the fleet is for %s; refusing before listing anything (check AWS_PROFILE or the credentials in use)",
		e.Provider, e.Got, e.Want)
}

// ErrPlanHasErrors refuses an apply while a diagnostic is an error.
var ErrPlanHasErrors = errors.New("the plan has errors; fix them and plan again")

// Apply carries out a plan made by Plan on this engine: it checks the
// brake and the backends, records every declared resource that exists and
// is ours, then runs the actions in dependency order — independent ones in
// parallel — saving the ledger after every one, so a crash at any point
// loses nothing and a re-run converges.
func (e *Engine) Apply(ctx context.Context, p *Plan, opts ApplyOptions) (*Report, error) {
	started := time.Now()
	rn := p.run
	if rn == nil {
		return nil, errors.New("apply needs a plan made by this engine; plan again")
	}
	if opts.Store == nil {
		return nil, errors.New("apply needs a state store")
	}
	if p.FromCache != nil {
		return nil, ErrFromCache
	}
	if !p.Applicable {
		return nil, ErrPlanHasErrors
	}
	if pending := p.Pending(); pending != nil {
		return nil, pending
	}
	if err := e.checkEnv(p); err != nil {
		return nil, err
	}
	for _, r := range rn.ledger.Rows {
		if _, ok := e.opts.Backends[r.Provider]; !ok {
			return nil, fmt.Errorf("the ledger records %s, but %s. Refusing to apply: this would report every %s resource as destroyed without deleting any of them. Declare the cloud, or point the ledger elsewhere",
				r.Address(), e.unreachable(r.Provider), r.Provider)
		}
	}
	destructive := p.Summary.Delete + p.Summary.Replace
	declares := !rn.destroy && len(rn.model.Resources) > 0
	if !opts.Force && declares && rn.managed > 1 && 2*destructive > rn.managed {
		return nil, &BrakeError{Destructive: destructive, Managed: rn.managed}
	}

	runID := opts.RunID
	if runID == "" {
		runID = fmt.Sprintf("%s-%d", started.UTC().Format("20060102T150405Z"), os.Getpid())
	}
	ar := &applyRun{e: e, p: p, rn: rn, store: opts.Store, ledger: rn.ledger.Clone(), runID: runID,
		res: &resolver{e: e, m: rn.model, w: rn.world, fleet: rn.model.Fleet}, wants: wantsOf(rn.model)}
	ar.cond = sync.NewCond(&ar.mu)
	ar.heldBy, ar.stopped, ar.wake = map[spec.Address]int{}, make(chan struct{}), make(chan struct{})
	// Save with a context that outlives a cancellation: an action that
	// finished must be recorded even while the run is being interrupted.
	ar.saveCtx = context.WithoutCancel(ctx)

	if err := ar.adopt(); err != nil {
		return nil, err
	}
	go ar.saveLoop()
	report := ar.schedule(ctx, opts.StopAt)
	ar.unsaved(report, ar.finish())
	if ar.stopErr != nil && ar.saveErr == nil {
		ar.fail(fmt.Errorf("stopped starting actions when %w; a later save held every change made, so apply again to finish", ar.stopErr))
	}
	report.PlanID = p.ID
	if err := ar.saveCache(); err != nil {
		return report, err
	}
	report.ElapsedMs = time.Since(started).Milliseconds()
	return report, errors.Join(ar.failures...)
}

// applyRun is one apply of a plan: its own copy of the ledger, saved after
// every change, and the failures it met. (The executor is the Lambda.)
type applyRun struct {
	e       *Engine
	p       *Plan
	rn      *run
	store   Records
	res     *resolver
	saveCtx context.Context
	runID   string

	// wants is what each action needs of its resource (wantsOf): a
	// driver reads back only that.
	wants map[spec.Address]providers.Want

	mu       sync.Mutex
	ledger   *state.Ledger
	failures []error
	// The ledger's saves are paced group commits. A change returns at
	// once; one goroutine (saveLoop) writes the ledger whole whenever
	// changes wait, then rests nine times as long as the save took, so a
	// large ledger's saves cost a tenth of the run, not all of it (they
	// grow with N: quadratic). Not waiting is safe because adopt saved
	// every create's intent before the first mutation: a crash before
	// the next save leaves intents, which the next run resolves, as it
	// does for a crash inside a create. The run ends with a save of
	// every change (finish), and an action whose change that save did
	// not hold is reported failed (unsaved). cond waits on mu.
	cond     *sync.Cond
	changes  int                  // changes made to ledger so far
	saved    int                  // changes the last successful save held
	heldBy   map[spec.Address]int // the change that last recorded each
	saveErr  error                // the last save's failure
	stopErr  error                // the first save's failure: no action starts after it
	rested   time.Time            // when the next paced save may begin
	finished bool                 // the walk is over: save at once, and stop
	stopped  chan struct{}        // saveLoop returned
	wake     chan struct{}        // closed by finish: cut the rest short
	// cautioned holds the caveats warned of already (under mu): each
	// is the same for every resource it touches, and said once a run.
	cautioned map[string]bool
}

// record changes the ledger for the action on a (none: the zero
// address); saveLoop saves it.
func (ar *applyRun) record(a spec.Address, change func(l *state.Ledger) bool) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if !change(ar.ledger) {
		return
	}
	ar.changes++
	if !a.IsZero() {
		ar.heldBy[a] = ar.changes
	}
	ar.cond.Broadcast()
}

// save writes the ledger as it is now, with mu held on entry and exit but
// not while writing, so that changes go on being made meanwhile.
func (ar *applyRun) save() {
	held, snapshot := ar.changes, ar.ledger.Clone()
	ar.mu.Unlock()
	began := time.Now()
	err := ar.store.SaveLedger(ar.saveCtx, snapshot)
	took := time.Since(began)
	ar.mu.Lock()
	ar.rested = time.Now().Add(9 * took)
	if err != nil {
		ar.saveErr = fmt.Errorf("save the ledger to %s: %w", ar.store.Where(), err)
		if ar.stopErr == nil {
			ar.stopErr = ar.saveErr
		}
		return
	}
	ar.saved, ar.saveErr = held, nil
}

// saveLoop saves the ledger while the walk runs, paced (see applyRun). A
// failed save is tried again only by the last one: no action starts after
// it, and what was done is in the run's ledger.
func (ar *applyRun) saveLoop() {
	ar.mu.Lock()
	defer func() { ar.mu.Unlock(); close(ar.stopped) }()
	for {
		for !ar.finished && (ar.saved >= ar.changes || ar.saveErr != nil) {
			ar.cond.Wait()
		}
		if ar.saved >= ar.changes {
			return
		}
		if rest := time.Until(ar.rested); rest > 0 && !ar.finished {
			ar.mu.Unlock()
			select {
			case <-time.After(rest):
			case <-ar.wake:
			}
			ar.mu.Lock()
		}
		last := ar.finished
		ar.save()
		if last {
			return
		}
	}
}

// finish ends the saves: one more holds every change, unless it fails.
func (ar *applyRun) finish() error {
	ar.mu.Lock()
	ar.finished = true
	close(ar.wake)
	ar.cond.Broadcast()
	ar.mu.Unlock()
	<-ar.stopped
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.saveErr
}

// saveFailed is why no further action may start: a save failed, so what
// it does might not be recorded.
func (ar *applyRun) saveFailed() error {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.stopErr
}

// unsaved reports failed every action whose change the last save did not
// hold: the cloud did it, the ledger does not say so.
func (ar *applyRun) unsaved(report *Report, err error) {
	if err == nil {
		return
	}
	ar.fail(err)
	for i, ap := range report.Applied {
		if ar.heldBy[ap.Address] > ar.saved && ap.Status == StatusDone {
			report.Applied[i].Status = StatusFailed
			report.Applied[i].Error = fmt.Sprintf("%s: done, but not recorded: %v", ap.Address, err)
		}
	}
}

// adopt records, before any mutation, every declared resource that exists
// and is ours — even with nothing to do — so that a converged resource is
// never unmanaged. In the same save it records the intent of every create
// the plan holds, so that a process that dies inside one — after the cloud
// made the resource, before it was tagged or recorded — leaves what the
// next run needs to recognise it; and it drops the intents the plan has
// settled (a claimed resource keeps its own until it is tagged).
func (ar *applyRun) adopt() error {
	ar.record(spec.Address{}, func(l *state.Ledger) bool {
		changed := false
		for _, a := range ar.rn.drop {
			changed = l.Remove(a) || changed
		}
		for _, in := range append([]state.Intent{}, l.Intents...) {
			if _, claimed := ar.rn.claimed[in.Address()]; !claimed {
				changed = l.DropIntent(in.Address()) || changed
			}
		}
		for _, a := range ar.p.Actions {
			if a.Action == Create || a.Action == Replace {
				changed = l.PutIntent(state.Intent{Row: state.Row{Provider: a.Address.Provider, Kind: a.Address.Kind,
					Name: a.Address.Name, Region: a.Region}, RunID: ar.runID}) || changed
			}
		}
		if ar.rn.destroy {
			return changed
		}
		for _, row := range ar.rn.adopt {
			changed = l.Put(row) || changed
		}
		return changed
	})
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.saved < ar.changes {
		ar.save()
	}
	return ar.saveErr
}

// stepKind is the part of an action a step carries out. A replace is two
// steps, so that what holds an attachment to the old resource can be
// deleted between them: delete it, then the old resource, then create the
// new one, then it again.
type stepKind int

const (
	stepWhole   stepKind = iota // the whole action
	stepDestroy                 // a replace: delete the old resource
	stepBuild                   // a replace: create the new one
)

type step struct {
	action int
	kind   stepKind
}

// stepsOf splits the plan's actions into the steps the scheduler runs, with
// their edges: graph[s].After lists the steps s waits for. An action waits
// for what it depends on; a replace's deletion of the old copy waits for
// the deletion of the old copy of every replaced resource that depends on
// it (the reverse order), and its creation waits for that deletion.
func stepsOf(actions []Action) (steps []step, last []int, graph []walk.Step) {
	n := len(actions)
	index := make(map[spec.Address]int, n)
	last = make([]int, n)     // the step that finishes the action
	destroy := make([]int, n) // a replace's deletion step, or -1
	for i, a := range actions {
		index[a.Address] = i
		destroy[i] = -1
		if a.Action == Replace {
			destroy[i] = len(steps)
			steps = append(steps, step{i, stepDestroy})
			last[i] = len(steps)
			steps = append(steps, step{i, stepBuild})
			continue
		}
		last[i] = len(steps)
		steps = append(steps, step{i, stepWhole})
	}
	graph = make([]walk.Step, len(steps))
	edge := func(first, then int) {
		graph[then].After = append(graph[then].After, first)
	}
	for i, a := range actions {
		if destroy[i] >= 0 {
			edge(destroy[i], last[i])
		}
		for _, dep := range a.DependsOn {
			j, ok := index[dep]
			if !ok {
				continue
			}
			edge(last[j], last[i])
			if destroy[i] >= 0 && destroy[j] >= 0 {
				edge(destroy[i], destroy[j])
			}
		}
	}
	return steps, last, graph
}

// scheduling is the engine's side of one walk of the plan's steps: the
// rules the walker does not know (deletions wait for every build, a failed
// build skips every pending deletion, a refused orphan delete is deferred)
// and the report. Only the walk's hooks touch it, on the walk's goroutine.
type scheduling struct {
	ar          *applyRun
	w           *walk.Walker
	actions     []Action
	steps       []step
	last        []int
	applied     []Applied
	buildsLeft  int
	inRounds    bool
	lastRefusal map[int]error // by action
}

// schedule runs the plan's steps as a dependency graph: each starts as
// soon as its own dependencies are done, up to the parallelism bound
// overall and the per-service bound on its service.
// Deletions wait for every build, so a failed build never leaves a
// half-destroyed fleet. A refused orphan delete is deferred to retry rounds.
func (ar *applyRun) schedule(ctx context.Context, stopAt time.Time) *Report {
	s := &scheduling{ar: ar, actions: ar.p.Actions, lastRefusal: map[int]error{}}
	steps, last, graph := stepsOf(s.actions)
	s.steps, s.last = steps, last
	s.applied = make([]Applied, len(s.actions))
	for i, a := range s.actions {
		s.applied[i] = Applied{Address: a.Address, Action: a.Action, Status: StatusNotStarted}
	}
	for id, st := range steps {
		a := s.actions[st.action].Address
		graph[id].Service = ar.e.service(a.Provider, a.Kind)
		if !s.isDelete(id) {
			s.buildsLeft++
		}
	}
	ar.e.emit(Event{Kind: EventBegin, Total: len(s.actions)})
	s.w = walk.New(walk.Config{
		Steps: graph, Parallelism: ar.e.opts.Parallelism, PerService: ar.e.opts.PerService,
		// Orphans have no declaration and so no edges: their order is
		// discovered by retrying, one at a time, until a round frees
		// nothing. What is left then fails with the provider's own words.
		RoundParallelism: 1,
		Run: func(ctx context.Context, id int) error {
			st := s.steps[id]
			return ar.step(ctx, s.actions[st.action], st.kind)
		},
		Ready:   func(id int) bool { return !s.isDelete(id) || s.buildsLeft == 0 },
		Started: s.started,
		Settled: s.settled,
		Stop: func() bool {
			return !s.inRounds && (ctx.Err() != nil || (!stopAt.IsZero() && time.Now().After(stopAt)) || ar.saveFailed() != nil)
		},
		Heartbeat: ar.e.opts.Heartbeat,
		Tick:      s.tick,
		Defer: func(id int, err error) bool {
			a := s.actions[s.steps[id].action]
			return a.Action == Delete && ar.rn.orphans[a.Address] && providers.CallCode(err) == providers.Conflict
		},
		Again:       func(round int, t walk.Tally) bool { return round == 1 || t.Done+t.Failed > 0 },
		BeforeRound: func(int, []int) bool { s.inRounds = true; return true },
	})
	return s.report(s.w.Walk(ctx))
}

func (s *scheduling) isDelete(id int) bool { return s.actions[s.steps[id].action].Action == Delete }

func (s *scheduling) started(id, round int) {
	if round == 1 && s.steps[id].kind != stepBuild {
		a := s.actions[s.steps[id].action]
		s.ar.e.emit(Event{Kind: EventStart, Address: a.Address, Action: a.Action})
	}
}

// tick names the steps running; retry rounds say nothing.
func (s *scheduling) tick(running []int) {
	if s.inRounds {
		return
	}
	var out []spec.Address
	for _, id := range running {
		out = append(out, s.actions[s.steps[id].action].Address)
	}
	s.ar.e.emit(Event{Kind: EventWaiting, Outstanding: out, Message: fmt.Sprintf("still working on %d action(s)", len(out))})
}

// settled records how a step settled in the action's Applied.
func (s *scheduling) settled(id int, r walk.Result) {
	i := s.steps[id].action
	a, ap := s.actions[i], &s.applied[i]
	if r.Round == 1 && !s.isDelete(id) {
		s.buildsLeft--
	}
	ap.ElapsedMs += r.Elapsed.Milliseconds()
	switch {
	case r.State == walk.Skipped:
		if ap.Status != StatusFailed && ap.Status != StatusSkipped {
			ap.Status, ap.Error = StatusSkipped, s.why(r.Err)
			s.ar.e.emit(Event{Kind: EventSkipped, Address: a.Address, Action: a.Action, Err: r.Err})
		}
	case r.State == walk.Done && r.Round > 1:
		ap.Status, ap.Error = StatusDone, ""
		s.ar.e.emit(Event{Kind: EventDone, Address: a.Address, Action: a.Action, Elapsed: r.Elapsed})
	case r.State == walk.Done && id == s.last[i]:
		ap.Status = StatusDone
		s.ar.e.emit(Event{Kind: EventDone, Address: a.Address, Action: a.Action, Elapsed: time.Duration(ap.ElapsedMs) * time.Millisecond})
	case r.State == walk.Deferred:
		s.lastRefusal[i] = r.Err
		if r.Round == 1 {
			ap.Error = r.Err.Error()
			s.ar.e.emit(Event{Kind: EventDeferred, Address: a.Address, Action: a.Action, Err: r.Err})
		}
	case r.State == walk.Failed:
		ap.Status, ap.Error = StatusFailed, r.Err.Error()
		s.ar.fail(r.Err)
		ev := Event{Kind: EventFailed, Address: a.Address, Action: a.Action, Err: r.Err}
		if r.Round == 1 {
			ev.Elapsed = r.Elapsed
		}
		s.ar.e.emit(ev)
		if a.Action != Delete {
			s.skipDeletes()
		}
	}
}

// why words a skip: the failed dependency by its address.
func (s *scheduling) why(err error) string {
	var f walk.FailedDependency
	if errors.As(err, &f) {
		return fmt.Sprintf("not run: %s failed", s.actions[s.steps[f.ID].action].Address)
	}
	return err.Error()
}

// skipDeletes skips every pending deletion after a failed build.
func (s *scheduling) skipDeletes() {
	why := errors.New("not run: a create, update or replace failed, so nothing is destroyed")
	for id := range s.steps {
		if s.isDelete(id) && s.w.State(id) == walk.Pending {
			s.w.Skip(id, why)
		}
	}
}

// report ends the walk: a refused delete still refused fails with the
// provider's words, or is not started if the walk stopped before retrying.
func (s *scheduling) report(out walk.Outcome) *Report {
	report := &Report{}
	for id := range s.steps {
		if s.w.State(id) == walk.Pending {
			report.Incomplete = true
		}
	}
	for _, id := range out.Deferred {
		i := s.steps[id].action
		if out.Stopped {
			s.applied[i].Status = StatusNotStarted
			report.Incomplete = true
			continue
		}
		err := s.lastRefusal[i]
		s.applied[i].Status, s.applied[i].Error = StatusFailed, err.Error()
		s.ar.fail(err)
		s.ar.e.emit(Event{Kind: EventFailed, Address: s.actions[i].Address, Action: Delete, Err: err})
	}
	report.Applied = s.applied
	return report
}

func (ar *applyRun) fail(err error) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	ar.failures = append(ar.failures, err)
}

// step carries out one step of an action and records it.
func (ar *applyRun) step(ctx context.Context, a Action, kind stepKind) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = providers.WithWant(providers.WithAddress(ctx, a.Address), ar.wants[a.Address])
	switch kind {
	case stepDestroy:
		from := a.Region
		if old, moved := ar.rn.moves[a.Address]; moved {
			from = old
		}
		return ar.remove(ctx, a.Address, from, false)
	case stepBuild:
		return ar.create(ctx, a)
	}
	return ar.execute(ctx, a)
}

// execute carries out one whole action (never a replace, which is two
// steps) and records it.
func (ar *applyRun) execute(ctx context.Context, a Action) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch a.Action {
	case Adopt:
		if len(a.Changes) > 0 {
			// A claimed resource: tag it (and set what the interrupted
			// create did not), then record it.
			return ar.update(ctx, a)
		}
		return nil // recorded before any mutation
	case Create:
		return ar.create(ctx, a)
	case Update:
		return ar.update(ctx, a)
	case Delete:
		if err := ar.remove(ctx, a.Address, a.Region, ar.rn.orphans[a.Address]); err != nil {
			return err
		}
		ar.record(a.Address, func(l *state.Ledger) bool { return l.DropIntent(a.Address) || l.Remove(a.Address) })
		return nil
	case Forget:
		return ar.forget(ctx, a)
	}
	return fmt.Errorf("%s: unknown action %q", a.Address, a.Action)
}

// target is what a create (every field, defaults filled) or an update
// (what the document sets) of a sends its driver.
func (ar *applyRun) target(ctx context.Context, a spec.Address, op string, changed []string) (*providers.Resources, providers.Target, error) {
	d, _ := ar.rn.model.Lookup(a)
	rs, err := ar.e.resources(a)
	if err != nil {
		return nil, providers.Target{}, err
	}
	fields, err := ar.res.target(ctx, d, op == "create", changed)
	if err != nil {
		return nil, providers.Target{}, fmt.Errorf("%s: %s: %w", a, op, err)
	}
	ids, err := ar.identities(ctx, *d)
	if err != nil {
		return nil, providers.Target{}, fmt.Errorf("%s: %s: %w", a, op, err)
	}
	t := providers.Target{Name: a.Name, Region: d.Region, Fields: fields, Owner: ar.rn.model.Fleet, Identities: ids}
	if obs, seen := ar.rn.world.get(a); seen && obs.Region == d.Region && op != "create" {
		t.Attributes = obs.Attributes // what was observed: a queue's URL, its ARN
	}
	return rs, t, nil
}

// identities is the identity of each resource d refers to whose kind has
// one, as the world holds it: observed by the plan, or made earlier in
// this apply (the scheduler runs d after what it refers to).
func (ar *applyRun) identities(ctx context.Context, d spec.Declared) (map[spec.Address]string, error) {
	out := map[spec.Address]string{}
	for _, dep := range d.Deps() {
		info, _ := spec.Lookup(dep.Kind)
		if info == nil || info.Identity == "" {
			continue
		}
		if obs, ok := ar.rn.world.get(dep); ok && obs.Region == d.Region && obs.Attributes[info.Identity] != "" {
			out[dep] = obs.Attributes[info.Identity]
		}
	}
	if err := ar.wiredIdentities(ctx, d, out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// wiredIdentities adds the referents another fleet's exports name in d's
// Wired fields (spec.Field.Wired): such a field's value is the referent's
// identity itself (a subnet's id), which the driver receives as the
// referenced name, so the referent is entered under that name.
func (ar *applyRun) wiredIdentities(ctx context.Context, d spec.Declared, out map[spec.Address]string) error {
	info, _ := spec.Lookup(d.Address.Kind)
	if info == nil {
		return nil
	}
	for _, f := range info.Fields {
		v, ok := d.Fields[f.Name]
		if !f.Wired || !ok {
			continue
		}
		for _, im := range spec.ImportsIn(v) {
			val, err := ar.res.applyValue(ctx, im)
			if err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
			// Never printed: a raised export arrives as a spec.Sensitive.
			id, isStr := val.(string)
			if !isStr || id == "" {
				return fmt.Errorf("field %q: %s.%s is not a non-empty public string, so not the identity of a %s", f.Name, im.Slot, im.Export, f.RefKinds[0])
			}
			out[spec.Address{Provider: d.Address.Provider, Kind: f.RefKinds[0], Name: id}] = id
		}
	}
	return nil
}

// made records what a create or an update made of a: in the world, and in
// the ledger as a row in place of its intent. inputs, when the call sent
// a's secret value, is what that value was made of (inputs.go); nil keeps
// what the row recorded.
func (ar *applyRun) made(a spec.Address, region string, r providers.Resource, inputs *state.ValueInputs) {
	ar.rn.world.set(a, r)
	if r.Caveat != "" {
		ar.mu.Lock()
		first := !ar.cautioned[r.Caveat]
		if ar.cautioned == nil {
			ar.cautioned = map[string]bool{}
		}
		ar.cautioned[r.Caveat] = true
		ar.mu.Unlock()
		if first {
			ar.e.emit(Event{Kind: EventWarning, Address: a, Message: r.Caveat})
		}
	}
	ar.record(a, func(l *state.Ledger) bool {
		row := state.Row{Provider: a.Provider, Kind: a.Kind, Name: a.Name, Region: region, Caveat: r.Caveat}
		if m, ok := ar.rn.model.Components.Of(a); ok {
			row.Member = m.Path()
		}
		if inputs != nil {
			row.ValueInputs = *inputs
		} else if old, ok := l.Get(a); ok {
			row.ValueInputs = old.ValueInputs
		}
		put := l.Put(row)
		return l.DropIntent(a) || put
	})
}

func (ar *applyRun) create(ctx context.Context, a Action) error {
	rs, t, err := ar.target(ctx, a.Address, "create", nil)
	if err != nil {
		return err
	}
	owner := t.Owner
	r, err := rs.Create(ctx, t)
	if err != nil {
		if providers.CallCode(err) != providers.AlreadyExists {
			return err
		}
		// Someone created it since the plan: this fleet, in a run that
		// died before recording it, or this very create, which the SDK
		// retried after the cloud carried it out (BucketAlreadyOwnedByYou)
		// and which may not be tagged or finished yet. Ours — tagged for
		// this fleet, or untagged while this run's intent to create it
		// stands — is finished (its mutable fields and tags set) and
		// recorded; anything else is refused.
		existing, found, rerr := rs.Read(ctx, t.Region, a.Address.Name)
		if rerr != nil || !found || (existing.Owner != owner && existing.Owner != "") {
			return err
		}
		info, _ := spec.Lookup(a.Address.Kind)
		if r, err = rs.Update(ctx, t, info.Finishing(a.Address.Provider, t.Fields)); err != nil {
			return fmt.Errorf("%s: create: finish what an earlier attempt made: %w", a.Address, err)
		}
		if existing.Owner == "" {
			ar.e.emit(Event{Kind: EventWarning, Address: a.Address,
				Message: "already existed untagged, made by this fleet's interrupted or retried create; tagged and recorded it"})
		}
	}
	ar.made(a.Address, t.Region, r, ar.sentInputs(a.Address, nil))
	return nil
}

// sentInputs is what a's secret value is made of, when a call that sends
// it (a create: changed is nil; an update that changes it) has just
// succeeded; nil when the call did not send it or a has none.
func (ar *applyRun) sentInputs(a spec.Address, changed []string) *state.ValueInputs {
	d, ok := ar.rn.model.Lookup(a)
	if !ok {
		return nil
	}
	f, _, has := sourceField(d)
	if !has || (changed != nil && !slices.Contains(changed, f.Name)) {
		return nil
	}
	in, _ := ar.res.valueInputs(d)
	return &in
}

func (ar *applyRun) update(ctx context.Context, a Action) error {
	changed := make([]string, 0, len(a.Changes))
	for _, c := range a.Changes {
		changed = append(changed, c.Field)
	}
	rs, t, err := ar.target(ctx, a.Address, "update", changed)
	if err != nil {
		return err
	}
	if _, declared := t.Fields[spec.TagsField]; !declared && a.Action == Adopt {
		// The adopt writes the mark beside the tags the resource has,
		// which the plan showed: undeclared tags are kept, not cleared.
		for _, c := range a.Changes {
			if c.Field == spec.TagsField {
				if m, ok := c.After.(map[string]any); ok {
					tags := maps.Clone(m)
					delete(tags, spec.OwnershipTagKey)
					t.Fields[spec.TagsField] = tags
				}
			}
		}
	}
	r, err := rs.Update(ctx, t, changed)
	if err != nil {
		return err
	}
	ar.made(a.Address, t.Region, r, ar.sentInputs(a.Address, changed))
	return nil
}

// remove deletes a resource in region. An orphan's ownership is read again
// first: between the plan and now someone may have taken it over.
func (ar *applyRun) remove(ctx context.Context, a spec.Address, region string, orphan bool) error {
	rs, err := ar.e.resources(a)
	if err != nil {
		return err
	}
	if orphan {
		r, found, err := rs.Read(ctx, region, a.Name)
		if err != nil {
			return err
		}
		if !found {
			ar.rn.world.drop(a)
			return nil
		}
		_, claimed := ar.rn.claimed[a]
		if ownership.JudgeMark(ar.rn.model.Fleet, r.Owner) != ownership.Ours && !(claimed && r.Owner == "") {
			return fmt.Errorf("%s: delete: no longer carries this fleet's %s tag (%s); refusing to delete it",
				a, spec.OwnershipTagKey, ownership.Describe(r.Owner))
		}
	}
	t := providers.Target{Name: a.Name, Region: region, Owner: ar.rn.model.Fleet}
	if obs, seen := ar.rn.world.get(a); seen && obs.Region == region {
		t.Attributes = obs.Attributes // what the listing said: a queue's URL
	}
	if d, declared := ar.rn.model.Lookup(a); declared {
		t.Fields = ar.literalFields(d)
	}
	if err := rs.Delete(ctx, t); err != nil {
		return err
	}
	ar.rn.world.drop(a)
	return nil
}

// literalFields are the fields a delete may need (forceDestroy), without
// evaluating anything that reads a secret or a later value.
func (ar *applyRun) literalFields(d *spec.Declared) map[string]any {
	out := map[string]any{}
	for name, v := range d.Fields {
		if spec.IsLiteral(v) {
			if val, ok := ar.res.planValue(v); ok {
				out[name] = val
			}
		}
	}
	return out
}

func (ar *applyRun) forget(ctx context.Context, a Action) error {
	if ar.rn.release[a.Address] {
		rs, err := ar.e.resources(a.Address)
		if err != nil {
			return err
		}
		if !rs.Releases() {
			return fmt.Errorf("%s: forget: the %s driver cannot remove the ownership tag; remove %s=%s by hand, then apply again",
				a.Address, a.Address.Kind, spec.OwnershipTagKey, ar.rn.model.Fleet)
		}
		if err := rs.Release(ctx, a.Region, a.Address.Name, ar.rn.model.Fleet); err != nil {
			return err
		}
	}
	ar.record(a.Address, func(l *state.Ledger) bool { return l.Remove(a.Address) })
	return nil
}

// saveCache writes what the run last saw of every resource it knows.
func (ar *applyRun) saveCache() error {
	c := cacheOf(ar.rn.world)
	if err := ar.store.SaveCache(ar.saveCtx, c); err != nil {
		return fmt.Errorf("save the cache to %s: %w", ar.store.Where(), err)
	}
	return nil
}

func cacheOf(w *world) *state.Cache {
	c := state.NewCache()
	now := time.Now().UTC()
	w.mu.Lock()
	defer w.mu.Unlock()
	for a, r := range w.m {
		fields := map[string]any{}
		for k, v := range r.Fields {
			fields[k] = canon(v) // canon redacts a Sensitive, should a driver ever report one
		}
		c.Resources[a.String()] = state.Observed{Region: r.Region, Fields: fields, Attributes: r.Attributes, Owner: r.Owner, Seen: now}
	}
	return c
}

// Refresh observes the cloud and returns the cache to write. It changes
// nothing, and never the ledger: observing is not a decision about what is
// managed.
func (e *Engine) Refresh(ctx context.Context, m *spec.Model, ledger *state.Ledger) ([]Account, *state.Cache, error) {
	if ledger == nil {
		ledger = state.NewLedger()
	}
	accounts, _, err := e.verifyAccounts(ctx, m, ledger)
	if err != nil {
		return nil, nil, err
	}
	w, err := e.observe(ctx, interest(m, ledger), nil)
	if err != nil {
		return nil, nil, err
	}
	return accounts, cacheOf(w), nil
}

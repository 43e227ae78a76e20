package operations

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// Wiring across fleets (docs/wiring.md): a consumer's plan reads the
// published record and the claims of each fleet it is wired to; its apply
// claims each capability it reads before any change, and its next apply
// or destroy gives up what it no longer reads. A provider publishes its
// record at the end of each successful apply, and its plan refuses to
// break a capability a consumer claims.

// PendingError refuses an apply that needs a value another fleet has not
// published yet; it names the fleets to apply first.
type PendingError = engine.PendingError

// ConsumerHeldError refuses a consumer's apply whose capability serves one
// consumer and another fleet holds it. Nothing was changed.
type ConsumerHeldError struct {
	Provider, Capability string
	Holders              []string
}

func (e *ConsumerHeldError) Error() string {
	return fmt.Sprintf("%s:%s serves one consumer, and %s already holds it; wire the slot to another capability",
		e.Provider, e.Capability, strings.Join(e.Holders, ", "))
}

// CapabilityWithdrawnError refuses a consumer's claim on a capability its
// provider has taken out of service for an apply that breaks it. Nothing
// was changed.
type CapabilityWithdrawnError struct {
	Provider, Capability string
	Withdrawal           spec.Withdrawal
}

func (e *CapabilityWithdrawnError) Error() string {
	return fmt.Sprintf("%s:%s is out of service: %s's run %s (since %s) %s; wire the slot to another capability, or wait for that run to end (if it was killed, apply %s again, which gives the capability back)",
		e.Provider, e.Capability, e.Provider, spec.Printable(e.Withdrawal.Run), e.Withdrawal.Since.UTC().Format(time.RFC3339), spec.Printable(e.Withdrawal.Why), e.Provider)
}

// claimAttempts bounds the retries of a claim that lost a race with
// another consumer's: each retry reads what the other wrote.
const claimAttempts = 5

// resolveWires reads the published record and the claims of every fleet
// the model is wired to, and resolves the imports against them
// (spec.ResolveWires). It needs only read access to their state. A
// provider planned in the same run stands in with what it will publish.
func (s *session) resolveWires(ctx context.Context, upstream map[string]*spec.Published) {
	if len(s.model.Uses) == 0 {
		return
	}
	s.far = map[string]spec.Far{}
	for _, w := range s.wires() {
		if _, done := s.far[w.Fleet]; done {
			continue
		}
		s.far[w.Fleet] = s.readFar(ctx, w)
		if rec := upstream[w.Fleet]; rec != nil {
			f := s.far[w.Fleet]
			f.Record, f.Err, f.Where = rec, nil, "the plan of "+w.Fleet+" in this run"
			s.far[w.Fleet] = f
		}
	}
	s.diags = spec.SortDiagnostics(append(s.diags, spec.ResolveWires(s.model, s.far)...))
	// What the last apply read, so that a secret composed from a value
	// that changed since is sent again.
	if own, err := s.ownRecord(ctx); err == nil && own != nil {
		last := func(w *spec.Wired) {
			if v, ok := own.Reads[w.Ref]; ok {
				w.Last, w.HadLast = v, true
			}
		}
		for im, w := range s.model.Wired {
			last(&w)
			s.model.Wired[im] = w
		}
		for _, set := range s.model.WiredAll {
			for i := range set {
				last(&set[i])
			}
		}
	}
}

// wires are the capabilities the model's wires name, by slot name, each
// entry of a reach-all slot's list in turn.
func (s *session) wires() []*spec.Wire {
	var out []*spec.Wire
	for _, name := range slices.Sorted(maps.Keys(s.model.Uses)) {
		if w := s.model.Uses[name].Wire; w != nil {
			for _, e := range w.Each() {
				out = append(out, &e)
			}
		}
	}
	return out
}

// wiredCapabilities are the capabilities a set of wires names, by
// FLEET:CAPABILITY: what a claim is held on, whichever slot reads it.
func wiredCapabilities(wires map[string]spec.Wire) map[string]spec.Wire {
	out := map[string]spec.Wire{}
	for _, w := range wires {
		for _, e := range w.Each() {
			out[e.Fleet+":"+e.Provides] = e
		}
	}
	return out
}

// farStore opens the state of the fleet at the far end of a wire: beside
// this fleet's, or where the wire says.
func (s *session) farStore(ctx context.Context, w spec.Wire) (state.Store, error) {
	return s.env.storeOf(ctx, w.State, w.Fleet)
}

// storeOf opens a fleet's state: at location when it is set (a wire's
// "state"), else beside this fleet's.
func (env Env) storeOf(ctx context.Context, location, fleet string) (state.Store, error) {
	switch {
	case location != "" && env.StoreAt == nil:
		return nil, fmt.Errorf("this front end reads other fleets' state only beside its own, not at %s", location)
	case location != "":
		return env.StoreAt(ctx, location, fleet)
	case env.Store == nil:
		return nil, errors.New("no state location")
	}
	return env.Store(ctx, fleet)
}

func (s *session) readFar(ctx context.Context, w *spec.Wire) spec.Far {
	st, err := s.farStore(ctx, *w)
	if err != nil {
		return spec.Far{Where: w.State, Err: err}
	}
	rec, err := st.LoadPublished(ctx)
	if err != nil {
		return spec.Far{Where: st.Where(), Err: err}
	}
	claims, err := st.LoadClaims(ctx)
	return spec.Far{Record: rec, Where: st.Where(), Err: err, Claims: claims}
}

// claim records this fleet's claim on each capability it reads, in the
// provider's state, before the apply changes anything: a reach-all slot
// claims each capability of its set. A capability that serves one
// consumer is claimed by one guarded write, so of two racing consumers one
// wins and the other is refused.
func (s *session) claim(ctx context.Context) error {
	for _, slot := range slices.Sorted(maps.Keys(s.model.Uses)) {
		w := s.model.Uses[slot].Wire
		if w == nil {
			continue
		}
		for _, e := range w.Each() {
			one := s.far[e.Fleet].Record != nil && s.far[e.Fleet].Record.Capabilities[e.Provides].Consumers == "one"
			if err := s.claimOne(ctx, e, spec.Claim{Fleet: s.model.Fleet, Slot: slot}, one); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *session) claimOne(ctx context.Context, w spec.Wire, cl spec.Claim, one bool) error {
	return s.updateClaims(ctx, "claim", w, func(claims *spec.Claims) (bool, error) {
		var others []string
		for _, h := range claims.Holders(w.Provides) {
			if h != cl.Fleet {
				others = append(others, h)
			}
		}
		if wd, out := claims.Withdrawn[w.Provides]; out {
			return false, &CapabilityWithdrawnError{Provider: w.Fleet, Capability: w.Provides, Withdrawal: wd}
		}
		if one && len(others) > 0 {
			return false, &ConsumerHeldError{Provider: w.Fleet, Capability: w.Provides, Holders: others}
		}
		return claims.Add(w.Provides, cl), nil
	})
}

// unclaim gives up this fleet's claim on what a wire reads.
func (s *session) unclaim(ctx context.Context, w spec.Wire) error {
	return s.updateClaims(ctx, "unclaim", w, func(claims *spec.Claims) (bool, error) {
		return claims.Remove(w.Provides, s.model.Fleet), nil
	})
}

// updateClaims changes the claims in the state at the far end of w: it
// loads them, lets change decide, and saves guarded, loading again when
// another fleet saved in between, so no two changes overwrite each other.
func (s *session) updateClaims(ctx context.Context, verb string, w spec.Wire, change func(*spec.Claims) (bool, error)) error {
	st, err := s.farStore(ctx, w)
	if err != nil {
		return err
	}
	return changeClaims(ctx, st, verb+" "+w.Fleet+":"+w.Provides, change)
}

// changeClaims loads the claims in st, lets change decide, and saves
// guarded, loading again when another fleet saved in between.
func changeClaims(ctx context.Context, st state.Store, what string, change func(*spec.Claims) (bool, error)) error {
	for attempt := 1; ; attempt++ {
		claims, err := st.LoadClaims(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		changed, err := change(claims)
		if err != nil || !changed {
			return err
		}
		err = st.SaveClaims(ctx, claims)
		var conflict *state.ConflictError
		if err == nil {
			return nil
		}
		if !errors.As(err, &conflict) || attempt == claimAttempts {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
}

// ownRecord is this fleet's published record as the session found it,
// read once: the plan, the protection of its consumers and the publish
// after the apply all start from it, and the lock keeps it as it is.
func (s *session) ownRecord(ctx context.Context) (*spec.Published, error) {
	if !s.ownRead {
		s.own, s.ownErr = s.store.LoadPublished(ctx)
		s.ownRead = true
	}
	return s.own, s.ownErr
}

// publish writes this fleet's record once an apply has succeeded (or had
// nothing to do): its capabilities as the cloud now is, and the wires it
// reads. A wire the last record had and this one does not is unclaimed.
func (s *session) publish(ctx context.Context, p *engine.Plan, destroy bool) error {
	prev, err := s.ownRecord(ctx)
	var bad *state.FormatError
	if errors.As(err, &bad) {
		prev, err = nil, nil // this apply writes it again
	}
	if err != nil {
		return err
	}
	if prev == nil && len(s.model.Provides) == 0 && len(s.model.Uses) == 0 {
		return nil
	}
	rec := p.Published()
	if !destroy {
		rec.Wires = map[string]spec.Wire{}
		for name, slot := range s.model.Uses {
			if slot.Wire != nil {
				rec.Wires[name] = *slot.Wire
			}
		}
		rec.Reads = map[string]any{}
		for _, w := range s.model.Wired {
			if w.Known() {
				rec.Reads[w.Ref] = w.Export.Value
			}
		}
		for _, set := range s.model.WiredAll {
			for _, w := range set {
				if w.Known() {
					rec.Reads[w.Ref] = w.Export.Value
				}
			}
		}
	}
	if len(p.Targets) > 0 && prev != nil {
		keepUntouchedReads(rec, prev)
	}
	// What the last record read and this one does not is unclaimed; a
	// destroy reads nothing, so it unclaims what the document wires too.
	gone := map[string]spec.Wire{}
	if prev != nil {
		gone = wiredCapabilities(prev.Wires)
	}
	if destroy {
		for _, w := range s.wires() {
			gone[w.Fleet+":"+w.Provides] = *w
		}
	}
	for name := range wiredCapabilities(rec.Wires) {
		delete(gone, name)
	}
	for _, name := range slices.Sorted(maps.Keys(gone)) {
		if err := s.unclaim(ctx, gone[name]); err != nil {
			return err
		}
	}
	if err := s.store.SavePublished(ctx, rec); err != nil {
		return fmt.Errorf("publish the exports of %s: %w", s.model.Fleet, err)
	}
	// Published, the record says what the capabilities are now (or that
	// they are gone): they are back in service, whether this run withdrew
	// them or a run killed before it could give them back did.
	if s.withdrew {
		return s.giveBack(ctx)
	}
	return nil
}

// keepUntouchedReads keeps in the record of a partial apply what the last
// record wired and read and the document no longer does: the resources
// outside the targets were not changed, and may still read it, so it
// stays claimed until an apply of the whole fleet. The capabilities need
// no such care: Published draws them from the whole model and the whole
// observed cloud, so a partial apply publishes every one, the targets'
// as they are now and the rest as they were.
func keepUntouchedReads(rec, prev *spec.Published) {
	for name, w := range prev.Wires {
		if _, ok := rec.Wires[name]; !ok {
			rec.Wires[name] = w
		}
	}
	for ref, v := range prev.Reads {
		if _, ok := rec.Reads[ref]; !ok {
			rec.Reads[ref] = v
		}
	}
}

// protect adds a row for each change of this plan that would break a
// capability another fleet claims: removing or unexposing it, changing
// its interface, or deleting what one of its exports reads. They refuse
// the plan; force turns them into warnings, said loudly.
func (s *session) protect(ctx context.Context, p *engine.Plan, force bool) error {
	claims, err := s.store.LoadClaims(ctx)
	if err != nil {
		return err
	}
	// A run killed while it held capabilities out of service left them
	// so; this run's publish gives them back.
	s.withdrew = len(claims.Withdrawn) > 0
	rows, _, err := s.protectRows(ctx, p, claims, force)
	if err != nil || len(rows) == 0 {
		return err
	}
	for _, d := range rows {
		if force {
			s.env.warn(d.Message)
		}
	}
	p.Diagnostics = spec.SortDiagnostics(append(p.Diagnostics, rows...))
	p.Applicable = !spec.HasErrors(p.Diagnostics)
	return nil
}

// protectRows are the rows of what this plan breaks that claims hold, and
// every capability it breaks, claimed or not, with how.
func (s *session) protectRows(ctx context.Context, p *engine.Plan, claims *spec.Claims, force bool) ([]spec.Diagnostic, map[string]string, error) {
	prev, err := s.ownRecord(ctx)
	if err != nil {
		return nil, nil, err
	}
	// A replace deletes too, forced (--replace) or not: what the export
	// read is gone, and its successor has other values.
	deleted := map[string]engine.ActionKind{}
	for _, a := range p.Actions {
		if a.Action == engine.Delete || a.Action == engine.Replace {
			deleted[a.Address.String()] = a.Action
		}
	}
	names := map[string]bool{}
	for name := range claims.Capabilities {
		names[name] = true
	}
	if prev != nil {
		for name := range prev.Capabilities {
			names[name] = true
		}
	}
	var rows []spec.Diagnostic
	broken := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		whys := s.breaks(p, name, prev, deleted)
		if len(whys) == 0 {
			continue
		}
		broken[name] = strings.Join(whys, "; ")
		if _, claimed := claims.Capabilities[name]; !claimed {
			continue
		}
		for _, why := range whys {
			rows = append(rows, protectRow(name, why, claims.Holders(name), force))
		}
	}
	if len(broken) > 0 && claims.RolledBack() {
		rows = append(rows, rolledBackRow(claims, slices.Sorted(maps.Keys(broken)), force))
	}
	return rows, broken, nil
}

// rolledBackRow refuses to break a capability while the claims record is
// older than a generation written since: the claim that generation saved
// may be one this plan would break.
func rolledBackRow(claims *spec.Claims, broken []string, force bool) spec.Diagnostic {
	why := fmt.Sprintf("the claims record is generation %d, and generation %d was written since: it was rolled back, and may have lost a consumer's claim on %s",
		claims.Generation, claims.Latest, strings.Join(broken, ", "))
	evidence := fmt.Sprintf("claims.json generation %d; claims.%d.mark exists", claims.Generation, claims.Generation+1)
	if force {
		return spec.Warnf(spec.RowClaimsRolledBack, "provides", "this apply writes the record past the rollback; apply each consumer fleet again so that each records its claim",
			"--force: %s; applying anyway", why).WithEvidence(evidence)
	}
	return spec.Errorf(spec.RowClaimsRolledBack, "provides", "apply each consumer fleet again (each records its claim), then plan again; or, if you know no fleet reads these capabilities, override with --force",
		"%s", why).WithEvidence(evidence)
}

// withdraw takes each capability this plan breaks out of service, in one
// guarded write of the claims, before the first action: a consumer that
// claims after it is refused (CapabilityWithdrawnError), and one that
// claimed since the plan was made makes the write conflict, so the claims
// are read again and the apply refused with its consumer-protected row.
// It reports whether anything was withdrawn.
func (s *session) withdraw(ctx context.Context, p *engine.Plan, force bool, run string) error {
	for attempt := 1; ; attempt++ {
		claims, err := s.store.LoadClaims(ctx)
		if err != nil {
			return fmt.Errorf("withdraw the capabilities of %s: %w", s.model.Fleet, err)
		}
		rows, broken, err := s.protectRows(ctx, p, claims, force)
		if err != nil {
			return err
		}
		if spec.HasErrors(rows) {
			// A consumer claimed since the plan was made.
			p.Diagnostics = spec.SortDiagnostics(append(p.Diagnostics, rows...))
			p.Applicable = false
			return &DiagnosticsError{Diagnostics: p.Diagnostics, Planned: true}
		}
		if len(broken) == 0 {
			return nil
		}
		for _, name := range slices.Sorted(maps.Keys(broken)) {
			claims.Withdraw(name, spec.Withdrawal{Run: run, Since: s.env.now(), Why: broken[name]})
		}
		if force && claims.RolledBack() {
			// Overridden: the record goes on past the marks.
			claims.Generation = claims.Latest
		}
		err = s.store.SaveClaims(ctx, claims)
		if err == nil {
			s.withdrew = true
			return nil
		}
		var conflict *state.ConflictError
		if !errors.As(err, &conflict) || attempt == claimAttempts {
			return fmt.Errorf("withdraw the capabilities of %s: %w", s.model.Fleet, err)
		}
	}
}

// giveBack puts what this fleet withdrew back in service: after a failed
// or stopped apply (the capabilities are as the consumers claimed them,
// or as far as the cloud got), or once the publish says what they are.
func (s *session) giveBack(ctx context.Context) error {
	err := changeClaims(ctx, s.store, "give back the capabilities of "+s.model.Fleet, func(c *spec.Claims) (bool, error) {
		return c.GiveBack(), nil
	})
	if err == nil {
		s.withdrew = false
	}
	return err
}

// breaks says how this plan breaks capability name for its consumers.
func (s *session) breaks(p *engine.Plan, name string, prev *spec.Published, deleted map[string]engine.ActionKind) []string {
	c, provided := s.model.Provides[name]
	switch {
	case p.Destroy || !provided:
		return []string{"removes capability " + name}
	case !c.Exposed:
		return []string{"stops exposing capability " + name}
	}
	if prev == nil {
		return nil
	}
	was, ok := prev.Capabilities[name]
	if !ok {
		return nil
	}
	var out []string
	if in := s.model.Interfaces[c.Interface]; c.Interface != was.Interface || in.Hash != was.InterfaceHash {
		out = append(out, fmt.Sprintf("changes the interface of %s (%s %s, now %s %s)", name, was.Interface, was.InterfaceHash, c.Interface, in.Hash))
	}
	for _, e := range slices.Sorted(maps.Keys(was.Exports)) {
		switch r := was.Exports[e].Resource; deleted[r] {
		case engine.Delete:
			out = append(out, fmt.Sprintf("deletes %s, which export %s.%s reads", r, name, e))
		case engine.Replace:
			out = append(out, fmt.Sprintf("replaces %s (a delete, then a create), which export %s.%s reads", r, name, e))
		}
	}
	return out
}

// protectRow names the holders; one whose name is not a fleet's (the
// claims record was edited by hand) is said as such, never as a blank.
func protectRow(capability, why string, holders []string, force bool) spec.Diagnostic {
	var named []string
	unnamed := 0
	for _, h := range holders {
		if spec.ValidFleetName(h) {
			named = append(named, h)
		} else {
			unnamed++
		}
	}
	switch {
	case unnamed > 0:
		named = append(named, fmt.Sprintf("%d claim(s) naming no fleet (the claims record was edited)", unnamed))
	case len(named) == 0:
		// A consumer's unclaim drops the capability; an empty entry is
		// a hand edit, and still refuses: a claim may have been lost.
		named = append(named, "a claim with no holder (the claims record was edited)")
	}
	consumers := strings.Join(named, ", ")
	if force {
		return spec.Warnf(spec.RowConsumerProtected, "provides."+capability, "tell the consumers' owners: their next plan reads what this apply leaves",
			"--force: this plan %s, which %s read(s); applying anyway", why, consumers).WithEvidence("claims: " + consumers)
	}
	return spec.Errorf(spec.RowConsumerProtected, "provides."+capability, "keep the capability as it is until its consumers have unwired it (their apply gives up the claim), or override with --force",
		"this plan %s, which %s read(s)", why, consumers).WithEvidence("claims: " + consumers)
}

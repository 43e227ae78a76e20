package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/infra-iac/infra/ownership"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// PlanOptions shape a plan.
type PlanOptions struct {
	// Destroy plans the teardown of everything the fleet manages: the target
	// declares nothing.
	Destroy bool
	// Members, when set, places a resource in the component instance it
	// belongs to and names its member path there ("shop-a", "db"); the
	// planner copies both onto every action and contract. Nil, or ""
	// from it: the resource belongs to no component. It shapes the review
	// only, never what apply does.
	Members func(spec.Address) (component, member string)
	// CutOf, when set, returns the member path ("shop-a.db") whose cut
	// from its component is why a resource the document no longer
	// declares is deleted, or "" when none is: the planner sets the
	// delete's Cut and its cause "cut: members.db". Nil: no member was
	// cut. A cut delete is a delete like any other for the brake.
	CutOf func(spec.Address) string
	// Targets, when set, makes the plan partial: only the actions on
	// these resources and on what they depend on (narrow). A target must
	// be declared or in the ledger; an undeclared one is deleted only
	// when it is itself a target.
	Targets []spec.Address
	// Replace forces a replace of each of these declared resources, which
	// must exist and be ours; what reads them is replaced or updated as
	// for any replace. With Targets, they are targets too.
	Replace []spec.Address
	// ReplaceGone plans a forced replace whose resource is gone as its
	// create instead of refusing it: the same run resuming after the
	// replace's delete (operations sets it only then).
	ReplaceGone bool
}

// run is what Apply needs from the planning that the plan JSON must not
// carry.
type run struct {
	model   *spec.Model
	ledger  *state.Ledger
	world   *world
	destroy bool
	// managed counts what the fleet manages now: ledger rows, and declared
	// resources that exist and are ours. The brake compares against it.
	managed int
	// adopt are the rows to record before any mutation: every declared
	// resource that exists and is ours, even with nothing to do.
	adopt []state.Row
	// drop are ledger rows to remove with the adoption (a bucket now
	// declared under its twin kind).
	drop []spec.Address
	// orphans are deletes with no declaration and so no edges; a refused
	// one is retried in rounds.
	orphans map[spec.Address]bool
	// release marks forgets whose resource still exists and carries our
	// mark, to be removed.
	release map[spec.Address]bool
	// moves gives the old region of a resource the document moved.
	moves map[spec.Address]string
	// claimed are resources that carry no ownership mark but that an
	// earlier run of this fleet recorded the intent to create: it died
	// inside the create, before tagging or recording it. They are this
	// fleet's, to tag (or delete) and record.
	claimed map[spec.Address]state.Intent
	// imported are declared resources in the document's adopt list that
	// exist without any ownership mark: this fleet takes them over, and
	// apply tags and records them.
	imported map[spec.Address]bool
	// regions gives each action's region.
	regions map[spec.Address]string
	// pending are the resources the plan creates or replaces: what they
	// publish, and their secret values, exist only after apply
	// (envcheck.go reads it again before the first call).
	pending map[spec.Address]bool
}

// Plan observes the cloud and computes what apply would do. It writes
// nothing. A model with errors gets a plan with its diagnostics and no
// actions, without contacting any cloud.
func (e *Engine) Plan(ctx context.Context, m *spec.Model, diags []spec.Diagnostic, ledger *state.Ledger, opts PlanOptions) (*Plan, error) {
	return e.planFrom(ctx, m, diags, ledger, opts, func(ctx context.Context, m *spec.Model, l *state.Ledger) (*sight, error) {
		return e.look(ctx, m, l, opts.Destroy)
	})
}

// sight is what a plan knows of the cloud before it decides anything:
// the accounts, the world, and the rows only the tag scan knew of. cache
// is set when it was recalled from the cache rather than observed.
type sight struct {
	accounts []Account
	diags    []spec.Diagnostic
	extra    []state.Row
	world    *world
	cache    *CacheInfo
}

// look observes the cloud for a plan: the accounts, the tag scan, then
// the listings and reads of what the fleet declares or knows.
func (e *Engine) look(ctx context.Context, m *spec.Model, ledger *state.Ledger, destroy bool) (*sight, error) {
	accounts, adiags, err := e.verifyAccounts(ctx, m, ledger)
	if err != nil {
		return nil, err
	}
	sc, err := e.scan(ctx, scanRegions(m, accounts), false)
	if err != nil {
		return nil, err
	}
	extra := taggedRows(m, ledger, sc.owned)
	ls := interest(m, knownRows(ledger, extra))
	if destroy {
		// Nothing is compared: existence and the mark are all it needs.
		for _, l := range ls {
			l.wants = map[string]providers.Want{}
		}
	}
	w, err := e.observe(ctx, ls, sc)
	if err != nil {
		return nil, err
	}
	if err := e.confirmScannedTags(ctx, m, w); err != nil {
		return nil, err
	}
	return &sight{accounts: accounts, diags: adiags, extra: extra, world: w}, nil
}

// knownRows is what a plan looks for beyond the declaration: the ledger's
// rows, those only the tag scan found, and the intents, to observe what
// an interrupted create may have left.
func knownRows(ledger *state.Ledger, extra []state.Row) *state.Ledger {
	known := &state.Ledger{Rows: append(append([]state.Row{}, ledger.Rows...), extra...)}
	for _, in := range ledger.Intents {
		if _, recorded := known.Get(in.Address()); !recorded {
			known.Put(in.Row)
		}
	}
	return known
}

// planFrom plans against what see finds: the cloud (look) or the cache
// (PlanFromCache). Everything below the world is the same planner.
func (e *Engine) planFrom(ctx context.Context, m *spec.Model, diags []spec.Diagnostic, ledger *state.Ledger, opts PlanOptions,
	see func(context.Context, *spec.Model, *state.Ledger) (*sight, error)) (*Plan, error) {
	if ledger == nil {
		ledger = state.NewLedger()
	}
	opts = componentHooks(opts, m, ledger)
	opts.Targets, opts.Replace = spec.SortedAddresses(opts.Targets), spec.SortedAddresses(opts.Replace)
	p := &Plan{FormatVersion: FormatVersion, Fleet: m.Fleet, Destroy: opts.Destroy, Accounts: []Account{}, Actions: []Action{},
		Diagnostics: append([]spec.Diagnostic{}, diags...), Attention: []spec.Diagnostic{},
		Targets: opts.Targets, Replace: opts.Replace}
	if spec.HasErrors(diags) {
		p.ID = p.computeID()
		return p, nil // not applicable
	}
	if err := checkScope(m, ledger, opts); err != nil {
		return nil, err
	}
	seen, err := see(ctx, m, ledger)
	if err != nil {
		return nil, err
	}
	p.Accounts, p.FromCache = seen.accounts, seen.cache
	w, extra := seen.world, seen.extra
	p.Diagnostics = append(p.Diagnostics, seen.diags...)
	rn := &run{model: m, ledger: ledger.Clone(), world: w, destroy: opts.Destroy,
		orphans: map[spec.Address]bool{}, release: map[spec.Address]bool{},
		moves: map[spec.Address]string{}, regions: map[spec.Address]string{}, claimed: map[spec.Address]state.Intent{},
		imported: map[spec.Address]bool{}}
	pl := &planner{e: e, m: m, ledger: ledger, run: rn, w: w, opts: opts}
	pl.res = &resolver{e: e, m: m, w: w, fleet: m.Fleet, pending: map[spec.Address]bool{}, replaced: map[spec.Address]bool{}, ledger: ledger}
	if err := pl.declared(); err != nil {
		return nil, err
	}
	pl.undeclared(ledger.Rows, false)
	pl.undeclared(extra, true)
	pl.undeclaredIntents()
	if !opts.Destroy {
		pl.caveats(ledger.Rows)
	}
	pl.narrow()
	pl.adoptInputs()
	unset := pl.envRows()
	rn.pending = pl.res.pending

	deps := map[spec.Address][]spec.Address{}
	for _, d := range m.Resources {
		deps[d.Address] = d.Deps()
	}
	ordered, err := order(pl.actions, deps)
	if err != nil {
		return nil, err
	}
	p.Actions = ordered
	p.Contracts = pl.contracts(ordered)
	p.Diagnostics = spec.SortDiagnostics(append(append(append(p.Diagnostics, pl.diags...), pl.caveated...), unset...))
	p.Attention = spec.SortDiagnostics(append(p.Attention, pl.diags...))
	p.Summarize()
	p.ID = p.computeID()
	p.Applicable = !spec.HasErrors(p.Diagnostics)
	p.run = rn
	return p, nil
}

type planner struct {
	e       *Engine
	m       *spec.Model
	ledger  *state.Ledger
	run     *run
	w       *world
	opts    PlanOptions
	res     *resolver
	actions []Action
	diags   []spec.Diagnostic
	// caveated are the caveat rows (caveats): diagnostics, but not
	// attention, as the cloud matches the fleet.
	caveated []spec.Diagnostic
	// holders indexes holdersOf.
	holders map[spec.Address][]spec.Address
	// forced are the replaces PlanOptions.Replace forced.
	forced map[spec.Address]bool
}

func (pl *planner) add(a Action) {
	pl.markImports(&a)
	pl.classify(&a)
	pl.run.regions[a.Address] = a.Region
	pl.actions = append(pl.actions, a)
	if info, _ := spec.Lookup(a.Address.Kind); a.Action == Replace && info.On[a.Address.Provider].NameKept != "" {
		// The product would refuse the create after the delete: the
		// resource would be gone for that long.
		pl.fail(a.Address, spec.Errorf(spec.RowReplaceKeptName, a.Address.String(),
			"rename it: the new name is made beside the old resource, which the same plan then deletes",
			"%s on %s keeps a deleted resource's name for %s: this replace would delete it and then fail to make it again under the same name",
			a.Address.Kind, a.Address.Provider, info.On[a.Address.Provider].NameKept))
	}
}

func (pl *planner) warn(id spec.RowID, addr spec.Address, hint, format string, args ...any) {
	pl.warnRow(addr, spec.Warnf(id, addr.String(), hint, format, args...))
}

// warnRow is warn for a row built already (one with evidence).
func (pl *planner) warnRow(addr spec.Address, d spec.Diagnostic) {
	pl.diags = append(pl.diags, d)
	pl.e.emit(Event{Kind: EventWarning, Address: addr, Message: d.Message})
}

// declared plans every declared resource. Creates and replaces are decided
// first, so that a value read from one of them is known to be unknown;
// the forced ones before the propagation, which starts from them too.
func (pl *planner) declared() error {
	ds := pl.decide()
	for a := range pl.run.moves {
		pl.res.replaced[a] = true
	}
	if err := pl.force(ds); err != nil {
		return err
	}
	pl.propagateReplaces(ds)
	pl.planMoves()
	for _, dc := range ds {
		pl.planDecision(dc)
	}
	return nil
}

// decision is what observing found of a declared resource.
type decision struct {
	d      *spec.Declared
	exists bool
	ours   bool
}

// decide judges every declared resource that is not excluded: absent (to be
// created, pending), moved from another region, or existing and whose. It
// records the moves and the adoptions as it goes.
func (pl *planner) decide() []decision {
	var ds []decision
	for i := range pl.m.Resources {
		d := &pl.m.Resources[i]
		a := d.Address
		if rule, excluded := pl.m.Excluded(a); excluded {
			pl.warn(spec.RowDeclaredExcluded, a, "remove the declaration or the exclusion", "declared but excluded (%s): infra will not touch it", rule.Why)
			continue
		}
		obs, exists := pl.w.get(a)
		if !exists {
			if old, moved := pl.w.getOld(a); moved && ownership.JudgeMark(pl.m.Fleet, old.Owner) == ownership.Ours {
				pl.run.moves[a] = old.Region
				pl.res.pending[a] = true
				pl.run.managed++
				continue
			}
			if !pl.run.destroy {
				pl.res.pending[a] = true
			}
			if pl.m.Adopt[a] && !pl.run.destroy {
				// Adopt takes over what exists; creating it instead would
				// turn a misspelt name into a new resource.
				pl.fail(a, spec.Errorf(spec.RowAdoptMissing, a.String(), "remove it from adopt to create it, or fix the name or region to the resource's",
					"in adopt, but not in the cloud in %s: adopt takes over what exists and never creates", d.Region))
				continue
			}
			ds = append(ds, decision{d: d})
			continue
		}
		ours := ownership.JudgeMark(pl.m.Fleet, obs.Owner) == ownership.Ours || pl.claim(a, obs) || pl.importUnmarked(a, obs)
		if ours {
			pl.run.managed++
			row := state.Row{Provider: a.Provider, Kind: a.Kind, Name: a.Name, Region: obs.Region}
			if old, recorded := pl.ledger.Get(a); recorded {
				// What earlier applies recorded of it stays: re-recording
				// repairs the region and the member, and must not drop a
				// caveat or what its secret value was made of.
				row.Caveat, row.ValueInputs = old.Caveat, old.ValueInputs
			}
			if m, ok := pl.m.Components.Of(a); ok {
				row.Member = m.Path()
			}
			pl.run.adopt = append(pl.run.adopt, row)
		}
		ds = append(ds, decision{d: d, exists: true, ours: ours})
	}
	return ds
}

// propagateReplaces marks pending what a replace forces: a replace also
// makes what the resource publishes unknown, and so may replace what reads
// it, and so on along the references. It finds them all before any change
// that reads them is computed.
func (pl *planner) propagateReplaces(ds []decision) {
	for grew := true; grew && !pl.run.destroy; {
		grew = false
		for _, dc := range ds {
			a := dc.d.Address
			if !dc.exists || !dc.ours || pl.res.pending[a] {
				continue
			}
			for _, c := range pl.res.diff(dc.d, mustGet(pl.w, a)) {
				if c.ForcesReplacement {
					pl.res.pending[a], pl.res.replaced[a], grew = true, true, true
					break
				}
			}
		}
	}
}

// planMoves replaces (or, destroying, deletes) each resource of ours found
// in the region its ledger row records rather than the declared one.
func (pl *planner) planMoves() {
	for a, from := range pl.run.moves {
		d, _ := pl.m.Lookup(a)
		if pl.run.destroy {
			pl.add(Action{Address: a, Action: Delete, Region: from, Reason: "destroy"})
			continue
		}
		changes := append([]Change{{Field: "region", Before: from, After: d.Region, ForcesReplacement: true}}, pl.res.createChanges(d)...)
		pl.add(Action{Address: a, Action: Replace, Region: d.Region, Changes: changes, Order: DeleteFirst,
			Reason: joinReasons(fmt.Sprintf("moves from %s to %s", from, d.Region), pl.orderReason(a))})
	}
}

func (pl *planner) planDecision(dc decision) {
	d, a := dc.d, dc.d.Address
	switch {
	case !dc.exists && pl.run.destroy:
		// Nothing to destroy; a stale ledger row is dropped below.
	case !dc.exists:
		pl.add(Action{Address: a, Action: Create, Region: d.Region, Changes: pl.res.createChanges(d)})
	case !dc.ours && pl.m.Adopt[a] && !pl.run.destroy:
		obs := mustGet(pl.w, a)
		pl.fail(a, spec.Errorf(spec.RowAdoptForeign, a.String(), "remove it from adopt and the declaration: only the fleet that owns it may manage it",
			"in adopt, but %s: adopt takes only what carries no ownership mark", ownership.Describe(obs.Owner)).WithEvidence(obs.Owner))
	case !dc.ours:
		obs := mustGet(pl.w, a)
		pl.warnRow(a, spec.Warnf(spec.RowForeignOwner, a.String(), "tag it "+spec.OwnershipTagKey+"="+pl.m.Fleet+" to manage it, or rename the declaration",
			"declared and exists, but %s; it will not be changed or destroyed by this fleet", ownership.Describe(obs.Owner)).WithEvidence(obs.Owner))
	case pl.run.destroy:
		pl.add(Action{Address: a, Action: Delete, Region: mustGet(pl.w, a).Region, Reason: "destroy"})
	default:
		pl.planOurs(d)
	}
}

// planOurs plans a declared resource that exists and is ours: adopt,
// replace, update or nothing, by what differs.
func (pl *planner) planOurs(d *spec.Declared) {
	a := d.Address
	obs := mustGet(pl.w, a)
	changes := pl.res.diff(d, obs)
	kind := Update
	for _, c := range changes {
		if c.ForcesReplacement {
			kind = Replace
		}
	}
	forced := ""
	if pl.forced[a] {
		kind, forced = Replace, ForcedCause
	}
	row, recorded := pl.ledger.Get(a)
	if pl.run.imported[a] {
		pl.planImport(d, obs, changes, kind, forced)
		return
	}
	if in, claimed := pl.run.claimed[a]; claimed && kind != Replace {
		pl.add(Action{Address: a, Action: Adopt, Region: obs.Region, Changes: pl.finishChanges(d, pl.tagChange(d, obs, changes)),
			Reason: joinReasons(claimReason(in), pl.causeReason(d, changes, false))})
		return
	}
	if in, intended := pl.ledger.Intent(a); intended && obs.Owner == pl.m.Fleet && in.Region == obs.Region && kind != Replace {
		// Made and marked by a create that stopped before recording it,
		// perhaps before its later steps: what those write is written
		// again, since no comparison can tell whether it is there.
		if finished := pl.finishChanges(d, changes); len(finished) > len(changes) {
			pl.add(Action{Address: a, Action: Adopt, Region: obs.Region, Changes: finished,
				Reason: joinReasons(finishReason(in, finished[len(changes):]), pl.causeReason(d, changes, false))})
			return
		}
	}
	switch {
	case len(changes) == 0 && forced == "" && (!recorded || row.Region != obs.Region):
		pl.add(Action{Address: a, Action: Adopt, Region: obs.Region, Reason: "exists and is tagged for this fleet; recording it in the ledger"})
	case len(changes) == 0 && forced == "":
	case kind == Replace:
		pl.add(Action{Address: a, Action: Replace, Region: d.Region, Changes: changes, Order: DeleteFirst,
			Reason: joinReasons(forced, replaceReason(changes), pl.causeReason(d, changes, true), pl.orderReason(a))})
	default:
		pl.add(Action{Address: a, Action: Update, Region: d.Region, Changes: changes,
			Reason: joinReasons(pl.res.inputsReason(d, changes), pl.causeReason(d, changes, false))})
	}
}

// replaceReason names the fields whose own change forces the replacement;
// a field forced only by a replaced resource it reads is a cause, told by
// causeReason.
func replaceReason(changes []Change) string {
	var fields []string
	for _, c := range changes {
		if c.ForcesReplacement && !c.KnownAfterApply {
			fields = append(fields, c.Field)
		}
	}
	if len(fields) == 0 {
		return ""
	}
	sort.Strings(fields)
	s := ""
	for i, f := range fields {
		if i > 0 {
			s += ", "
		}
		s += f
	}
	return s + " forces replacement"
}

// claim reports whether obs, which carries no ownership mark, is what an
// interrupted create of this fleet left, and if so records the claim.
func (pl *planner) claim(a spec.Address, obs providers.Resource) bool {
	in, intended := pl.ledger.Intent(a)
	if !intended || obs.Owner != "" || in.Region != obs.Region {
		return false
	}
	pl.run.claimed[a] = in
	return true
}

// importUnmarked reports whether obs, which carries no ownership mark, is
// a resource the document adopts, and if so records it. Destroying never
// takes anything over: what was never tagged is not the fleet's to delete.
func (pl *planner) importUnmarked(a spec.Address, obs providers.Resource) bool {
	if !pl.m.Adopt[a] || obs.Owner != "" || pl.run.destroy {
		return false
	}
	pl.run.imported[a] = true
	return true
}

// planImport plans an imported resource: an adopt that writes the tags,
// which carry the ownership mark, with whatever else differs. A field that
// forces replacement is refused: replacing would delete a resource the
// fleet has not yet taken over.
func (pl *planner) planImport(d *spec.Declared, obs providers.Resource, changes []Change, kind ActionKind, forced string) {
	a := d.Address
	if kind == Replace {
		var fields []string
		for _, c := range changes {
			if c.ForcesReplacement || forced != "" {
				fields = append(fields, c.Field)
			}
		}
		why := strings.Join(fields, ", ") + " differs from what exists, and forces replacement"
		if forced != "" {
			why = "--replace names it"
		}
		pl.fail(a, spec.Errorf(spec.RowAdoptReplace, a.String(), "make the declaration match what exists (infra import writes it), then change it once the fleet owns it",
			"in adopt, but %s: adopt never replaces what it takes over", why))
		return
	}
	pl.add(Action{Address: a, Action: Adopt, Region: obs.Region, Changes: pl.tagChange(d, obs, changes),
		Reason: joinReasons(fmt.Sprintf("imported: exists without an ownership mark; apply tags it %s=%s and records it", spec.OwnershipTagKey, pl.m.Fleet),
			pl.causeReason(d, changes, false))})
}

// fail adds an error row: the plan is not applicable.
func (pl *planner) fail(a spec.Address, d spec.Diagnostic) {
	pl.diags = append(pl.diags, d)
	pl.e.emit(Event{Kind: EventWarning, Address: a, Message: d.Message})
}

// finishChanges adds to changes the fields a later step of the create
// writes (spec.Field.Finish) that d sets and changes do not already hold:
// what finishing an interrupted create writes again.
func (pl *planner) finishChanges(d *spec.Declared, changes []Change) []Change {
	for f := range setFields(d) {
		if f.Finish && !f.Replace && f.UsedOn(d.Address.Provider) && !slices.ContainsFunc(changes, func(c Change) bool { return c.Field == f.Name }) {
			changes = append(changes, Change{Field: f.Name, Sensitive: f.Secret})
		}
	}
	return changes
}

func finishReason(in state.Intent, finish []Change) string {
	fields := make([]string, len(finish))
	for i, c := range finish {
		fields[i] = c.Field
	}
	return fmt.Sprintf("created and tagged by run %s, which stopped before recording it, perhaps before writing its %s; writing it again and recording it",
		in.RunID, strings.Join(fields, " and "))
}

func claimReason(in state.Intent) string {
	return fmt.Sprintf("created by run %s, which stopped before tagging and recording it; tagging it %s and recording it", in.RunID, spec.OwnershipTagKey)
}

// tagChange adds to changes the write of the tags, which carries the
// ownership tag, when the kind takes tags and changes do not already
// write them.
func (pl *planner) tagChange(d *spec.Declared, obs providers.Resource, changes []Change) []Change {
	info, _ := spec.Lookup(d.Address.Kind)
	f, ok := info.Field(spec.TagsField)
	if !ok || !f.UsedOn(d.Address.Provider) {
		return changes
	}
	for _, c := range changes {
		if c.Field == spec.TagsField {
			return changes
		}
	}
	after := map[string]any{}
	before := spec.WithoutOwnershipTag(obs.Fields[spec.TagsField])
	if v, set := d.Fields[spec.TagsField]; set {
		if val, known := pl.res.planValue(v); known {
			if m, ok := val.(map[string]any); ok {
				for k, x := range m {
					after[k] = x
				}
			}
		}
	} else if m, ok := before.(map[string]any); ok {
		// Undeclared tags are unknown, not empty: the mark joins the
		// ones the resource has (apply writes these, engine/apply.go).
		for k, x := range m {
			after[k] = x
		}
	}
	after[spec.OwnershipTagKey] = pl.m.Fleet
	return append(changes, Change{Field: spec.TagsField, Before: canon(before), After: canon(after)})
}

// undeclaredIntents plans the intents whose address the document no
// longer declares: what the interrupted create left, untagged, is deleted;
// an intent whose resource never appeared is dropped at the next apply.
func (pl *planner) undeclaredIntents() {
	for _, in := range pl.ledger.Intents {
		a := in.Address()
		if _, declared := pl.m.Lookup(a); declared && !pl.run.destroy {
			continue
		}
		if _, recorded := pl.ledger.Get(a); recorded {
			continue // planned with the ledger rows
		}
		obs, exists := pl.w.get(a)
		if !exists || !pl.claim(a, obs) {
			continue
		}
		if _, excluded := pl.m.Excluded(a); excluded {
			continue
		}
		if _, planned := pl.run.regions[a]; planned {
			continue
		}
		pl.run.managed++
		pl.run.orphans[a] = true
		pl.add(Action{Address: a, Action: Delete, Region: obs.Region,
			Reason: fmt.Sprintf("created by run %s, which stopped before tagging and recording it, and no longer declared", in.RunID)})
	}
}

// causeReason names the resources this plan creates or replaces that d's
// changes read: "aws/security-group/web is replaced". held adds that d is
// deleted before them and made again after, when the cloud holds d's
// reference to one of them as an attachment.
func (pl *planner) causeReason(d *spec.Declared, changes []Change, held bool) string {
	info, _ := spec.Lookup(d.Address.Kind)
	var parts []string
	seen := map[spec.Address]bool{}
	for _, c := range changes {
		if !c.KnownAfterApply {
			continue
		}
		f, _ := info.Field(c.Field)
		for _, a := range pl.res.pendingIn(d.Fields[c.Field]) {
			if seen[a] {
				continue
			}
			seen[a] = true
			what := a.String() + " is created"
			if pl.res.replaced[a] {
				what = a.String() + " is replaced"
				if held && f.Holds {
					what += fmt.Sprintf(" and cannot be deleted while %s is attached to it, so this is deleted before it and created after", c.Field)
				}
			}
			parts = append(parts, what)
		}
	}
	return strings.Join(parts, "; ")
}

// orderReason says in which order a replace runs, and why. Every kind
// infra manages names its resources uniquely in their scope (a bucket
// name, a queue name, a security group name in its VPC), so the old and
// the new cannot exist at once: the old is deleted first, and whatever
// holds an attachment to it is deleted before it and created after.
func (pl *planner) orderReason(a spec.Address) string {
	why := fmt.Sprintf("deletes first: a %s name is unique, so the old and the new cannot exist at once", a.Kind)
	if info, _ := spec.Lookup(a.Kind); info != nil && info.NameTag != "" {
		// Names kept in a tag (an instance's, a VPC's Name) need not be
		// unique; but infra finds the resource by its name, so two at once
		// could not be told apart.
		what := "a " + string(a.Kind)
		if strings.ContainsRune("aeiou", rune(a.Kind[0])) {
			what = "an " + string(a.Kind)
		}
		why = fmt.Sprintf("deletes first: infra finds %s by its %s tag, so the old and the new cannot be told apart", what, info.NameTag)
	}
	var held []string
	for _, h := range pl.holdersOf(a) {
		if pl.res.replaced[h] {
			held = append(held, h.String())
		}
	}
	if len(held) > 0 {
		sort.Strings(held)
		why += "; " + strings.Join(held, ", ") + " is deleted before it and created after"
	}
	return why
}

// holdersOf lists the declared resources with a field that holds an
// attachment to a, from an index built once per plan.
func (pl *planner) holdersOf(a spec.Address) []spec.Address {
	if pl.holders == nil {
		pl.holders = map[spec.Address][]spec.Address{}
		for i := range pl.m.Resources {
			d := &pl.m.Resources[i]
			for f, v := range setFields(d) {
				if f.Holds {
					for _, dep := range spec.Deps(v) {
						pl.holders[dep] = append(pl.holders[dep], d.Address)
					}
				}
			}
		}
	}
	return pl.holders[a]
}

func joinReasons(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

func mustGet(w *world, a spec.Address) (r providers.Resource) {
	r, _ = w.get(a)
	return r
}

// undeclared plans the ledger rows the document no longer declares, and the
// forgets; then, with fromTags, the resources only a tag scan found.
// caveats says again, once for each, what the cloud could not do for the
// declared resources the ledger records with a caveat (state.Row.Caveat):
// a promise a reviewer relies on that does not hold for them.
func (pl *planner) caveats(rows []state.Row) {
	var said []string
	held := map[string][]spec.Address{}
	for _, r := range rows {
		if r.Caveat == "" {
			continue
		}
		if _, declared := pl.m.Lookup(r.Address()); !declared {
			continue // this plan deletes it
		}
		if held[r.Caveat] == nil {
			said = append(said, r.Caveat)
		}
		held[r.Caveat] = append(held[r.Caveat], r.Address())
	}
	for _, c := range said {
		as := held[c]
		names := make([]string, 0, min(len(as), 5))
		for _, a := range as[:min(len(as), 5)] {
			names = append(names, a.String())
		}
		evidence := strings.Join(names, ", ")
		if len(as) > len(names) {
			evidence += fmt.Sprintf(" and %d more", len(as)-len(names))
		}
		d := spec.Warnf(spec.RowCaveat, as[0].String(),
			"nothing to change: the resource works without it, and one made where the cloud serves it has no caveat",
			"%s", spec.PrintableText(c)).WithEvidence(evidence)
		pl.caveated = append(pl.caveated, d)
		pl.e.emit(Event{Kind: EventWarning, Address: as[0], Message: d.Message})
	}
}

func (pl *planner) undeclared(rows []state.Row, fromTags bool) {
	forget := map[spec.Address]bool{}
	for _, a := range pl.m.Forget {
		forget[a] = true
		if _, recorded := pl.ledger.Get(a); !recorded && !fromTags {
			pl.warn(spec.RowForgetNotInLedger, a, "remove the forget line", "forget: not in the ledger, nothing to forget")
		}
	}
	twins := map[string]spec.Address{}
	for _, d := range pl.m.Resources {
		twins[physicalKey(d.Address)] = d.Address
	}
	for _, row := range rows {
		a := row.Address()
		if _, declared := pl.m.Lookup(a); declared && !pl.run.destroy {
			continue
		}
		if _, declared := pl.m.Lookup(a); declared && pl.run.destroy {
			if _, exists := pl.w.get(a); exists {
				continue // planned by declared()
			}
			if _, moved := pl.run.moves[a]; moved {
				continue
			}
		}
		obs, exists := pl.w.get(a)
		if !pl.run.destroy {
			if twin, ok := twins[physicalKey(a)]; ok && twin != a {
				// The same bucket, now declared under its other kind: the
				// declaration's row replaces this one, and nothing is
				// deleted.
				pl.run.drop = append(pl.run.drop, a)
				if exists && ownership.JudgeMark(pl.m.Fleet, obs.Owner) == ownership.Ours {
					pl.run.managed++
				}
				continue
			}
		}
		if rule, excluded := pl.m.Excluded(a); excluded {
			pl.warn(spec.RowLedgerExcluded, a, "forget it to drop the ledger row", "in the ledger but excluded (%s): left alone", rule.Why)
			continue
		}
		switch {
		case forget[a]:
			if exists && ownership.JudgeMark(pl.m.Fleet, obs.Owner) == ownership.Ours {
				pl.run.release[a] = true
			}
			pl.add(Action{Address: a, Action: Forget, Region: row.Region, Reason: "forget: the ledger row goes, the resource stays"})
		case !exists && fromTags:
			// The tag scan remembered something that is gone.
		case !exists:
			pl.add(Action{Address: a, Action: Forget, Region: row.Region, Reason: "no longer exists in the cloud; dropping the ledger row"})
		case ownership.JudgeMark(pl.m.Fleet, obs.Owner) != ownership.Ours:
			pl.warnRow(a, spec.Warnf(spec.RowLedgerForeignOwner, a.String(), "forget it to drop the ledger row",
				"in the ledger, but %s; left alone", ownership.Describe(obs.Owner)).WithEvidence(obs.Owner))
		default:
			pl.run.managed++
			pl.run.orphans[a] = true
			reason := "no longer declared"
			switch {
			case fromTags:
				reason = "tagged for this fleet, not in the ledger"
			case pl.run.destroy:
				reason = "destroy"
			}
			pl.add(Action{Address: a, Action: Delete, Region: row.Region, Reason: reason})
		}
	}
}

func physicalKey(a spec.Address) string {
	return string(a.Provider) + "/" + spec.PhysicalClass(a.Provider, a.Kind) + "/" + a.Name
}

// componentHooks fills the hooks the caller left nil from the document's
// component map and the ledger: a resource's member is the map's, and a
// delete is a cut's when the ledger recorded the member that declared it
// and the document cuts that member (or one above it).
func componentHooks(opts PlanOptions, m *spec.Model, ledger *state.Ledger) PlanOptions {
	if opts.Members == nil {
		opts.Members = func(a spec.Address) (string, string) {
			if at, ok := m.Components.Of(a); ok {
				return at.Instance, at.Member
			}
			return "", ""
		}
	}
	if opts.CutOf == nil {
		opts.CutOf = func(a spec.Address) string {
			row, ok := ledger.Get(a)
			if !ok || row.Member == "" {
				return ""
			}
			if cut, ok := m.Components.IsCut(row.Member); ok {
				instance, _, _ := strings.Cut(row.Member, ".")
				return instance + "." + cut
			}
			return ""
		}
	}
	return opts
}

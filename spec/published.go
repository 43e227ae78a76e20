package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PublishedVersion is the version of the published record this build
// reads and writes.
const PublishedVersion = 1

// Published is a provider fleet's published record: what each capability
// it provides resolved to at its last successful apply. It is kept next to
// the fleet's ledger, and it is what a consumer's plan reads. A secret
// export holds the secret's reference, never its value.
type Published struct {
	Version      int                            `json:"version"`
	Fleet        string                         `json:"fleet"`
	Capabilities map[string]PublishedCapability `json:"capabilities"`
	// Hash is the content hash of the capabilities.
	Hash string `json:"hash"`
	// Wires are what this fleet reads from others, by slot: what its
	// next apply unclaims when a wire goes away.
	Wires map[string]Wire `json:"wires,omitempty"`
	// Reads are the values this fleet's apply read from others, by name
	// ("pg-shared:eu.endpoint"), a secret as its reference: its next plan
	// sends again what it composed from a value that has changed since.
	Reads map[string]any `json:"reads,omitempty"`
}

// PublishedCapability is one capability of the record.
type PublishedCapability struct {
	Interface     string `json:"interface"`
	InterfaceHash string `json:"interfaceHash"`
	// Consumers is "one" or "many".
	Consumers string                     `json:"consumers"`
	Exposed   bool                       `json:"exposed"`
	Exports   map[string]PublishedExport `json:"exports"`
}

// PublishedExport is one export's resolved value and the tags it has.
type PublishedExport struct {
	Type      ExportType     `json:"type"`
	Lifecycle Lifecycle      `json:"lifecycle"`
	Locality  ExportLocality `json:"locality"`
	// Region is where a region-local value lives; Provider and Account
	// say whose cloud an account-local value (a secret) is in.
	Region   string   `json:"region,omitempty"`
	Provider Provider `json:"provider,omitempty"`
	Account  string   `json:"account,omitempty"`
	Secret   bool     `json:"secret,omitempty"`
	// Value is the resolved value; for a secret, its reference (an ARN or
	// an id).
	Value any `json:"value,omitempty"`
	// Pending: the value is not known yet (the provider has not applied
	// what it is read from).
	Pending bool `json:"pending,omitempty"`
	// Resource is the address the value is read from, if any: deleting it
	// breaks the export.
	Resource string `json:"resource,omitempty"`
}

// Seal sets the record's version and hash.
func (p *Published) Seal() {
	p.Version = PublishedVersion
	b, _ := json.Marshal(p.Capabilities)
	sum := sha256.Sum256(b)
	p.Hash = "sha256:" + hex.EncodeToString(sum[:12])
}

// Exposed lists the capabilities the record exposes, as "name (interface)",
// for a candidate list.
func (p *Published) Exposed() []string {
	var out []string
	for _, name := range sortedKeys(p.Capabilities) {
		if c := p.Capabilities[name]; c.Exposed {
			out = append(out, name+" ("+c.Interface+")")
		}
	}
	return out
}

// Wired is what one import resolved to at plan.
type Wired struct {
	// Ref names the value: "pg-shared:eu.endpoint"; Fleet is its fleet.
	Ref    string
	Fleet  string
	Export PublishedExport
	// Key is the entry's key in a reach-all set, FLEET/REGION (or FLEET
	// alone when its capability has no region); empty for reach one.
	Key string
	// Last is what this fleet's last successful apply read under Ref (its
	// own record's Reads), when HadLast: a field never compared (a secret
	// composed from it) is sent again when the value has changed since.
	Last    any
	HadLast bool
}

// Changed reports whether the value is known and differs from what the
// last apply read, or was not read by it: a resource that exists and now
// reads a value its fleet has no record of reading (a wire new since: a
// component member cut and its hole wired) was last sent something else.
func (w Wired) Changed() bool {
	if !w.Known() {
		return false
	}
	if !w.HadLast {
		return true
	}
	a, _ := json.Marshal(w.Export.Value)
	b, _ := json.Marshal(w.Last)
	return string(a) != string(b)
}

// Known reports whether the value is known now.
func (w Wired) Known() bool { return !w.Export.Pending }

// Far is what a consumer's plan found at the far end of one of its wires:
// the provider's record, or why there is none.
type Far struct {
	Record *Published
	// Where says where the record was looked for, for the rows.
	Where string
	// Err is why the record could not be read; nil with a nil Record means
	// the fleet has published nothing there.
	Err error
	// Claims are the far fleet's claims: who holds its capabilities.
	Claims *Claims
}

// ResolveWires checks each of the model's slots against the record of the
// fleet it is wired to, and puts what each import resolves to in the
// model (Model.Wired), for the plan. The rows name the far fleet, the
// capability and, on a miss, the candidates.
func ResolveWires(m *Model, far map[string]Far) []Diagnostic {
	var diags []Diagnostic
	m.Wired = map[Import]Wired{}
	m.WiredAll = map[Import][]Wired{}
	for _, name := range sortedKeys(m.Uses) {
		slot := m.Uses[name]
		switch {
		case slot.Wire == nil || slot.All != slot.Wire.List:
			continue // reported by Compile
		case slot.All:
			diags = append(diags, resolveSet(m, slot, far)...)
			continue
		}
		w := *slot.Wire
		capab, rows := wiredCapability(m, slot, "wires."+name, w, far[w.Fleet])
		diags = append(diags, rows...)
		if capab == nil {
			continue
		}
		for _, e := range sortedKeys(capab.Exports) {
			m.Wired[Import{Slot: name, Export: e}] = wiredExport(w, e, capab.Exports[e])
		}
		for _, p := range slot.Requires {
			diags = append(diags, checkPredicate(slot, w, p, capab.Exports[p.Export])...)
		}
	}
	regional, refused := regionSetRows(m)
	diags = append(diags, regional...)
	diags = append(diags, localityRows(m, refused)...)
	return diags
}

// wiredCapability finds the capability w (a slot's wire, or one entry of
// it) names in the far record, or the rows that say why it cannot.
func wiredCapability(m *Model, slot Slot, where string, w Wire, f Far) (*PublishedCapability, []Diagnostic) {
	switch {
	case f.Err != nil:
		return nil, []Diagnostic{Errorf(RowWireUnreadable, where, "grant this run read access to that state, or give the wire its state",
			"slot %q is wired to fleet %q, whose published record at %s cannot be read: %v", slot.Name, w.Fleet, f.Where, f.Err)}
	case f.Record == nil:
		return nil, []Diagnostic{Errorf(RowWireFleetUnknown, where, fmt.Sprintf("apply %s first, or, if its state is kept elsewhere, say where: \"wires\": {%q: {\"fleet\": %q, \"provides\": %q, \"state\": \"…\"}}", w.Fleet, slot.Name, w.Fleet, w.Provides),
			"slot %q is wired to fleet %q, which has published nothing at %s", slot.Name, w.Fleet, f.Where)}
	}
	capab, ok := f.Record.Capabilities[w.Provides]
	candidates := "it exposes: " + declaredList(f.Record.Exposed())
	switch {
	case !ok:
		return nil, []Diagnostic{Errorf(RowWireCapabilityUnknown, where, candidates,
			"slot %q is wired to %s:%s, and %s provides no capability %q", slot.Name, w.Fleet, w.Provides, w.Fleet, w.Provides).WithEvidence(candidates)}
	case !capab.Exposed:
		return nil, []Diagnostic{Errorf(RowWireUnexposed, where, candidates+"; or ask its owners to add "+strconv.Quote(w.Provides)+" to exposes",
			"slot %q is wired to %s:%s, which %s provides but does not expose", slot.Name, w.Fleet, w.Provides, w.Fleet).WithEvidence(candidates)}
	case capab.Interface != slot.Interface:
		return nil, []Diagnostic{Errorf(RowWireInterface, where, candidates,
			"slot %q uses interface %q, and %s:%s provides %q", slot.Name, slot.Interface, w.Fleet, w.Provides, capab.Interface).WithEvidence(candidates)}
	}
	if holders := otherHolders(f.Claims, w.Provides, m.Fleet); capab.Consumers == "one" && len(holders) > 0 {
		return nil, []Diagnostic{Errorf(RowConsumerHeld, where, "wire the slot to another capability; "+w.Fleet+" serves "+w.Provides+" to one consumer",
			"slot %q is wired to %s:%s, which serves one consumer, and %s already holds it", slot.Name, w.Fleet, w.Provides, strings.Join(holders, ", ")).
			WithEvidence(fmt.Sprintf("claims of %s:%s: %s", w.Fleet, w.Provides, strings.Join(holders, ", ")))}
	}
	if in := m.Interfaces[slot.Interface]; in.Hash != capab.InterfaceHash {
		return nil, []Diagnostic{Errorf(RowInterfaceMismatch, where, "build both fleets with the same version of the package that defines "+slot.Interface,
			"fleets %s and %s carry different definitions of interface %q", m.Fleet, w.Fleet, slot.Interface).WithEvidence(fmt.Sprintf("%s has %s; %s published %s", m.Fleet, in.Hash, w.Fleet, capab.InterfaceHash))}
	}
	return &capab, nil
}

// otherHolders lists the fleets other than fleet that claim capability.
func otherHolders(c *Claims, capability, fleet string) []string {
	var out []string
	for _, h := range c.Holders(capability) {
		if h != fleet {
			out = append(out, h)
		}
	}
	return out
}

// checkPredicate checks one requirement against the published value. A
// value not known yet is checked at apply, after the provider has applied.
func checkPredicate(slot Slot, w Wire, p Predicate, e PublishedExport) []Diagnostic {
	if e.Pending {
		return nil
	}
	ok, err := Holds(p, e.Value)
	if ok && err == nil {
		return nil
	}
	row := Errorf
	id := RowRequirementFailed
	if p.Want {
		row, id = Warnf, RowRequirementWanted
	}
	value, _ := json.Marshal(e.Value)
	msg := fmt.Sprintf("slot %q requires %s, and %s publishes %s = %s", slot.Name, p, w.Fleet, p.Export, value)
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	d := row(id, "uses."+slot.Name, "wire the slot to a capability that satisfies it, or relax the requirement; infra never picks another provider", "%s", msg)
	return []Diagnostic{d.WithEvidence(fmt.Sprintf("%s:%s.%s = %s", w.Fleet, w.Provides, p.Export, value))}
}

// Holds evaluates a predicate on a value. Two values that both read as
// versions or numbers ("16.4", 16) compare numerically, part by part;
// other values compare only for equality.
func Holds(p Predicate, v any) (bool, error) {
	if p.Op == "in" {
		xs, _ := p.Value.([]any)
		for _, x := range xs {
			if c, ok := compareValues(v, x); ok && c == 0 {
				return true, nil
			}
		}
		return false, nil
	}
	c, ok := compareValues(v, p.Value)
	if !ok {
		if p.Op == "==" || p.Op == "!=" {
			return (fmt.Sprint(v) == fmt.Sprint(p.Value)) == (p.Op == "=="), nil
		}
		return false, fmt.Errorf("%v and %v do not compare as numbers or versions", v, p.Value)
	}
	switch p.Op {
	case "==":
		return c == 0, nil
	case "!=":
		return c != 0, nil
	case ">=":
		return c >= 0, nil
	case ">":
		return c > 0, nil
	case "<=":
		return c <= 0, nil
	case "<":
		return c < 0, nil
	}
	return false, fmt.Errorf("unknown operator %q", p.Op)
}

// compareValues compares a and b as versions (dotted numbers) or, failing
// that, as equal strings. ok is false when they do not compare.
func compareValues(a, b any) (int, bool) {
	va, okA := versionOf(a)
	vb, okB := versionOf(b)
	if !okA || !okB {
		if fmt.Sprint(a) == fmt.Sprint(b) {
			return 0, true
		}
		return 0, false
	}
	for i := 0; i < max(len(va), len(vb)); i++ {
		var x, y float64
		if i < len(va) {
			x = va[i]
		}
		if i < len(vb) {
			y = vb[i]
		}
		if x != y {
			if x < y {
				return -1, true
			}
			return 1, true
		}
	}
	return 0, true
}

func versionOf(v any) ([]float64, bool) {
	switch x := v.(type) {
	case float64:
		return []float64{x}, true
	case string:
		var out []float64
		for _, part := range strings.Split(x, ".") {
			n, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return nil, false
			}
			out = append(out, n)
		}
		return out, len(out) > 0
	}
	return nil, false
}

// localityRows checks that a resource reading a region-local export is in
// the region the value lives in. A resource with no region of its own
// follows that value's region, and the row says so.
// An import of refused (a reach-all set refused as a whole) is not checked
// again entry by entry.
func localityRows(m *Model, refused map[Import]bool) []Diagnostic {
	var diags []Diagnostic
	for i := range m.Resources {
		d := &m.Resources[i]
		if d.Region == "" {
			diags = append(diags, followRegion(m, d))
		}
		for _, name := range sortedKeys(d.Fields) {
			for _, im := range ImportsIn(d.Fields[name]) {
				if refused[Import{Slot: im.Slot, Export: im.Export}] {
					continue
				}
				for _, w := range m.WiredOf(im) {
					if row := readRow(m, d, name, im, w); row != nil {
						diags = append(diags, *row)
					}
				}
			}
		}
	}
	return diags
}

// readRow is the row for resource d reading w in field name, if any: a
// secret in a plain field, a value out of its account or its region.
func readRow(m *Model, d *Declared, name string, im Import, w Wired) *Diagnostic {
	if w.Export.Secret && !im.InSecret {
		// The interface says public, and this provider raised it: its
		// value is a secret's, which a plain field would hold in clear.
		row := Errorf(RowSecretExportMisused, d.Address.String(),
			`read it where a secret is taken (a secret's composed value, masterPasswordSecret, secretEnv), or wire a provider that publishes it public`,
			"field %q reads %s, which %s publishes as a secret, into a field that does not take a secret", name, w.Ref, w.Fleet).
			WithEvidence(w.Ref + " is secret in the published record")
		return &row
	}
	if row := leavesAccount(m.Accounts, d, w); row != nil {
		return row
	}
	if w.Export.Locality != LocalityRegion || w.Export.Region == "" || d.Region == w.Export.Region {
		return nil
	}
	row := Errorf(RowLocalityRegion, d.Address.String(),
		"place it in "+w.Export.Region+", or wire a capability in "+d.Region,
		"reads %s, which is region-local (%s); %s is in %s", w.Ref, w.Export.Region, d.Address, d.Region).WithEvidence(w.Ref + " lives in " + w.Export.Region)
	return &row
}

// leavesAccount is the row for a resource that takes an account-local (or
// region-local) value out of the provider's account: onto another cloud,
// or into another declared account.
func leavesAccount(accounts map[Provider]string, d *Declared, w Wired) *Diagnostic {
	e := w.Export
	if e.Locality == LocalityGlobal || e.Provider == "" {
		return nil
	}
	where := ""
	switch {
	case d.Address.Provider != e.Provider:
		where = "on " + string(d.Address.Provider)
	case e.Account != "" && accounts[e.Provider] != "" && accounts[e.Provider] != e.Account:
		where = "in account " + accounts[e.Provider]
	default:
		return nil
	}
	owner := string(e.Provider)
	if e.Account != "" {
		owner += " account " + e.Account
	}
	row := Errorf(RowLocalityAccount, d.Address.String(), "keep it in "+owner+", or wire a capability whose export may leave its account",
		"reads %s, which is %s-local (%s); %s is %s", w.Ref, e.Locality, owner, d.Address, where).WithEvidence(w.Ref + " lives in " + owner)
	return &row
}

// AccountRows checks the model's imports against the accounts the
// credentials belong to, once the plan has established them: what
// ResolveWires could not check for a fleet that declares no account.
func AccountRows(m *Model, accounts map[Provider]string) []Diagnostic {
	var diags []Diagnostic
	for i := range m.Resources {
		d := &m.Resources[i]
		for _, name := range sortedKeys(d.Fields) {
			for _, im := range ImportsIn(d.Fields[name]) {
				for _, w := range m.WiredOf(im) {
					if row := leavesAccount(accounts, d, w); row != nil {
						diags = append(diags, *row)
					}
				}
			}
		}
	}
	return diags
}

// followRegion places a resource with no region of its own in the region
// of the first region-local value it reads.
func followRegion(m *Model, d *Declared) Diagnostic {
	for _, name := range sortedKeys(d.Fields) {
		for _, im := range ImportsIn(d.Fields[name]) {
			for _, w := range m.WiredOf(im) {
				if w.Export.Locality == LocalityRegion && w.Export.Region != "" {
					d.Region = w.Export.Region
					return Warnf(RowRegionFollowed, d.Address.String(), "give it a region of its own to place it elsewhere",
						"placed in %s, the region of %s, which it reads; it has no region of its own", d.Region, w.Ref).WithEvidence(w.Ref + " lives in " + d.Region)
				}
			}
		}
	}
	return Errorf(RowMissingRegion, d.Address.String(), `set "placement": {"`+string(d.Address.Provider)+`": "…"} or the resource's own "region"`,
		"no region for this resource, and nothing it reads from another fleet is region-local")
}

// readsUse reports whether a resource's spec, as written, reads another
// fleet's export anywhere.
func readsUse(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["use"]; ok {
			return true
		}
		for _, y := range x {
			if readsUse(y) {
				return true
			}
		}
	case []any:
		for _, y := range x {
			if readsUse(y) {
				return true
			}
		}
	}
	return false
}

// ClaimsVersion is the version of the claims record this build reads and
// writes.
const ClaimsVersion = 1

// Claims is kept in a provider's state: which consumer fleets read each of
// its capabilities. A consumer's apply adds its claim (one conditional
// write, so that two consumers of a `consumers: one` capability cannot
// both hold it); its destroy, or its unwiring, removes it. The provider's
// plan reads it to protect its consumers.
type Claims struct {
	Version      int                `json:"version"`
	Capabilities map[string][]Claim `json:"capabilities"`
	// Generation counts the record's writes. Each write also leaves a
	// mark of its generation beside the record (state writes it), which a
	// rollback of the record to an older version does not take away: a
	// record older than the newest mark was rolled back, and may have lost
	// a consumer's claim.
	Generation int64 `json:"generation,omitempty"`
	// Withdrawn are the capabilities the provider has taken out of service
	// for an apply that breaks them (a destroy, or a delete or replace of
	// what an export reads), from before its first delete until it
	// publishes or gives them back: a consumer's claim on one is refused,
	// so none can slip in between the provider's check and its delete.
	Withdrawn map[string]Withdrawal `json:"withdrawn,omitempty"`
	// Latest is the newest generation marked, as the load found it: above
	// Generation when the record was rolled back. It is not written.
	Latest int64 `json:"-"`
}

// Withdrawal is a provider's run holding a capability out of service.
type Withdrawal struct {
	// Run names the provider's run (its lock id), so that a consumer can
	// tell its operator whose run to finish.
	Run   string    `json:"run"`
	Since time.Time `json:"since"`
	// Why says what the run does to the capability.
	Why string `json:"why"`
}

// RolledBack says whether the record is older than a generation written
// since: a claim saved in between may be lost.
func (c *Claims) RolledBack() bool { return c != nil && c.Latest > c.Generation }

// Withdraw takes a capability out of service; it reports whether the
// record changed.
func (c *Claims) Withdraw(capability string, w Withdrawal) bool {
	if c.Withdrawn == nil {
		c.Withdrawn = map[string]Withdrawal{}
	}
	if c.Withdrawn[capability] == w {
		return false
	}
	c.Withdrawn[capability] = w
	return true
}

// GiveBack puts every withdrawn capability back in service; it reports
// whether the record changed. Only the provider withdraws, so whatever is
// withdrawn is its own, whichever of its runs did it.
func (c *Claims) GiveBack() bool {
	if c == nil || len(c.Withdrawn) == 0 {
		return false
	}
	c.Withdrawn = nil
	return true
}

// Claim is one consumer's hold on a capability.
type Claim struct {
	Fleet string `json:"fleet"`
	Slot  string `json:"slot"`
}

// Holders lists the fleets that claim a capability, sorted.
func (c *Claims) Holders(capability string) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, cl := range c.Capabilities[capability] {
		out = append(out, cl.Fleet)
	}
	sort.Strings(out)
	return out
}

// Add records a claim; it reports whether the record changed.
func (c *Claims) Add(capability string, cl Claim) bool {
	if c.Capabilities == nil {
		c.Capabilities = map[string][]Claim{}
	}
	for _, x := range c.Capabilities[capability] {
		if x == cl {
			return false
		}
	}
	c.Capabilities[capability] = append(c.Capabilities[capability], cl)
	sort.Slice(c.Capabilities[capability], func(i, j int) bool {
		a, b := c.Capabilities[capability][i], c.Capabilities[capability][j]
		return a.Fleet < b.Fleet || (a.Fleet == b.Fleet && a.Slot < b.Slot)
	})
	return true
}

// Remove drops every claim of fleet on a capability; it reports whether
// the record changed.
func (c *Claims) Remove(capability, fleet string) bool {
	if c == nil {
		return false
	}
	kept := c.Capabilities[capability][:0]
	for _, x := range c.Capabilities[capability] {
		if x.Fleet != fleet {
			kept = append(kept, x)
		}
	}
	changed := len(kept) != len(c.Capabilities[capability])
	if len(kept) == 0 {
		delete(c.Capabilities, capability)
	} else {
		c.Capabilities[capability] = kept
	}
	return changed
}

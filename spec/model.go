package spec

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Model is a document that has been checked and interpreted: addresses
// parsed, regions resolved, every field decoded against its kind's metadata.
// The engine plans from a Model.
type Model struct {
	Fleet      string
	Accounts   map[Provider]string
	Placement  map[Provider]string
	Exclusions []ExclusionRule
	Resources  []Declared
	Forget     []Address
	// Adopt are the declared resources the fleet takes over though they
	// carry no ownership mark (the document's "adopt").
	Adopt map[Address]bool

	// Wiring across fleets: the interfaces the document carries, the
	// capabilities it provides (and exposes), and the slots it uses, each
	// with its wire.
	Interfaces map[string]Interface
	Provides   map[string]Capability
	Uses       map[string]Slot
	// Wired is what each import resolved to against the far fleets'
	// published records (ResolveWires); empty until then.
	Wired map[Import]Wired
	// Components is where each resource comes from (docs/components.md).
	Components Components
	// WiredAll is what each import of a reach-all slot resolved to: one
	// entry per capability of the set, sorted by key (ResolveWires).
	WiredAll map[Import][]Wired

	index map[Address]int
}

// ExclusionRule is a parsed exclusion.
type ExclusionRule struct {
	Provider Provider
	Kind     Kind
	// Name is the exact name, or a prefix when Prefix is set (written "name*").
	Name   string
	Prefix bool
	Why    string
}

// Matches reports whether the rule covers a.
func (r ExclusionRule) Matches(a Address) bool {
	if a.Provider != r.Provider || a.Kind != r.Kind {
		return false
	}
	if r.Prefix {
		return strings.HasPrefix(a.Name, r.Name)
	}
	return a.Name == r.Name
}

// Declared is one resource of a Model.
type Declared struct {
	Address Address
	Region  string
	Fields  map[string]Value
}

// Deps returns the addresses the resource depends on, sorted.
func (d Declared) Deps() []Address {
	seen := map[Address]bool{}
	var out []Address
	for _, name := range sortedKeys(d.Fields) {
		for _, a := range Deps(d.Fields[name]) {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// Lookup returns the declared resource at a.
func (m *Model) Lookup(a Address) (*Declared, bool) {
	i, ok := m.index[a]
	if !ok {
		return nil, false
	}
	return &m.Resources[i], true
}

// Excluded returns the exclusion that covers a, if any.
func (m *Model) Excluded(a Address) (ExclusionRule, bool) {
	for _, r := range m.Exclusions {
		if r.Matches(a) {
			return r, true
		}
	}
	return ExclusionRule{}, false
}

// Providers returns the providers the model declares resources for or names
// an account for, sorted.
func (m *Model) Providers() []Provider {
	seen := map[Provider]bool{}
	for _, r := range m.Resources {
		seen[r.Address.Provider] = true
	}
	for p := range m.Accounts {
		seen[p] = true
	}
	var out []Provider
	for _, p := range Providers {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out
}

// Regions returns, per provider, the regions the model places resources in,
// sorted.
func (m *Model) Regions() map[Provider][]string {
	seen := map[Provider]map[string]bool{}
	for _, r := range m.Resources {
		if seen[r.Address.Provider] == nil {
			seen[r.Address.Provider] = map[string]bool{}
		}
		seen[r.Address.Provider][r.Region] = true
	}
	out := map[Provider][]string{}
	for p, set := range seen {
		for region := range set {
			out[p] = append(out[p], region)
		}
		sort.Strings(out[p])
	}
	return out
}

// Validate checks a document and returns every problem at once, sorted. It
// implements the rules listed under "check refuses" in the contracts, and
// never panics.
func Validate(doc *Document) []Diagnostic {
	_, diags := Compile(doc)
	return diags
}

var fleetNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
var awsAccountRE = regexp.MustCompile(`^[0-9]{12}$`)
var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// ValidFleetName reports whether name is a valid fleet name: 1–63 characters
// of [a-z0-9_-], starting with a letter. It is the ownership tag's value.
func ValidFleetName(name string) bool { return fleetNameRE.MatchString(name) }

// Compile checks a document and interprets it. The model is usable only when
// the diagnostics hold no error; it is returned anyway so that a plan can
// still be drawn from a document with warnings.
func Compile(doc *Document) (*Model, []Diagnostic) {
	c := &compiler{doc: doc, m: &Model{index: map[Address]int{}}}
	if doc == nil {
		return c.m, []Diagnostic{Errorf(RowNoDocument, "document", "pass a decoded infra/v1 document", "no fleet document")}
	}
	c.header()
	c.resources()
	c.wiring()
	c.components()
	c.references()
	c.within()
	c.cycles()
	c.forgets()
	c.adopts()
	c.m.Components.name(c.diags)
	return c.m, SortDiagnostics(c.diags)
}

type compiler struct {
	doc   *Document
	m     *Model
	diags []Diagnostic
}

func (c *compiler) add(d Diagnostic) { c.diags = append(c.diags, d) }

func (c *compiler) header() {
	c.apiVersion()
	c.documentKeys()
	c.fleet()
	c.accounts()
	c.placement()
	for i, x := range c.doc.Exclusions {
		c.exclusion(i, x)
	}
}

func (c *compiler) apiVersion() {
	switch c.doc.APIVersion {
	case APIVersion:
	case "":
		c.add(Errorf(RowMissingAPIVersion, "apiVersion", `add "apiVersion": "infra/v1"`, "the document has no apiVersion"))
	default:
		c.add(Errorf(RowUnknownAPIVersion, "apiVersion", "this build reads infra/v1; upgrade infra to read a newer document",
			"unknown apiVersion %q", c.doc.APIVersion))
	}
}

func (c *compiler) documentKeys() {
	for _, k := range c.doc.UnknownKeys() {
		where := k
		if where == "" {
			where = "document"
		}
		c.add(Errorf(RowUnknownKey, where, "the document's keys are apiVersion, fleet, accounts, placement, exclusions, resources, forget, adopt, interfaces, provides, exposes, uses, wires and components",
			"unknown key %q", k))
	}
}

func (c *compiler) fleet() {
	c.m.Fleet = c.doc.Fleet
	if !ValidFleetName(c.doc.Fleet) {
		c.add(Errorf(RowInvalidFleetName, "fleet", "1–63 characters of a-z, 0-9, '-' and '_', starting with a letter; it becomes the ownership tag's value",
			"invalid fleet name %q", c.doc.Fleet))
	}
}

func (c *compiler) accounts() {
	c.m.Accounts = map[Provider]string{}
	for _, p := range sortedProviderKeys(c.doc.Accounts) {
		acct := c.doc.Accounts[p]
		where := "accounts." + string(p)
		switch {
		case !p.Known():
			c.add(Errorf(RowUnknownProvider, where, knownProvidersHint(), "unknown provider %q", p))
			continue
		case p == AWS && !awsAccountRE.MatchString(acct):
			c.add(Errorf(RowInvalidAccountID, where, "an AWS account id is 12 digits", "invalid AWS account id %q", acct))
		case p == Scaleway && !uuidRE.MatchString(acct):
			c.add(Errorf(RowInvalidAccountID, where, "a Scaleway project id is a lowercase UUID", "invalid Scaleway project id %q", acct))
		case p == GCP && !gcpProjectRE.MatchString(acct):
			c.add(Errorf(RowInvalidAccountID, where, "a GCP project id is 6–30 characters of a-z, 0-9 and '-', starting with a letter and not ending with '-' (the id, not the project's number or display name)",
				"invalid GCP project id %q", acct))
		}
		c.m.Accounts[p] = acct
	}
}

func (c *compiler) placement() {
	c.m.Placement = map[Provider]string{}
	for _, p := range sortedProviderKeys(c.doc.Placement) {
		where := "placement." + string(p)
		if !p.Known() {
			c.add(Errorf(RowUnknownProvider, where, knownProvidersHint(), "unknown provider %q", p))
			continue
		}
		code, ok := c.region(where, p, c.doc.Placement[p])
		if ok {
			c.m.Placement[p] = code
		}
	}
}

// exclusion checks the i-th exclusion and adds it to the model unless it is
// not an address at all.
func (c *compiler) exclusion(i int, x Exclusion) {
	where := x.Address
	if where == "" {
		where = "exclusions"
	}
	parts := strings.SplitN(x.Address, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || strings.Contains(parts[2], "/") {
		c.add(Errorf(RowInvalidAddress, where, "write provider/kind/name, or provider/kind/prefix* for every name with that prefix",
			"exclusion %d: %q is not an address", i+1, x.Address))
		return
	}
	for _, k := range x.UnknownKeys() {
		c.add(Errorf(RowUnknownKey, where, "an exclusion's keys are address and why", "exclusion %d: unknown key %q", i+1, k))
	}
	prefix := strings.HasSuffix(parts[2], "*")
	a := Address{Provider: Provider(parts[0]), Kind: Kind(parts[1]), Name: strings.TrimSuffix(parts[2], "*")}
	if strings.Contains(a.Name, "*") {
		c.add(Errorf(RowMisplacedWildcard, where, "a * may only end the name: provider/kind/prefix* matches every name with that prefix",
			"exclusion %d: %q has a * inside the name", i+1, x.Address))
	}
	if !a.Provider.Known() {
		c.add(Errorf(RowUnknownProvider, where, knownProvidersHint(), "exclusion of unknown provider %q", a.Provider))
	} else if _, ok := Lookup(a.Kind); !ok {
		c.add(Errorf(RowUnknownKind, where, knownKindsHint(a.Provider), "exclusion of unknown kind %q", a.Kind))
	}
	if strings.TrimSpace(x.Why) == "" {
		c.add(Errorf(RowExclusionWithoutWhy, where, `say why it must never be touched, so the next reader knows: "why": "owned by the data team"`,
			"exclusion without why"))
	}
	c.m.Exclusions = append(c.m.Exclusions, ExclusionRule{Provider: a.Provider, Kind: a.Kind, Name: a.Name, Prefix: prefix, Why: x.Why})
}

// region resolves a written region code for provider p.
func (c *compiler) region(where string, p Provider, written string) (string, bool) {
	code, _, ok := ResolveRegion(p, written)
	if ok {
		return code, true
	}
	known := "known " + string(p) + " regions: " + strings.Join(Regions(p), ", ")
	if owner, found := RegionOwner(written); found && owner != p {
		// The author named a place, on the wrong cloud: say what p calls
		// that place, or that p has nothing there.
		hint := known
		if l, ok := LocalityOf(owner, written); ok {
			if code, ok := RegionAt(p, l); ok {
				hint = "the " + string(p) + " region at " + string(l) + " is " + code
			} else {
				hint = string(p) + " has no region at " + string(l) + "; " + known
			}
		}
		c.add(Errorf(RowWrongCloudRegion, where, hint, "%q is a region of %s, not of %s", written, owner, p).WithEvidence(known))
		return "", false
	}
	hint := known + `; for a region infra's table lacks write "raw:` + written + `"`
	c.add(Errorf(RowUnknownRegion, where, hint, "unknown %s region %q", p, written).WithEvidence(known))
	return "", false
}

func (c *compiler) resources() {
	physical := map[string]Address{}
	for i, r := range c.doc.Resources {
		where := r.Address
		if where == "" {
			where = "resources[" + strconv.Itoa(i) + "]"
		}
		a, info, ok := c.resourceAddress(where, r)
		if !ok {
			continue
		}
		// A duplicate stays out of the model, but its fields are still
		// checked, so that renaming it does not uncover a second round of
		// errors.
		dup := c.duplicate(where, a, physical)
		d := Declared{Address: a, Region: c.resourceRegion(where, a, r), Fields: map[string]Value{}}
		c.fields(where, a.Kind, info, r, d.Fields)
		c.portability(where, a, d)
		if dup {
			continue
		}
		c.m.index[a] = len(c.m.Resources)
		c.m.Resources = append(c.m.Resources, d)
	}
}

// resourceAddress checks a resource's address, name and keys; ok is false
// when the address names no kind this provider offers, so nothing else can
// be checked.
func (c *compiler) resourceAddress(where string, r Resource) (Address, *KindInfo, bool) {
	a, err := ParseAddress(r.Address)
	if err != nil {
		c.add(Errorf(RowInvalidAddress, where, "an address is provider/kind/name, such as aws/queues/jobs", "%v", err))
		return a, nil, false
	}
	if !a.Provider.Known() {
		c.add(Errorf(RowUnknownProvider, where, knownProvidersHint(), "unknown provider %q", a.Provider))
		return a, nil, false
	}
	info, ok := Lookup(a.Kind)
	if !ok {
		c.add(Errorf(RowUnknownKind, where, knownKindsHint(a.Provider), "unknown kind %q", a.Kind))
		return a, nil, false
	}
	if !info.OfferedBy(a.Provider) {
		c.add(Errorf(RowKindNotOffered, where, knownKindsHint(a.Provider), "%s has no kind %q", a.Provider, a.Kind))
		return a, nil, false
	}
	if msg := checkName(a.Name); msg != "" {
		c.add(Errorf(RowInvalidName, where, "a name is 1–255 characters with no space or control character", "%s", msg))
	}
	for _, k := range r.UnknownKeys() {
		hint := "a resource's keys are address, region and spec"
		if _, isField := info.Field(k); isField {
			hint = "move " + strconv.Quote(k) + " into spec"
		}
		c.add(Errorf(RowUnknownKey, where, hint, "unknown key %q", k))
	}
	return a, info, true
}

// duplicate reports whether a is declared already, under its own address or
// as its physical twin; physical remembers the first of each.
func (c *compiler) duplicate(where string, a Address, physical map[string]Address) bool {
	key := string(a.Provider) + "/" + PhysicalClass(a.Provider, a.Kind) + "/" + a.Name
	if _, found := c.m.index[a]; found {
		c.add(Errorf(RowDuplicateAddress, where, "names are a resource's identity within its provider and kind; rename one",
			"duplicate address"))
		return true
	}
	if other, found := physical[key]; found {
		c.add(Errorf(RowDuplicatePhysical, where, "an S3 bucket is both object-store and s3-bucket (a Scaleway container both compute and scaleway-container); keep one declaration",
			"%s and %s are the same physical resource", other, a).WithEvidence(other.String()))
		return true
	}
	physical[key] = a
	return false
}

// resourceRegion is the resource's own region, else its provider's
// placement; "" when neither resolves.
func (c *compiler) resourceRegion(where string, a Address, r Resource) string {
	switch {
	case r.Region != "":
		if code, ok := c.region(where, a.Provider, r.Region); ok {
			return code
		}
	case c.doc.Placement[a.Provider] != "":
		return c.m.Placement[a.Provider]
	case readsUse(r.Spec):
		// It follows the region of a region-local value it reads from
		// another fleet, which ResolveWires knows.
	default:
		c.add(Errorf(RowMissingRegion, where, `set "placement": {"`+string(a.Provider)+`": "…"} or the resource's own "region"`,
			"no region for this resource"))
	}
	return ""
}

// fields decodes a resource's spec into fields, field by field, and reports
// the required ones it lacks.
func (c *compiler) fields(where string, kind Kind, info *KindInfo, r Resource, fields map[string]Value) {
	for _, name := range sortedKeys(r.Spec) {
		f, ok := info.Field(name)
		if !ok {
			c.add(Errorf(RowUnknownField, where, fieldsHint(info), "unknown field %q for kind %s", name, kind))
			continue
		}
		v, err := Decode(f, r.Spec[name])
		if err != nil {
			id := RowInvalidValue
			if _, isString := r.Spec[name].(string); isString && f.Type == TypeSecretSource {
				id = RowPlaintextSecret
			}
			c.add(Errorf(id, where, fieldHint(f), "field %q: %v", name, err))
			continue
		}
		if f.Name == "instanceType" {
			lit := v.(Lit).V.(string)
			code, _, ok := ResolveInstanceType(lit)
			if !ok {
				c.add(Errorf(RowUnknownInstanceType, where, instanceTypeHint(lit), "invalid instance type %q", lit))
			}
			v = Lit{code}
		}
		c.cidrField(where, f, v)
		fields[name] = v
	}
	for _, f := range info.Fields {
		if _, set := r.Spec[f.Name]; f.Required && !set {
			c.add(Errorf(RowMissingField, where, "add "+strconv.Quote(f.Name)+" to spec: "+fieldHint(f), "missing required field %q", f.Name))
		}
	}
}

// portability raises a named row where a portable kind holds a field its
// cloud cannot express (an error) or has no use for (a warning), or lacks
// one its cloud requires. The rules are the fields' own metadata (OnlyOn,
// IgnoredOn, RequiredOn), plus the few that are about values.
func (c *compiler) portability(where string, a Address, d Declared) {
	info, _ := Lookup(a.Kind)
	for _, f := range info.Fields {
		_, set := d.Fields[f.Name]
		switch {
		case set && !f.ExpressibleOn(a.Provider):
			c.add(Errorf(RowFieldNotExpressible, where, f.Doc+"; remove it for "+string(a.Provider),
				"%s on %s cannot use %s", a.Kind, a.Provider, f.Name))
		case set && !f.UsedOn(a.Provider):
			c.add(Warnf(RowFieldIgnored, where, f.Doc, "%s on %s does not use %s; it is ignored there", a.Kind, a.Provider, f.Name))
		case !set && f.RequiredFor(a.Provider) && !f.Required:
			c.add(Errorf(RowMissingFieldForCloud, where, f.Doc, "missing required field %q (%s on %s needs it)", f.Name, a.Kind, a.Provider))
		}
	}
	switch a.Provider {
	case Scaleway:
		c.scalewayRules(where, a, d)
	case GCP:
		c.gcpRules(where, a, d)
	case AWS:
		if a.Kind == LambdaFunction {
			c.lambdaCode(where, d)
		}
	}
	if limit := DescriptionLimit(a.Kind, a.Provider); limit > 0 {
		c.markFits(where, a, d, limit)
	}
}

// markFits holds the tags of a kind whose product has no tags or labels,
// only a description for the mark and the tags, to the description's
// length, when every tag is a literal: past it the driver would refuse
// the resource at apply.
func (c *compiler) markFits(where string, a Address, d Declared, limit int) {
	m, _ := d.Fields[TagsField].(Map)
	tags := make(map[string]string, len(m))
	for k, v := range m {
		lit, ok := v.(Lit)
		s, isString := lit.V.(string)
		if !ok || !isString {
			return // known at apply
		}
		tags[k] = s
	}
	if n := len(EncodeMarkDescription(c.m.Fleet, tags)); n > limit {
		c.add(Errorf(RowMarkDoesNotFit, where, fmt.Sprintf("use fewer or shorter tags: the product has no tags or labels, so its description holds them with the ownership mark, as %s=%s&key=value…, in at most %d characters", OwnershipTagKey, c.m.Fleet, limit),
			"%s on %s keeps its tags and the ownership mark in its description, which they overflow: %d characters where %d fit", a.Kind, a.Provider, n, limit))
	}
}

// scalewayRules are the rows about values that Scaleway's products refuse.
func (c *compiler) scalewayRules(where string, a Address, d Declared) {
	switch a.Kind {
	case Queues, Postgres:
		// Neither product has tags or a description: the name prefix is the
		// ownership mark, so a name without it could never be managed.
		if c.m.Fleet != "" && !strings.HasPrefix(a.Name, c.m.Fleet+"-") {
			c.add(Errorf(RowMissingFleetPrefix, where, "rename it "+c.m.Fleet+"-"+a.Name,
				"%s on scaleway needs the fleet prefix: the product has no tags, so its name %s-… is its ownership mark", a.Kind, c.m.Fleet))
		}
	}
	if a.Kind == Postgres {
		for _, name := range []string{"minCapacity", "maxCapacity"} {
			if lit, ok := d.Fields[name].(Lit); ok {
				if n, isNum := lit.V.(float64); isNum && n != float64(int64(n)) {
					c.add(Errorf(RowFractionalCapacity, where, "Serverless SQL capacity is in whole vCPUs", "postgres on scaleway needs whole-number %s, not %v", name, n))
				}
			}
		}
	}
	if a.Kind == IAM {
		if l, ok := d.Fields["policies"].(List); ok {
			for _, x := range l {
				if lit, ok := x.(Lit); ok {
					if s, _ := lit.V.(string); strings.HasPrefix(s, "arn:") {
						c.add(Errorf(RowAWSPolicyOnScaleway, where, "on Scaleway, policies are permission-set names such as ObjectStorageReadOnly",
							"iam on scaleway: %q is an AWS policy ARN", s))
					}
				}
			}
		}
	}
}

// references checks every expression's target: it exists, is of an
// accepted kind, publishes the attribute read, and stays within its region
// where it must.
func (c *compiler) references() {
	for _, d := range c.m.Resources {
		info, _ := Lookup(d.Address.Kind)
		where := d.Address.String()
		for _, name := range sortedKeys(d.Fields) {
			f, _ := info.Field(name)
			v := d.Fields[name]
			walk(v, func(w Value) {
				switch e := w.(type) {
				case Ref:
					c.ref(where, d, f, e.To)
				case Observed:
					t, ok := c.m.Lookup(e.Of)
					if !ok {
						c.add(Errorf(RowDanglingReference, where, "declare it in this fleet, or fix the address",
							"field %q reads %s, which is not in the document", name, e.Of).WithEvidence(e.Of.String()))
						return
					}
					if tinfo, _ := Lookup(t.Address.Kind); !tinfo.HasAttribute(e.Attribute) {
						c.add(Errorf(RowUnknownAttribute, where, "it publishes: "+strings.Join(tinfo.Attributes, ", "),
							"field %q reads attribute %q, which %s does not publish", name, e.Attribute, e.Of).WithEvidence(e.Of.String()))
					}
				case Import:
					whole, _ := v.(Import)
					c.importRow(d.Address, f, e, whole == e)
				case SecretValue:
					t, ok := c.m.Lookup(e.Of)
					switch {
					case !ok:
						c.add(Errorf(RowDanglingReference, where, "declare the secret in this fleet, or fix the address",
							"field %q reads the value of %s, which is not in the document", name, e.Of).WithEvidence(e.Of.String()))
					case t.Address.Kind != Secrets:
						c.add(Errorf(RowWrongKindReference, where, "secretValue reads a secrets resource",
							"field %q reads the secret value of %s, which is of kind %s", name, e.Of, t.Address.Kind).WithEvidence(e.Of.String()))
					}
				}
			})
			if f.Type == TypeSecretSource {
				if comp, ok := v.(Composed); ok && len(Deps(comp)) == 0 && len(ImportsIn(comp)) == 0 {
					c.add(Errorf(RowComposedPlaintext, where, `compose from {"secretValue": …}, {"observed": …} or {"use": …}; a literal value belongs in an environment variable ({"fromEnv": "VAR"})`,
						"composed secret with no dependency is a plaintext in disguise"))
				}
			}
		}
	}
}

func (c *compiler) ref(where string, d Declared, f Field, to Address) {
	t, ok := c.m.Lookup(to)
	if !ok {
		c.add(Errorf(RowDanglingReference, where, "declare it in this fleet, or fix the address",
			"field %q refers to %s, which is not in the document", f.Name, to).WithEvidence(to.String()))
		return
	}
	if len(f.RefKinds) > 0 && !containsKind(f.RefKinds, to.Kind) {
		c.add(Errorf(RowWrongKindReference, where, "it accepts: "+kindList(f.RefKinds),
			"field %q refers to %s, which is of kind %s", f.Name, to, to.Kind).WithEvidence(to.String()))
		return
	}
	if f.SameProvider && to.Provider != d.Address.Provider {
		c.add(Errorf(RowCrossCloudReference, where, "refer to a "+string(d.Address.Provider)+" resource of kind "+kindList(f.RefKinds),
			"field %q refers to %s on another cloud; it must refer to a %s resource", f.Name, to, d.Address.Provider).WithEvidence(to.String()))
		return
	}
	if f.RegionLocal && t.Region != "" && d.Region != "" && t.Region != d.Region {
		c.add(Errorf(RowCrossRegionReference, where, "place both in the same region",
			"field %q refers to %s in %s, but this resource is in %s; a %s cannot cross regions",
			f.Name, to, t.Region, d.Region, to.Kind).WithEvidence(to.String()))
	}
}

// cycles reports each dependency cycle once, naming its members.
func (c *compiler) cycles() {
	for _, cycle := range FindCycles(c.m) {
		names := make([]string, len(cycle))
		for i, a := range cycle {
			names[i] = a.String()
			if m, ok := c.m.Components.Of(a); ok {
				names[i] += " (" + m.Path() + ")"
			}
		}
		next := cycle[0]
		if len(cycle) > 1 {
			next = cycle[1]
		}
		c.add(Errorf(RowCycle, cycle[0].String(),
			fmt.Sprintf("give the value a third owner: what %s reads of %s belongs in a resource of its own (a secret that holds it) that neither of them reads back, so that no member of the cycle refers to itself", cycle[0], next),
			"dependency cycle among: %s", strings.Join(names, ", ")).WithEvidence(strings.Join(names, ", ")))
	}
}

// listed parses item i of a top-level list of addresses (forget, adopt),
// reporting one that is not an address.
func (c *compiler) listed(list string, i int, s string) (Address, bool) {
	a, err := ParseAddress(s)
	if err != nil {
		where := s
		if where == "" {
			where = list + "[" + strconv.Itoa(i) + "]"
		}
		c.add(Errorf(RowInvalidAddress, where, "an address is provider/kind/name", "%s: %v", list, err))
	}
	return a, err == nil
}

func (c *compiler) forgets() {
	for i, s := range c.doc.Forget {
		a, ok := c.listed("forget", i, s)
		if !ok {
			continue
		}
		if !a.Provider.Known() {
			c.add(Errorf(RowUnknownProvider, s, knownProvidersHint(), "forget of unknown provider %q", a.Provider))
			continue
		}
		if info, ok := Lookup(a.Kind); !ok || !info.OfferedBy(a.Provider) {
			c.add(Errorf(RowKindNotOffered, s, knownKindsHint(a.Provider), "forget: %s has no kind %q", a.Provider, a.Kind))
			continue
		}
		if _, declared := c.m.Lookup(a); declared {
			c.add(Errorf(RowForgetDeclared, s, "forget releases a resource this fleet no longer declares; remove the resource or the forget",
				"forget of a resource that is still declared"))
			continue
		}
		c.m.Forget = append(c.m.Forget, a)
	}
}

// adopts checks the document's adopt list: each entry names a resource the
// document declares, once.
func (c *compiler) adopts() {
	for i, s := range c.doc.Adopt {
		a, ok := c.listed("adopt", i, s)
		if !ok {
			continue
		}
		if _, declared := c.m.Lookup(a); !declared {
			c.add(Errorf(RowAdoptUndeclared, s, "declare the resource as it exists (infra import writes the declaration), or remove it from adopt",
				"adopt of a resource the document does not declare"))
			continue
		}
		if c.m.Adopt[a] {
			c.add(Errorf(RowAdoptTwice, s, "name it once in adopt", "adopt names the resource twice"))
			continue
		}
		if c.m.Adopt == nil {
			c.m.Adopt = map[Address]bool{}
		}
		c.m.Adopt[a] = true
	}
}

// FindCycles returns the dependency cycles among a model's resources (the
// strongly connected components with more than one member, or a member that
// depends on itself), each sorted, in a stable order.
func FindCycles(m *Model) [][]Address {
	t := newTarjan(m)
	var out [][]Address
	for root := range t.edges {
		if t.index[root] >= 0 {
			continue
		}
		t.components(root, func(comp []int) {
			if len(comp) > 1 || t.selfLoop(comp[0]) {
				out = append(out, sortedAddresses(m, comp))
			}
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0].Less(out[j][0]) })
	return out
}

// tarjan is Tarjan's algorithm over the model's reference edges, iterative
// so a deep chain cannot overflow a stack.
type tarjan struct {
	edges      [][]int
	index, low []int
	onStack    []bool
	stack      []int
	next       int
}

func newTarjan(m *Model) *tarjan {
	n := len(m.Resources)
	t := &tarjan{edges: make([][]int, n), index: make([]int, n), low: make([]int, n), onStack: make([]bool, n)}
	for i, d := range m.Resources {
		for _, dep := range d.Deps() {
			if j, ok := m.index[dep]; ok {
				t.edges[i] = append(t.edges[i], j)
			}
		}
	}
	for i := range t.index {
		t.index[i] = -1
	}
	return t
}

func (t *tarjan) push(v int) {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.onStack[v] = true
}

// components walks depth first from root, calling found with each strongly
// connected component as it closes; the component's first member is its root.
func (t *tarjan) components(root int, found func(comp []int)) {
	type frame struct{ v, e int }
	call := []frame{{root, 0}}
	t.push(root)
	for len(call) > 0 {
		top := &call[len(call)-1]
		v := top.v
		if top.e < len(t.edges[v]) {
			w := t.edges[v][top.e]
			top.e++
			if t.index[w] < 0 {
				t.push(w)
				call = append(call, frame{w, 0})
			} else if t.onStack[w] && t.index[w] < t.low[v] {
				t.low[v] = t.index[w]
			}
			continue
		}
		call = call[:len(call)-1]
		if len(call) > 0 {
			if u := call[len(call)-1].v; t.low[v] < t.low[u] {
				t.low[u] = t.low[v]
			}
		}
		if t.low[v] == t.index[v] {
			found(t.pop(v))
		}
	}
}

// pop takes the component rooted at v off the stack, v first.
func (t *tarjan) pop(v int) []int {
	comp := []int{v}
	for {
		w := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.onStack[w] = false
		if w == v {
			return comp
		}
		comp = append(comp, w)
	}
}

func (t *tarjan) selfLoop(v int) bool {
	for _, w := range t.edges[v] {
		if w == v {
			return true
		}
	}
	return false
}

func sortedAddresses(m *Model, members []int) []Address {
	addrs := make([]Address, len(members))
	for i, w := range members {
		addrs[i] = m.Resources[w].Address
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	return addrs
}

// NameProblem says why a resource name cannot be declared (empty, a
// slash, which an address uses, a space or a control character, too long),
// or "" when it can: what import checks before it writes a declaration.
func NameProblem(name string) string {
	switch {
	case name == "":
		return "the name is empty"
	case strings.Contains(name, "/"):
		return "the name holds a /, which separates an address's parts"
	}
	return checkName(name)
}

func checkName(name string) string {
	if len(name) > 255 {
		return "name is longer than 255 characters"
	}
	for _, r := range name {
		// needsEscape: the C1 and bidirectional controls too, which no
		// cloud names and which would reorder what a reviewer reads.
		if r <= ' ' || needsEscape(r) {
			return "name contains a space or a control character"
		}
	}
	return ""
}

func containsKind(ks []Kind, k Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func kindList(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func knownProvidersHint() string {
	s := make([]string, len(Providers))
	for i, p := range Providers {
		s[i] = string(p)
	}
	return "known providers: " + strings.Join(s, ", ")
}

func knownKindsHint(p Provider) string {
	if !p.Known() {
		return knownProvidersHint()
	}
	var s []string
	for _, k := range KindsOf(p) {
		s = append(s, string(k.Kind))
	}
	return string(p) + " kinds: " + strings.Join(s, ", ")
}

// fieldHint says what a field wants, with its documentation when it has some.
func fieldHint(f Field) string {
	h := "it is " + article(f.Type.String()) + " " + f.Type.String()
	if len(f.RefKinds) > 0 {
		h += " to " + kindList(f.RefKinds)
	}
	if f.Doc != "" {
		h += "; " + f.Doc
	}
	return h
}

func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an"
	}
	return "a"
}

func fieldsHint(info *KindInfo) string {
	s := make([]string, len(info.Fields))
	for i, f := range info.Fields {
		s[i] = f.Name
	}
	return string(info.Kind) + " fields: " + strings.Join(s, ", ")
}

func instanceTypeHint(t string) string {
	escape := `; for a type infra's table lacks write "raw:` + t + `"`
	family, _, _ := strings.Cut(t, ".")
	if f, ok := LookupInstanceFamily(family); ok {
		return family + " sizes: " + strings.Join(f.Sizes, ", ") + escape
	}
	names := make([]string, 0, len(instanceFamilies))
	for _, f := range instanceFamilies {
		names = append(names, f.Name)
	}
	return "write family.size, such as t3.micro; known families: " + strings.Join(names, ", ") + escape
}

func sortedProviderKeys(m map[Provider]string) []Provider {
	out := make([]Provider, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

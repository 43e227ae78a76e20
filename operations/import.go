package operations

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// ImportOptions narrow what Import looks for.
type ImportOptions = engine.ImportOptions

// ImportRequest asks what exists that no fleet owns, as declarations.
type ImportRequest struct {
	Document *spec.Document
	Options  ImportOptions
}

// Declaration is one found resource written as the fleet document
// declares it, with what its reader should know.
type Declaration struct {
	Resource spec.Resource `json:"resource"`
	// Adopt is set when the resource exists and the declaration takes it
	// over; a declaration import had to add (the secret a database's
	// password needs, when none was found) is created instead.
	Adopt bool `json:"adopt"`
	// Notes name the fields the declaration could not fill from the
	// cloud, and what was chosen instead.
	Notes []string `json:"notes,omitempty"`
}

// ImportResult is what Import found.
type ImportResult struct {
	Accounts     []engine.Account `json:"accounts"`
	Declarations []Declaration    `json:"declarations"`
	// Owned and Known count what was passed over: claimed by a fleet's
	// mark, or declared, recorded or excluded by this one.
	Owned int `json:"owned"`
	Known int `json:"known"`
	// LeftOut are the resources found that no declaration can hold, and
	// why: a name infra cannot declare, a second region's namesake.
	LeftOut []LeftOut `json:"leftOut,omitempty"`
}

// LeftOut is a resource import found and does not declare.
type LeftOut struct {
	Address string `json:"address"`
	Region  string `json:"region"`
	Why     string `json:"why"`
}

// Adopts counts the declarations that take over a resource that exists;
// the others are new.
func (r *ImportResult) Adopts() int {
	n := 0
	for _, d := range r.Declarations {
		if d.Adopt {
			n++
		}
	}
	return n
}

// Import lists the resources in the fleet's accounts that carry no
// ownership mark and that the fleet does not know, and writes each as a
// declaration to adopt. It writes nothing and takes no lock: the
// declarations take effect only once they are in the fleet, at the next
// plan and apply.
func (o *Operations) Import(ctx context.Context, req ImportRequest) (*ImportResult, error) {
	s, err := open(ctx, o.env, req.Document, "import", false)
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	if err := s.refuseErrors(); err != nil {
		return nil, err
	}
	found, err := s.engine.Unowned(ctx, s.model, s.ledger, req.Options)
	if err != nil {
		return nil, err
	}
	return declare(s.model, found), nil
}

// declare writes what was found as declarations: every field the cloud
// reported and the kind knows, a reference as {"ref": address}, and for
// what the cloud never reports a stand-in with a note saying so.
func declare(m *spec.Model, found *engine.Importable) *ImportResult {
	res := &ImportResult{Accounts: found.Accounts, Declarations: []Declaration{}, Owned: found.Owned, Known: found.Known}
	names := map[spec.Address]bool{} // what a reference may point at
	for _, d := range m.Resources {
		names[d.Address] = true
	}
	kept := declarable(m, found.Found, res)
	for _, f := range kept {
		names[f.Address] = true
	}
	for _, f := range kept {
		res.Declarations = append(res.Declarations, declaration(m, f, names, res))
	}
	sort.SliceStable(res.Declarations, func(i, j int) bool {
		return res.Declarations[i].Resource.Address < res.Declarations[j].Resource.Address
	})
	return res
}

// declarable keeps what a declaration can hold: a name infra can declare,
// and one address once. A namesake in a second region is left out, the
// one in the fleet's placement (else the first region) kept.
func declarable(m *spec.Model, found []engine.Found, res *ImportResult) []engine.Found {
	first := map[spec.Address]int{}
	var out []engine.Found
	for _, f := range found {
		if svc := owningService(f.Unmodelled); svc != "" {
			res.LeftOut = append(res.LeftOut, LeftOut{Address: f.Address.String(), Region: f.Region,
				Why: "managed by the cloud's " + svc + " service, which made it and changes it: a fleet must not take it over"})
			continue
		}
		if why := spec.NameProblem(f.Address.Name); why != "" {
			res.LeftOut = append(res.LeftOut, LeftOut{Address: f.Address.String(), Region: f.Region, Why: why + "; rename it, or leave it out of the fleet"})
			continue
		}
		i, dup := first[f.Address]
		if !dup {
			first[f.Address] = len(out)
			out = append(out, f)
			continue
		}
		if f.Region == m.Placement[f.Address.Provider] {
			out[i], f = f, out[i]
		}
		res.LeftOut = append(res.LeftOut, LeftOut{Address: f.Address.String(), Region: f.Region,
			Why: "another resource of that name is imported from " + out[i].Region + ", and a fleet declares one resource per address"})
	}
	return out
}

// owningService is the service an Unmodelled entry says manages the
// resource, or "".
func owningService(unmodelled []string) string {
	for _, u := range unmodelled {
		if svc, ok := strings.CutPrefix(u, providers.OwningService+"="); ok {
			return svc
		}
	}
	return ""
}

func declaration(m *spec.Model, f engine.Found, names map[spec.Address]bool, res *ImportResult) Declaration {
	a := f.Address
	info, _ := spec.Lookup(a.Kind)
	d := Declaration{Resource: spec.Resource{Address: a.String(), Spec: map[string]any{}}, Adopt: true}
	if f.Region != m.Placement[a.Provider] {
		d.Resource.Region = f.Region
	}
	for _, field := range info.Fields {
		if !field.UsedOn(a.Provider) {
			continue
		}
		v, reported := f.Fields[field.Name]
		switch {
		case field.Type == spec.TypeSecretSource:
			env := envName(a.Name)
			d.Resource.Spec[field.Name] = map[string]any{"fromEnv": env}
			d.Notes = append(d.Notes, fmt.Sprintf("%s: the cloud never reveals a secret's value, and infra never compares it; apply reads $%s only if it creates the secret again", field.Name, env))
		case field.Secret && field.IsRef():
			secret, note := passwordSecret(m, a, names, res, f.Region)
			d.Resource.Spec[field.Name] = map[string]any{"ref": secret.String()}
			d.Notes = append(d.Notes, field.Name+": "+note)
		case !reported:
			if field.RequiredFor(a.Provider) || field.Compare == spec.CompareNever {
				continue // a create-time field the cloud does not report
			}
			d.Notes = append(d.Notes, fmt.Sprintf("%s: not reported by the cloud; left unset, so never compared", field.Name))
		case field.Type == spec.TypeRef && unnamedIdentity(field, a.Provider, v, names):
			// A security group's vpc is its VPC's id, which no address
			// here has; left unset, it is never compared, where a
			// reference would dangle.
			d.Notes = append(d.Notes, fmt.Sprintf("%s: the cloud records it by identity, %v, which no resource declared or imported here has; "+
				"left unset, so never compared, and a create (or a replace) would use the field's default: refer to it to keep it", field.Name, v))
		case field.Type == spec.TypeRef:
			name, _ := v.(string)
			d.Resource.Spec[field.Name] = map[string]any{"ref": refTarget(field, a.Provider, name, names).String()}
		case field.Type == spec.TypeRefMap:
			refs := map[string]any{}
			vm, _ := v.(map[string]any)
			for k, x := range vm {
				name, _ := x.(string)
				refs[k] = map[string]any{"ref": refTarget(field, a.Provider, name, names).String()}
			}
			d.Resource.Spec[field.Name] = refs
		case field.Type == spec.TypeIngress:
			rules, odd := expressibleRules(v)
			d.Resource.Spec[field.Name] = rules
			if len(odd) > 0 {
				d.Notes = append(d.Notes, fmt.Sprintf("%s: %d rule(s) the spec cannot express (%s) are left out; the plan revokes them, since infra declares the rules whole. Declare them another way, or exclude the group", field.Name, len(odd), strings.Join(odd, "; ")))
			}
		case field.Name == spec.TagsField:
			tags := maps.Clone(asMap(v))
			delete(tags, spec.OwnershipTagKey)
			d.Resource.Spec[field.Name] = tags
		default:
			d.Resource.Spec[field.Name] = v
		}
	}
	if len(f.Unmodelled) > 0 {
		d.Notes = append(d.Notes, "set in the cloud, and not in infra's spec, so left as it is and never compared: "+strings.Join(f.Unmodelled, ", "))
	}
	return d
}

// expressibleRules splits reported ingress rules into those the spec
// holds ({"port", "cidr"}) and the others, described.
func expressibleRules(v any) ([]any, []string) {
	list, _ := v.([]any)
	rules := []any{}
	var odd []string
	for _, x := range list {
		r := asMap(x)
		if _, port := r["port"].(float64); port && len(r) == 2 && r["cidr"] != nil {
			rules = append(rules, r)
			continue
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r)) {
			parts = append(parts, fmt.Sprintf("%s %v", k, r[k]))
		}
		odd = append(odd, strings.Join(parts, ", "))
	}
	return rules, odd
}

// unnamedIdentity reports whether v, the reported value of optional
// reference field f, is the identity its referent is recorded by (a VPC's
// id) rather than the name of a resource declared or imported here.
func unnamedIdentity(f spec.Field, p spec.Provider, v any, names map[spec.Address]bool) bool {
	name, _ := v.(string)
	if f.RequiredFor(p) || names[refTarget(f, p, name, names)] {
		return false
	}
	for _, k := range f.RefKinds {
		if info, ok := spec.Lookup(k); ok && info.Identity != "" {
			return true
		}
	}
	return false
}

// refTarget is the address a reported reference names: of the field's
// kinds, one the fleet declares or the import found under that name, else
// the first.
func refTarget(f spec.Field, p spec.Provider, name string, names map[spec.Address]bool) spec.Address {
	for _, k := range f.RefKinds {
		if a := (spec.Address{Provider: p, Kind: k, Name: name}); names[a] {
			return a
		}
	}
	return spec.Address{Provider: p, Kind: f.RefKinds[0], Name: name}
}

// passwordSuffixes are the names, after the database's, that a secret
// holding its master password is looked for under.
var passwordSuffixes = []string{"-password", "-master-password", "-db-password", "-credentials"}

// passwordSecret is the secret a database's master password is read from
// at create. The cloud does not say which it was, so one named after the
// database is taken; failing that, a new secret is declared beside it (its
// value from the environment), which apply creates.
func passwordSecret(m *spec.Model, db spec.Address, names map[spec.Address]bool, res *ImportResult, region string) (spec.Address, string) {
	for _, suffix := range passwordSuffixes {
		a := spec.Address{Provider: db.Provider, Kind: spec.Secrets, Name: db.Name + suffix}
		if names[a] {
			return a, fmt.Sprintf("the cloud does not say which secret holds the master password; %s was chosen by its name, so check it. It is read only at create, never compared", a)
		}
	}
	a := spec.Address{Provider: db.Provider, Kind: spec.Secrets, Name: db.Name + "-master-password"}
	names[a] = true
	env := envName(a.Name)
	r := spec.Resource{Address: a.String(), Spec: map[string]any{"value": map[string]any{"fromEnv": env}}}
	if region != m.Placement[db.Provider] {
		r.Region = region
	}
	res.Declarations = append(res.Declarations, Declaration{Resource: r,
		Notes: []string{fmt.Sprintf("a new secret, which apply creates from $%s: no secret named after %s was found to hold its master password", env, db)}})
	return a, fmt.Sprintf("the cloud does not say which secret holds the master password, and none is named after it; %s is declared new. It is read only at create, never compared", a)
}

// envName is the environment variable a secret's value is read from:
// its name in upper case, with _ for what a variable name cannot hold.
func envName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "SECRET_" + s
	}
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// MergeImport returns doc with the declarations added, and each one that
// takes over what exists in its adopt list. An address doc declares
// already is refused: import never rewrites a declaration.
func MergeImport(doc *spec.Document, decls []Declaration) (*spec.Document, error) {
	out := *doc
	out.Resources = slices.Clone(doc.Resources)
	out.Adopt = slices.Clone(doc.Adopt)
	declared := map[string]bool{}
	for _, r := range doc.Resources {
		declared[r.Address] = true
	}
	for _, d := range decls {
		if declared[d.Resource.Address] {
			return nil, fmt.Errorf("%s: the fleet declares it already; import writes only what it does not declare", d.Resource.Address)
		}
		declared[d.Resource.Address] = true
		out.Resources = append(out.Resources, d.Resource)
		if d.Adopt && !slices.Contains(out.Adopt, d.Resource.Address) {
			out.Adopt = append(out.Adopt, d.Resource.Address)
		}
	}
	return &out, nil
}

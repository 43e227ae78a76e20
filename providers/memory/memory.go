// Package memory is an in-memory cloud: the engine's test double. It
// implements every kind on every provider with the behaviour the engine
// relies on — not found is NotFound, a resource still used by another
// refuses deletion with Conflict, create of an existing name is
// AlreadyExists — and lets a test inject faults. It is not a product
// backend.
package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// Cloud is the shared state of every backend made from it.
type Cloud struct {
	mu        sync.Mutex
	accounts  map[spec.Provider]string
	resources map[string]*record // key: provider/kind/region/name
	faults    []Fault
	calls     []Call
	now       func() time.Time
	// serial numbers creations, so that a replacement's identity (a
	// security group's groupId) differs from the old one's, as in a cloud.
	serial int
}

type record struct {
	Provider spec.Provider      `json:"provider"`
	Kind     spec.Kind          `json:"kind"`
	Resource providers.Resource `json:"resource"`
	// Secret is a secrets resource's value, kept apart from Fields so that
	// nothing that reports Fields can carry it.
	Secret string `json:"secret,omitempty"`
}

// Call records one driver call, for tests that assert what reached the
// cloud.
type Call struct {
	Op      string // list, read, create, update, delete, account, secret, release
	Address string // provider/kind/name, or provider/kind/* for list
	Region  string
}

// Fault makes matching calls fail. Op and Address may be empty to match
// any; Times 0 means for ever.
type Fault struct {
	Op      string
	Address string
	Err     error
	Times   int
	// After: the call is carried out, then answers Err, as when a response
	// is lost after the cloud acted. Only create honours it.
	After bool
	// Untagged: with After, the create leaves the resource without its
	// ownership mark, as a crash between a create and the call that tags
	// it does (S3 CreateBucket, then TagResource, on a service that ignores
	// create-time tags).
	Untagged bool
}

// NewCloud returns an empty cloud in which each provider's credentials
// belong to the given accounts.
func NewCloud(accounts map[spec.Provider]string) *Cloud {
	return &Cloud{accounts: accounts, resources: map[string]*record{}, now: time.Now}
}

// Inject adds a fault.
func (c *Cloud) Inject(f Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = append(c.faults, f)
}

// Calls returns the calls made so far.
func (c *Cloud) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Call(nil), c.calls...)
}

// Addresses returns the address of every resource in the cloud, sorted.
func (c *Cloud) Addresses() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.resources {
		out = append(out, string(r.Provider)+"/"+string(r.Kind)+"/"+r.Resource.Name)
	}
	sort.Strings(out)
	return out
}

// Dump returns everything the cloud stores, as JSON, for tests that look for
// a leaked secret.
func (c *Cloud) Dump() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, _ := json.Marshal(c.resources)
	return b
}

// Put stores a resource directly, as if someone else had made it: for tests
// of foreign and untagged resources.
func (c *Cloud) Put(p spec.Provider, k spec.Kind, r providers.Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.Fields = spec.CloneMap(r.Fields)
	c.resources[key(p, k, r.Region, r.Name)] = &record{Provider: p, Kind: k, Resource: r}
}

// Remove deletes a stored resource directly, as if someone else had: for
// tests of what changes out of band.
func (c *Cloud) Remove(p spec.Provider, k spec.Kind, region, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.resources, key(p, k, region, name))
}

// Get returns a stored resource.
func (c *Cloud) Get(p spec.Provider, k spec.Kind, region, name string) (providers.Resource, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.resources[key(p, k, region, name)]
	if !ok {
		return providers.Resource{}, false
	}
	out := r.Resource
	out.Fields = spec.CloneMap(out.Fields)
	return out, true
}

// file is the on-disk form used by Load and Save.
type file struct {
	Accounts  map[spec.Provider]string `json:"accounts"`
	Resources map[string]*record       `json:"resources"`
}

// Load reads a cloud saved by Save; a missing file is an empty cloud.
func Load(path string, accounts map[spec.Provider]string) (*Cloud, error) {
	c := NewCloud(accounts)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("memory cloud %s: %w", path, err)
	}
	if f.Resources != nil {
		c.resources = f.Resources
	}
	return c, nil
}

// Save writes the cloud to path, so that separate processes (CLI tests) can
// share one cloud.
func (c *Cloud) Save(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.MarshalIndent(file{Accounts: c.accounts, Resources: c.resources}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Backend returns provider p's backend.
func (c *Cloud) Backend(p spec.Provider) providers.Backend { return &backend{cloud: c, provider: p} }

type backend struct {
	cloud    *Cloud
	provider spec.Provider
}

var (
	_ providers.Backend    = (*backend)(nil)
	_ providers.Discoverer = (*backend)(nil)
)

// Owned lists every resource of this provider in region that carries an
// ownership mark, of every kind.
func (b *backend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	c := b.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, Call{Op: "owned", Address: string(b.provider) + "/*/*", Region: region})
	if err := c.fault("owned", string(b.provider)+"/*"); err != nil {
		return nil, err
	}
	var out []providers.Owned
	for _, r := range c.resources {
		if r.Provider == b.provider && r.Resource.Region == region && r.Resource.Owner != "" {
			out = append(out, providers.Owned{Kind: r.Kind, Name: r.Resource.Name, Region: region, Owner: r.Resource.Owner})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (b *backend) Provider() spec.Provider { return b.provider }

func (b *backend) Driver(k spec.Kind) (providers.Driver, bool) {
	info, ok := spec.Lookup(k)
	if !ok || !info.OfferedBy(b.provider) {
		return nil, false
	}
	return &driver{cloud: b.cloud, provider: b.provider, kind: k, info: info}, true
}

func (b *backend) ErrorCode(err error) providers.Code {
	code, _ := providers.CodeFromError(err)
	return code
}

func (b *backend) Account(ctx context.Context) (string, error) {
	c := b.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.fault("account", string(b.provider)+"/*"); err != nil {
		return "", err
	}
	acct, ok := c.accounts[b.provider]
	if !ok || acct == "" {
		return "", providers.Errorf(providers.PermissionDenied, "no %s credentials", b.provider)
	}
	return acct, nil
}

type driver struct {
	cloud    *Cloud
	provider spec.Provider
	kind     spec.Kind
	info     *spec.KindInfo
}

var (
	_ providers.Driver       = (*driver)(nil)
	_ providers.SecretReader = (*driver)(nil)
	_ providers.Releaser     = (*driver)(nil)
)

func key(p spec.Provider, k spec.Kind, region, name string) string {
	return string(p) + "/" + string(k) + "/" + region + "/" + name
}

func (d *driver) addr(name string) string {
	return string(d.provider) + "/" + string(d.kind) + "/" + name
}

// fault returns the error of the first fault matching op and addr that
// fails the call before it acts, and consumes one of its times. The caller
// holds c.mu.
func (c *Cloud) fault(op, addr string) error {
	f := c.match(op, addr, false)
	if f == nil {
		return nil
	}
	return f.Err
}

// match finds and consumes the first fault matching op and addr whose
// After is after. The caller holds c.mu.
func (c *Cloud) match(op, addr string, after bool) *Fault {
	for i := range c.faults {
		f := &c.faults[i]
		if f.After == after && (f.Op == "" || f.Op == op) && (f.Address == "" || f.Address == addr) && f.Times >= 0 {
			out := *f
			switch f.Times {
			case 0:
			case 1:
				f.Times = -1
			default:
				f.Times--
			}
			return &out
		}
	}
	return nil
}

func (d *driver) begin(op, name, region string) error {
	d.cloud.calls = append(d.cloud.calls, Call{Op: op, Address: d.addr(name), Region: region})
	return d.cloud.fault(op, d.addr(name))
}

func (d *driver) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := d.begin("list", "*", region); err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, r := range c.resources {
		if r.Provider == d.provider && r.Kind == d.kind && r.Resource.Region == region {
			res := r.Resource
			res.Fields = spec.CloneMap(res.Fields)
			res.Complete = false
			out = append(out, res)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (d *driver) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := d.begin("read", name, region); err != nil {
		return providers.Resource{}, err
	}
	r, ok := c.resources[key(d.provider, d.kind, region, name)]
	if !ok {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "%s: no such resource in %s", d.addr(name), region)
	}
	res := r.Resource
	res.Fields = spec.CloneMap(res.Fields)
	return res, nil
}

func (d *driver) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c := d.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := d.begin("create", t.Name, t.Region); err != nil {
		return providers.Resource{}, err
	}
	k := key(d.provider, d.kind, t.Region, t.Name)
	if _, exists := c.resources[k]; exists {
		return providers.Resource{}, providers.Errorf(providers.AlreadyExists, "%s already exists in %s", d.addr(t.Name), t.Region)
	}
	lost := c.match("create", d.addr(t.Name), true)
	rec := &record{Provider: d.provider, Kind: d.kind}
	rec.Resource = providers.Resource{Name: t.Name, Region: t.Region, Owner: t.Owner, Created: c.now().UTC()}
	if lost != nil && lost.Untagged {
		rec.Resource.Owner = ""
	}
	if err := d.apply(rec, t, nil); err != nil {
		return providers.Resource{}, err
	}
	c.serial++
	rec.Resource.Attributes = d.attributes(t.Name, t.Region, c.serial)
	if v, ok := rec.Resource.Fields["engineVersion"].(string); ok && d.kind == spec.Postgres {
		// What the engine runs: the declared major version, as a cloud
		// reports it (RDS says "16.4" for a declared "16").
		rec.Resource.Attributes["version"] = v + ".4"
	}
	c.resources[k] = rec
	if lost != nil {
		return providers.Resource{}, lost.Err
	}
	res := rec.Resource
	res.Fields = spec.CloneMap(res.Fields)
	return res, nil
}

func (d *driver) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c := d.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := d.begin("update", t.Name, t.Region); err != nil {
		return providers.Resource{}, err
	}
	rec, ok := c.resources[key(d.provider, d.kind, t.Region, t.Name)]
	if !ok {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "%s: no such resource in %s", d.addr(t.Name), t.Region)
	}
	for _, name := range changed {
		if f, ok := d.info.Field(name); !ok || f.Replace {
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "%s: field %q cannot be updated in place", d.addr(t.Name), name)
		}
	}
	for _, name := range changed {
		if name == spec.TagsField && t.Owner != "" {
			// Writing the tags writes the ownership tag, as every driver's
			// tag update does.
			rec.Resource.Owner = t.Owner
		}
	}
	if err := d.apply(rec, t, changed); err != nil {
		return providers.Resource{}, err
	}
	res := rec.Resource
	res.Fields = spec.CloneMap(res.Fields)
	return res, nil
}

// apply copies the target's fields into the record: all of them at create,
// the changed ones at update. Fields never compared are not reported back,
// as a real cloud would not report a password or a behaviour flag.
func (d *driver) apply(rec *record, t providers.Target, only []string) error {
	if rec.Resource.Fields == nil {
		rec.Resource.Fields = map[string]any{}
	}
	want := map[string]bool{}
	for _, n := range only {
		want[n] = true
	}
	for name, v := range t.Fields {
		if only != nil && !want[name] {
			continue
		}
		f, ok := d.info.Field(name)
		if !ok {
			return providers.Errorf(providers.InvalidArgument, "%s: unknown field %q", d.addr(t.Name), name)
		}
		if s, ok := v.(spec.Sensitive); ok {
			// A secret source is the resource's own value (a secret's);
			// any other sensitive field (a password) is sent and forgotten.
			if f.Type == spec.TypeSecretSource {
				rec.Secret = s.Reveal()
			}
			continue
		}
		if f.Compare == spec.CompareNever {
			continue
		}
		if f.Type == spec.TypeRef {
			// The cloud records the reference by the referenced resource's
			// identity, resolved now, as a real driver resolves a group's
			// name to its id.
			id, err := d.identityOf(f, t, v)
			if err != nil {
				return err
			}
			v = id
		}
		if m, ok := v.(map[string]any); ok && f.Type == spec.TypeRefMap {
			// Each value, likewise (an ALB's subnets). Labels the cloud
			// does not keep (CompareValues: an ALB's security groups) are
			// lost, as on the cloud: the values come back under
			// themselves.
			ids := make(map[string]any, len(m))
			for k, x := range m {
				id, err := d.identityOf(f, t, x)
				if err != nil {
					return err
				}
				if f.Compare == spec.CompareValues {
					k = id
				}
				ids[k] = id
			}
			v = ids
		}
		if name == spec.TagsField {
			tags := map[string]any{}
			if m, ok := v.(map[string]any); ok {
				for k, x := range m {
					tags[k] = x
				}
			}
			if rec.Resource.Owner != "" {
				tags[spec.OwnershipTagKey] = rec.Resource.Owner
			}
			v = tags
		}
		rec.Resource.Fields[name] = spec.CloneValue(v)
	}
	if _, ok := rec.Resource.Fields[spec.TagsField]; !ok && rec.Resource.Owner != "" {
		if _, taggable := d.info.Field(spec.TagsField); taggable {
			rec.Resource.Fields[spec.TagsField] = map[string]any{spec.OwnershipTagKey: rec.Resource.Owner}
		}
	}
	return nil
}

func (d *driver) attributes(name, region string, serial int) map[string]string {
	out := map[string]string{}
	for _, a := range d.info.Attributes {
		switch a {
		case d.info.Identity:
			out[a] = fmt.Sprintf("memory-%s-%d", a, serial)
		case "endpoint":
			out[a] = name + "." + region + ".memory.invalid:5432"
		case "url", "uri":
			out[a] = "https://" + region + ".memory.invalid/" + string(d.kind) + "/" + name
		case "region":
			out[a] = region
		default:
			out[a] = "memory:" + string(d.provider) + ":" + string(d.kind) + ":" + region + ":" + name + ":" + a
		}
	}
	return out
}

func (d *driver) Delete(ctx context.Context, t providers.Target) error {
	c := d.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := d.begin("delete", t.Name, t.Region); err != nil {
		return err
	}
	k := key(d.provider, d.kind, t.Region, t.Name)
	if _, ok := c.resources[k]; !ok {
		return providers.Errorf(providers.NotFound, "%s: no such resource in %s", d.addr(t.Name), t.Region)
	}
	if user := d.usedBy(t.Name, t.Region); user != "" {
		return providers.Errorf(providers.Conflict, "DependencyViolation: %s is still used by %s", d.addr(t.Name), user)
	}
	delete(c.resources, k)
	return nil
}

// usedBy returns a resource whose reference field names this one. The
// caller holds c.mu.
func (d *driver) usedBy(name, region string) string {
	var users []string
	for _, r := range d.cloud.resources {
		if r.Provider != d.provider {
			continue
		}
		info, ok := spec.Lookup(r.Kind)
		if !ok {
			continue
		}
		for _, f := range info.Fields {
			if !f.IsRef() || !refersTo(f, d.kind) {
				continue
			}
			var refs []any
			switch v := r.Resource.Fields[f.Name].(type) {
			case string:
				refs = []any{v}
			case map[string]any:
				for _, x := range v {
					refs = append(refs, x)
				}
			}
			if slices.Contains(refs, any(d.identity(name, region))) {
				users = append(users, string(r.Provider)+"/"+string(r.Kind)+"/"+r.Resource.Name)
			}
		}
	}
	sort.Strings(users)
	return strings.Join(users, ", ")
}

// identity is what a reference to this driver's resource name in region
// records: its identity attribute, or the name. The caller holds c.mu.
func (d *driver) identity(name, region string) string {
	if d.info.Identity == "" {
		return name
	}
	if r, ok := d.cloud.resources[key(d.provider, d.kind, region, name)]; ok {
		return r.Resource.Attributes[d.info.Identity]
	}
	return ""
}

// identityOf resolves a reference field's value, a name, to the identity
// of the resource it names among f's kinds: the one the engine passed
// (Target.Identities), as a real driver takes it, else the one this cloud
// holds. The caller holds c.mu.
func (d *driver) identityOf(f spec.Field, t providers.Target, v any) (string, error) {
	name, _ := v.(string)
	region := t.Region
	for _, k := range f.RefKinds {
		if id := t.Identities[spec.Address{Provider: d.provider, Kind: k, Name: name}]; id != "" {
			return id, nil
		}
		info, ok := spec.Lookup(k)
		if !ok || info.Identity == "" {
			return name, nil
		}
		if r, ok := d.cloud.resources[key(d.provider, k, region, name)]; ok {
			return r.Resource.Attributes[info.Identity], nil
		}
		return "", providers.Errorf(providers.NotFound, "%s: %s names no %s in %s", d.addr(name), f.Name, k, region)
	}
	return name, nil
}

// holdsSecretValue reports whether the kind keeps a value a SecretReader
// reads back: it has a field whose value is a secret source.
func holdsSecretValue(info *spec.KindInfo) bool {
	for _, f := range info.Fields {
		if f.Type == spec.TypeSecretSource {
			return true
		}
	}
	return false
}

func refersTo(f spec.Field, k spec.Kind) bool {
	for _, x := range f.RefKinds {
		if x == k {
			return true
		}
	}
	return false
}

func (d *driver) ReadSecretValue(ctx context.Context, region, name string) (spec.Sensitive, error) {
	c := d.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := d.begin("secret", name, region); err != nil {
		return spec.Sensitive{}, err
	}
	r, ok := c.resources[key(d.provider, d.kind, region, name)]
	if !ok {
		// Like Secrets Manager, a secret is read by its name or its ARN.
		for _, x := range c.resources {
			if x.Provider == d.provider && x.Kind == d.kind && x.Resource.Region == region && x.Resource.Attributes["arn"] == name {
				r, ok = x, true
			}
		}
	}
	if !ok || !holdsSecretValue(d.info) {
		return spec.Sensitive{}, providers.Errorf(providers.NotFound, "%s: no such secret in %s", d.addr(name), region)
	}
	return spec.NewSensitive(r.Secret), nil
}

func (d *driver) Release(ctx context.Context, region, name, owner string) error {
	c := d.cloud
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := d.begin("release", name, region); err != nil {
		return err
	}
	r, ok := c.resources[key(d.provider, d.kind, region, name)]
	if !ok {
		return providers.Errorf(providers.NotFound, "%s: no such resource in %s", d.addr(name), region)
	}
	if r.Resource.Owner == owner {
		r.Resource.Owner = ""
		if tags, ok := r.Resource.Fields[spec.TagsField].(map[string]any); ok {
			delete(tags, spec.OwnershipTagKey)
		}
	}
	return nil
}

package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// records is the route53-record kind: a Route 53 record set, named
// FQDN:TYPE (www.example.com:A). A record set has no tags and no free
// field, so the name is all that says which one an address means, and its
// mark is a companion (spec.MarkCompanion): a TXT record set beside it,
// written in the same change batch, whose value names the fleet, as
// external-dns keeps its TXT registry. So a fleet may own a record in a
// zone another fleet owns. A record without a companion (made before
// companions were) is its zone's fleet's, until that fleet's next update
// of it writes one. The zone is the public zone whose domain the FQDN is
// or ends in; a record Route 53 holds in two such zones (a parent's and a
// delegated child's) is a conflict, never a guess.
type records struct {
	clients  *regional[*route53.Client]
	pageSize int32 // ListResourceRecordSets' MaxItems; 0 for the service's default
}

var (
	_ providers.Driver     = (*records)(nil)
	_ providers.ListerFrom = (*records)(nil)
)

func init() {
	sweep := *route53Sweep
	// A record is deleted by a DELETE change, and the sweep may make no
	// other.
	sweep.Deletes = []string{"route53:ChangeResourceRecordSets"}
	sweep.Only = map[string]map[string]any{"ForAllValues:StringEquals": {"route53:ChangeResourceRecordSetsActions": "DELETE"}}
	register(entry{
		kind: spec.Route53Record, service: "route53",
		actions: []string{"route53:ListHostedZones", "route53:ListHostedZonesByName", "route53:GetHostedZone", "route53:ListTagsForResource",
			"route53:ListTagsForResources", "route53:ListResourceRecordSets", "route53:ChangeResourceRecordSets", "route53:GetChange"},
		scopes: map[string][]ActionScope{
			"route53:ListResourceRecordSets":   route53Any,
			"route53:ChangeResourceRecordSets": route53RecordChanges,
		},
		// A record has no ARN: IAM checks a change to it against its zone's,
		// which is what the record reports.
		arnFormat: "arn:{partition}:route53:::hostedzone/{id}",
		sweep:     &sweep,
		// No tags at all: a deep scan lists every zone's records with
		// their zone's owner.
		deepScan: true,
		errors:   route53Errors,
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &records{clients: newRoute53(cfg)}
		},
	})
}

// route53RecordChanges is the scope of a record's change: any zone, as for
// a zone's, but the mark the driver reads first is the record's.
var route53RecordChanges = []ActionScope{{Scope: ScopeAny, Why: noRoute53Conditions +
	": the driver reads the record's companion TXT record first (for a record without one, its zone's ownership tag) and refuses a record another fleet's mark names"}}

// A record's companion is the TXT record set that carries its mark,
// managed-by-infra=<fleet> in double quotes. Its name is the record's FQDN
// under one more label, _infra-<type>, so that the records of several
// types at one name each have their own: _infra-a.www.example.com for
// www.example.com:A, _infra-mx.example.com for the apex's MX. A wildcard's
// '*' must stay the leftmost label to be a wildcard, and a label under it
// would make a name with a literal '*' in it: *.example.com:A's companion
// is _infra-a-wildcard.example.com, beside it. No type holds a '-', so no
// two records share a companion; and a TXT record named _infra-… is
// refused, so none is taken for a companion.
const (
	companionPrefix = "_infra-"
	companionTTL    = 300
)

// companionName is the name of n's companion.
func companionName(n recordName) string {
	typ := strings.ToLower(string(n.typ))
	if parent, ok := strings.CutPrefix(n.fqdn, "*."); ok {
		return companionPrefix + typ + "-wildcard." + parent
	}
	return companionPrefix + typ + "." + n.fqdn
}

// isCompanion says whether the record set named fqdn of type typ is a
// companion, which is never a record of its own.
func isCompanion(fqdn string, typ r53types.RRType) bool {
	return typ == r53types.RRTypeTxt && strings.HasPrefix(fqdn, companionPrefix)
}

// companionSet is n's companion for owner.
func companionSet(n recordName, owner string) r53types.ResourceRecordSet {
	return r53types.ResourceRecordSet{Name: aws.String(companionName(n)), Type: r53types.RRTypeTxt, TTL: aws.Int64(companionTTL),
		ResourceRecords: []r53types.ResourceRecord{{Value: aws.String(`"` + spec.OwnershipTagKey + "=" + owner + `"`)}}}
}

// companionOwner is the fleet a companion names: "" when its value is not
// one mark.
func companionOwner(rr r53types.ResourceRecordSet) string {
	if len(rr.ResourceRecords) != 1 {
		return ""
	}
	v, ok := strings.CutPrefix(aws.ToString(rr.ResourceRecords[0].Value), `"`+spec.OwnershipTagKey+"=")
	fleet, closed := strings.CutSuffix(v, `"`)
	if !ok || !closed || strings.ContainsAny(fleet, `" \`) {
		return ""
	}
	return fleet
}

// recordName is what a record's address name says: its FQDN and type.
type recordName struct {
	fqdn string
	typ  r53types.RRType
}

func (n recordName) String() string { return n.fqdn + ":" + string(n.typ) }

// parseRecordName reads FQDN:TYPE, refusing what Route 53 would store
// otherwise than written and the SOA, which is the zone's own.
func parseRecordName(name string) (recordName, error) {
	i := strings.LastIndexByte(name, ':')
	if i < 0 {
		return recordName{}, providers.Errorf(providers.InvalidArgument,
			"aws/route53-record: %s: a record is named FQDN:TYPE, such as www.example.com:A", name)
	}
	n := recordName{fqdn: name[:i], typ: r53types.RRType(name[i+1:])}
	if !slices.Contains(n.typ.Values(), n.typ) || n.typ == r53types.RRTypeSoa {
		var types []string
		for _, t := range n.typ.Values() {
			if t != r53types.RRTypeSoa {
				types = append(types, string(t))
			}
		}
		return n, providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: the type %q is not one of %s (the SOA is the zone's own)",
			name, n.typ, strings.Join(types, ", "))
	}
	if why := checkDomain(n.fqdn, true); why != "" {
		return n, providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: %s", name, why)
	}
	if isCompanion(n.fqdn, n.typ) {
		return n, providers.Errorf(providers.InvalidArgument,
			"aws/route53-record: %s: a TXT record named %s… is the companion that carries another record's ownership mark; name it otherwise",
			name, companionPrefix)
	}
	return n, nil
}

// target decodes and checks a record's target before any call: the name,
// the zone it must lie in, and values or an alias, never both.
// wiredZone says whether zone, a record's zone field, is another fleet's
// zone id wired in: the engine enters such an identity under itself.
func wiredZone(t providers.Target, zone string) bool {
	return t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.Route53Zone, Name: zone}] == zone
}

// inZone refuses a record whose FQDN is not domain or inside it, and the
// NS record at a zone's apex, which is the zone's own.
func inZone(name string, n recordName, domain string) error {
	refuse := func(format string, args ...any) error {
		return providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: "+format, append([]any{name}, args...)...)
	}
	switch {
	case n.fqdn != domain && !strings.HasSuffix(n.fqdn, "."+domain):
		return refuse("%s is not in the zone %s: a record's FQDN is its zone's domain or ends in it", n.fqdn, domain)
	case n.typ == r53types.RRTypeNs && n.fqdn == domain:
		return refuse("the NS record at a zone's apex is the zone's own, which Route 53 makes")
	}
	return nil
}

func (d *records) target(t providers.Target) (recordName, providers.Route53RecordInput, error) {
	n, err := parseRecordName(t.Name)
	if err != nil {
		return n, providers.Route53RecordInput{}, err
	}
	in, err := providers.DecodeRoute53Record(t.Fields)
	if err != nil {
		return n, in, providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: %v", t.Name, err)
	}
	refuse := func(format string, args ...any) error {
		return providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: "+format, append([]any{t.Name}, args...)...)
	}
	alias := in.HasAliasDnsName() || in.HasAliasZoneID()
	if !in.HasZone() {
		return n, in, refuse("the zone is missing")
	}
	// A zone wired in from another fleet arrives as its id, whose domain
	// prepare reads before it checks the name against it.
	if !wiredZone(t, in.Zone) {
		if err := inZone(t.Name, n, in.Zone); err != nil {
			return n, in, err
		}
	}
	switch {
	case alias && in.HasValues():
		return n, in, refuse("values and an alias are exclusive: a record either holds values or points at its alias target")
	case alias && (in.AliasDnsName == "" || in.AliasZoneID == ""):
		return n, in, refuse("an alias needs both aliasDnsName and aliasZoneId")
	case alias && in.HasTtl():
		return n, in, refuse("an alias takes its TTL from its target: drop ttl")
	case !alias && in.HasEvaluateTargetHealth():
		return n, in, refuse("evaluateTargetHealth is for an alias only")
	case !alias && len(in.Values) == 0:
		return n, in, refuse("a record needs values, or an alias (aliasDnsName and aliasZoneId)")
	case !alias && !in.HasTtl():
		return n, in, refuse("a record with values needs a ttl")
	case in.HasTtl() && (in.Ttl < 0 || in.Ttl > 2147483647 || in.Ttl != float64(int64(in.Ttl))):
		return n, in, refuse("ttl %v is not a whole number of seconds from 0 to 2147483647", in.Ttl)
	}
	if c := companionName(n); checkDomain(c, false) != "" {
		return n, in, refuse("its companion TXT record, which carries its ownership mark, would be named %s (%d characters): "+
			"a DNS name is at most 253 characters (255 octets on the wire), each label at most 63; shorten the name", c, len(c))
	}
	return n, in, nil
}

// desired is the record set a target makes.
func desired(n recordName, in providers.Route53RecordInput) r53types.ResourceRecordSet {
	rr := r53types.ResourceRecordSet{Name: aws.String(n.fqdn), Type: n.typ}
	if in.HasAliasDnsName() {
		rr.AliasTarget = &r53types.AliasTarget{DNSName: aws.String(in.AliasDnsName), HostedZoneId: aws.String(in.AliasZoneID),
			EvaluateTargetHealth: in.EvaluateTargetHealth}
		return rr
	}
	rr.TTL = aws.Int64(int64(in.Ttl))
	for _, v := range in.Values {
		rr.ResourceRecords = append(rr.ResourceRecords, r53types.ResourceRecord{Value: aws.String(v)})
	}
	return rr
}

// recordResource is a record set as Route 53 reports it. Every field is
// reported, the unused ones empty, so that a record turned from values to
// an alias (or back) outside infra is drift.
func recordResource(region, name, zone, owner string, rr r53types.ResourceRecordSet) providers.Resource {
	values := []any{}
	for _, v := range rr.ResourceRecords {
		values = append(values, aws.ToString(v.Value))
	}
	res := providers.Resource{Name: name, Region: region, Owner: owner, Complete: true,
		Fields: map[string]any{providers.Route53RecordZone: zone, providers.Route53RecordTtl: float64(aws.ToInt64(rr.TTL)),
			providers.Route53RecordValues: values, providers.Route53RecordAliasDnsName: "", providers.Route53RecordAliasZoneID: "",
			providers.Route53RecordEvaluateTargetHealth: false},
		Attributes: map[string]string{"fqdn": dnsName(aws.ToString(rr.Name)), "arn": zoneARN(region, zone)}}
	if a := rr.AliasTarget; a != nil {
		res.Fields[providers.Route53RecordAliasDnsName] = dnsName(aws.ToString(a.DNSName))
		res.Fields[providers.Route53RecordAliasZoneID] = aws.ToString(a.HostedZoneId)
		res.Fields[providers.Route53RecordEvaluateTargetHealth] = a.EvaluateTargetHealth
	}
	return res
}

// List reports the records of every public zone, each with the fleet its
// companion names (without one, its zone's owner), complete. Left out:
// the companions; a zone's own SOA and NS at its apex; records with a
// routing policy (a set identifier), which FQDN:TYPE cannot tell apart;
// and names an address could not read back (an escaped character, a
// capital). A name Route 53 holds in two zones is listed once, incomplete,
// so that its read says what is wrong.
func (d *records) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.clients.get(region)
	zs, err := publicZones(ctx, c, spec.Route53Record, region, 0)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(zs))
	for _, z := range zs {
		ids = append(ids, zoneID(z.Id))
	}
	owners, err := zoneOwners(ctx, c, spec.Route53Record, region, ids)
	if err != nil {
		return nil, err
	}
	held := make([]heldZone, 0, len(zs))
	for _, z := range zs {
		id := zoneID(z.Id)
		held = append(held, heldZone{domain: dnsName(aws.ToString(z.Name)), id: id, owner: owners[id]})
	}
	return d.listIn(ctx, c, region, held)
}

// heldZone is a public zone as a record listing needs it: its domain, id
// and owner.
type heldZone struct{ domain, id, owner string }

func (d *records) ListsFrom() spec.Kind { return spec.Route53Zone }

// ListFrom lists the records of the zones route53-zone's listing found,
// which listed them and their owners already. That listing gives a domain
// several zones hold no id (route53-zone's List): then it cannot serve.
func (d *records) ListFrom(ctx context.Context, region string, zones []providers.Resource) ([]providers.Resource, bool, error) {
	held := make([]heldZone, 0, len(zones))
	for _, z := range zones {
		id := z.Attributes["zoneId"]
		if id == "" {
			return nil, false, nil
		}
		held = append(held, heldZone{domain: z.Name, id: id, owner: z.Owner})
	}
	rs, err := d.listIn(ctx, d.clients.get(region), region, held)
	return rs, err == nil, err
}

// listIn reports the records of the zones held (see List).
func (d *records) listIn(ctx context.Context, c *route53.Client, region string, zones []heldZone) ([]providers.Resource, error) {
	found := map[string][]providers.Resource{}
	var order []string
	for _, z := range zones {
		domain, id := z.domain, z.id
		// A companion is in its record's zone, before or after it in the
		// listing's order.
		companions := map[string]string{}
		var held []recordName
		var sets []r53types.ResourceRecordSet
		err := d.eachRecord(ctx, c, region, id, func(rr r53types.ResourceRecordSet) {
			fqdn := dnsName(aws.ToString(rr.Name))
			if isCompanion(fqdn, rr.Type) {
				if rr.SetIdentifier == nil {
					companions[fqdn] = companionOwner(rr)
				}
				return
			}
			apex := fqdn == domain && (rr.Type == r53types.RRTypeNs || rr.Type == r53types.RRTypeSoa)
			if apex || rr.SetIdentifier != nil || checkDomain(fqdn, true) != "" || rr.Type == r53types.RRTypeSoa {
				return
			}
			held, sets = append(held, recordName{fqdn: fqdn, typ: rr.Type}), append(sets, rr)
		})
		if err != nil {
			return nil, err
		}
		for i, n := range held {
			owner, marked := companions[companionName(n)]
			if !marked {
				owner = z.owner
			}
			name := n.String()
			if _, seen := found[name]; !seen {
				order = append(order, name)
			}
			found[name] = append(found[name], recordResource(region, name, id, owner, sets[i]))
		}
	}
	out := make([]providers.Resource, 0, len(order))
	for _, name := range order {
		if rs := found[name]; len(rs) == 1 {
			out = append(out, rs[0])
		} else {
			out = append(out, providers.Resource{Name: name, Region: region})
		}
	}
	return out, nil
}

// eachRecord calls fn with every record set of the zone id.
func (d *records) eachRecord(ctx context.Context, c *route53.Client, region, id string, fn func(r53types.ResourceRecordSet)) error {
	in := &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(id)}
	if d.pageSize > 0 {
		in.MaxItems = aws.Int32(d.pageSize)
	}
	err := eachPage(ctx, route53.NewListResourceRecordSetsPaginator(c, in), spec.Route53Record, region,
		func(page *route53.ListResourceRecordSetsOutput) error {
			for _, rr := range page.ResourceRecordSets {
				fn(rr)
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("aws/route53-record: ListResourceRecordSets of zone %s: %w", id, err)
	}
	return nil
}

// located is a record set with the zone that holds it.
type located struct {
	zone, domain string
	rr           r53types.ResourceRecordSet
}

// locate finds the record set n in the public zones whose domain n's FQDN
// is or ends in (a zone's own apex NS aside): NotFound in none, Conflict
// in several.
func (d *records) locate(ctx context.Context, c *route53.Client, region string, n recordName) (located, error) {
	labels := strings.Split(n.fqdn, ".")
	if labels[0] == "*" {
		labels = labels[1:] // no zone is named for a wildcard
	}
	var found []located
	for i := range labels {
		domain := strings.Join(labels[i:], ".")
		if n.typ == r53types.RRTypeNs && domain == n.fqdn {
			continue // the zone's own NS, not a record of this kind
		}
		z, err := oneZone(ctx, c, spec.Route53Record, region, domain)
		if errorCode(err) == providers.NotFound {
			continue
		}
		if err != nil {
			return located{}, fmt.Errorf("aws/route53-record: %s: %w", n, err)
		}
		id := zoneID(z.Id)
		rr, err := recordSet(ctx, c, n.String(), id, n.fqdn, n.typ)
		if err != nil {
			return located{}, err
		}
		if rr != nil {
			found = append(found, located{zone: id, domain: domain, rr: *rr})
		}
	}
	switch len(found) {
	case 0:
		return located{}, providers.Errorf(providers.NotFound, "aws/route53-record: %s: no such record in a public hosted zone of %s", n, n.fqdn)
	case 1:
		return found[0], nil
	}
	held := make([]string, len(found))
	for i, l := range found {
		held[i] = l.domain + " (" + l.zone + ")"
	}
	return located{}, providers.Errorf(providers.Conflict, "aws/route53-record: %s: the zones %s both hold it; keep it in one", n, strings.Join(held, " and "))
}

// recordSet is the record set named fqdn of type typ in the zone id, nil
// when there is none; one with a routing policy is a conflict. name is the
// address's, for errors.
func recordSet(ctx context.Context, c *route53.Client, name, id, fqdn string, typ r53types.RRType) (*r53types.ResourceRecordSet, error) {
	out, err := c.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(id),
		StartRecordName: aws.String(fqdn), StartRecordType: typ, MaxItems: aws.Int32(1)})
	if err != nil {
		return nil, fmt.Errorf("aws/route53-record: %s: ListResourceRecordSets of zone %s: %w", name, id, err)
	}
	if len(out.ResourceRecordSets) == 0 {
		return nil, nil
	}
	rr := out.ResourceRecordSets[0]
	if dnsName(aws.ToString(rr.Name)) != fqdn || rr.Type != typ {
		return nil, nil
	}
	if rr.SetIdentifier != nil {
		return nil, providers.Errorf(providers.Conflict, "aws/route53-record: %s: the zone %s holds %s:%s with a routing policy (set identifier %q), which this kind does not manage",
			name, id, fqdn, typ, aws.ToString(rr.SetIdentifier))
	}
	return &rr, nil
}

// claim is what says whose a record is, in one zone: the record set and
// its companion, each nil when absent, and the fleet they make its owner.
type claim struct {
	rr, companion *r53types.ResourceRecordSet
	owner         string
}

// claimOf reads whose n is in the zone id, given its record set rr (nil
// when absent): the fleet its companion names; without one, its zone's
// owner, as before companions; neither's when neither is there.
func claimOf(ctx context.Context, c *route53.Client, n recordName, id string, rr *r53types.ResourceRecordSet) (claim, error) {
	cl := claim{rr: rr}
	if name := companionName(n); checkDomain(name, false) == "" { // else no companion can exist
		comp, err := recordSet(ctx, c, n.String(), id, name, r53types.RRTypeTxt)
		if err != nil {
			return cl, err
		}
		if comp != nil {
			cl.companion, cl.owner = comp, companionOwner(*comp)
			return cl, nil
		}
	}
	if rr != nil {
		tags, err := zoneTags(ctx, c, spec.Route53Record, n.String(), id)
		if err != nil {
			return cl, err
		}
		cl.owner = tags[spec.OwnershipTagKey]
	}
	return cl, nil
}

// says is what a claim's mark says, for a refusal.
func (cl claim) says() string {
	switch {
	case cl.companion != nil && cl.owner == "":
		return "has a companion " + dnsName(aws.ToString(cl.companion.Name)) + " that names no fleet"
	case cl.companion != nil:
		return "is fleet " + cl.owner + "'s, as its companion " + dnsName(aws.ToString(cl.companion.Name)) + " says"
	case cl.owner == "":
		return "has no companion, and its zone carries no " + spec.OwnershipTagKey + " tag"
	}
	return "has no companion, so it is its zone's fleet's, " + cl.owner + "'s"
}

func (d *records) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	n, err := parseRecordName(name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(region)
	l, err := d.locate(ctx, c, region, n)
	if err != nil {
		return providers.Resource{}, err
	}
	cl, err := claimOf(ctx, c, n, l.zone, &l.rr)
	if err != nil {
		return providers.Resource{}, err
	}
	return recordResource(region, name, l.zone, cl.owner, l.rr), nil
}

// Create writes the record set and its companion in one batch of two
// CREATEs: Route 53 makes all of a batch or none, so the record is never
// there unmarked, and a CREATE fails where a record set of the name
// already is. It looks first, since an emulator may not refuse, and to say
// whose the name is: a record already there is AlreadyExists (the engine
// reads it, and finishes it when it is the fleet's). A companion of the
// fleet's whose record is gone (deleted by hand) is rewritten in the
// batch; another fleet's is refused.
func (d *records) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	w, err := d.prepare(ctx, t)
	if err != nil {
		return providers.Resource{}, err
	}
	n, c, id, cl := w.n, w.c, w.zone, w.claim
	switch {
	case cl.rr != nil:
		return providers.Resource{}, providers.Errorf(providers.AlreadyExists, "aws/route53-record: %s: the zone %s holds it already; it %s", t.Name, id, cl.says())
	case cl.companion != nil && cl.owner != t.Owner:
		return providers.Resource{}, providers.Errorf(providers.PermissionDenied,
			"aws/route53-record: %s: the record is gone but its companion %s is there and names %q, not %s: delete the companion by hand to free the name",
			t.Name, dnsName(aws.ToString(cl.companion.Name)), cl.owner, t.Owner)
	}
	set, mark := desired(n, w.in), companionSet(n, t.Owner)
	changes := []r53types.Change{{Action: r53types.ChangeActionCreate, ResourceRecordSet: &set}, {Action: r53types.ChangeActionCreate, ResourceRecordSet: &mark}}
	if cl.companion != nil {
		changes[1].Action = r53types.ChangeActionUpsert
	}
	if err := d.change(ctx, c, t.Name, id, "create", changes); err != nil {
		if errorCode(err) == providers.InvalidArgument && strings.Contains(err.Error(), "already exists") {
			// The batch's own retry, after Route 53 made it, or a rival's.
			return providers.Resource{}, coded(providers.AlreadyExists, err, "aws/route53-record: %s", t.Name)
		}
		return providers.Resource{}, err
	}
	return recordResource(t.Region, t.Name, id, t.Owner, set), nil
}

// Update writes the whole record set again (UPSERT): its mutable fields
// are one record set. A record without a companion gets one in the same
// batch. A record another fleet's mark names is refused; one no mark names
// is the engine's to adopt.
func (d *records) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	for _, f := range changed {
		if f == providers.Route53RecordZone {
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: field %q cannot be updated in place", t.Name, f)
		}
	}
	w, err := d.prepare(ctx, t)
	if err != nil {
		return providers.Resource{}, err
	}
	n, c, id, cl := w.n, w.c, w.zone, w.claim
	if cl.owner != t.Owner && (cl.owner != "" || cl.companion != nil) {
		return providers.Resource{}, providers.Errorf(providers.PermissionDenied, "aws/route53-record: %s: it %s; infra changes only its fleet's records", t.Name, cl.says())
	}
	set := desired(n, w.in)
	changes := []r53types.Change{{Action: r53types.ChangeActionUpsert, ResourceRecordSet: &set}}
	if cl.companion == nil {
		mark := companionSet(n, t.Owner)
		changes = append(changes, r53types.Change{Action: r53types.ChangeActionCreate, ResourceRecordSet: &mark})
	}
	if err := d.change(ctx, c, t.Name, id, "update", changes); err != nil {
		return providers.Resource{}, err
	}
	return recordResource(t.Region, t.Name, id, t.Owner, set), nil
}

// write is what a create or an update writes, and where: the record, its
// zone's id, and whose the name is there now.
type write struct {
	n     recordName
	in    providers.Route53RecordInput
	c     *route53.Client
	zone  string
	claim claim
}

// prepare checks a create's or an update's target before any call, finds
// its zone and reads the claim on the name there. The zone is the id the
// engine passed for the zone's address (one this run observed, or another
// fleet's zone wired in), else the public zone of that domain; it may be
// any fleet's: the record's mark is its own.
func (d *records) prepare(ctx context.Context, t providers.Target) (write, error) {
	n, in, err := d.target(t)
	if err != nil {
		return write{}, err
	}
	if t.Owner == "" {
		return write{}, providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: a change needs the fleet its companion names", t.Name)
	}
	w := write{n: n, in: in, c: d.clients.get(t.Region), zone: t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.Route53Zone, Name: in.Zone}]}
	if wiredZone(t, in.Zone) {
		z, err := w.c.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(in.Zone)})
		if err != nil {
			return write{}, fmt.Errorf("aws/route53-record: %s: GetHostedZone %s: %w", t.Name, in.Zone, err)
		}
		if err := inZone(t.Name, n, dnsName(aws.ToString(z.HostedZone.Name))); err != nil {
			return write{}, err
		}
	}
	if w.zone == "" {
		z, err := oneZone(ctx, w.c, spec.Route53Record, t.Region, in.Zone)
		if err != nil {
			return write{}, fmt.Errorf("aws/route53-record: %s: %w", t.Name, err)
		}
		w.zone = zoneID(z.Id)
	}
	rr, err := recordSet(ctx, w.c, t.Name, w.zone, n.fqdn, n.typ)
	if err != nil {
		return write{}, err
	}
	w.claim, err = claimOf(ctx, w.c, n, w.zone, rr)
	return w, err
}

// change sends one batch of the zone and waits until every Route 53 name
// server serves it.
func (d *records) change(ctx context.Context, c *route53.Client, name, zone, what string, changes []r53types.Change) error {
	out, err := c.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zone),
		ChangeBatch: &r53types.ChangeBatch{Changes: changes, Comment: aws.String("infra: " + what + " " + name)}})
	if err != nil {
		return fmt.Errorf("aws/route53-record: %s: ChangeResourceRecordSets (%s): %w", name, what, err)
	}
	return waitInSync(ctx, c, spec.Route53Record, name, out.ChangeInfo)
}

// Delete deletes the record set and its companion in one batch of DELETEs,
// each carrying the set exactly as Route 53 holds it, which a DELETE must
// (and all the sweep's role may send). Only a record whose mark names
// t.Owner is deleted.
func (d *records) Delete(ctx context.Context, t providers.Target) error {
	n, err := parseRecordName(t.Name)
	if err != nil {
		return err
	}
	c := d.clients.get(t.Region)
	l, err := d.locate(ctx, c, t.Region, n)
	if err != nil {
		return err
	}
	cl, err := claimOf(ctx, c, n, l.zone, &l.rr)
	if err != nil {
		return err
	}
	if cl.owner != t.Owner {
		return providers.Errorf(providers.PermissionDenied, "aws/route53-record: %s: it %s; infra deletes only its fleet's records", t.Name, cl.says())
	}
	changes := []r53types.Change{{Action: r53types.ChangeActionDelete, ResourceRecordSet: &l.rr}}
	if cl.companion != nil {
		changes = append(changes, r53types.Change{Action: r53types.ChangeActionDelete, ResourceRecordSet: cl.companion})
	}
	return d.change(ctx, c, t.Name, l.zone, "delete", changes)
}

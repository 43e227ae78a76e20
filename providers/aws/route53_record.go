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
// mark is its zone's (spec.MarkHolder): the record is the fleet whose
// zone's ownership tag names it. The zone is the public zone whose domain
// the FQDN is or ends in; a record Route 53 holds in two such zones (a
// parent's and a delegated child's) is a conflict, never a guess.
type records struct {
	clients  *regional[*route53.Client]
	pageSize int32 // ListResourceRecordSets' MaxItems; 0 for the service's default
}

var _ providers.Driver = (*records)(nil)

func init() {
	sweep := *route53Sweep
	// A record is deleted by a DELETE change, and the sweep may make no
	// other.
	sweep.Deletes = []string{"route53:ChangeResourceRecordSets"}
	sweep.Only = map[string]map[string]any{"ForAllValues:StringEquals": {"route53:ChangeResourceRecordSetsActions": "DELETE"}}
	register(entry{
		kind: spec.Route53Record, service: "route53",
		actions: []string{"route53:ListHostedZones", "route53:ListHostedZonesByName", "route53:ListTagsForResource",
			"route53:ListTagsForResources", "route53:ListResourceRecordSets", "route53:ChangeResourceRecordSets", "route53:GetChange"},
		scopes: map[string][]ActionScope{
			"route53:ListResourceRecordSets":   route53Any,
			"route53:ChangeResourceRecordSets": route53Changes,
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
	return n, nil
}

// target decodes and checks a record's target before any call: the name,
// the zone it must lie in, and values or an alias, never both.
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
	switch {
	case !in.HasZone():
		return n, in, refuse("the zone is missing")
	case n.fqdn != in.Zone && !strings.HasSuffix(n.fqdn, "."+in.Zone):
		return n, in, refuse("%s is not in the zone %s: a record's FQDN is its zone's domain or ends in it", n.fqdn, in.Zone)
	case n.typ == r53types.RRTypeNs && n.fqdn == in.Zone:
		return n, in, refuse("the NS record at a zone's apex is the zone's own, which Route 53 makes")
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

// List reports the records of every public zone, each with its zone's
// owner, complete. Left out: a zone's own SOA and NS at its apex; records
// with a routing policy (a set identifier), which FQDN:TYPE cannot tell
// apart; and names an address could not read back (an escaped character,
// a capital). A name Route 53 holds in two zones is listed once,
// incomplete, so that its read says what is wrong.
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
	found := map[string][]providers.Resource{}
	var order []string
	for _, z := range zs {
		domain, id := dnsName(aws.ToString(z.Name)), zoneID(z.Id)
		err := d.eachRecord(ctx, c, region, id, func(rr r53types.ResourceRecordSet) {
			fqdn := dnsName(aws.ToString(rr.Name))
			apex := fqdn == domain && (rr.Type == r53types.RRTypeNs || rr.Type == r53types.RRTypeSoa)
			if apex || rr.SetIdentifier != nil || checkDomain(fqdn, true) != "" || rr.Type == r53types.RRTypeSoa {
				return
			}
			name := recordName{fqdn: fqdn, typ: rr.Type}.String()
			if _, seen := found[name]; !seen {
				order = append(order, name)
			}
			found[name] = append(found[name], recordResource(region, name, id, owners[id], rr))
		})
		if err != nil {
			return nil, err
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
		out, err := c.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(id),
			StartRecordName: aws.String(n.fqdn), StartRecordType: n.typ, MaxItems: aws.Int32(1)})
		if err != nil {
			return located{}, fmt.Errorf("aws/route53-record: %s: ListResourceRecordSets of zone %s: %w", n, id, err)
		}
		if len(out.ResourceRecordSets) == 0 {
			continue
		}
		rr := out.ResourceRecordSets[0]
		if dnsName(aws.ToString(rr.Name)) != n.fqdn || rr.Type != n.typ {
			continue
		}
		if rr.SetIdentifier != nil {
			return located{}, providers.Errorf(providers.Conflict, "aws/route53-record: %s: the zone %s holds it with a routing policy (set identifier %q), which this kind does not manage",
				n, id, aws.ToString(rr.SetIdentifier))
		}
		found = append(found, located{zone: id, domain: domain, rr: rr})
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
	tags, err := zoneTags(ctx, c, spec.Route53Record, name, l.zone)
	if err != nil {
		return providers.Resource{}, err
	}
	return recordResource(region, name, l.zone, tags[spec.OwnershipTagKey], l.rr), nil
}

// ownerOf checks that the zone id carries the mark of owner, the fleet a
// change is for: IAM cannot hold Route 53 to the ownership tag, so the
// driver does. A record in a zone another fleet owns, or none does, is
// never touched.
func ownerOf(ctx context.Context, c *route53.Client, name, domain, id, owner string) error {
	tags, err := zoneTags(ctx, c, spec.Route53Record, name, id)
	if err != nil {
		return err
	}
	if mark := tags[spec.OwnershipTagKey]; mark != owner {
		return providers.Errorf(providers.PermissionDenied, "aws/route53-record: %s: the zone %s (%s) %s; infra changes records only in zones its fleet owns",
			name, domain, id, markSays(mark))
	}
	return nil
}

func markSays(mark string) string {
	if mark == "" {
		return "carries no " + spec.OwnershipTagKey + " tag"
	}
	return "is tagged " + spec.OwnershipTagKey + "=" + mark
}

// Create writes the record set with UPSERT, as Update does: in a zone of
// this fleet's, a record of the name is the fleet's already.
func (d *records) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	return d.put(ctx, t)
}

// Update writes the whole record set again (UPSERT): its mutable fields
// are one record set.
func (d *records) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	for _, f := range changed {
		if f == providers.Route53RecordZone {
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: field %q cannot be updated in place", t.Name, f)
		}
	}
	return d.put(ctx, t)
}

func (d *records) put(ctx context.Context, t providers.Target) (providers.Resource, error) {
	n, in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if t.Owner == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/route53-record: %s: a change needs the fleet whose zone it is", t.Name)
	}
	c := d.clients.get(t.Region)
	id := t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.Route53Zone, Name: in.Zone}]
	if id == "" {
		z, err := oneZone(ctx, c, spec.Route53Record, t.Region, in.Zone)
		if err != nil {
			return providers.Resource{}, fmt.Errorf("aws/route53-record: %s: %w", t.Name, err)
		}
		id = zoneID(z.Id)
	}
	if err := ownerOf(ctx, c, t.Name, in.Zone, id, t.Owner); err != nil {
		return providers.Resource{}, err
	}
	rr := desired(n, in)
	if err := d.change(ctx, c, t.Name, id, r53types.ChangeActionUpsert, rr); err != nil {
		return providers.Resource{}, err
	}
	return recordResource(t.Region, t.Name, id, t.Owner, rr), nil
}

// change sends one change of the zone and waits until every Route 53 name
// server serves it.
func (d *records) change(ctx context.Context, c *route53.Client, name, zone string, action r53types.ChangeAction, rr r53types.ResourceRecordSet) error {
	out, err := c.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zone),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: action, ResourceRecordSet: &rr}},
			Comment: aws.String("infra: " + strings.ToLower(string(action)) + " " + name)}})
	if err != nil {
		return fmt.Errorf("aws/route53-record: %s: ChangeResourceRecordSets (%s): %w", name, action, err)
	}
	return waitInSync(ctx, c, spec.Route53Record, name, out.ChangeInfo)
}

// Delete deletes the record set with a DELETE change carrying it exactly
// as Route 53 holds it, which a DELETE must.
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
	if err := ownerOf(ctx, c, t.Name, l.domain, l.zone, t.Owner); err != nil {
		return err
	}
	return d.change(ctx, c, t.Name, l.zone, r53types.ChangeActionDelete, l.rr)
}

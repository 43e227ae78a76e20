package aws

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// zones is the route53-zone kind: a Route 53 public hosted zone, named by
// its domain (lowercase, no trailing dot). Route 53 is global: a listing in
// any region shows every zone of the account, reported in the region
// asked.
type zones struct {
	clients  *regional[*route53.Client]
	pageSize int32 // ListHostedZones' MaxItems; 0 for the service's default
}

var (
	_ providers.Driver       = (*zones)(nil)
	_ providers.Releaser     = (*zones)(nil)
	_ providers.ListedReader = (*zones)(nil)
)

// zoneCommentMax is HostedZoneConfig.Comment's most (the API reference).
const zoneCommentMax = 256

func init() {
	register(entry{
		kind: spec.Route53Zone, service: "route53",
		// CreateHostedZone also needs ec2:DescribeVpcs of its caller (the
		// API reference says so of every CreateHostedZone request).
		actions: []string{"route53:ListHostedZones", "route53:ListHostedZonesByName", "route53:GetHostedZone",
			"route53:ListTagsForResource", "route53:ListTagsForResources", "route53:CreateHostedZone", "ec2:DescribeVpcs",
			"route53:ChangeTagsForResource", "route53:UpdateHostedZoneComment", "route53:GetChange", "route53:DeleteHostedZone"},
		scopes: map[string][]ActionScope{
			"route53:ListHostedZones":       route53Any,
			"route53:ListHostedZonesByName": route53Any,
			"route53:GetHostedZone":         route53Any,
			"route53:ListTagsForResource":   route53Any,
			"route53:ListTagsForResources":  route53Any,
			"route53:GetChange":             route53Any,
			"route53:CreateHostedZone": {{Scope: ScopeAny, Why: "CreateHostedZone takes no tags and Route 53 has no aws:RequestTag key: " +
				"the zone is tagged by the call after, and a domain that has a public zone already is refused before it"}},
			"route53:ChangeTagsForResource":   route53Changes,
			"route53:UpdateHostedZoneComment": route53Changes,
			"route53:DeleteHostedZone":        route53Changes,
		},
		arnFormat: "arn:{partition}:route53:::hostedzone/{id}",
		sweep:     route53Sweep,
		// Route 53 is global, and the Tagging API regional: the scan of a
		// plan's regions does not find zones (the emulator's serves no
		// Route 53 at all). A deep scan lists and reads them.
		deepScan: true,
		errors:   route53Errors,
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &zones{clients: newRoute53(cfg)}
		},
	})
}

// target decodes and checks a zone's target before any call.
func (d *zones) target(t providers.Target) (providers.Route53ZoneInput, error) {
	in, err := providers.DecodeRoute53Zone(t.Fields)
	if err != nil {
		return in, providers.Errorf(providers.InvalidArgument, "aws/route53-zone: %s: %v", t.Name, err)
	}
	if len(in.Comment) > zoneCommentMax {
		return in, providers.Errorf(providers.InvalidArgument, "aws/route53-zone: %s: the comment is %d characters; Route 53 keeps at most %d",
			t.Name, len(in.Comment), zoneCommentMax)
	}
	return in, nil
}

func checkZoneName(name string) error {
	if why := checkDomain(name, false); why != "" {
		return providers.Errorf(providers.InvalidArgument, "aws/route53-zone: %s: %s", name, why)
	}
	return nil
}

// List is not complete: ListHostedZones carries the comment but not the
// name servers; the tags (and so the owners) come from
// ListTagsForResources, ten zones a call. A domain held by several zones
// is listed once, without an owner, so that its read says what is wrong.
func (d *zones) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.clients.get(region)
	zs, err := publicZones(ctx, c, spec.Route53Zone, region, d.pageSize)
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	ids := make([]string, 0, len(zs))
	for _, z := range zs {
		count[dnsName(aws.ToString(z.Name))]++
		ids = append(ids, zoneID(z.Id))
	}
	tags, err := zoneTagSets(ctx, c, spec.Route53Zone, region, ids)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, z := range zs {
		name, id := dnsName(aws.ToString(z.Name)), zoneID(z.Id)
		switch n := count[name]; {
		case n == 0:
			continue // listed already
		case n > 1:
			out = append(out, providers.Resource{Name: name, Region: region})
		default:
			r := zoneResource(region, name, id, zoneComment(&z), nil, tags[id])
			delete(r.Attributes, "nameServers") // not in the listing
			out = append(out, r)
		}
		count[name] = 0
	}
	return out, nil
}

// ReadListed finishes a zone the listing reported with its comment and
// tags: the name servers, which only GetHostedZone reports, are read only
// when something reads them. A domain the listing found held by several
// zones is read, which says so.
func (d *zones) ReadListed(ctx context.Context, listed providers.Resource, _ map[string]string) (providers.Resource, error) {
	id := listed.Attributes["zoneId"]
	if id == "" {
		return d.Read(ctx, listed.Region, listed.Name)
	}
	if !providers.WantsAttribute(ctx, "nameServers") {
		return listed, nil
	}
	got, err := d.clients.get(listed.Region).GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(id)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/route53-zone: %s: GetHostedZone: %w", listed.Name, err)
	}
	res := listed
	res.Attributes = maps.Clone(listed.Attributes)
	var servers []string
	if got.DelegationSet != nil {
		servers = got.DelegationSet.NameServers
	}
	res.Attributes["nameServers"] = strings.Join(servers, ",")
	return res, nil
}

func (d *zones) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	z, err := oneZone(ctx, c, spec.Route53Zone, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	id := zoneID(z.Id)
	got, err := c.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(id)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/route53-zone: %s: GetHostedZone: %w", name, err)
	}
	tags, err := zoneTags(ctx, c, spec.Route53Zone, name, id)
	if err != nil {
		return providers.Resource{}, err
	}
	var servers []string
	if got.DelegationSet != nil {
		servers = got.DelegationSet.NameServers
	}
	return zoneResource(region, name, id, zoneComment(got.HostedZone), servers, tags), nil
}

func zoneComment(z *r53types.HostedZone) string {
	if z == nil || z.Config == nil {
		return ""
	}
	return aws.ToString(z.Config.Comment)
}

// zoneResource is a zone as a read or a create reports it.
func zoneResource(region, name, id, comment string, servers []string, tags map[string]string) providers.Resource {
	return providers.Resource{Name: name, Region: region, Owner: tags[spec.OwnershipTagKey],
		Fields: map[string]any{providers.Route53ZoneComment: comment, spec.TagsField: reportedTags(tags)},
		Attributes: map[string]string{"zoneId": id, "arn": zoneARN(region, id),
			"nameServers": strings.Join(servers, ",")}}
}

// Create makes the zone, then tags it: CreateHostedZone takes no tags.
// Between the two calls the zone exists unmarked. Its CallerReference is
// unique to this create (Route 53 refuses a reference used before, even
// by a deleted zone), so an SDK retry of a create Route 53 carried out
// fails with HostedZoneAlreadyExists: that is this create, found by its
// reference and tagged. A run that stopped between the two calls left the
// intent to create in the ledger; the next run claims the unmarked zone by
// it and tags it (engine: claimed). A zone of the name that exists already
// is AlreadyExists, never a second zone.
func (d *zones) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if err := checkZoneName(t.Name); err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	if zs, err := zonesNamed(ctx, c, spec.Route53Zone, t.Region, t.Name); err != nil {
		return providers.Resource{}, err
	} else if len(zs) > 0 {
		return providers.Resource{}, providers.Errorf(providers.AlreadyExists, "aws/route53-zone: %s: a public hosted zone of that name exists (%s)", t.Name, zoneIDs(zs))
	}
	ref, err := callerReference(t.Owner)
	if err != nil {
		return providers.Resource{}, err
	}
	create := &route53.CreateHostedZoneInput{Name: aws.String(t.Name), CallerReference: aws.String(ref)}
	if in.Comment != "" {
		create.HostedZoneConfig = &r53types.HostedZoneConfig{Comment: aws.String(in.Comment)}
	}
	var id string
	var servers []string
	var change *r53types.ChangeInfo
	out, err := c.CreateHostedZone(ctx, create)
	switch {
	case errorCode(err) == providers.AlreadyExists:
		// The reference is this call's own: the SDK retried a create that
		// Route 53 had carried out.
		z, ferr := zoneByReference(ctx, c, t.Region, t.Name, ref)
		if ferr != nil {
			return providers.Resource{}, fmt.Errorf("aws/route53-zone: %s: CreateHostedZone: %w (%v)", t.Name, err, ferr)
		}
		id = zoneID(z.Id)
	case err != nil:
		return providers.Resource{}, fmt.Errorf("aws/route53-zone: %s: CreateHostedZone: %w", t.Name, err)
	default:
		id, change = zoneID(out.HostedZone.Id), out.ChangeInfo
		if out.DelegationSet != nil {
			servers = out.DelegationSet.NameServers
		}
	}
	if err := d.changeTags(ctx, c, t.Name, id, tags, nil); err != nil {
		return providers.Resource{}, err
	}
	if err := waitInSync(ctx, c, spec.Route53Zone, t.Name, change); err != nil {
		return providers.Resource{}, err
	}
	if servers == nil {
		return d.Read(ctx, t.Region, t.Name)
	}
	return zoneResource(t.Region, t.Name, id, in.Comment, servers, tags), nil
}

// callerReference is a create's CallerReference: the fleet, for whoever
// reads the zone, and random bytes, since Route 53 never takes a reference
// twice (a zone made again after a delete needs a new one).
func callerReference(owner string) (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "infra/" + owner + "/" + hex.EncodeToString(b), nil
}

// zoneByReference is the zone named name that the create with reference
// ref made.
func zoneByReference(ctx context.Context, c *route53.Client, region, name, ref string) (r53types.HostedZone, error) {
	zs, err := zonesNamed(ctx, c, spec.Route53Zone, region, name)
	if err != nil {
		return r53types.HostedZone{}, err
	}
	for _, z := range zs {
		if aws.ToString(z.CallerReference) == ref {
			return z, nil
		}
	}
	return r53types.HostedZone{}, fmt.Errorf("no zone named %s was made with the caller reference %s", name, ref)
}

// changeTags sets tags and removes keys, ten of each to a call
// (ChangeTagsForResource's most).
func (d *zones) changeTags(ctx context.Context, c *route53.Client, name, id string, set map[string]string, remove []string) error {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for len(keys) > 0 || len(remove) > 0 {
		in := &route53.ChangeTagsForResourceInput{ResourceId: aws.String(id), ResourceType: r53types.TagResourceTypeHostedzone}
		for _, k := range keys[:min(10, len(keys))] {
			in.AddTags = append(in.AddTags, r53types.Tag{Key: aws.String(k), Value: aws.String(set[k])})
		}
		in.RemoveTagKeys = remove[:min(10, len(remove))]
		keys, remove = keys[len(in.AddTags):], remove[len(in.RemoveTagKeys):]
		if _, err := c.ChangeTagsForResource(ctx, in); err != nil {
			return fmt.Errorf("aws/route53-zone: %s: ChangeTagsForResource: %w", name, err)
		}
	}
	return nil
}

// owned is the zone's id and tags, once its mark is known not to name
// another fleet than owner's: IAM cannot hold Route 53 to the ownership
// tag, so the driver does. An unmarked zone passes: it is a create this
// fleet is finishing, or one the document adopts.
func (d *zones) owned(ctx context.Context, c *route53.Client, t providers.Target) (string, map[string]string, error) {
	id := t.Attributes["zoneId"]
	if id == "" {
		z, err := oneZone(ctx, c, spec.Route53Zone, t.Region, t.Name)
		if err != nil {
			return "", nil, err
		}
		id = zoneID(z.Id)
	}
	tags, err := zoneTags(ctx, c, spec.Route53Zone, t.Name, id)
	if err != nil {
		return "", nil, err
	}
	if mark := tags[spec.OwnershipTagKey]; mark != "" && t.Owner != "" && mark != t.Owner {
		return "", nil, providers.Errorf(providers.PermissionDenied, "aws/route53-zone: %s: the zone %s is tagged %s=%s, not this fleet's",
			t.Name, id, spec.OwnershipTagKey, mark)
	}
	return id, tags, nil
}

func (d *zones) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	id, have, err := d.owned(ctx, c, t)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, f := range changed {
		switch f {
		case providers.Route53ZoneComment:
			// An absent comment is how UpdateHostedZoneComment removes one.
			up := &route53.UpdateHostedZoneCommentInput{Id: aws.String(id)}
			if in.Comment != "" {
				up.Comment = aws.String(in.Comment)
			}
			if _, err = c.UpdateHostedZoneComment(ctx, up); err != nil {
				err = fmt.Errorf("aws/route53-zone: %s: UpdateHostedZoneComment: %w", t.Name, err)
			}
		case providers.Route53ZoneTags:
			var want map[string]string
			if want, err = desiredTags(t); err == nil {
				set, remove := tagChanges(have, want, spec.OwnershipTagKey)
				err = d.changeTags(ctx, c, t.Name, id, set, remove)
			}
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/route53-zone: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// Delete deletes the zone, which Route 53 refuses while it holds records
// other than its own SOA and NS (or DNSSEC signing is on). The zone is
// gone from the API at once; there is nothing to wait for.
func (d *zones) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	id, _, err := d.owned(ctx, c, t)
	if err != nil {
		return err
	}
	_, err = c.DeleteHostedZone(ctx, &route53.DeleteHostedZoneInput{Id: aws.String(id)})
	if isCode(err, "HostedZoneNotEmpty") {
		return providers.Errorf(providers.Conflict, "aws/route53-zone: %s: DeleteHostedZone: the zone %s still holds records other than its SOA and NS "+
			"(or has DNSSEC signing on): delete them first, or declare them as route53-record so that infra deletes them before the zone: %v", t.Name, id, err)
	}
	if err != nil {
		return fmt.Errorf("aws/route53-zone: %s: DeleteHostedZone: %w", t.Name, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
// The zone's records are released with it: their mark is the zone's.
func (d *zones) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	z, err := oneZone(ctx, c, spec.Route53Zone, region, name)
	if err != nil {
		return err
	}
	id := zoneID(z.Id)
	tags, err := zoneTags(ctx, c, spec.Route53Zone, name, id)
	if err != nil {
		return err
	}
	if tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	return d.changeTags(ctx, c, name, id, nil, []string{spec.OwnershipTagKey})
}

package aws

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// What the route53-zone and route53-record drivers share: Route 53 is one
// global service, whose zones both kinds find by domain, whose changes both
// wait for, and whose IAM actions no tag condition can limit.

// whyRoute53 says why a Route 53 change is granted on every hosted zone:
// the Service Authorization Reference gives Route 53 no condition key for a
// zone's tags or a request's (its only keys are on a change batch's record
// names, types and actions, and on VPCs), so a tag condition would never
// hold. The drivers read the zone's ownership tag before each change
// instead, and refuse a zone another fleet's mark names.
const whyRoute53 = noRoute53Conditions + ": the driver reads the zone's ownership tag first and refuses a zone another fleet's mark names"

// noRoute53Conditions is why no IAM condition can hold a Route 53 change.
const noRoute53Conditions = "Route 53 has no condition key for a hosted zone's tags or a request's (Service Authorization Reference)"

// route53Any is the scope of a Route 53 read; route53Changes of a change.
var (
	route53Any     = []ActionScope{{Scope: ScopeAny}}
	route53Changes = []ActionScope{{Scope: ScopeAny, Why: whyRoute53}}
)

// route53Sweep is how the sweep's role reaches Route 53 debris: a zone's
// ARN holds its id, and Route 53 has no condition key for a name or a tag,
// so the role may delete in every hosted zone; the sweep's own rules (the
// name's prefix, the age, another fleet's mark) keep it to debris.
var route53Sweep = &SweepTarget{ARNs: []string{"arn:{partition}:route53:::hostedzone/*"},
	Why: "a zone's ARN holds its id, and Route 53 has no condition key for a zone's name or tags: " +
		"the sweep's own rules keep it to names with the prefix"}

// route53Errors are Route 53's own error codes.
var route53Errors = map[string]providers.Code{
	"NoSuchHostedZone": providers.NotFound, "HostedZoneNotFound": providers.NotFound,
	"HostedZoneAlreadyExists": providers.AlreadyExists,
	"HostedZoneNotEmpty":      providers.Conflict, "ConflictingDomainExists": providers.Conflict,
	"TooManyHostedZones": providers.Conflict,
	// Route 53 still processes an earlier change of the zone; the SDK
	// retries it as throttling.
	"PriorRequestNotComplete": providers.Throttled,
	"InvalidChangeBatch":      providers.InvalidArgument, "InvalidInput": providers.InvalidArgument,
	"InvalidDomainName": providers.InvalidArgument, "InvalidArgument": providers.InvalidArgument,
}

func newRoute53(cfg aws.Config) *regional[*route53.Client] {
	return newRegional(cfg, func(c aws.Config) *route53.Client { return route53.NewFromConfig(c) })
}

// zoneID is a hosted zone's id without the "/hostedzone/" Route 53 puts
// before it in some answers.
func zoneID(id *string) string { return strings.TrimPrefix(aws.ToString(id), "/hostedzone/") }

// zoneARN is a hosted zone's ARN, which names neither region nor account.
func zoneARN(region, id string) string {
	return "arn:" + Partition(region) + ":route53:::hostedzone/" + id
}

// dnsName is a name as Route 53 writes it, less the trailing dot, with its
// octal escapes (\052 for a wildcard's '*') read back.
func dnsName(s string) string {
	s = strings.TrimSuffix(s, ".")
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// checkDomain refuses, before any call, a domain Route 53 would store
// otherwise than it is written, so that what it reports names the same
// address: lowercase labels of letters, digits, '-' and '_', at most 63
// characters each and 253 in all, no trailing dot. A record's name may
// start with the wildcard label '*'.
func checkDomain(name string, wildcard bool) string {
	if name == "" || len(name) > 253 {
		return "a domain is 1–253 characters"
	}
	for i, label := range strings.Split(name, ".") {
		if label == "*" && i == 0 && wildcard {
			continue
		}
		if label == "" || len(label) > 63 {
			return "each label of a domain is 1–63 characters, with no trailing dot"
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Sprintf("the label %q holds %q: a domain here is lowercase letters, digits, '-' and '_' (an internationalized one in its xn-- form)", label, r)
			}
		}
	}
	return ""
}

// zonesNamed lists the public hosted zones named domain: usually one, but
// Route 53 lets an account make several. ListHostedZonesByName starts at
// domain and sorts by name, so the listing stops at the first other name.
func zonesNamed(ctx context.Context, c *route53.Client, k spec.Kind, region, domain string) ([]r53types.HostedZone, error) {
	var out []r53types.HostedZone
	in := &route53.ListHostedZonesByNameInput{DNSName: aws.String(domain + ".")}
	for pages := 0; ; pages++ {
		if pages == listPageLimit {
			return nil, pageLimitError(k, region)
		}
		page, err := c.ListHostedZonesByName(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("aws/%s: %s: ListHostedZonesByName: %w", k, domain, err)
		}
		for _, z := range page.HostedZones {
			if dnsName(aws.ToString(z.Name)) != domain {
				return out, nil
			}
			if z.Config == nil || !z.Config.PrivateZone {
				out = append(out, z)
			}
		}
		if !page.IsTruncated {
			return out, nil
		}
		in.DNSName, in.HostedZoneId = page.NextDNSName, page.NextHostedZoneId
	}
}

// oneZone is the public hosted zone named domain: NotFound when there is
// none, Conflict naming every id when there are several, since infra
// cannot tell which one a name means.
func oneZone(ctx context.Context, c *route53.Client, k spec.Kind, region, domain string) (r53types.HostedZone, error) {
	zs, err := zonesNamed(ctx, c, k, region, domain)
	if err != nil {
		return r53types.HostedZone{}, err
	}
	switch len(zs) {
	case 0:
		return r53types.HostedZone{}, providers.Errorf(providers.NotFound, "aws/%s: %s: no public hosted zone of that name", k, domain)
	case 1:
		return zs[0], nil
	}
	return r53types.HostedZone{}, providers.Errorf(providers.Conflict,
		"aws/%s: %s: %d public hosted zones have that name (%s); infra manages a domain's zone only while it is the one: delete or rename the others",
		k, domain, len(zs), zoneIDs(zs))
}

func zoneIDs(zs []r53types.HostedZone) string {
	ids := make([]string, len(zs))
	for i, z := range zs {
		ids[i] = zoneID(z.Id)
	}
	return strings.Join(ids, ", ")
}

// zoneTags are a hosted zone's tags.
func zoneTags(ctx context.Context, c *route53.Client, k spec.Kind, name, id string) (map[string]string, error) {
	out, err := c.ListTagsForResource(ctx, &route53.ListTagsForResourceInput{ResourceId: aws.String(id), ResourceType: r53types.TagResourceTypeHostedzone})
	if err != nil {
		return nil, fmt.Errorf("aws/%s: %s: ListTagsForResource: %w", k, name, err)
	}
	tags := map[string]string{}
	if out.ResourceTagSet != nil {
		for _, t := range out.ResourceTagSet.Tags {
			tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
	}
	return tags, nil
}

// zoneOwners are the ownership marks of the zones ids, ten to a call
// (ListTagsForResources' most); a zone without one is absent.
func zoneOwners(ctx context.Context, c *route53.Client, k spec.Kind, region string, ids []string) (map[string]string, error) {
	sets, err := zoneTagSets(ctx, c, k, region, ids)
	if err != nil {
		return nil, err
	}
	owners := map[string]string{}
	for id, tags := range sets {
		if mark, ok := tags[spec.OwnershipTagKey]; ok {
			owners[id] = mark
		}
	}
	return owners, nil
}

// zoneTagSets are the tags of the zones ids, by id, ten zones a call
// (ListTagsForResources' most).
func zoneTagSets(ctx context.Context, c *route53.Client, k spec.Kind, region string, ids []string) (map[string]map[string]string, error) {
	sets := map[string]map[string]string{}
	for i := 0; i < len(ids); i += 10 {
		batch := ids[i:min(i+10, len(ids))]
		out, err := c.ListTagsForResources(ctx, &route53.ListTagsForResourcesInput{ResourceIds: batch, ResourceType: r53types.TagResourceTypeHostedzone})
		if err != nil {
			return nil, fmt.Errorf("aws/%s: ListTagsForResources in %s: %w", k, region, err)
		}
		for _, set := range out.ResourceTagSets {
			tags := map[string]string{}
			for _, t := range set.Tags {
				tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			sets[zoneID(set.ResourceId)] = tags
		}
	}
	return sets, nil
}

// publicZones lists every public hosted zone of the account.
func publicZones(ctx context.Context, c *route53.Client, k spec.Kind, region string, pageSize int32) ([]r53types.HostedZone, error) {
	in := &route53.ListHostedZonesInput{}
	if pageSize > 0 {
		in.MaxItems = aws.Int32(pageSize)
	}
	var out []r53types.HostedZone
	err := eachPage(ctx, route53.NewListHostedZonesPaginator(c, in), k, region, func(page *route53.ListHostedZonesOutput) error {
		for _, z := range page.HostedZones {
			if z.Config == nil || !z.Config.PrivateZone {
				out = append(out, z)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/%s: ListHostedZones in %s: %w", k, region, err)
	}
	return out, nil
}

// changeWait bounds the wait for a change to reach every Route 53 name
// server (INSYNC), which the API reference says takes about a minute;
// changePoll is the most time between two looks.
var (
	changeWait = 15 * time.Minute
	changePoll = 15 * time.Second
)

// waitInSync waits until the change is INSYNC: served by every Route 53
// name server. A change already INSYNC in its answer costs no call.
func waitInSync(ctx context.Context, c *route53.Client, k spec.Kind, name string, info *r53types.ChangeInfo) error {
	if info == nil || info.Status == r53types.ChangeStatusInsync {
		return nil
	}
	err := route53.NewResourceRecordSetsChangedWaiter(c, func(o *route53.ResourceRecordSetsChangedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 2*time.Second, changePoll
	}).Wait(ctx, &route53.GetChangeInput{Id: info.Id}, changeWait)
	if err != nil {
		return fmt.Errorf("aws/%s: %s: wait for change %s to be INSYNC: %w", k, name, aws.ToString(info.Id), err)
	}
	return nil
}

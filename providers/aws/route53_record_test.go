package aws

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// Alias targets whose hosted zone ids AWS publishes: CloudFront's, and the
// S3 website endpoint's of eu-west-3.
const (
	cloudFrontZone = "Z2FDTNDATAQYW2"
	s3WebsiteZone  = "Z3R1K369G5AVDG"
)

// recordZones makes, before each subtest, the zones the records live in:
// a parent, and a child delegated from it, so that a record of the child's
// domain can move from one to the other (the zone forces a replace).
func recordZones(b *Backend, parent, child string) func(t *testing.T) {
	return func(t *testing.T) {
		d, _ := b.Driver(spec.Route53Zone)
		for _, name := range []string{parent, child} {
			tg := providers.Target{Name: name, Region: testRegion, Owner: "conformance"}
			if _, err := d.Create(context.Background(), tg); err != nil {
				t.Fatal(err)
			}
			// Registered before the subtest's own cleanups, so it runs
			// after them, once the records are gone.
			t.Cleanup(func() {
				if err := d.Delete(context.Background(), tg); err != nil {
					t.Errorf("cleanup: delete zone %s: %v", name, err)
				}
			})
		}
	}
}

func TestRoute53RecordConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	d, _ := b.Driver(spec.Route53Record)
	d.(*records).pageSize = 2
	stem := testStem()
	parent := stem + ".example.com"
	child := "b." + parent
	setup := recordZones(b, parent, child)
	conformance(t, b, srv,
		drivertest.Case{
			Kind:    spec.Route53Record,
			Setup:   setup,
			Create:  map[string]any{"zone": parent, "ttl": 300.0, "values": []any{"192.0.2.1"}},
			Updates: []map[string]any{{"ttl": 60.0}, {"values": []any{"192.0.2.3", "192.0.2.2"}}},
			// Inside the child's domain, so that either zone may hold it.
			Replaces: []map[string]any{{"zone": child}},
			NewName:  func(suffix string) string { return suffix + "." + child + ":A" },
			OddNames: []string{parent + ":A", "*." + parent + ":A", "_under_score." + parent + ":A",
				strings.Repeat("l", 63) + "." + parent + ":A"},
			PageSize: 2,
			Global:   true,
			Untested: map[string]string{
				"aliasDnsName":         "an alias excludes values: the alias case covers it",
				"aliasZoneId":          "an alias excludes values: the alias case covers it",
				"evaluateTargetHealth": "an alias excludes values: the alias case covers it",
			},
		},
		drivertest.Case{
			Kind: spec.Route53Record, Name: "route53-record-alias",
			Setup: setup,
			Create: map[string]any{"zone": parent, "aliasDnsName": "d111111abcdef8.cloudfront.net",
				"aliasZoneId": cloudFrontZone, "evaluateTargetHealth": false},
			Updates: []map[string]any{
				{"aliasDnsName": "s3-website.eu-west-3.amazonaws.com", "aliasZoneId": s3WebsiteZone},
				{"evaluateTargetHealth": true},
			},
			Replaces: []map[string]any{{"zone": child}},
			NewName:  func(suffix string) string { return "alias-" + suffix + "." + child + ":A" },
			Global:   true,
			Untested: map[string]string{
				"ttl":    "an alias takes its target's TTL: the values case covers it",
				"values": "an alias excludes values: the values case covers it",
			},
		})
}

// What Route 53 would refuse, or infra could not read back under the
// name, is refused before any call: values with an alias, a record outside
// its zone, the zone's own SOA and apex NS, a name in capitals.
func TestRoute53RecordRefusesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.Route53Record)
	values := map[string]any{"zone": "example.com", "ttl": 300.0, "values": []any{"192.0.2.1"}}
	with := func(kv ...any) map[string]any {
		f := spec.CloneMap(values)
		for i := 0; i < len(kv); i += 2 {
			f[kv[i].(string)] = kv[i+1]
		}
		return f
	}
	cases := []struct {
		name   string
		fields map[string]any
		says   string
	}{
		{"www.example.com:A", with("aliasDnsName", "d1.cloudfront.net", "aliasZoneId", cloudFrontZone), "exclusive"},
		{"www.example.com:A", map[string]any{"zone": "example.com", "aliasDnsName": "d1.cloudfront.net"}, "both aliasDnsName and aliasZoneId"},
		{"www.example.com:A", map[string]any{"zone": "example.com", "aliasDnsName": "d1.cloudfront.net", "aliasZoneId": cloudFrontZone, "ttl": 60.0}, "drop ttl"},
		{"www.example.com:A", with("evaluateTargetHealth", true), "alias only"},
		{"www.example.com:A", with("ttl", nil), "needs a ttl"},
		{"www.example.com:A", map[string]any{"zone": "example.com"}, "needs values, or an alias"},
		{"www.example.com:A", with("ttl", 1.5), "whole number"},
		{"www.example.org:A", values, "not in the zone"},
		{"notexample.com:A", values, "not in the zone"},
		{"example.com:NS", values, "apex"},
		{"example.com:SOA", values, "SOA"},
		{"www.example.com:AA", values, "not one of"},
		{"www.example.com", values, "FQDN:TYPE"},
		{"WWW.example.com:A", values, "lowercase"},
		{"www.example.com.:A", values, "trailing dot"},
		{"_infra-a.www.example.com:TXT", values, "companion"},
		// 250 characters, within DNS's 253; its companion is 259.
		{strings.Repeat(strings.Repeat("l", 63)+".", 3) + strings.Repeat("m", 46) + ".example.com:A", values, "at most 253 characters"},
	}
	for _, c := range cases {
		_, err := d.Create(context.Background(), providers.Target{Name: c.name, Region: testRegion, Owner: "fleet", Fields: c.fields})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Create %s %v = %v (code %s), want invalid argument saying %q", c.name, c.fields, err, errorCode(err), c.says)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// A record another fleet's mark names (its companion's, or, without one,
// its zone's), or no mark does, is never written or deleted for this
// fleet, though IAM cannot keep the executor from it: a create says it
// exists, whose it is, and an update or a delete is refused.
func TestRoute53RecordNotOursIsNotTouched(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	zd, _ := b.Driver(spec.Route53Zone)
	d, _ := b.Driver(spec.Route53Record)
	ctx := context.Background()
	if _, err := zd.Create(ctx, providers.Target{Name: "billing.example.com", Region: testRegion, Owner: "billing"}); err != nil {
		t.Fatal(err)
	}
	c := zd.(*zones).clients.get(testRegion)
	out, err := c.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("by-hand.example.com"), CallerReference: aws.String("by-hand")})
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range []string{"billing.example.com", "by-hand.example.com"} {
		fields := map[string]any{"zone": zone, "ttl": 300.0, "values": []any{"192.0.2.1"}}
		theirs := providers.Target{Name: "www." + zone + ":A", Region: testRegion, Owner: "billing", Fields: fields}
		if zone == "billing.example.com" {
			if _, err := d.Create(ctx, theirs); err != nil {
				t.Fatal(err)
			}
		} else {
			byHand(t, c, aws.ToString(out.HostedZone.Id), "www."+zone, r53types.RRTypeA, "192.0.2.1")
		}
		before := calls.count("ChangeResourceRecordSets")
		got, err := d.Read(ctx, testRegion, theirs.Name)
		if want := map[string]string{"billing.example.com": "billing"}[zone]; err != nil || got.Owner != want {
			t.Errorf("Read %s = owner %q, %v; want owner %q", theirs.Name, got.Owner, err, want)
		}
		ours := theirs
		ours.Owner = "shop"
		ours.Fields = map[string]any{"zone": zone, "ttl": 60.0, "values": []any{"198.51.100.1"}}
		if _, err := d.Create(ctx, ours); errorCode(err) != providers.AlreadyExists {
			t.Errorf("Create %s for shop = %v (code %s), want already exists", ours.Name, err, errorCode(err))
		}
		if zone == "billing.example.com" {
			// An unmarked record is the engine's to adopt; billing's never.
			if _, err := d.Update(ctx, ours, []string{"ttl", "values"}); errorCode(err) != providers.PermissionDenied || !strings.Contains(err.Error(), "fleet billing's") {
				t.Errorf("Update %s for shop = %v (code %s), want permission denied naming billing", ours.Name, err, errorCode(err))
			}
		}
		if err := d.Delete(ctx, providers.Target{Name: ours.Name, Region: testRegion, Owner: "shop"}); errorCode(err) != providers.PermissionDenied {
			t.Errorf("Delete %s for shop = %v (code %s), want permission denied", ours.Name, err, errorCode(err))
		}
		if n := calls.count("ChangeResourceRecordSets") - before; n != 0 {
			t.Errorf("%s: ChangeResourceRecordSets was called %d times", zone, n)
		}
		if got, err := d.Read(ctx, testRegion, theirs.Name); err != nil || !spec.Equal(spec.Field{Compare: spec.CompareSet}, got.Fields["values"], []any{"192.0.2.1"}) {
			t.Errorf("%s after the refusals: %v, %v", theirs.Name, got.Fields, err)
		}
	}
	// What no mark names, an adoption (an update the engine sends only
	// for one) marks: the companion comes with the update.
	adopt := providers.Target{Name: "www.by-hand.example.com:A", Region: testRegion, Owner: "shop",
		Fields: map[string]any{"zone": "by-hand.example.com", "ttl": 300.0, "values": []any{"192.0.2.1"}}}
	if _, err := d.Update(ctx, adopt, []string{"ttl"}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Read(ctx, testRegion, adopt.Name); err != nil || got.Owner != "shop" {
		t.Errorf("after the adoption, Read = owner %q, %v; want shop", got.Owner, err)
	}
}

// byHand writes a record set into the zone id as a person would, with no
// companion.
func byHand(t *testing.T, c *route53.Client, id, fqdn string, typ r53types.RRType, value string) {
	t.Helper()
	if _, err := c.ChangeResourceRecordSets(context.Background(), &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(id),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionUpsert,
			ResourceRecordSet: &r53types.ResourceRecordSet{Name: aws.String(fqdn), Type: typ, TTL: aws.Int64(300),
				ResourceRecords: []r53types.ResourceRecord{{Value: aws.String(value)}}}}}}}); err != nil {
		t.Fatal(err)
	}
}

// batches records every change batch a backend sends.
type batches struct {
	mu   sync.Mutex
	sent [][]r53types.Change
}

func (b *batches) option() func(*config.LoadOptions) error {
	return before("ChangeResourceRecordSets", func(in any) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.sent = append(b.sent, in.(*route53.ChangeResourceRecordSetsInput).ChangeBatch.Changes)
		return nil
	})
}

// take returns the batches sent since the last take, each as
// "ACTION name TYPE" per change.
func (b *batches) take() [][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out [][]string
	for _, changes := range b.sent {
		var batch []string
		for _, ch := range changes {
			batch = append(batch, fmt.Sprintf("%s %s %s", ch.Action, dnsName(aws.ToString(ch.ResourceRecordSet.Name)), ch.ResourceRecordSet.Type))
		}
		out = append(out, batch)
	}
	b.sent = nil
	return out
}

// zoneSets are every record set of the zone id, as "name TYPE" with the
// values of a TXT, less the zone's own SOA and NS.
func zoneSets(t *testing.T, c *route53.Client, id string) []string {
	t.Helper()
	out, err := c.ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	var sets []string
	for _, rr := range out.ResourceRecordSets {
		if rr.Type == r53types.RRTypeSoa || rr.Type == r53types.RRTypeNs {
			continue
		}
		s := dnsName(aws.ToString(rr.Name)) + " " + string(rr.Type)
		if rr.Type == r53types.RRTypeTxt {
			s += fmt.Sprintf(" %d", aws.ToInt64(rr.TTL))
			for _, v := range rr.ResourceRecords {
				s += " " + aws.ToString(v.Value)
			}
		}
		sets = append(sets, s)
	}
	sort.Strings(sets)
	return sets
}

// dnsZone makes the zone example.com for the fleet dns, on a backend
// whose change batches are recorded from then on.
func dnsZone(t *testing.T) (*batches, providers.Driver, providers.Driver, *route53.Client, string) {
	sent := &batches{}
	b, _ := newTestBackend(t, sent.option())
	zd, _ := b.Driver(spec.Route53Zone)
	d, _ := b.Driver(spec.Route53Record)
	zone, err := zd.Create(context.Background(), providers.Target{Name: "example.com", Region: testRegion, Owner: "dns"})
	if err != nil {
		t.Fatal(err)
	}
	sent.take()
	return sent, zd, d, zd.(*zones).clients.get(testRegion), zone.Attributes["zoneId"]
}

// A fleet's record in a zone another fleet owns is its own: its companion
// names it, made with it in one batch and deleted with it in one, and the
// zone stays the other fleet's. The listing shows the record, never the
// companion.
func TestRoute53RecordInAnotherFleetsZoneIsItsOwn(t *testing.T) {
	sent, zd, d, c, id := dnsZone(t)
	ctx := context.Background()
	api := providers.Target{Name: "api.example.com:A", Region: testRegion, Owner: "app",
		Fields: map[string]any{"zone": "example.com", "ttl": 300.0, "values": []any{"192.0.2.1"}},
		// As the engine passes it: the zone's id, observed or wired in.
		Identities: map[spec.Address]string{{Provider: spec.AWS, Kind: spec.Route53Zone, Name: "example.com"}: id}}
	if r, err := d.Create(ctx, api); err != nil || r.Owner != "app" {
		t.Fatalf("Create for app in dns's zone = owner %q, %v", r.Owner, err)
	}
	if got, want := sent.take(), [][]string{{"CREATE api.example.com A", "CREATE _infra-a.api.example.com TXT"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the create sent %v, want %v", got, want)
	}
	if got, want := zoneSets(t, c, id), []string{"_infra-a.api.example.com TXT 300 \"managed-by-infra=app\"", "api.example.com A"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the zone holds %q, want %q", got, want)
	}
	if r, err := d.Read(ctx, testRegion, api.Name); err != nil || r.Owner != "app" {
		t.Errorf("Read = owner %q, %v; want app", r.Owner, err)
	}
	if z, err := zd.Read(ctx, testRegion, "example.com"); err != nil || z.Owner != "dns" {
		t.Errorf("the zone reads owner %q, %v; want dns", z.Owner, err)
	}
	rs, err := d.List(ctx, testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Name != api.Name || rs[0].Owner != "app" || !rs[0].Complete {
		t.Errorf("List = %v, want %s alone, owned by app, complete", drivertest.Names(rs), api.Name)
	}
	// The zone's fleet owns the zone, not the record.
	dns := api
	dns.Owner, dns.Identities = "dns", nil
	if _, err := d.Update(ctx, dns, []string{"ttl"}); errorCode(err) != providers.PermissionDenied || !strings.Contains(err.Error(), "fleet app's") {
		t.Errorf("Update for dns = %v (code %s), want permission denied naming app", err, errorCode(err))
	}
	if err := d.Delete(ctx, providers.Target{Name: api.Name, Region: testRegion, Owner: "dns"}); errorCode(err) != providers.PermissionDenied {
		t.Errorf("Delete for dns = %v (code %s), want permission denied", err, errorCode(err))
	}
	if got := sent.take(); len(got) != 0 {
		t.Errorf("the refusals sent %v", got)
	}
	api.Fields["ttl"] = 60.0
	if _, err := d.Update(ctx, api, []string{"ttl"}); err != nil {
		t.Fatal(err)
	}
	if got, want := sent.take(), [][]string{{"UPSERT api.example.com A"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the update sent %v, want %v", got, want)
	}
	if err := d.Delete(ctx, providers.Target{Name: api.Name, Region: testRegion, Owner: "app"}); err != nil {
		t.Fatal(err)
	}
	if got, want := sent.take(), [][]string{{"DELETE api.example.com A", "DELETE _infra-a.api.example.com TXT"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the delete sent %v, want %v", got, want)
	}
	if got := zoneSets(t, c, id); len(got) != 0 {
		t.Errorf("after the delete the zone holds %q", got)
	}
}

// A record made before companions (or by hand) in a zone a fleet owns is
// that fleet's, as it was: another fleet may not change it, and the
// zone's fleet's next update writes its companion in the same batch.
func TestRoute53RecordWithoutCompanionIsItsZones(t *testing.T) {
	sent, _, d, c, id := dnsZone(t)
	ctx := context.Background()
	byHand(t, c, id, "www.example.com", r53types.RRTypeA, "192.0.2.1")
	sent.take()
	www := providers.Target{Name: "www.example.com:A", Region: testRegion, Owner: "app",
		Fields: map[string]any{"zone": "example.com", "ttl": 60.0, "values": []any{"192.0.2.1"}}}
	if r, err := d.Read(ctx, testRegion, www.Name); err != nil || r.Owner != "dns" {
		t.Errorf("Read = owner %q, %v; want dns, its zone's", r.Owner, err)
	}
	if rs, err := d.List(ctx, testRegion); err != nil || len(rs) != 1 || rs[0].Owner != "dns" {
		t.Errorf("List = %v, %v; want www owned by dns", rs, err)
	}
	if _, err := d.Create(ctx, www); errorCode(err) != providers.AlreadyExists || !strings.Contains(err.Error(), "zone's fleet's, dns's") {
		t.Errorf("Create for app = %v (code %s), want already exists naming dns", err, errorCode(err))
	}
	if _, err := d.Update(ctx, www, []string{"ttl"}); errorCode(err) != providers.PermissionDenied {
		t.Errorf("Update for app = %v (code %s), want permission denied", err, errorCode(err))
	}
	if got := sent.take(); len(got) != 0 {
		t.Errorf("the refusals sent %v", got)
	}
	www.Owner = "dns"
	if _, err := d.Update(ctx, www, []string{"ttl"}); err != nil {
		t.Fatal(err)
	}
	if got, want := sent.take(), [][]string{{"UPSERT www.example.com A", "CREATE _infra-a.www.example.com TXT"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the update sent %v, want %v", got, want)
	}
	if got, want := zoneSets(t, c, id), []string{"_infra-a.www.example.com TXT 300 \"managed-by-infra=dns\"", "www.example.com A"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the zone holds %q, want %q", got, want)
	}
	if err := d.Delete(ctx, providers.Target{Name: www.Name, Region: testRegion, Owner: "dns"}); err != nil {
		t.Fatal(err)
	}
}

// Each record's companion is its own: records of several types at one
// name, the apex and a wildcard (whose '*' stays the leftmost label).
func TestRoute53RecordCompanionNames(t *testing.T) {
	for name, want := range map[string]string{
		"www.example.com:A": "_infra-a.www.example.com", "www.example.com:AAAA": "_infra-aaaa.www.example.com",
		"example.com:MX": "_infra-mx.example.com", "*.example.com:A": "_infra-a-wildcard.example.com",
		"*.eu.example.com:CNAME": "_infra-cname-wildcard.eu.example.com", "_dmarc.example.com:TXT": "_infra-txt._dmarc.example.com",
	} {
		n, err := parseRecordName(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := companionName(n); got != want {
			t.Errorf("companionName(%s) = %s, want %s", name, got, want)
		}
	}
}

// A record Route 53 holds in both a parent zone and the child delegated
// from it is a conflict naming both, never a guess at which is meant; the
// listing shows it once, without an owner, and leaves out every zone's own
// SOA and apex NS.
func TestRoute53RecordInTwoZonesConflicts(t *testing.T) {
	b, _ := newTestBackend(t)
	recordZones(b, "shop.example.com", "eu.shop.example.com")(t)
	d, _ := b.Driver(spec.Route53Record)
	ctx := context.Background()
	for _, zone := range []string{"shop.example.com", "eu.shop.example.com"} {
		tg := providers.Target{Name: "www.eu.shop.example.com:A", Region: testRegion, Owner: "conformance",
			Fields: map[string]any{"zone": zone, "ttl": 300.0, "values": []any{"192.0.2.1"}}}
		if _, err := d.Create(ctx, tg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { recordDelete(t, b, zone, tg.Name) })
	}
	_, err := d.Read(ctx, testRegion, "www.eu.shop.example.com:A")
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), "shop.example.com (") || !strings.Contains(err.Error(), "eu.shop.example.com (") {
		t.Errorf("Read = %v (code %s), want a conflict naming both zones", err, errorCode(err))
	}
	rs, err := d.List(ctx, testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if names := drivertest.Names(rs); len(names) != 1 || rs[0].Owner != "" || rs[0].Complete {
		t.Errorf("List = %v (owner %q, complete %v), want the one name, incomplete, with no owner", names, rs[0].Owner, rs[0].Complete)
	}
}

// recordDelete deletes a record set and its companion from one zone by
// hand, as they are.
func recordDelete(t *testing.T, b *Backend, zone, name string) {
	zd, _ := b.Driver(spec.Route53Zone)
	z, err := zd.Read(context.Background(), testRegion, zone)
	if err != nil {
		t.Error(err)
		return
	}
	n, _ := parseRecordName(name)
	c := zd.(*zones).clients.get(testRegion)
	id := z.Attributes["zoneId"]
	var changes []r53types.Change
	for _, set := range [][2]string{{n.fqdn, string(n.typ)}, {companionName(n), "TXT"}} {
		rr, err := recordSet(context.Background(), c, name, id, set[0], r53types.RRType(set[1]))
		if err != nil || rr == nil {
			t.Errorf("cleanup: %s in %s: %v", set[0], zone, err)
			return
		}
		changes = append(changes, r53types.Change{Action: r53types.ChangeActionDelete, ResourceRecordSet: rr})
	}
	if _, err := c.ChangeResourceRecordSets(context.Background(), &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(id),
		ChangeBatch: &r53types.ChangeBatch{Changes: changes}}); err != nil {
		t.Errorf("cleanup: %s in %s: %v", name, zone, err)
	}
}

// Route 53 writes a wildcard's '*' as \052 (moto does not): the name reads
// back either way.
func TestRoute53DNSNameReadsEscapes(t *testing.T) {
	for in, want := range map[string]string{`\052.example.com.`: "*.example.com", "www.example.com.": "www.example.com",
		`a\\b.example.com`: `a\\b.example.com`, `x\05`: `x\05`} {
		if got := dnsName(in); got != want {
			t.Errorf("dnsName(%q) = %q, want %q", in, got, want)
		}
	}
}

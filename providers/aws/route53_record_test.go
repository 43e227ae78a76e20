package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
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

// A record's mark is its zone's: in a zone another fleet owns, or none
// does, a record of the same name is read as theirs and never written or
// deleted, though IAM cannot keep the executor from it.
func TestRoute53RecordInAZoneNotOursIsNotTouched(t *testing.T) {
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
		} else if _, err := c.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: out.HostedZone.Id,
			ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionUpsert,
				ResourceRecordSet: &r53types.ResourceRecordSet{Name: aws.String("www." + zone), Type: r53types.RRTypeA, TTL: aws.Int64(300),
					ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.1")}}}}}}}); err != nil {
			t.Fatal(err)
		}
		before := calls.count("ChangeResourceRecordSets")
		got, err := d.Read(ctx, testRegion, theirs.Name)
		if want := map[string]string{"billing.example.com": "billing"}[zone]; err != nil || got.Owner != want {
			t.Errorf("Read %s = owner %q, %v; want owner %q", theirs.Name, got.Owner, err, want)
		}
		ours := theirs
		ours.Owner = "shop"
		ours.Fields = map[string]any{"zone": zone, "ttl": 60.0, "values": []any{"198.51.100.1"}}
		if _, err := d.Create(ctx, ours); errorCode(err) != providers.PermissionDenied {
			t.Errorf("Create %s for shop = %v (code %s), want permission denied", ours.Name, err, errorCode(err))
		}
		if _, err := d.Update(ctx, ours, []string{"ttl", "values"}); errorCode(err) != providers.PermissionDenied {
			t.Errorf("Update %s for shop = %v (code %s), want permission denied", ours.Name, err, errorCode(err))
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

// recordDelete deletes a record set from one zone by hand, as it is.
func recordDelete(t *testing.T, b *Backend, zone, name string) {
	zd, _ := b.Driver(spec.Route53Zone)
	z, err := zd.Read(context.Background(), testRegion, zone)
	if err != nil {
		t.Error(err)
		return
	}
	n, _ := parseRecordName(name)
	c := zd.(*zones).clients.get(testRegion)
	out, err := c.ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(z.Attributes["zoneId"]),
		StartRecordName: aws.String(n.fqdn), StartRecordType: n.typ, MaxItems: aws.Int32(1)})
	if err != nil || len(out.ResourceRecordSets) == 0 {
		t.Errorf("cleanup: %s in %s: %v", name, zone, err)
		return
	}
	if _, err := c.ChangeResourceRecordSets(context.Background(), &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(z.Attributes["zoneId"]),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionDelete, ResourceRecordSet: &out.ResourceRecordSets[0]}}}}); err != nil {
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

package aws

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestRoute53ZoneConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	d, _ := b.Driver(spec.Route53Zone)
	d.(*zones).pageSize = 2
	stem := testStem()
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.Route53Zone,
		Create:   map[string]any{"comment": "conformance"},
		Updates:  []map[string]any{{"comment": "a comment changed"}, {"comment": ""}},
		NewName:  func(suffix string) string { return stem + "-" + suffix + ".example.com" },
		OddNames: []string{"_under_score.example.com", "xn--bcher-kva.example", strings.Repeat("l", 63) + ".example.com", "a.b.c.d.example.org"},
		PageSize: 2,
		Global:   true,
	})
}

// testStem is a short random lowercase stem, legal in a DNS label, so that
// names two runs make on a real cloud never meet.
func testStem() string { return "ct" + strings.ToLower(rand.Text()[:6]) }

// A name Route 53 would store otherwise than written, or a comment longer
// than Route 53 keeps, is refused before any call.
func TestRoute53ZoneRefusesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.Route53Zone)
	for name, fields := range map[string]map[string]any{
		"Example.com":   nil,
		"example.com.":  nil,
		"ex ample.com":  nil,
		"*.example.com": nil,
		"example.com":   {"comment": strings.Repeat("c", 257)},
	} {
		_, err := d.Create(context.Background(), providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: fields})
		if errorCode(err) != providers.InvalidArgument {
			t.Errorf("Create %q = %v (code %s), want invalid argument", name, err, errorCode(err))
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// Route 53 lets an account make two zones of one domain; infra then
// cannot tell which the name means. A read names both ids, and a create
// of a name that has a zone already makes no second one.
func TestRoute53ZoneTwoOfOneDomainConflict(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.Route53Zone)
	c := d.(*zones).clients.get(testRegion)
	ctx := context.Background()
	first, err := d.Create(ctx, providers.Target{Name: "twice.example.com", Region: testRegion, Owner: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create(ctx, providers.Target{Name: "twice.example.com", Region: testRegion, Owner: "fleet"}); errorCode(err) != providers.AlreadyExists {
		t.Fatalf("a second create = %v (code %s), want already exists", err, errorCode(err))
	}
	// Made outside infra, as the console would.
	out, err := c.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("twice.example.com"), CallerReference: aws.String("by-hand")})
	if err != nil {
		t.Fatal(err)
	}
	second := zoneID(out.HostedZone.Id)
	_, err = d.Read(ctx, testRegion, "twice.example.com")
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), first.Attributes["zoneId"]) || !strings.Contains(err.Error(), second) {
		t.Errorf("Read = %v (code %s), want a conflict naming %s and %s", err, errorCode(err), first.Attributes["zoneId"], second)
	}
	rs, err := d.List(ctx, testRegion)
	if err != nil {
		t.Fatal(err)
	}
	if names := drivertest.Names(rs); len(names) != 1 || names[0] != "twice.example.com" || rs[0].Owner != "" {
		t.Errorf("List = %v (owner %q), want the domain once, with no owner", names, rs[0].Owner)
	}
}

// A zone that holds records of its own is not deleted: the refusal says
// so, as a conflict, and names the zone.
func TestRoute53ZoneDeleteRefusedWhileItHoldsRecords(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.Route53Zone)
	c := d.(*zones).clients.get(testRegion)
	ctx := context.Background()
	tg := providers.Target{Name: "full.example.com", Region: testRegion, Owner: "fleet"}
	z, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	id := z.Attributes["zoneId"]
	if _, err := c.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(id),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionUpsert,
			ResourceRecordSet: &r53types.ResourceRecordSet{Name: aws.String("www.full.example.com"), Type: r53types.RRTypeA,
				TTL: aws.Int64(60), ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.1")}}}}}}}); err != nil {
		t.Fatal(err)
	}
	err = d.Delete(ctx, tg)
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "records other than its SOA and NS") {
		t.Errorf("Delete = %v (code %s), want a conflict saying the zone %s holds records", err, errorCode(err), id)
	}
	if _, err := d.Read(ctx, testRegion, tg.Name); err != nil {
		t.Errorf("the zone is gone: %v", err)
	}
}

// A zone another fleet's mark names is neither changed nor deleted, though
// IAM cannot keep the executor from it.
func TestRoute53ZoneOfAnotherFleetIsNotTouched(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.Route53Zone)
	ctx := context.Background()
	if _, err := d.Create(ctx, providers.Target{Name: "theirs.example.com", Region: testRegion, Owner: "billing"}); err != nil {
		t.Fatal(err)
	}
	ours := providers.Target{Name: "theirs.example.com", Region: testRegion, Owner: "shop", Fields: map[string]any{"comment": "mine now"}}
	if _, err := d.Update(ctx, ours, []string{"comment", "tags"}); errorCode(err) != providers.PermissionDenied {
		t.Errorf("Update = %v (code %s), want permission denied", err, errorCode(err))
	}
	if err := d.Delete(ctx, ours); errorCode(err) != providers.PermissionDenied {
		t.Errorf("Delete = %v (code %s), want permission denied", err, errorCode(err))
	}
	for _, op := range []string{"UpdateHostedZoneComment", "DeleteHostedZone"} {
		if n := calls.count(op); n != 0 {
			t.Errorf("%s was called %d times", op, n)
		}
	}
	if n := calls.count("ChangeTagsForResource"); n != 1 { // the create's own
		t.Errorf("ChangeTagsForResource was called %d times, want once (at create)", n)
	}
}

// Route 53 refuses a CallerReference used before, by a zone that exists
// or was deleted, with HostedZoneAlreadyExists (409); the harness does as
// Route 53 does.
func TestRoute53ZoneCallerReferenceIsTakenOnce(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.Route53Zone)
	c := d.(*zones).clients.get(testRegion)
	ctx := context.Background()
	create := func(name string) (*route53.CreateHostedZoneOutput, error) {
		return c.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String(name), CallerReference: aws.String("ref-once")})
	}
	out, err := create("once.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var taken *r53types.HostedZoneAlreadyExists
	if _, err := create("once.example.com"); !errors.As(err, &taken) || errorCode(err) != providers.AlreadyExists {
		t.Fatalf("a create repeating a caller reference = %v; want HostedZoneAlreadyExists", err)
	}
	if _, err := c.DeleteHostedZone(ctx, &route53.DeleteHostedZoneInput{Id: out.HostedZone.Id}); err != nil {
		t.Fatal(err)
	}
	if _, err := create("other.example.com"); !errors.As(err, &taken) {
		t.Fatalf("a create repeating the caller reference of a deleted zone = %v; want HostedZoneAlreadyExists", err)
	}
}

// A create whose CreateHostedZone answer is lost is resent by the SDK,
// which Route 53 refuses as the reference's second use; the driver finds
// the zone its reference made and reports it made, tagged: one zone.
func TestRoute53ZoneCreateWhoseAnswerIsLostFindsItsZone(t *testing.T) {
	b, proxy := droppingProxy(t)
	d, _ := b.Driver(spec.Route53Zone)
	ctx := context.Background()
	// The driver's first call looks for a zone of the name; its second is
	// CreateHostedZone.
	proxy.DropResponse(proxy.Calls() + 2)
	res, err := d.Create(ctx, providers.Target{Name: "lost.example.com", Region: testRegion, Owner: "fleet"})
	if err != nil {
		t.Fatalf("Create with the answer of CreateHostedZone lost: %v", err)
	}
	if res.Owner != "fleet" || res.Attributes["zoneId"] == "" {
		t.Errorf("Create reported the zone %q owned by %q", res.Attributes["zoneId"], res.Owner)
	}
	zs, err := zonesNamed(ctx, d.(*zones).clients.get(testRegion), spec.Route53Zone, testRegion, "lost.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(zs) != 1 || zoneID(zs[0].Id) != res.Attributes["zoneId"] {
		t.Errorf("zones of the name: %s; want the one reported, %s", zoneIDs(zs), res.Attributes["zoneId"])
	}
	got, err := d.Read(ctx, testRegion, "lost.example.com")
	if err != nil || got.Owner != "fleet" {
		t.Errorf("Read = %+v, %v; want the zone tagged as this fleet's", got, err)
	}
}

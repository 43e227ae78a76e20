package main

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// The estate scenario is 100 resources at 100, and the no-change plan's
// minimum has a row for each of its kinds, counting only what the fleet
// declares: its VPC declares no DNS attribute (no DescribeVpcAttribute),
// a quarter of its tables a TTL and a quarter point-in-time recovery, and
// each target group its function (a DescribeTargetHealth each).
// The writes of its kinds are not modelled, so a fresh apply has no
// minimum rather than a wrong one.
func TestEstateMinimum(t *testing.T) {
	doc := estateDocument(100, "handler.zip")
	if len(doc.Resources) != 100 {
		t.Errorf("the estate of 100 has %d resources", len(doc.Resources))
	}
	c := censusOf(doc)
	rows := minimum(c)
	for k, n := range c.kinds {
		found := false
		for _, r := range rows {
			found = found || strings.HasPrefix(r.what, string(k)+" ×")
		}
		if !found {
			t.Errorf("%d %s: no row in the minimum", n, k)
		}
	}
	if c.ttl != 4 || c.pitr != 4 || c.vpcDNS != 0 || c.albAttrs != 2 || c.groupFunctions != 4 || len(c.listenerLBs) != 2 || c.zoneRecords["aws/route53-zone/"+estateDomain] != 20 {
		t.Errorf("census: %+v", c)
	}
	if least, _ := minTotal(rows); least != 112 {
		t.Errorf("minimum %d, want 112", least)
	}
	if _, ok := phaseMinimum("apply (fresh)", fleetPair{doc, doc}); ok {
		t.Error("a fresh apply of the estate has a minimum, but the writes of its kinds are not modelled")
	}
	if _, ok := phaseMinimum("apply (fresh)", fleetPair{fleetDocument(100, 0), fleetDocument(100, 0.01)}); !ok {
		t.Error("the bench fleet's fresh apply lost its minimum")
	}
	if k := kindsOf(doc); k[spec.ALBListener] != 4 || k[spec.Route53Record] != 20 || k[spec.LambdaFunction] != 16 {
		t.Errorf("kinds: %v", k)
	}
}

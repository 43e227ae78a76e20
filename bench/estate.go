package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// estateZip is the estate's committed function code (examples/estate),
// relative to the repository's root, where the bench runs.
const estateZip = "examples/estate/app/handler.zip"

// estateDomain is the estate scenario's hosted zone.
const estateDomain = "estate-bench.example.com"

// estateShape is how many of each part the estate scenario declares.
type estateShape struct {
	apps, albs, records int
}

// shapeOf spreads about n resources over the estate's parts: a fixed
// network (5) and zone (1); per load balancer a target group and a
// listener on each of two ports (5); per app a role, a policy, a function
// and a table (4); the rest in records.
func shapeOf(n int) estateShape {
	s := estateShape{albs: 2}
	if n < 40 {
		s.albs = 1
	}
	rest := n - 6 - 5*s.albs
	s.apps = max(1, rest*4/5/4)
	s.records = max(s.albs, rest-4*s.apps)
	return s
}

// estateDocument is examples/estate's three fleets (network, dns, app)
// in one fleet of about n resources, as the bench's other fleets are
// documents: a VPC with a subnet in each of two zones, an internet
// gateway and a route table to it; a public zone with records in it (an
// alias to each load balancer, the rest A and TXT records, the zone's own:
// a record is its zone's fleet's); apps of a table, a policy writing it, a
// role with that policy and a function on the role from the estate's zip,
// with the network's and the zone's ids in its environment; load
// balancers on both subnets, each with two Lambda target groups (each
// holding an app's function, as examples/estate's do) and a listener
// forwarding to each. One fleet rather than three: an alb's
// subnets and a record's zone must be of its own fleet. Every fourth
// table declares a TTL attribute and every fourth (others) point-in-time
// recovery, which no table listing reports.
func estateDocument(n int, zip string) *spec.Document {
	doc := newDocument("estate")
	sh := shapeOf(n)
	add := func(addr string, s map[string]any) {
		doc.Resources = append(doc.Resources, spec.Resource{Address: addr, Spec: s})
	}
	ref := func(a string) map[string]any { return map[string]any{"ref": a} }
	observed := func(a, attr string) map[string]any { return map[string]any{"observed": a, "attribute": attr} }
	tags := map[string]any{"team": "estate"}

	vpc, igw := "aws/vpc/estate-vpc", "aws/internet-gateway/estate-igw"
	subnets := map[string]string{"eu-west-3a": "aws/subnet/estate-a", "eu-west-3b": "aws/subnet/estate-b"}
	add(vpc, map[string]any{"cidr": "10.40.0.0/16", "tags": tags})
	add(subnets["eu-west-3a"], map[string]any{"vpc": ref(vpc), "cidr": "10.40.1.0/24", "availabilityZone": "eu-west-3a", "tags": tags})
	add(subnets["eu-west-3b"], map[string]any{"vpc": ref(vpc), "cidr": "10.40.2.0/24", "availabilityZone": "eu-west-3b", "tags": tags})
	add(igw, map[string]any{"vpc": ref(vpc), "tags": tags})
	add("aws/route-table/estate-public", map[string]any{"vpc": ref(vpc),
		"gatewayRoutes": map[string]any{"0.0.0.0/0": ref(igw)},
		"subnets":       map[string]any{"a": ref(subnets["eu-west-3a"]), "b": ref(subnets["eu-west-3b"])},
		"tags":          tags})

	zone := "aws/route53-zone/" + estateDomain
	add(zone, map[string]any{"comment": "the estate's public zone", "tags": tags})

	for i := 0; i < sh.apps; i++ {
		name := fmt.Sprintf("estate-app-%02d", i)
		table := "aws/dynamodb-table/" + name
		t := map[string]any{"hashKey": "id", "tags": tags}
		if i%4 == 1 {
			t["ttlAttribute"] = "expires"
		}
		if i%4 == 2 {
			t["pointInTimeRecovery"] = true
		}
		add(table, t)
		policy := "aws/iam-policy/" + name + "-write"
		add(policy, map[string]any{
			"document": map[string]any{"composed": map[string]any{
				"format": `{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Action":"dynamodb:PutItem","Resource":"{0}"}}]}}`,
				"args":   []any{observed(table, "arn")},
			}},
			"description": name + " writes its table",
			"tags":        tags,
		})
		role := "aws/iam-role/" + name
		add(role, map[string]any{
			"trust":    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
			"policies": []any{observed(policy, "arn")},
			"tags":     tags,
		})
		add("aws/lambda-function/"+name, map[string]any{
			"role": ref(role), "zip": zip, "runtime": "python3.13", "handler": "app.handler",
			"env": map[string]any{
				"TABLE":   name,
				"VPC_ID":  observed(vpc, "vpcId"),
				"SUBNETS": map[string]any{"composed": map[string]any{"format": "{0},{1}", "args": []any{observed(subnets["eu-west-3a"], "subnetId"), observed(subnets["eu-west-3b"], "subnetId")}}},
				"ZONE_ID": observed(zone, "zoneId"),
				"DOMAIN":  estateDomain,
			},
			"tags": tags,
		})
	}

	for i := 0; i < sh.albs; i++ {
		alb := fmt.Sprintf("aws/alb/estate-alb-%d", i)
		add(alb, map[string]any{"subnets": map[string]any{"eu-west-3a": ref(subnets["eu-west-3a"]), "eu-west-3b": ref(subnets["eu-west-3b"])},
			"idleTimeoutSec": 30.0, "tags": tags})
		for j, port := range []float64{80, 8080} {
			tg := fmt.Sprintf("aws/alb-target-group/estate-alb-%d-tg-%d", i, j)
			fn := fmt.Sprintf("aws/lambda-function/estate-app-%02d", (2*i+j)%sh.apps)
			add(tg, map[string]any{"targetType": "lambda", "function": ref(fn), "tags": tags})
			add(fmt.Sprintf("aws/alb-listener/estate-alb-%d-%d", i, int(port)), map[string]any{
				"loadBalancer": ref(alb), "port": port, "protocol": "HTTP", "targetGroup": ref(tg), "tags": tags})
		}
		add(fmt.Sprintf("aws/route53-record/alb-%d.%s:A", i, estateDomain), map[string]any{"zone": ref(zone),
			"aliasDnsName": observed(alb, "dnsName"), "aliasZoneId": observed(alb, "canonicalHostedZoneId")})
	}
	addHostRecords(add, ref(zone), sh.albs, sh.records)
	return doc
}

// addHostRecords adds the records from to to (an A or a TXT each, in
// turn) in the zone zoneRef refers to.
func addHostRecords(add func(string, map[string]any), zoneRef map[string]any, from, to int) {
	for i := from; i < to; i++ {
		if i%2 == 0 {
			add(fmt.Sprintf("aws/route53-record/host-%02d.%s:A", i, estateDomain), map[string]any{"zone": zoneRef,
				"ttl": 300.0, "values": []any{fmt.Sprintf("192.0.2.%d", i)}})
			continue
		}
		add(fmt.Sprintf("aws/route53-record/host-%02d.%s:TXT", i, estateDomain), map[string]any{"zone": zoneRef,
			"ttl": 300.0, "values": []any{fmt.Sprintf(`"estate host %d"`, i)}})
	}
}

// estatePhases are the estate measure's phases, in order, on one emptied
// emulator: the fresh apply sets it up, then the plan finds nothing to do.
var estatePhases = phasesNamed("apply (fresh)", "plan (no changes)")

func measureEstate(self string, env []string, work string, n int) (*onceResult, error) {
	// The measured commands run in their own folder; the zip is the
	// repository's.
	zip, err := filepath.Abs(estateZip)
	if err != nil {
		return nil, err
	}
	doc := estateDocument(n, zip)
	return measureOnce(self, env, filepath.Join(work, fmt.Sprintf("estate%d", n)), len(doc.Resources), fleetPair{doc, doc}, estatePhases)
}

func (r *report) estate(b *strings.Builder) {
	x := r.estated
	if x == nil {
		return
	}
	fmt.Fprintf(b, "## Estate: %d resources of examples/estate's kinds\n\n", x.n)
	fmt.Fprintf(b, "examples/estate's network, dns and app in one fleet (bench/estate.go): %s. One run, on one emptied emulator: the fresh apply (whose writes the model has no minimum for), then the plan with no changes.\n\n", kindList(kindsOf(x.fleet.doc)))
	x.table(b)
	for i, s := range x.samples {
		fmt.Fprintf(b, "- **%s** (%d): %s\n", x.phases[i].name, total(s.ops), breakdown(s.ops))
		if x.phases[i].name != "plan (no changes)" {
			continue
		}
		rows := minimum(censusOf(x.fleet.doc))
		least, anyAPI := minTotal(rows)
		fmt.Fprintf(b, "  - minimum (%d; %d with any API):\n", least, anyAPI)
		for _, row := range rows {
			if row.anyCalls > 0 {
				fmt.Fprintf(b, "    - %d (%d with any API): %s\n", row.calls, row.anyCalls, row.what)
				continue
			}
			fmt.Fprintf(b, "    - %d: %s\n", row.calls, row.what)
		}
	}
	fmt.Fprintln(b)
}

// kindList is "2 vpc, 1 subnet …" in minKinds' order.
func kindList(kinds map[spec.Kind]int) string {
	var parts []string
	for _, k := range minKinds {
		if n := kinds[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

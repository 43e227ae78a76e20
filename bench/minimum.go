package main

import (
	"fmt"
	"reflect"

	"github.com/infra-iac/infra/spec"
)

// minRow is one line of the minimum: what must be called, and how often
// with the permissions infra asks for (docs/providers.md), and with any
// API at all (anyCalls).
type minRow struct {
	what     string
	calls    int
	anyCalls int
}

func pages(n, per int) int {
	if n == 0 {
		return 1 // an empty listing is still one call
	}
	return (n + per - 1) / per
}

// census is what a fleet declares, as far as the minimum depends on it: a
// read the listing cannot answer is needed only for a field the fleet
// declares, and a create writes only what is declared.
type census struct {
	kinds map[spec.Kind]int
	// queueAttrs: queues declaring an attribute (any field but tags),
	// which GetQueueAttributes alone reports.
	queueAttrs int
	// versioning: buckets declaring versioning, which only
	// GetBucketVersioning reports; versioningOn: buckets a create must turn
	// it on for (a new bucket is unversioned), declared or by default.
	versioning, versioningOn int
	// ingress: security groups declaring ingress rules, which a create
	// authorizes in one call.
	ingress int
	// policies: IAM users declaring policies, whose attachments only
	// ListAttachedUserPolicies reports.
	policies int
	// vpcDNS: the DNS attributes VPCs declare, one DescribeVpcAttribute
	// each (the call takes one attribute).
	vpcDNS int
	// ttl and pitr: DynamoDB tables declaring ttlAttribute (only
	// DescribeTimeToLive reports it) and pointInTimeRecovery (only
	// DescribeContinuousBackups).
	ttl, pitr int
	// rolePolicies: IAM roles declaring policies, whose attachments only
	// ListAttachedRolePolicies reports.
	rolePolicies int
	// images: Lambda functions from an image, whose URI ListFunctions
	// does not carry (GetFunction's Code does).
	images int
	// albAttrs: load balancers declaring an attribute (idle timeout,
	// deletion protection), which only DescribeLoadBalancerAttributes
	// reports.
	albAttrs int
	// groupFunctions: target groups declaring their function, which only
	// DescribeTargetHealth reports.
	groupFunctions int
	// listenerLBs: the load balancers the fleet's listeners are on,
	// DescribeListeners being one load balancer's a call.
	listenerLBs map[string]bool
	// zoneRecords: the fleet's records by their zone's address.
	zoneRecords map[string]int
}

// refOf is the address a reference value names; empty for any other.
func refOf(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["ref"].(string)
	return s
}

func censusOf(doc *spec.Document) census {
	c := census{kinds: map[spec.Kind]int{}, listenerLBs: map[string]bool{}, zoneRecords: map[string]int{}}
	for _, r := range doc.Resources {
		a, err := spec.ParseAddress(r.Address)
		if err != nil {
			continue
		}
		c.kinds[a.Kind]++
		switch a.Kind {
		case spec.Queues:
			for f := range r.Spec {
				if f != spec.TagsField {
					c.queueAttrs++
					break
				}
			}
		case spec.ObjectStore:
			v, ok := r.Spec["versioning"]
			if ok {
				c.versioning++
			} else if k, found := spec.Lookup(a.Kind); found {
				// A create writes every field, defaults filled, and
				// versioning defaults to on.
				if f, found := k.Field("versioning"); found {
					v = f.Default
				}
			}
			if v == true {
				c.versioningOn++
			}
		case spec.SecurityGroup:
			if rules, ok := r.Spec["ingress"].([]any); ok && len(rules) > 0 {
				c.ingress++
			}
		case spec.IAM:
			if _, ok := r.Spec["policies"]; ok {
				c.policies++
			}
		case spec.VPC:
			for _, f := range []string{"enableDnsSupport", "enableDnsHostnames"} {
				if _, ok := r.Spec[f]; ok {
					c.vpcDNS++
				}
			}
		case spec.DynamoDBTable:
			if _, ok := r.Spec["ttlAttribute"]; ok {
				c.ttl++
			}
			if _, ok := r.Spec["pointInTimeRecovery"]; ok {
				c.pitr++
			}
		case spec.IAMRole:
			if _, ok := r.Spec["policies"]; ok {
				c.rolePolicies++
			}
		case spec.LambdaFunction:
			if _, ok := r.Spec["image"]; ok {
				c.images++
			}
		case spec.ALB:
			_, idle := r.Spec["idleTimeoutSec"]
			_, protected := r.Spec["deletionProtection"]
			if idle || protected {
				c.albAttrs++
			}
		case spec.ALBTargetGroup:
			if _, ok := r.Spec["function"]; ok {
				c.groupFunctions++
			}
		case spec.ALBListener:
			c.listenerLBs[refOf(r.Spec["loadBalancer"])] = true
		case spec.Route53Record:
			c.zoneRecords[refOf(r.Spec["zone"])]++
		}
	}
	return c
}

// writesOf counts, per kind, the write calls that turn fleet from into
// fleet to: one per changed field, except a queue's attributes, which one
// SetQueueAttributes sets together. Every field the benchmark fleets
// change is one call (SetQueueAttributes, PutBucketVersioning,
// UpdateSecret, AuthorizeSecurityGroupIngress for an added rule, one
// tagging call for added or changed tags).
func writesOf(from, to *spec.Document) map[spec.Kind]int {
	was := map[string]map[string]any{}
	for _, r := range from.Resources {
		was[r.Address] = r.Spec
	}
	out := map[spec.Kind]int{}
	for _, r := range to.Resources {
		a, err := spec.ParseAddress(r.Address)
		if err != nil {
			continue
		}
		old := was[r.Address]
		attrs := false
		for f, v := range r.Spec {
			if reflect.DeepEqual(old[f], v) {
				continue
			}
			if a.Kind == spec.Queues && f != spec.TagsField {
				if attrs {
					continue
				}
				attrs = true
			}
			out[a.Kind]++
		}
	}
	return out
}

// minKinds is the order of the kinds in a minimum.
var minKinds = []spec.Kind{spec.SecurityGroup, spec.AWSInstance, spec.Queues, spec.ObjectStore, spec.Secrets, spec.IAM, spec.ImageRegistry,
	spec.VPC, spec.Subnet, spec.InternetGateway, spec.RouteTable, spec.Route53Zone, spec.Route53Record,
	spec.IAMRole, spec.IAMPolicy, spec.LambdaFunction, spec.DynamoDBTable, spec.ALB, spec.ALBTargetGroup, spec.ALBListener}

// inTaggingAPI are the kinds whose tags (and so ownership) the Tagging
// API returns on the emulator (moto's resourcegroupstaggingapi): its
// pages carry them, not a read each. Not IAM (global), ECR, Route 53,
// nor ELBv2 listeners.
var inTaggingAPI = []spec.Kind{spec.SecurityGroup, spec.AWSInstance, spec.Queues, spec.ObjectStore, spec.Secrets,
	spec.VPC, spec.Subnet, spec.InternetGateway, spec.RouteTable, spec.LambdaFunction, spec.DynamoDBTable, spec.ALB, spec.ALBTargetGroup}

// observeMinimum is the fewest AWS calls that observe the fleet in one
// region, as docs/performance.md states it per kind: every listing's pages,
// plus the reads no listing or batch API answers for what the fleet
// declares, on the APIs the emulator serves. The Tagging API carries the
// tags (and so the ownership) of the kinds it returns, so their tags cost
// its pages, not a read each. With reads false it is what a destroy must
// observe: ownership and identity, not the declared fields.
func observeMinimum(c census, reads bool) []minRow {
	kinds := c.kinds
	tagged := 0
	for _, k := range inTaggingAPI {
		tagged += kinds[k]
	}
	rows := []minRow{
		{what: "STS GetCallerIdentity (the account, before anything is listed)", calls: 1},
		{what: "Tagging API GetResources, 100 a page (ownership and tags)", calls: pages(tagged, 100)},
	}
	for _, k := range minKinds {
		n, ok := kinds[k]
		if !ok {
			continue
		}
		switch k {
		case spec.SecurityGroup:
			rows = append(rows, minRow{what: fmt.Sprintf("security-group ×%d: DescribeSecurityGroups of every VPC, 1,000 a page (rules, description, VPC, tags)", n), calls: pages(n, 1000)})
		case spec.AWSInstance:
			rows = append(rows, minRow{what: fmt.Sprintf("aws-instance ×%d: DescribeInstances, 1,000 a page", n), calls: pages(n, 1000)})
		case spec.Queues:
			if !reads {
				rows = append(rows, minRow{what: fmt.Sprintf("queues ×%d: ListQueues, 1,000 a page (the URLs)", n), calls: pages(n, 1000)})
				break
			}
			rows = append(rows, minRow{what: fmt.Sprintf("queues ×%d: ListQueues, 1,000 a page; GetQueueAttributes for the %d declaring an attribute", n, c.queueAttrs), calls: pages(n, 1000) + c.queueAttrs})
		case spec.ObjectStore:
			if !reads {
				rows = append(rows, minRow{what: fmt.Sprintf("object-store ×%d: ListBuckets (up to 10,000 a page)", n), calls: pages(n, 10000)})
				break
			}
			rows = append(rows, minRow{what: fmt.Sprintf("object-store ×%d: ListBuckets (up to 10,000 a page); GetBucketVersioning for the %d declaring versioning", n, c.versioning), calls: pages(n, 10000) + c.versioning})
		case spec.Secrets:
			rows = append(rows, minRow{what: fmt.Sprintf("secrets ×%d: ListSecrets, 100 a page (description, tags, versions)", n), calls: pages(n, 100)})
		case spec.IAM:
			if !reads {
				rows = append(rows, minRow{what: fmt.Sprintf("iam ×%d: ListUsers, 100 a page; ListUserTags each (ownership: IAM is not in the Tagging API)", n), calls: pages(n, 100) + n})
				break
			}
			// ListUsers carries neither tags nor policies. One call does,
			// GetAccountAuthorizationDetails, but its permission reads every
			// role and policy document of the account, which infra does not
			// ask for.
			rows = append(rows, minRow{what: fmt.Sprintf("iam ×%d: ListUsers, 100 a page; ListUserTags (or GetUser) each (ownership and tags); ListAttachedUserPolicies for the %d declaring policies — with any API: GetAccountAuthorizationDetails, 1,000 a page", n, c.policies),
				calls: pages(n, 100) + n + c.policies, anyCalls: pages(n, 1000)})
		case spec.ImageRegistry:
			rows = append(rows, minRow{what: fmt.Sprintf("image-registry ×%d: DescribeRepositories, 1,000 a page; ListTagsForResource each (no Tagging API for ECR on the emulator)", n), calls: pages(n, 1000) + n})
		default:
			if r, ok := estateRow(k, n, c, reads); ok {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// estateRow is the minimum of one of examples/estate's kinds (bench
// estate). Page sizes are the APIs' most: EC2's MaxResults 1,000
// (DescribeRouteTables 100), IAM's MaxItems 1,000, ListTables 100,
// ListFunctions 50, ListHostedZones 100, ListResourceRecordSets 300,
// ELBv2's PageSize 400, DescribeTags 20 ARNs, ListTagsForResources 10
// zones. A kind in the Tagging API (inTaggingAPI) has its tags from the
// scan; a listing two kinds need (the hosted zones, the load balancers)
// is counted once, under the kind listed first, when both are declared.
func estateRow(k spec.Kind, n int, c census, reads bool) (minRow, bool) {
	m, ok := estateMin(k, n, c)
	if !ok {
		return minRow{}, false
	}
	r := minRow{what: fmt.Sprintf("%s ×%d: %s", k, n, m.list), calls: m.listCalls}
	if reads {
		if m.reads != "" {
			r.what += "; " + m.reads
		}
		r.calls += m.readCalls
		r.anyCalls = m.anyCalls
	}
	return r, true
}

// kindMin is one kind's minimum: the listing with what identity and
// ownership cost (all a destroy observes), and the reads of the declared
// fields no listing answers, with anyCalls the whole when another API
// would do it in fewer.
type kindMin struct {
	list      string
	listCalls int
	reads     string
	readCalls int
	anyCalls  int
}

func estateMin(k spec.Kind, n int, c census) (kindMin, bool) {
	kinds := c.kinds
	switch k {
	case spec.VPC:
		return kindMin{list: "DescribeVpcs, 1,000 a page (cidr, tags)", listCalls: pages(n, 1000),
			reads: fmt.Sprintf("DescribeVpcAttribute for each of the %d DNS attributes declared (one attribute a call)", c.vpcDNS), readCalls: c.vpcDNS}, true
	case spec.Subnet:
		return kindMin{list: "DescribeSubnets, 1,000 a page (vpc, cidr, zone, mapPublicIpOnLaunch, tags)", listCalls: pages(n, 1000)}, true
	case spec.InternetGateway:
		return kindMin{list: "DescribeInternetGateways, 1,000 a page (attachment, tags)", listCalls: pages(n, 1000)}, true
	case spec.RouteTable:
		return kindMin{list: "DescribeRouteTables, 100 a page (routes, associations, tags)", listCalls: pages(n, 100)}, true
	case spec.Route53Zone:
		return kindMin{list: "ListHostedZones, 100 a page (the comment); ListTagsForResources, 10 zones a call (ownership and tags: Route 53 is not in the emulator's Tagging API); GetHostedZone only where the name servers are read (none here)",
			listCalls: pages(n, 100) + pages(n, 10)}, true
	case spec.Route53Record:
		// A record's mark is its zone's tags; every record of a zone
		// comes in ListResourceRecordSets, besides the zone's SOA and NS.
		calls, what := 0, ""
		if kinds[spec.Route53Zone] == 0 {
			calls, what = 2, "ListHostedZones and ListTagsForResources (the zones and their marks); "
		}
		for _, m := range c.zoneRecords {
			calls += pages(m+2, 300)
		}
		return kindMin{list: fmt.Sprintf("%sListResourceRecordSets of each of the %d zones, 300 a page (values, TTL, alias; the zone's listing has the mark)", what, len(c.zoneRecords)),
			listCalls: calls}, true
	case spec.IAMRole:
		// ListRoles carries the trust policy, description and session
		// length, not tags nor attachments. GetAccountAuthorizationDetails
		// (filters Role and LocalManagedPolicy) carries a role's tags and
		// attachments, and the policies' documents in the same pages, but
		// infra does not ask for its permission (every role and policy
		// document of the account).
		return kindMin{list: "ListRoles, 1,000 a page (trust, description, session); ListRoleTags or GetRole each (ownership and tags: IAM is not in the Tagging API)", listCalls: pages(n, 1000) + n,
			reads:     fmt.Sprintf("ListAttachedRolePolicies for the %d declaring policies — with any API: GetAccountAuthorizationDetails, 1,000 a page, which also carries the fleet's policies", c.rolePolicies),
			readCalls: c.rolePolicies, anyCalls: pages(n+kinds[spec.IAMPolicy], 1000)}, true
	case spec.IAMPolicy:
		// ListPolicies carries neither tags nor the description, nor the
		// document, which is its default version's;
		// GetAccountAuthorizationDetails has no policy's tags.
		anyAPI := n
		if kinds[spec.IAMRole] == 0 {
			anyAPI += pages(n, 1000)
		}
		return kindMin{list: "ListPolicies (local), 1,000 a page; GetPolicy each (ownership and tags, and the description; ListPolicyTags where none is declared)", listCalls: pages(n, 1000) + n,
			reads: "GetPolicyVersion each (the document) — with any API: the documents and descriptions in GetAccountAuthorizationDetails' pages, ListPolicyTags each", readCalls: n, anyCalls: anyAPI}, true
	case spec.LambdaFunction:
		return kindMin{list: "ListFunctions, 50 a page (role, runtime, handler, code hash, environment, memory, timeout, architecture); tags from the Tagging API", listCalls: pages(n, 50),
			reads: fmt.Sprintf("GetFunction for the %d from an image (its URI)", c.images), readCalls: c.images}, true
	case spec.DynamoDBTable:
		return kindMin{list: "ListTables, 100 a page (names only); tags from the Tagging API", listCalls: pages(n, 100),
			reads:     fmt.Sprintf("DescribeTable each (keys, billing, capacity, deletion protection); DescribeTimeToLive for the %d declaring ttlAttribute; DescribeContinuousBackups for the %d declaring pointInTimeRecovery", c.ttl, c.pitr),
			readCalls: n + c.ttl + c.pitr}, true
	case spec.ALB:
		return kindMin{list: "DescribeLoadBalancers, 400 a page (subnets, groups, scheme); tags from the Tagging API", listCalls: pages(n, 400),
			reads: fmt.Sprintf("DescribeLoadBalancerAttributes for the %d declaring an attribute", c.albAttrs), readCalls: c.albAttrs}, true
	case spec.ALBTargetGroup:
		return kindMin{list: "DescribeTargetGroups, 400 a page (every declared field: type, VPC, protocol, port, health check); tags from the Tagging API; no field is a DescribeTargetGroupAttributes attribute", listCalls: pages(n, 400),
			reads: fmt.Sprintf("DescribeTargetHealth for the %d declaring their function (the registered target)", c.groupFunctions), readCalls: c.groupFunctions}, true
	case spec.ALBListener:
		calls, what := 0, ""
		if kinds[spec.ALB] == 0 {
			calls, what = pages(len(c.listenerLBs), 400), "DescribeLoadBalancers (the ARNs); "
		}
		calls += len(c.listenerLBs) + pages(n, 20)
		return kindMin{list: fmt.Sprintf("%sDescribeListeners of each of the %d load balancers, 400 a page (port, protocol, certificate, forward); DescribeTags, 20 ARNs a call (the Name tag and ownership: listeners are not in the emulator's Tagging API)", what, len(c.listenerLBs)),
			listCalls: calls}, true
	}
	return kindMin{}, false
}

// minimum is the no-change plan's minimum, the figure the report's
// "measured ÷ minimum" section has always compared with.
func minimum(c census) []minRow { return observeMinimum(c, true) }

// emptyMinimum observes an account holding none of the fleet: the account,
// one tag-scan page, and one empty page of each kind's listing.
func emptyMinimum(c census) []minRow {
	rows := []minRow{
		{what: "STS GetCallerIdentity", calls: 1},
		{what: "Tagging API GetResources: one empty page", calls: 1},
	}
	return append(rows, perKind(c, func(k spec.Kind, _ int) minRow {
		return minRow{what: fmt.Sprintf("%s: its listing, one empty page", k), calls: 1}
	})...)
}

// kindWrites is what a fresh apply and a destroy must write for n
// resources of a kind: one call each, plus extra calls where one is not
// enough.
type kindWrites struct {
	create, delete           string
	createExtra, deleteExtra func(n int, c census) int
}

// writesByKind: every create carries its tags (at create, or in the same
// call), and no read follows a create, which answers with the id, URL or
// ARN or has them derived from the name. Every delete is tried first and
// cleaned up only if refused: a bucket is emptied only when DeleteBucket
// says it is not empty, a user's attachments removed only when DeleteUser
// refuses; an instance's delete does not wait for it to terminate, and a
// group's delete waits for its instances only when EC2 refuses it.
var writesByKind = map[spec.Kind]kindWrites{
	spec.SecurityGroup: {
		create:      "CreateSecurityGroup (tags in TagSpecifications); AuthorizeSecurityGroupIngress for those declaring rules",
		createExtra: func(_ int, c census) int { return c.ingress },
		delete:      "DeleteSecurityGroup each (by the listed id; its instances awaited only if EC2 refuses)",
	},
	spec.AWSInstance: {
		create: "RunInstances each (tags in TagSpecifications; the group by the id its create answered)",
		delete: "TerminateInstances each (by the listed id, no wait)",
	},
	spec.Queues: {create: "CreateQueue each (attributes and tags in the call)", delete: "DeleteQueue each (the URL from the listing)"},
	// CreateBucket takes tags; PutBucketAbac makes S3 show the
	// executor's role the bucket's tags. At an endpoint other than AWS's
	// the driver also probes the first bucket of each region (its tags,
	// its ABAC): two calls a run that AWS's own endpoints do not cost, so
	// not in the minimum (docs/providers.md, "S3-compatible endpoints").
	spec.ObjectStore: {
		create:      "CreateBucket (tags in it) and PutBucketAbac each; PutBucketVersioning for those with it on (declared, or by default)",
		createExtra: func(n int, c census) int { return n + c.versioningOn },
		delete:      "DeleteBucket each (emptied only if refused: the fleet writes no objects)",
	},
	spec.Secrets:       {create: "CreateSecret each (value, description and tags in the call)", delete: "DeleteSecret each"},
	spec.IAM:           {create: "CreateUser each (tags in the call)", delete: "DeleteUser each (attachments removed only if refused)"},
	spec.ImageRegistry: {create: "CreateRepository each (mutability and tags in the call)", delete: "DeleteRepository each (force)"},
}

// writeRows is the fleet's rows of a fresh apply's creates (create) or a
// destroy's deletes.
func writeRows(c census, create bool) []minRow {
	return perKind(c, func(k spec.Kind, n int) minRow {
		w, ok := writesByKind[k]
		if !ok {
			return minRow{}
		}
		what, extra := w.delete, w.deleteExtra
		if create {
			what, extra = w.create, w.createExtra
		}
		calls := n
		if extra != nil {
			calls += extra(n, c)
		}
		return minRow{what: fmt.Sprintf("%s ×%d: %s", k, n, what), calls: calls}
	})
}

// createMinimum is the writes of a fresh apply.
func createMinimum(c census) []minRow { return writeRows(c, true) }

// writeMinimum is the writes of an apply of changes: one call per changed
// field (writesOf), no read before (the plan's observation has it) or after.
func writeMinimum(writes map[spec.Kind]int) []minRow {
	var rows []minRow
	for _, k := range minKinds {
		if n := writes[k]; n > 0 {
			rows = append(rows, minRow{what: fmt.Sprintf("%s: one write per changed field (%d)", k, n), calls: n})
		}
	}
	return rows
}

// deleteMinimum is the deletes of a destroy.
func deleteMinimum(c census) []minRow { return writeRows(c, false) }

// perKind is the rows of the kinds the fleet has, in minKinds' order; a
// kind row does not know is left out.
func perKind(c census, row func(k spec.Kind, n int) minRow) []minRow {
	var rows []minRow
	for _, k := range minKinds {
		if n, ok := c.kinds[k]; ok {
			if r := row(k, n); r.what != "" {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// fleetPair is a fleet and its "1% changed" version, which the phases'
// minimums are computed from.
type fleetPair struct {
	doc, changed *spec.Document
}

// phaseMinimum is the minimum of a phase by its name; ok is false for a
// phase the model has no minimum for.
func phaseMinimum(name string, f fleetPair) (rows []minRow, ok bool) {
	c := censusOf(f.doc)
	switch name {
	case "check":
		return nil, true // no call at all
	case "plan (empty account)":
		return emptyMinimum(c), true
	case "apply (fresh)":
		if !writesModelled(c) {
			return nil, false
		}
		return append(emptyMinimum(c), createMinimum(c)...), true
	case "plan (no changes)", "drift (none)":
		return observeMinimum(c, true), true
	case "plan (1% changed)":
		return observeMinimum(censusOf(f.changed), true), true
	case "apply (1% changed)":
		return append(observeMinimum(censusOf(f.changed), true), writeMinimum(writesOf(f.doc, f.changed))...), true
	case "destroy":
		if !writesModelled(c) {
			return nil, false
		}
		return append(observeMinimum(c, false), deleteMinimum(c)...), true
	}
	return nil, false
}

// writesModelled reports whether writesByKind knows every kind of the
// fleet: the writes of the others (the estate's) are not modelled, and a
// minimum leaving them out would be no minimum.
func writesModelled(c census) bool {
	for k := range c.kinds {
		if _, ok := writesByKind[k]; !ok {
			return false
		}
	}
	return true
}

// minTotal adds the rows up, with infra's permissions and with any API.
func minTotal(rows []minRow) (least, anyAPI int) {
	for _, r := range rows {
		least += r.calls
		if r.anyCalls > 0 {
			anyAPI += r.anyCalls
		} else {
			anyAPI += r.calls
		}
	}
	return least, anyAPI
}

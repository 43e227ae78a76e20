package aws

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// securityGroups is the security-group kind: an EC2 security group in its
// declared VPC or, when it declares none, the region's default VPC, named by
// its GroupName. A name is unique only within a VPC, so a name two VPCs'
// groups carry is a Conflict, never a guess. Its ingress is a set of TCP
// single-port rules open to CIDR blocks; egress is left as EC2 makes it.
type securityGroups struct {
	clients *regional[*ec2.Client]
	// pageSize is the listing's MaxResults; zero leaves EC2's default
	// (everything in one page, or 1,000 a page when paginated).
	pageSize int32
	// pollDelay, when set, is the wait between describes while a delete
	// waits for the group's instances; zero leaves the SDK's waiter delays.
	pollDelay time.Duration
}

var (
	_ providers.Driver   = (*securityGroups)(nil)
	_ providers.Releaser = (*securityGroups)(nil)
)

func init() {
	register(entry{
		kind: spec.SecurityGroup, service: "ec2",
		actions: []string{"ec2:DescribeVpcs", "ec2:DescribeSecurityGroups", "ec2:DescribeInstances", "ec2:CreateSecurityGroup",
			"ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:CreateTags", "ec2:DeleteTags",
			"ec2:DeleteSecurityGroup"},
		scopes: map[string][]ActionScope{
			// The group is made tagged; EC2 authorizes the call on its VPC
			// too, which it only uses. Unlike a subnet's, that VPC cannot
			// be required to carry a fleet's tag: the default VPC (vpc
			// unset) is no fleet's, and a wired one is another fleet's.
			"ec2:CreateSecurityGroup": {
				{Resource: "security-group/*", Scope: ScopeCreate},
				{Resource: "vpc/*", Scope: ScopeAny, Why: whyUsed},
			},
		},
		// The ARN holds the group's id; its name needs a describe.
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			id, ok := strings.CutPrefix(resource, "security-group/")
			return "", id, ok
		},
		errors: map[string]providers.Code{
			"InvalidGroup.NotFound": providers.NotFound, "InvalidGroupId.Malformed": providers.NotFound,
			"InvalidPermission.NotFound": providers.NotFound,
			"InvalidGroup.Duplicate":     providers.AlreadyExists, "InvalidPermission.Duplicate": providers.AlreadyExists,
			// Still used by an instance or a network interface.
			"DependencyViolation":   providers.Conflict,
			"InvalidGroup.Reserved": providers.InvalidArgument,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &securityGroups{clients: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })}
		},
	})
}

// groupWait bounds the wait for a new group to become visible to
// DescribeSecurityGroups (EC2 is eventually consistent).
const groupWait = 2 * time.Minute

// ec2Charset is what EC2 accepts in a VPC security group's name and
// description. Anything else, an apostrophe above all, fails the call after
// the plan was approved; the predecessor shipped that bug.
const ec2Charset = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-:/()#,@[]+=&;{}!$*"

func checkEC2Text(what, s string) error {
	if len(s) == 0 || len(s) > 255 {
		return providers.Errorf(providers.InvalidArgument, "security group %s must be 1 to 255 characters, is %d", what, len(s))
	}
	for _, r := range s {
		if !strings.ContainsRune(ec2Charset, r) {
			return providers.Errorf(providers.InvalidArgument, "security group %s %q: character %q is not allowed by EC2 (allowed: letters, digits, spaces and %s)",
				what, s, r, "._-:/()#,@[]+=&;{}!$*")
		}
	}
	return nil
}

func checkGroupName(name string) error {
	if name == "default" {
		return providers.Errorf(providers.InvalidArgument, `security group "default" belongs to its VPC; infra never manages it`)
	}
	if strings.HasPrefix(strings.ToLower(name), "sg-") {
		return providers.Errorf(providers.InvalidArgument, "security group name %q: EC2 refuses names starting with sg-", name)
	}
	return checkEC2Text("name", name)
}

// List reports the groups of every VPC of the region, but each VPC's
// default group, which is never managed. A group's name is unique only
// within its VPC: a name the groups of several VPCs carry is listed once,
// incomplete and without an owner, so that its read says which groups
// they are (a Conflict) rather than the listing choosing one.
func (d *securityGroups) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &ec2.DescribeSecurityGroupsInput{}
	if d.pageSize > 0 {
		in.MaxResults = aws.Int32(d.pageSize)
	}
	all, err := describeGroups(ctx, d.clients.get(region), region, in)
	if err != nil {
		return nil, fmt.Errorf("aws/security-group: DescribeSecurityGroups in %s: %w", region, err)
	}
	count := map[string]int{}
	for _, g := range all {
		count[aws.ToString(g.GroupName)]++
	}
	var out []providers.Resource
	for _, g := range all {
		name := aws.ToString(g.GroupName)
		switch n := count[name]; {
		case n == 0 || name == "default":
			continue // listed already, or never managed
		case n > 1:
			out = append(out, providers.Resource{Name: name, Region: region})
			count[name] = 0
		default:
			out = append(out, groupResource(region, g))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func describeGroups(ctx context.Context, c *ec2.Client, region string, in *ec2.DescribeSecurityGroupsInput) ([]ec2types.SecurityGroup, error) {
	return ec2Describe(ctx, ec2.NewDescribeSecurityGroupsPaginator(c, in), spec.SecurityGroup, region,
		func(p *ec2.DescribeSecurityGroupsOutput) []ec2types.SecurityGroup { return p.SecurityGroups })
}

func (d *securityGroups) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	g, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return groupResource(region, g), nil
}

// find returns the group called name, in whichever VPC of the region it
// is: NotFound when none is, a Conflict naming each group and its VPC
// when groups of several VPCs carry the name. Picking one would let infra
// change or delete the other.
func (d *securityGroups) find(ctx context.Context, region, name string) (ec2types.SecurityGroup, error) {
	if name == "default" {
		return ec2types.SecurityGroup{}, providers.Errorf(providers.NotFound, "security group %q is never managed", name)
	}
	// A group-name filter, not GroupNames: AWS answers GroupNames from the
	// default VPC only. The filter takes * and ? as wildcards, which a
	// name may hold (ec2Charset), so only the exact matches are kept.
	all, err := describeGroups(ctx, d.clients.get(region), region, &ec2.DescribeSecurityGroupsInput{
		Filters: []ec2types.Filter{{Name: aws.String("group-name"), Values: []string{filterPattern(name)}}}})
	if err != nil {
		return ec2types.SecurityGroup{}, fmt.Errorf("aws/security-group: %s: DescribeSecurityGroups: %w", name, err)
	}
	var found []ec2types.SecurityGroup
	for _, g := range all {
		if aws.ToString(g.GroupName) == name {
			found = append(found, g)
		}
	}
	switch len(found) {
	case 0:
		return ec2types.SecurityGroup{}, providers.Errorf(providers.NotFound, "aws/security-group: %s: no security group of that name in any VPC of %s", name, region)
	case 1:
		return found[0], nil
	}
	return ec2types.SecurityGroup{}, sameGroupName(region, name, found)
}

// sameGroupName is the Conflict of a name the groups of several VPCs carry,
// naming each group and its VPC.
func sameGroupName(region, name string, groups []ec2types.SecurityGroup) error {
	each := make([]string, len(groups))
	for i, g := range groups {
		each[i] = aws.ToString(g.GroupId) + " in " + aws.ToString(g.VpcId)
	}
	sort.Strings(each)
	return providers.Errorf(providers.Conflict, "aws/security-group: %s: %d security groups in %s are named %q (%s); a group's name is unique only within its VPC, "+
		"so infra cannot tell which is meant: rename or delete all but one", name, len(groups), region, name, strings.Join(each, ", "))
}

func (d *securityGroups) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	if err := checkGroupName(t.Name); err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeSecurityGroup(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	if err := checkEC2Text(providers.SecurityGroupDescription, decl.Description); err != nil {
		return providers.Resource{}, err
	}
	rules, err := targetIngress(decl.Ingress)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	in := &ec2.CreateSecurityGroupInput{
		GroupName:   aws.String(t.Name),
		Description: aws.String(decl.Description),
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeSecurityGroup, Tags: ec2Tags(tags),
		}},
	}
	// Without a VpcId, EC2 puts the group in the region's default VPC.
	var vpc string
	if decl.HasVPC() {
		if vpc, err = vpcIDOf(ctx, c, t, decl.VPC); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/security-group: %s: its vpc %s: %w", t.Name, decl.VPC, err)
		}
		in.VpcId = aws.String(vpc)
	}
	// The VPC may have been made a moment ago, and EC2 is eventually
	// consistent.
	out, err := c.CreateSecurityGroup(ctx, in, untilVisible("InvalidVpcID.NotFound"))
	if err != nil {
		return providers.Resource{}, err
	}
	id := aws.ToString(out.GroupId)
	add := authorizations(rules)
	if len(add) > 0 {
		// A failure here leaves the group with fewer rules than declared;
		// the next plan reads that truthfully and updates it.
		if _, err := c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: add}, untilGroupVisible); err != nil {
			return providers.Resource{}, err
		}
	}
	if vpc == "" && providers.WantsAttribute(ctx, "vpcId") {
		// The VPC is EC2's to say (the default one, here), and something
		// reads it.
		return d.readID(ctx, t.Region, id)
	}
	// What was sent is what the group is: no read back. Without a declared
	// vpc, the group's VPC is left unreported (unknown, never drift).
	return groupResource(t.Region, ec2types.SecurityGroup{GroupId: out.GroupId, GroupName: aws.String(t.Name), VpcId: aws.String(vpc),
		Description: aws.String(decl.Description), IpPermissions: add, Tags: ec2Tags(tags)}), nil
}

// untilGroupVisible retries a call naming a group just made while EC2,
// eventually consistent, does not show it yet, within the call's retry
// budget: the group's id came from CreateSecurityGroup, so NotFound can
// only mean "not yet". It costs no call when EC2 already shows it, where
// a wait before the call would cost a describe every time.
func untilGroupVisible(o *ec2.Options) {
	o.Retryer = retry.AddWithErrorCodes(o.Retryer, "InvalidGroup.NotFound")
}

// readID describes one group by id, waiting until EC2 shows it.
func (d *securityGroups) readID(ctx context.Context, region, id string) (providers.Resource, error) {
	out, err := ec2.NewSecurityGroupExistsWaiter(d.clients.get(region)).WaitForOutput(ctx,
		&ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}}, groupWait)
	if err != nil {
		return providers.Resource{}, err
	}
	if len(out.SecurityGroups) == 0 {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "security group %s vanished", id)
	}
	return groupResource(region, out.SecurityGroups[0]), nil
}

func (d *securityGroups) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	var doIngress, doTags bool
	for _, f := range changed {
		switch f {
		case providers.SecurityGroupIngress:
			doIngress = true
		case spec.TagsField:
			doTags = true
		case providers.SecurityGroupDescription, providers.SecurityGroupVPC:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "security group %s: EC2 cannot change its %s; it forces replacement", t.Name, f)
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "security group %s: unknown field %q", t.Name, f)
		}
	}
	g, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	id := aws.ToString(g.GroupId)
	now := g // what the group is once updated
	if doIngress {
		decl, err := providers.DecodeSecurityGroup(t.Fields)
		if err != nil {
			return providers.Resource{}, err
		}
		rules, err := targetIngress(decl.Ingress)
		if err != nil {
			return providers.Resource{}, err
		}
		add, remove := ingressChanges(g.IpPermissions, rules)
		// Revoke first: a rule both revoked and re-added (never the case
		// for an identical rule) cannot collide.
		if len(remove) > 0 {
			if _, err := c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: remove}); err != nil {
				return providers.Resource{}, err
			}
		}
		if len(add) > 0 {
			if _, err := c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: add}); err != nil {
				return providers.Resource{}, err
			}
		}
		now.IpPermissions = authorizations(rules) // exactly the declared rules
	}
	if doTags {
		want, err := desiredTags(t)
		if err != nil {
			return providers.Resource{}, err
		}
		if err := retagEC2(ctx, c, id, ec2TagMap(g.Tags), want); err != nil {
			return providers.Resource{}, err
		}
		now.Tags = ec2Tags(want)
	}
	// The group as described before, with what was written: no read back.
	return groupResource(t.Region, now), nil
}

func (d *securityGroups) Delete(ctx context.Context, t providers.Target) error {
	id := t.Attributes["groupId"] // what this run listed
	if id == "" {
		g, err := d.find(ctx, t.Region, t.Name)
		if err != nil {
			return err
		}
		id = aws.ToString(g.GroupId)
	}
	c := d.clients.get(t.Region)
	err := deleteGroup(ctx, c, id)
	if isCode(err, "DependencyViolation") {
		// An instance terminated a moment ago (an instance's delete does
		// not wait) still holds the group until it is gone: wait for the
		// group's instances, then try once more. Anything else holding it
		// (another group's rule, a network interface) is refused as
		// Conflict, and the engine retries once the dependants are gone.
		held, werr := d.waitInstancesGone(ctx, c, t.Region, id)
		if werr != nil {
			return fmt.Errorf("aws/security-group: %s: wait for its instances to terminate: %w", t.Name, werr)
		}
		if held {
			err = deleteGroup(ctx, c, id)
		}
	}
	return err
}

// waitInstancesGone waits until every instance using group id has
// terminated; false when no live or terminating instance uses it, so what
// holds the group is something else.
func (d *securityGroups) waitInstancesGone(ctx context.Context, c *ec2.Client, region, id string) (bool, error) {
	in := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("instance.group-id"), Values: []string{id}},
		{Name: aws.String("instance-state-name"), Values: append([]string{"shutting-down"}, liveStates...)},
	}}
	var ids []string
	err := eachPage(ctx, ec2.NewDescribeInstancesPaginator(c, in), spec.SecurityGroup, region, func(page *ec2.DescribeInstancesOutput) error {
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				ids = append(ids, aws.ToString(i.InstanceId))
			}
		}
		return nil
	})
	if err != nil || len(ids) == 0 {
		return false, err
	}
	err = ec2.NewInstanceTerminatedWaiter(c, func(o *ec2.InstanceTerminatedWaiterOptions) {
		if d.pollDelay > 0 {
			o.MinDelay, o.MaxDelay = d.pollDelay, d.pollDelay
		}
	}).Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids}, instanceWait)
	if isCode(err, "InvalidInstanceID.NotFound") {
		// An instance EC2 no longer knows of holds no group: the wait is
		// done, and the delete is tried again (a refusal then stands).
		// Returned, the NotFound of an instance would read as this group
		// being gone.
		err = nil
	}
	return true, err
}

// deleteGroup deletes a group by id. Gone already is done: a retry of a
// delete whose answer was lost finds nothing to delete.
func deleteGroup(ctx context.Context, c *ec2.Client, id string) error {
	_, err := c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)})
	if isCode(err, "InvalidGroup.NotFound") {
		return nil
	}
	return err
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *securityGroups) Release(ctx context.Context, region, name, owner string) error {
	g, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	return releaseEC2(ctx, d.clients.get(region), aws.ToString(g.GroupId), ec2TagMap(g.Tags), owner)
}

// groupResource reports a group. Its vpc is the VPC's id, the vpc kind's
// identity, so a group of a replaced or foreign VPC of the declared name is
// drift; the default VPC's id too, which is never compared when the
// document leaves vpc unset (an unset field is unknown).
func groupResource(region string, g ec2types.SecurityGroup) providers.Resource {
	tags := ec2TagMap(g.Tags)
	fields := map[string]any{
		providers.SecurityGroupDescription: aws.ToString(g.Description),
		providers.SecurityGroupIngress:     reportedIngress(g.IpPermissions),
		spec.TagsField:                     reportedTags(tags),
	}
	if vpc := aws.ToString(g.VpcId); vpc != "" {
		fields[providers.SecurityGroupVPC] = vpc
	}
	return providers.Resource{
		Name:   aws.ToString(g.GroupName),
		Region: region,
		Fields: fields,
		Attributes: map[string]string{
			"groupId": aws.ToString(g.GroupId),
			"vpcId":   aws.ToString(g.VpcId),
		},
		Owner: tags[spec.OwnershipTagKey],
		// DescribeSecurityGroups carries everything Read reports.
		Complete: true,
	}
}

// rule is one ingress rule infra can express: TCP on one port from a CIDR
// block (IPv4 or IPv6).
type rule struct {
	port int32
	cidr string
}

// targetIngress reads the ingress rules, each {"port", "cidr"} (the
// decoder checked only that they are a list). A CIDR with host bits set is
// refused, because EC2 would store it masked and the rule would then differ
// from the declaration on every plan.
func targetIngress(list []any) (map[rule]bool, error) {
	out := map[rule]bool{}
	for i, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, providers.Errorf(providers.InvalidArgument, "ingress rule %d is %T, want {port, cidr}", i, x)
		}
		port, ok := providers.FieldNumber(m, "port")
		if !ok || port < 0 || port > 65535 || port != float64(int32(port)) {
			return nil, providers.Errorf(providers.InvalidArgument, "ingress rule %d: port must be an integer from 0 to 65535", i)
		}
		cidr, _ := m["cidr"].(string)
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return nil, providers.Errorf(providers.InvalidArgument, "ingress rule %d: cidr %q: %v", i, cidr, err)
		}
		if p.Masked() != p {
			return nil, providers.Errorf(providers.InvalidArgument, "ingress rule %d: cidr %q has host bits set; write %q", i, cidr, p.Masked().String())
		}
		out[rule{port: int32(port), cidr: p.String()}] = true
	}
	return out, nil
}

// cidrsOf lists a permission's IPv4 and IPv6 sources.
func cidrsOf(p ec2types.IpPermission) []string {
	out := make([]string, 0, len(p.IpRanges)+len(p.Ipv6Ranges))
	for _, r := range p.IpRanges {
		out = append(out, aws.ToString(r.CidrIp))
	}
	for _, r := range p.Ipv6Ranges {
		out = append(out, aws.ToString(r.CidrIpv6))
	}
	return out
}

func tcpSinglePort(p ec2types.IpPermission) (int32, bool) {
	if aws.ToString(p.IpProtocol) != "tcp" || p.FromPort == nil || p.ToPort == nil || *p.FromPort != *p.ToPort {
		return 0, false
	}
	return *p.FromPort, true
}

// reportedIngress reports every ingress rule. The ones infra can express
// are {"port", "cidr"}; the others (UDP, port ranges, all traffic, sources
// that are groups or prefix lists) carry extra keys, so that they differ
// from any declared rule: the set compares unequal, and the update revokes
// them. Leaving them out would hide open ports.
func reportedIngress(perms []ec2types.IpPermission) []any {
	out := []any{}
	for _, p := range perms {
		port, simple := tcpSinglePort(p)
		odd := func(source, value string) map[string]any {
			m := map[string]any{"protocol": aws.ToString(p.IpProtocol), source: value}
			if p.FromPort != nil {
				m["port"] = float64(*p.FromPort)
			}
			if p.ToPort != nil {
				m["toPort"] = float64(*p.ToPort)
			}
			return m
		}
		for _, c := range cidrsOf(p) {
			if simple {
				out = append(out, map[string]any{"port": float64(port), "cidr": c})
			} else {
				out = append(out, odd("cidr", c))
			}
		}
		for _, g := range p.UserIdGroupPairs {
			out = append(out, odd("sourceGroup", aws.ToString(g.GroupId)))
		}
		for _, l := range p.PrefixListIds {
			out = append(out, odd("prefixList", aws.ToString(l.PrefixListId)))
		}
	}
	return out
}

// authorizations turns rules into EC2 permissions, one per rule.
func authorizations(rules map[rule]bool) []ec2types.IpPermission {
	list := make([]rule, 0, len(rules))
	for r := range rules {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].port != list[j].port {
			return list[i].port < list[j].port
		}
		return list[i].cidr < list[j].cidr
	})
	out := make([]ec2types.IpPermission, 0, len(list))
	for _, r := range list {
		out = append(out, tcpPermission(r.port, r.cidr))
	}
	return out
}

func tcpPermission(port int32, cidr string) ec2types.IpPermission {
	p := ec2types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(port), ToPort: aws.Int32(port)}
	if strings.Contains(cidr, ":") {
		p.Ipv6Ranges = []ec2types.Ipv6Range{{CidrIpv6: aws.String(cidr)}}
	} else {
		p.IpRanges = []ec2types.IpRange{{CidrIp: aws.String(cidr)}}
	}
	return p
}

// ingressChanges compares the group's permissions with the declared rules:
// what to authorize, and what to revoke, including every rule infra cannot
// express (the set is declared whole).
func ingressChanges(have []ec2types.IpPermission, want map[rule]bool) (add, remove []ec2types.IpPermission) {
	present := map[rule]bool{}
	for _, p := range have {
		port, simple := tcpSinglePort(p)
		if !simple {
			remove = append(remove, p)
			continue
		}
		for _, c := range cidrsOf(p) {
			if x := (rule{port, c}); want[x] {
				present[x] = true
			} else {
				remove = append(remove, tcpPermission(port, c))
			}
		}
		if len(p.UserIdGroupPairs) > 0 || len(p.PrefixListIds) > 0 {
			remove = append(remove, ec2types.IpPermission{
				IpProtocol: p.IpProtocol, FromPort: p.FromPort, ToPort: p.ToPort,
				UserIdGroupPairs: p.UserIdGroupPairs, PrefixListIds: p.PrefixListIds,
			})
		}
	}
	missing := map[rule]bool{}
	for r := range want {
		if !present[r] {
			missing[r] = true
		}
	}
	return authorizations(missing), remove
}

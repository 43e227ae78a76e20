package aws

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// instances is the aws-instance kind: one EC2 instance, named by its Name
// tag. An instance shutting down or terminated is absent: it can no longer
// be managed, and EC2 keeps terminated ones visible for about an hour.
type instances struct {
	clients *regional[*ec2.Client]
	// pageSize is DescribeInstances' MaxResults (5 to 1,000); zero leaves
	// EC2's default.
	pageSize int32
}

var (
	_ providers.Driver   = (*instances)(nil)
	_ providers.Releaser = (*instances)(nil)
)

func init() {
	register(entry{
		kind: spec.AWSInstance, service: "ec2",
		actions: []string{"ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeImages", "ec2:DescribeSubnets",
			"ec2:DescribeVpcs", "ec2:DescribeSecurityGroups", "ec2:RunInstances", "ec2:ModifyInstanceAttribute",
			"ec2:CreateTags", "ec2:DeleteTags", "ec2:TerminateInstances"},
		// An instance is named by its Name tag; one without is not ours to
		// name.
		arn: func(resource string, tags map[string]string) (string, string, bool) {
			if _, ok := strings.CutPrefix(resource, "instance/"); !ok || tags["Name"] == "" {
				return "", "", false
			}
			return tags["Name"], "", true
		},
		// A missing AMI, key pair or subnet named in a target is a wrong
		// argument, never the instance being absent.
		errors: map[string]providers.Code{
			"InvalidInstanceID.NotFound":   providers.NotFound,
			"InsufficientInstanceCapacity": providers.Conflict, "IncorrectInstanceState": providers.Conflict,
			"InvalidAMIID.NotFound": providers.InvalidArgument, "InvalidAMIID.Malformed": providers.InvalidArgument,
			"InvalidKeyPair.NotFound": providers.InvalidArgument, "InvalidSubnetID.NotFound": providers.InvalidArgument,
			"InvalidInstanceType": providers.InvalidArgument,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &instances{clients: newRegional(cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })}
		},
	})
}

// instanceWait bounds the wait for running or terminated. EC2 usually
// takes well under a minute either way.
const instanceWait = 15 * time.Minute

// liveStates are the states of an instance that exists for infra.
var liveStates = []string{"pending", "running", "stopping", "stopped"}

// latestImage is the imageId that means "the newest Amazon Linux 2023 at
// create". It is an instruction, not a value: the engine never compares it.
const latestImage = "latest"

func liveFilter() ec2types.Filter {
	return ec2types.Filter{Name: aws.String("instance-state-name"), Values: liveStates}
}

func (d *instances) List(ctx context.Context, region string) ([]providers.Resource, error) {
	all, err := d.describe(ctx, region, liveFilter())
	if err != nil {
		return nil, err
	}
	out := make([]providers.Resource, 0, len(all))
	byName := map[string][]string{}
	for _, i := range all {
		r := instanceResource(region, i)
		if r.Name == "" {
			// Not named, so not declarable and never made by infra.
			continue
		}
		byName[r.Name] = append(byName[r.Name], aws.ToString(i.InstanceId))
		out = append(out, r)
	}
	for name, ids := range byName {
		if len(ids) > 1 {
			return nil, duplicateNames(name, region, ids)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// duplicateNames refuses to guess between instances sharing a Name tag:
// picking one would let the other be replaced or deleted by mistake.
func duplicateNames(name, region string, ids []string) error {
	sort.Strings(ids)
	return fmt.Errorf("aws/aws-instance: %d live instances in %s carry Name=%q (%s); rename or terminate all but one",
		len(ids), region, name, strings.Join(ids, ", "))
}

// describe returns every instance matching the filters, reading every page.
func (d *instances) describe(ctx context.Context, region string, filters ...ec2types.Filter) ([]ec2types.Instance, error) {
	in := &ec2.DescribeInstancesInput{Filters: filters}
	if d.pageSize > 0 {
		in.MaxResults = aws.Int32(d.pageSize)
	}
	var out []ec2types.Instance
	err := eachPage(ctx, ec2.NewDescribeInstancesPaginator(d.clients.get(region), in), spec.AWSInstance, region, func(page *ec2.DescribeInstancesOutput) error {
		for _, r := range page.Reservations {
			out = append(out, r.Instances...)
		}
		return nil
	})
	return out, err
}

func (d *instances) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	i, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return instanceResource(region, i), nil
}

// find returns the live instance called name, or a NotFound error.
func (d *instances) find(ctx context.Context, region, name string) (ec2types.Instance, error) {
	candidates, err := d.describe(ctx, region, liveFilter(),
		ec2types.Filter{Name: aws.String("tag:Name"), Values: []string{filterPattern(name)}})
	if err != nil {
		return ec2types.Instance{}, err
	}
	var found []ec2types.Instance
	for _, i := range candidates {
		if ec2TagMap(i.Tags)["Name"] == name {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		return ec2types.Instance{}, providers.Errorf(providers.NotFound, "no live instance named %q in %s", name, region)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, x := range found {
		ids[i] = aws.ToString(x.InstanceId)
	}
	return ec2types.Instance{}, duplicateNames(name, region, ids)
}

// instanceTags is the tag set of an instance: the user's, the ownership
// tag, and Name, which is the instance's name and so not a user tag.
func instanceTags(t providers.Target) (map[string]string, error) {
	tags, err := desiredTags(t)
	if err != nil {
		return nil, err
	}
	if v, ok := tags["Name"]; ok && v != t.Name {
		return nil, providers.Errorf(providers.InvalidArgument, "instance %s: the Name tag is the instance's name; remove it from tags", t.Name)
	}
	if len(t.Name) == 0 || len(t.Name) > 256 {
		return nil, providers.Errorf(providers.InvalidArgument, "instance name must be 1 to 256 characters (it is the Name tag)")
	}
	tags["Name"] = t.Name
	return tags, nil
}

func (d *instances) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	tags, err := instanceTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeAWSInstance(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	itype := strings.TrimPrefix(decl.InstanceType, spec.RawPrefix)
	image, group, key, subnet := decl.ImageID, decl.SecurityGroup, decl.KeyName, decl.SubnetID
	if itype == "" || image == "" || group == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "instance %s: imageId, instanceType and securityGroup are required", t.Name)
	}
	c := d.clients.get(t.Region)
	if image == latestImage {
		if image, err = latestAL2023(ctx, c, itype); err != nil {
			return providers.Resource{}, err
		}
	}
	vpc := ""
	if subnet != "" {
		if vpc, err = subnetVPC(ctx, c, subnet); err != nil {
			return providers.Resource{}, err
		}
	}
	// A group this fleet declares, in the default VPC where the instance
	// goes too, is known by the id this run observed or made: no lookup.
	groupID := t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.SecurityGroup, Name: group}]
	if groupID == "" || subnet != "" {
		if groupID, err = groupIDByName(ctx, c, group, vpc); err != nil {
			return providers.Resource{}, err
		}
	}
	in := &ec2.RunInstancesInput{
		ImageId:          aws.String(image),
		InstanceType:     ec2types.InstanceType(itype),
		MinCount:         aws.Int32(1),
		MaxCount:         aws.Int32(1),
		SecurityGroupIds: []string{groupID},
		// The tags go on with the launch, so that no instance exists for
		// a moment without its name or ownership mark. ClientToken is
		// filled by the SDK, which makes a retried call idempotent.
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: ec2Tags(tags)}},
	}
	if key != "" {
		in.KeyName = aws.String(key)
	}
	if subnet != "" {
		in.SubnetId = aws.String(subnet)
	}
	// The group may have been made a moment ago, and EC2 is eventually
	// consistent.
	out, err := c.RunInstances(ctx, in, untilGroupVisible)
	if err != nil {
		return providers.Resource{}, err
	}
	if len(out.Instances) != 1 {
		return providers.Resource{}, fmt.Errorf("aws/aws-instance: RunInstances for %s returned %d instances", t.Name, len(out.Instances))
	}
	i := out.Instances[0]
	if providers.WantsAttribute(ctx, "state") || providers.WantsAttribute(ctx, "privateIp") && aws.ToString(i.PrivateIpAddress) == "" {
		// Something reads what only a running instance says.
		return d.waitRunning(ctx, t.Region, aws.ToString(i.InstanceId))
	}
	// RunInstances answers with the instance as launched (pending, with
	// its id, address and groups), and its tags are what was sent: no
	// describe, and no wait for it to run, which nothing reads.
	i.Tags = ec2Tags(tags)
	return instanceResource(t.Region, i), nil
}

func (d *instances) waitRunning(ctx context.Context, region, id string) (providers.Resource, error) {
	out, err := ec2.NewInstanceRunningWaiter(d.clients.get(region)).WaitForOutput(ctx,
		&ec2.DescribeInstancesInput{InstanceIds: []string{id}}, instanceWait)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/aws-instance: wait for %s to run: %w", id, err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			return instanceResource(region, i), nil
		}
	}
	return providers.Resource{}, providers.Errorf(providers.NotFound, "instance %s vanished", id)
}

func (d *instances) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	var doGroup, doTags bool
	for _, f := range changed {
		switch f {
		case providers.AWSInstanceSecurityGroup:
			doGroup = true
		case spec.TagsField:
			doTags = true
		case providers.AWSInstanceImageID, providers.AWSInstanceInstanceType, providers.AWSInstanceKeyName, providers.AWSInstanceSubnetID:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "instance %s: %s forces replacement", t.Name, f)
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "instance %s: unknown field %q", t.Name, f)
		}
	}
	i, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	id := aws.ToString(i.InstanceId)
	if doGroup {
		decl, err := providers.DecodeAWSInstance(t.Fields)
		if err != nil {
			return providers.Resource{}, err
		}
		groupID, err := groupIDByName(ctx, c, decl.SecurityGroup, aws.ToString(i.VpcId))
		if err != nil {
			return providers.Resource{}, err
		}
		if _, err := c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(id), Groups: []string{groupID}}); err != nil {
			return providers.Resource{}, err
		}
		i.SecurityGroups = []ec2types.GroupIdentifier{{GroupId: aws.String(groupID)}}
	}
	if doTags {
		want, err := instanceTags(t)
		if err != nil {
			return providers.Resource{}, err
		}
		if err := retagEC2(ctx, c, id, ec2TagMap(i.Tags), want, "Name"); err != nil {
			return providers.Resource{}, err
		}
		i.Tags = ec2Tags(want)
	}
	// The instance as found, with what was written: no read back.
	return instanceResource(t.Region, i), nil
}

func (d *instances) Delete(ctx context.Context, t providers.Target) error {
	id := t.Attributes["instanceId"] // what this run listed
	if id == "" {
		i, err := d.find(ctx, t.Region, t.Name)
		if err != nil {
			return err
		}
		id = aws.ToString(i.InstanceId)
	}
	// No wait for it to terminate: shutting down, it is already absent
	// for infra (a replacement may take its name), and the one delete
	// that needs it gone, its security group's, waits for it when EC2
	// refuses (securityGroups.Delete). Terminating one already gone is
	// done: a retry of a delete whose answer was lost.
	_, err := d.clients.get(t.Region).TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if isCode(err, "InvalidInstanceID.NotFound") {
		return nil
	}
	return err
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *instances) Release(ctx context.Context, region, name, owner string) error {
	i, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	return releaseEC2(ctx, d.clients.get(region), aws.ToString(i.InstanceId), ec2TagMap(i.Tags), owner)
}

func instanceResource(region string, i ec2types.Instance) providers.Resource {
	tags := ec2TagMap(i.Tags)
	user := reportedTags(tags)
	delete(user, "Name")
	ids := make([]string, 0, len(i.SecurityGroups))
	for _, g := range i.SecurityGroups {
		ids = append(ids, aws.ToString(g.GroupId))
	}
	sort.Strings(ids)
	state := ""
	if i.State != nil {
		state = string(i.State.Name)
	}
	r := providers.Resource{
		Name:   tags["Name"],
		Region: region,
		Fields: map[string]any{
			// The real AMI, even when the declaration says "latest": the
			// engine skips the comparison for that instruction.
			"imageId":      aws.ToString(i.ImageId),
			"instanceType": string(i.InstanceType),
			// The group's id, the identity the cloud attaches by (the
			// security-group kind's identity attribute): an instance still
			// on a replaced or foreign group of the same name differs from
			// its target. Several groups (attached outside infra) read as
			// their ids joined, which differs from any single declared
			// group and so is drift.
			"securityGroup": strings.Join(ids, ","),
			// Empty when none: a declared key name then differs, which is
			// the truth. Undeclared, the engine does not compare it.
			"keyName":      aws.ToString(i.KeyName),
			"subnetId":     aws.ToString(i.SubnetId),
			spec.TagsField: user,
		},
		Attributes: map[string]string{
			"instanceId": aws.ToString(i.InstanceId),
			"privateIp":  aws.ToString(i.PrivateIpAddress),
			"state":      state,
		},
		Owner: tags[spec.OwnershipTagKey],
		// DescribeInstances carries everything Read reports.
		Complete: true,
	}
	// LaunchTime moves on every start; the primary interface's attach time
	// is when the instance was made.
	for _, n := range i.NetworkInterfaces {
		if n.Attachment != nil && aws.ToInt32(n.Attachment.DeviceIndex) == 0 && n.Attachment.AttachTime != nil {
			r.Created = *n.Attachment.AttachTime
		}
	}
	if r.Created.IsZero() && i.LaunchTime != nil {
		r.Created = *i.LaunchTime
	}
	return r
}

// groupIDByName resolves a security group's name to its id, in vpc (the
// default VPC when empty).
func groupIDByName(ctx context.Context, c *ec2.Client, name, vpc string) (string, error) {
	groups, err := securityGroupsNamed(ctx, c, name)
	if err != nil {
		return "", err
	}
	g, ok, err := pickGroup(ctx, c, groups, vpc)
	if err != nil {
		return "", err
	}
	if !ok {
		where := "the default VPC"
		if vpc != "" {
			where = vpc
		}
		return "", providers.Errorf(providers.NotFound, "no security group named %q in %s of %s", name, where, c.Options().Region)
	}
	return aws.ToString(g.GroupId), nil
}

func subnetVPC(ctx context.Context, c *ec2.Client, subnet string) (string, error) {
	out, err := c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{subnet}})
	if err != nil {
		return "", err
	}
	if len(out.Subnets) == 0 {
		return "", providers.Errorf(providers.NotFound, "no subnet %s", subnet)
	}
	return aws.ToString(out.Subnets[0].VpcId), nil
}

// latestAL2023 returns the newest Amazon Linux 2023 AMI for the instance
// type's architecture. DescribeImages works on AWS and on the emulator
// alike; the SSM public parameter would need another client and
// permission for the same answer.
func latestAL2023(ctx context.Context, c *ec2.Client, itype string) (string, error) {
	arch := "x86_64"
	types, err := c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{ec2types.InstanceType(itype)}})
	if err != nil {
		return "", err
	}
	for _, t := range types.InstanceTypes {
		if t.ProcessorInfo == nil {
			continue
		}
		x86, arm := false, false
		for _, a := range t.ProcessorInfo.SupportedArchitectures {
			x86 = x86 || a == ec2types.ArchitectureTypeX8664
			arm = arm || a == ec2types.ArchitectureTypeArm64
		}
		if arm && !x86 {
			arch = "arm64"
		}
	}
	p := ec2.NewDescribeImagesPaginator(c, &ec2.DescribeImagesInput{
		Owners: []string{"amazon"},
		Filters: []ec2types.Filter{
			// al2023-ami-2023.<version>-kernel-<k>-<arch>: the standard
			// image, not minimal, ECS or other derived ones.
			{Name: aws.String("name"), Values: []string{"al2023-ami-2023.*-kernel-*-" + arch}},
			{Name: aws.String("architecture"), Values: []string{arch}},
			{Name: aws.String("state"), Values: []string{"available"}},
		},
	})
	var best ec2types.Image
	err = eachPage(ctx, p, spec.AWSInstance, c.Options().Region, func(page *ec2.DescribeImagesOutput) error {
		for _, img := range page.Images {
			// CreationDate is ISO 8601 in UTC, so it orders as text; a tie
			// (one release, several kernels) goes to the greatest name.
			bc, ic := aws.ToString(best.CreationDate), aws.ToString(img.CreationDate)
			if best.ImageId == nil || ic > bc || (ic == bc && aws.ToString(img.Name) > aws.ToString(best.Name)) {
				best = img
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if best.ImageId == nil {
		return "", providers.Errorf(providers.NotFound, "no Amazon Linux 2023 image for %s in %s", arch, c.Options().Region)
	}
	return aws.ToString(best.ImageId), nil
}

package aws

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// Amazon Linux 2023 AMIs moto ships for eu-west-3 (stable across resets).
const (
	motoAMI1 = "ami-0e96f8459c59b3ff6" // al2023 kernel 6.1, x86_64
	motoAMI2 = "ami-0354a9ce1e5eb83d7" // al2023 kernel 6.12, x86_64
)

// ec2Fixture makes what instances refer to: two security groups and two
// key pairs, through the drivers and SDK, and returns the default subnets.
func ec2Fixture(t *testing.T, b *Backend) (subnets []string) {
	t.Helper()
	ctx := context.Background()
	d, _ := b.Driver(spec.SecurityGroup)
	for _, g := range []string{"ct-web", "ct-db"} {
		if _, err := d.Create(ctx, providers.Target{Name: g, Region: testRegion, Owner: "fixture", Fields: map[string]any{"description": g}}); err != nil {
			t.Fatal(err)
		}
	}
	c := ec2.NewFromConfig(b.Config(), func(o *ec2.Options) { o.Region = testRegion })
	for _, k := range []string{"ct-key-a", "ct-key-b"} {
		// ed25519: moto makes it much faster than RSA.
		if _, err := c.CreateKeyPair(ctx, &ec2.CreateKeyPairInput{KeyName: aws.String(k), KeyType: ec2types.KeyTypeEd25519}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("default-for-az"), Values: []string{"true"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range out.Subnets {
		subnets = append(subnets, aws.ToString(s.SubnetId))
	}
	if len(subnets) < 2 {
		t.Fatalf("want two default subnets, have %v", subnets)
	}
	return subnets
}

func TestInstanceConformance(t *testing.T) {
	b, _ := newTestBackend(t)
	subnets := ec2Fixture(t, b)
	d, _ := b.Driver(spec.AWSInstance)
	d.(*instances).pageSize = 5
	// No Reset between subtests: moto gives default subnets new ids on every
	// reset, and Replaces must name one. The suite then checks only the
	// names it made, as on a real cloud.
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend: b, Region: testRegion, OtherRegion: otherRegion,
		Cases: []drivertest.Case{{
			Kind: spec.AWSInstance,
			// A fixed AMI: the suite compares imageId exactly, and "latest"
			// is an instruction the engine never compares (see
			// TestInstanceLatestImage).
			Create: map[string]any{
				"imageId": motoAMI1, "instanceType": "t3.micro", "securityGroup": "ct-web",
				"keyName": "ct-key-a", "subnetId": subnets[0],
			},
			Updates: []map[string]any{{"securityGroup": "ct-db"}, {"securityGroup": "ct-web"}},
			Replaces: []map[string]any{
				{"imageId": motoAMI2}, {"instanceType": "t3.small"},
				{"keyName": "ct-key-b"}, {"subnetId": subnets[1]},
			},
			OddNames: []string{"web 1 (blue) & ünïcode", "wild*card?[x]", strings.Repeat("i", 256)},
			PageSize: 5,
		}},
	})
}

func instanceTarget(name, image, itype string) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: map[string]any{
		"imageId": image, "instanceType": itype, "securityGroup": "ct-web",
	}}
}

// TestInstanceBehaviour runs the driver's own cases on one emulator reset
// and fixture (a reset with EC2 loaded takes seconds). Each subtest removes
// what it made.
func TestInstanceBehaviour(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	ec2Fixture(t, b)
	dr, _ := b.Driver(spec.AWSInstance)
	d := dr.(*instances)
	c := d.clients.get(testRegion)
	ctx := context.Background()
	create := creator(d)

	// "latest" is the newest Amazon Linux 2023 for the type's
	// architecture, and the real AMI is what Read reports.
	t.Run("LatestImage", func(t *testing.T) {
		for _, tc := range []struct{ itype, arch string }{{"t3.micro", "x86_64"}, {"t4g.micro", "arm64"}} {
			res := create(t, instanceTarget("latest-"+tc.itype, "latest", tc.itype))
			ami, _ := res.Fields["imageId"].(string)
			out, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{ami}})
			if err != nil || len(out.Images) != 1 {
				t.Fatalf("describe %q: %v", ami, err)
			}
			name := aws.ToString(out.Images[0].Name)
			if !strings.HasPrefix(name, "al2023-ami-2023.") || !strings.HasSuffix(name, "-"+tc.arch) {
				t.Errorf("%s: latest resolved to %s (%s), want an Amazon Linux 2023 %s image", tc.itype, ami, name, tc.arch)
			}
		}
	})

	// Create relies on the SDK's ClientToken to make a retried launch
	// launch once, as EC2 does; the harness holds moto to it.
	t.Run("ClientTokenLaunchesOnce", func(t *testing.T) {
		in := &ec2.RunInstancesInput{ImageId: aws.String(motoAMI1), InstanceType: ec2types.InstanceTypeT3Micro,
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ClientToken: aws.String("ct-token-once")}
		var ids []string
		for range 2 {
			out, err := c.RunInstances(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, aws.ToString(out.Instances[0].InstanceId))
		}
		if ids[0] != ids[1] {
			t.Errorf("two launches with one ClientToken made %v, want one instance", ids)
		}
		if _, err := c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids[:1]}); err != nil {
			t.Fatal(err)
		}
	})

	// Optional launch fields are reported truthfully when not declared: an
	// empty key name, the subnet EC2 chose. The engine compares them only
	// when declared.
	t.Run("UndeclaredLaunchFields", func(t *testing.T) {
		res := create(t, instanceTarget("plain", motoAMI1, "t3.micro"))
		sg, _ := b.Driver(spec.SecurityGroup)
		web, err := sg.Read(ctx, testRegion, "ct-web")
		if err != nil {
			t.Fatal(err)
		}
		// The group is reported by the id it is attached by, not its name.
		if res.Fields["keyName"] != "" || res.Fields["subnetId"] == "" || res.Fields["securityGroup"] != web.Attributes["groupId"] {
			t.Errorf("fields = %v", res.Fields)
		}
		if res.Attributes["instanceId"] == "" || res.Attributes["privateIp"] == "" || res.Attributes["state"] != "running" {
			t.Errorf("attributes = %v", res.Attributes)
		}
		if tags := res.Fields[spec.TagsField].(map[string]any); tags["Name"] != nil || tags[spec.OwnershipTagKey] != "fleet" {
			t.Errorf("tags = %v: want the ownership tag and no Name (it is the name)", tags)
		}
	})

	t.Run("RefusesNameTag", func(t *testing.T) {
		tg := instanceTarget("web", motoAMI1, "t3.micro")
		tg.Fields[spec.TagsField] = map[string]any{"Name": "other"}
		if _, err := d.Create(ctx, tg); errorCode(err) != providers.InvalidArgument {
			t.Errorf("Create with a Name tag = %v, want invalid argument", err)
		}
	})

	// Terminated and terminating instances are absent; the listing and
	// Read agree.
	t.Run("TerminatedIsAbsent", func(t *testing.T) {
		res := create(t, instanceTarget("gone", motoAMI1, "t3.micro"))
		if _, err := c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{res.Attributes["instanceId"]}}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Read(ctx, testRegion, "gone"); errorCode(err) != providers.NotFound {
			t.Errorf("Read after termination = %v, want not found", err)
		}
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Name == "gone" {
				t.Errorf("List shows the terminated instance")
			}
		}
		// A new instance of the same name is then the one Read finds.
		create(t, instanceTarget("gone", motoAMI1, "t3.micro"))
		if _, err := d.Read(ctx, testRegion, "gone"); err != nil {
			t.Errorf("Read of the new instance: %v", err)
		}
	})

	t.Run("ListReadsEveryPage", func(t *testing.T) {
		d.pageSize = 5
		defer func() { d.pageSize = 0 }()
		for i := 0; i < 11; i++ {
			create(t, instanceTarget(fmt.Sprintf("page-%02d", i), motoAMI1, "t3.nano"))
		}
		before := calls.count("DescribeInstances")
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 11 {
			t.Errorf("List found %d instances, want 11", len(rs))
		}
		if n := calls.count("DescribeInstances") - before; n != 3 {
			t.Errorf("List made %d DescribeInstances calls, want 3 pages of 5", n)
		}
	})

	// Two live instances with one Name: no guess, and never "absent".
	t.Run("DuplicateNamesFail", func(t *testing.T) {
		out, err := c.RunInstances(ctx, &ec2.RunInstancesInput{
			ImageId: aws.String(motoAMI1), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(2), MaxCount: aws.Int32(2),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: ec2Tags(map[string]string{"Name": "twin"})}},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			var ids []string
			for _, i := range out.Instances {
				ids = append(ids, aws.ToString(i.InstanceId))
			}
			_, _ = c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
		})
		_, err = d.Read(ctx, testRegion, "twin")
		if err == nil || errorCode(err) == providers.NotFound || !strings.Contains(err.Error(), "2 live instances") {
			t.Errorf("Read = %v, want an error naming both instances", err)
		}
		if _, err := d.List(ctx, testRegion); err == nil {
			t.Errorf("List succeeded with two instances named twin")
		}
	})
}

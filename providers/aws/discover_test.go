package aws

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// The tag scan finds what carries the ownership tag, of several kinds, in
// the region asked, and names each by its infra name.
func TestOwnedScansTheTagAPI(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	cfg := inTestRegion(b)
	q := sqs.NewFromConfig(cfg)
	for name, owner := range map[string]string{"ours": "shop", "theirs": "billing", "untagged": ""} {
		in := &sqs.CreateQueueInput{QueueName: aws.String(name)}
		if owner != "" {
			in.Tags = map[string]string{spec.OwnershipTagKey: owner}
		}
		if _, err := q.CreateQueue(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	sm := secretsmanager.NewFromConfig(cfg)
	if _, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("db-password"), SecretString: aws.String("x"),
		Tags: []smtypes.Tag{{Key: aws.String(spec.OwnershipTagKey), Value: aws.String("shop")}}}); err != nil {
		t.Fatal(err)
	}
	e := ec2.NewFromConfig(cfg)
	if _, err := e.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("web"), Description: aws.String("web"),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags: []ec2types.Tag{{Key: aws.String(spec.OwnershipTagKey), Value: aws.String("shop")}}}}}); err != nil {
		t.Fatal(err)
	}
	im := iam.NewFromConfig(cfg)
	if _, err := im.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("deployer"),
		Tags: []iamtypes.Tag{{Key: aws.String(spec.OwnershipTagKey), Value: aws.String("shop")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("someone")}); err != nil {
		t.Fatal(err)
	}
	// A plan's shallow scan leaves IAM to the ledger: its listing has no tags.
	shallow, err := b.Owned(ctx, testRegion, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range shallow {
		if o.Kind == spec.IAM {
			t.Errorf("the shallow scan read IAM: %v", o)
		}
	}
	owned, err := b.Owned(ctx, testRegion, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range owned {
		if o.Region != testRegion {
			t.Errorf("%s/%s in %s", o.Kind, o.Name, o.Region)
		}
		got[string(o.Kind)+"/"+o.Name] = o.Owner
	}
	want := map[string]string{"queues/ours": "shop", "queues/theirs": "billing", "secrets/db-password": "shop", "security-group/web": "shop",
		"iam/deployer": "shop"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: owner %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["queues/untagged"]; ok {
		t.Error("an untagged queue was reported")
	}
	if _, ok := got["iam/someone"]; ok {
		t.Error("an untagged user was reported")
	}
	other, err := b.Owned(ctx, otherRegion, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range other {
		if o.Kind == spec.Queues || o.Kind == spec.Secrets {
			t.Errorf("%s/%s leaked into %s", o.Kind, o.Name, otherRegion)
		}
	}
}

func TestKindOfARN(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:s3:::assets":                                               "object-store/assets",
		"arn:aws:sqs:eu-west-3:123456789012:jobs":                           "queues/jobs",
		"arn:aws:secretsmanager:eu-west-3:123456789012:secret:db-pw-AbC123": "secrets/db-pw",
		"arn:aws:rds:eu-west-3:123456789012:cluster:main":                   "postgres/main",
		"arn:aws:lambda:eu-west-3:123456789012:function:api":                "compute/api",
		"arn:aws:ec2:eu-west-3:123456789012:instance/i-0abc":                "aws-instance/web-1",
		"arn:aws:ec2:eu-west-3:123456789012:security-group/sg-1":            "security-group/#sg-1",
		"arn:aws:ec2:eu-west-3:123456789012:volume/vol-1":                   "-",
		"not an arn": "-",
	} {
		k, n, id, ok := kindOfARN(arn, map[string]string{"Name": "web-1"})
		got := "-"
		switch {
		case ok && id != "":
			got = fmt.Sprintf("%s/#%s", k, id)
		case ok:
			got = fmt.Sprintf("%s/%s", k, n)
		}
		if got != want {
			t.Errorf("%s: got %s, want %s", arn, got, want)
		}
	}
	var _ providers.Discoverer = (*Backend)(nil)
}

// The tag scan reads 100 resources a page, as the Tagging API allows,
// whatever their tags: without a tag cap beside the resource cap, pages are
// cut at 100 tags (25 resources carrying four), four times the pages.
func TestOwnedReadsAHundredAPage(t *testing.T) {
	calls := &callCounter{}
	b, _ := newTestBackend(t, calls.option())
	ctx := context.Background()
	cfg := inTestRegion(b)
	q := sqs.NewFromConfig(cfg)
	const n = 250
	for i := range n {
		tags := map[string]string{spec.OwnershipTagKey: "shop", "team": "scale", "tier": "web", "cost-centre": "101"}
		if _, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("q%03d", i)), Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	owned, err := b.Owned(ctx, testRegion, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(owned) != n {
		t.Fatalf("the scan found %d queues, want %d", len(owned), n)
	}
	if got := calls.count("GetResources"); got != 3 {
		t.Errorf("the scan of %d resources took %d pages, want 3", n, got)
	}
}

// The emulator answers a Tagging API page sent again, as after a lost
// answer, with the same page (internal/moto/serialized.py): moto's own
// pages share one live generator per token, so a retried page split the
// resources with the first attempt and the scan missed some.
func TestTheEmulatorsTagPagesReplay(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	cfg := inTestRegion(b)
	q := sqs.NewFromConfig(cfg)
	for i := range 150 {
		if _, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("r%03d", i)),
			Tags: map[string]string{spec.OwnershipTagKey: "shop"}}); err != nil {
			t.Fatal(err)
		}
	}
	c := resourcegroupstaggingapi.NewFromConfig(cfg)
	first, err := c.GetResources(ctx, &resourcegroupstaggingapi.GetResourcesInput{ResourcesPerPage: aws.Int32(100)})
	if err != nil || first.PaginationToken == nil || *first.PaginationToken == "" {
		t.Fatalf("first page: %v, token %v", err, first.PaginationToken)
	}
	var pages [2]int
	for i := range pages {
		next, err := c.GetResources(ctx, &resourcegroupstaggingapi.GetResourcesInput{ResourcesPerPage: aws.Int32(100), PaginationToken: first.PaginationToken})
		if err != nil {
			t.Fatalf("the second page, asked for the %d time: %v", i+1, err)
		}
		pages[i] = len(next.ResourceTagMappingList)
	}
	if len(first.ResourceTagMappingList)+pages[0] != 150 || pages[1] != pages[0] {
		t.Errorf("pages of %d, then %d and again %d; want 100, 50, 50", len(first.ResourceTagMappingList), pages[0], pages[1])
	}
}

// inTestRegion is the backend's SDK configuration in the test region, for
// the calls a test makes itself.
func inTestRegion(b *Backend) aws.Config {
	cfg := b.Config().Copy()
	cfg.Region = testRegion
	return cfg
}

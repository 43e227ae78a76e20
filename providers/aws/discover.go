package aws

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi"
	"github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi/schemas"
	tagtypes "github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi/types"
	"github.com/aws/smithy-go/transport/http/protocol/awsjson"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

var _ providers.Discoverer = (*Backend)(nil)

// tagClient makes the Tagging API client. The protocol is set to awsJson1.1
// explicitly: newer SDK releases default to RPC-v2 CBOR, which some
// endpoints (and emulators) do not serve, while AWS accepts awsJson1.1.
func tagClient(cfg aws.Config) *resourcegroupstaggingapi.Client {
	return resourcegroupstaggingapi.NewFromConfig(cfg, func(o *resourcegroupstaggingapi.Options) {
		o.Protocol = awsjson.New11(schemas.ResourceGroupsTaggingAPI_20170126)
	})
}

// Owned lists every resource in region that carries the ownership tag: one
// paginated GetResources call for what the Tagging API knows and, when
// deep, a listing and a read per resource for the kinds it does not.
func (b *Backend) Owned(ctx context.Context, region string, deep bool) ([]providers.Owned, error) {
	b.mu.Lock()
	if b.tags == nil {
		b.tags = newRegional(b.cfg, tagClient)
		b.ec2 = newRegional(b.cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })
	}
	tags, ec2c := b.tags.get(region), b.ec2.get(region)
	b.mu.Unlock()

	var out []providers.Owned
	var groupIDs []string
	groupOwner := map[string]string{}
	p := resourcegroupstaggingapi.NewGetResourcesPaginator(tags, &resourcegroupstaggingapi.GetResourcesInput{
		TagFilters: []tagtypes.TagFilter{{Key: aws.String(spec.OwnershipTagKey)}},
		// The most a page may hold. Without it, pages are cut by tag count
		// (the emulator cuts at 100 tags: 25 resources carrying four).
		ResourcesPerPage: aws.Int32(100),
	})
	err := eachPage(ctx, p, "tagging", region, func(page *resourcegroupstaggingapi.GetResourcesOutput) error {
		for _, m := range page.ResourceTagMappingList {
			tags := map[string]string{}
			for _, t := range m.Tags {
				tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			owner := tags[spec.OwnershipTagKey]
			kind, name, groupID, ok := kindOfARN(aws.ToString(m.ResourceARN), tags)
			switch {
			case !ok:
				continue
			case groupID != "":
				groupIDs = append(groupIDs, groupID)
				groupOwner[groupID] = owner
			default:
				out = append(out, providers.Owned{Kind: kind, Name: name, Region: region, Owner: owner, Tags: tags})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A security group's ARN holds its id; its name (our identity) needs
	// one batched describe.
	if len(groupIDs) > 0 {
		dp := ec2.NewDescribeSecurityGroupsPaginator(ec2c, &ec2.DescribeSecurityGroupsInput{GroupIds: groupIDs})
		err := eachPage(ctx, dp, spec.SecurityGroup, region, func(page *ec2.DescribeSecurityGroupsOutput) error {
			for _, g := range page.SecurityGroups {
				out = append(out, providers.Owned{Kind: spec.SecurityGroup, Name: aws.ToString(g.GroupName), Region: region,
					Owner: groupOwner[aws.ToString(g.GroupId)]})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// The kinds the Tagging API does not return (IAM is global, ECR is
	// missing from it) have listings without tags: a deep scan (discover)
	// reads each one; a plan's shallow scan leaves them to the ledger.
	for _, k := range kindsOutsideTagAPI() {
		if !deep {
			break
		}
		d, ok := b.Driver(k)
		if !ok {
			continue
		}
		rs, err := d.List(ctx, region)
		if err != nil {
			return nil, fmt.Errorf("aws/%s in %s: list: %w", k, region, err)
		}
		for _, r := range rs {
			if r.Owner == "" && !r.Complete {
				// The listing carries no tags: one read each.
				full, err := d.Read(ctx, region, r.Name)
				if errorCode(err) == providers.NotFound {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("aws/%s/%s in %s: read: %w", k, r.Name, region, err)
				}
				r = full
			}
			if r.Owner != "" {
				out = append(out, providers.Owned{Kind: k, Name: r.Name, Region: region, Owner: r.Owner})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

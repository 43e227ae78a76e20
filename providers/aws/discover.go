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
	tags, ec2c := b.discoveryClients(region)
	out, tagged, err := taggedResources(ctx, tags, region)
	if err != nil {
		return nil, err
	}
	groups, err := namedGroups(ctx, ec2c, region, tagged)
	if err != nil {
		return nil, err
	}
	out = append(out, groups...)
	if deep {
		untagged, err := b.ownedOutsideTagAPI(ctx, region)
		if err != nil {
			return nil, err
		}
		out = append(out, untagged...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// discoveryClients makes the Tagging API and EC2 clients on first use.
func (b *Backend) discoveryClients(region string) (*resourcegroupstaggingapi.Client, *ec2.Client) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tags == nil {
		b.tags = newRegional(b.cfg, tagClient)
		b.ec2 = newRegional(b.cfg, func(c aws.Config) *ec2.Client { return ec2.NewFromConfig(c) })
	}
	return b.tags.get(region), b.ec2.get(region)
}

// ownedGroup is a tagged security group known by id, waiting for its name.
type ownedGroup struct{ id, owner string }

// taggedResources is what the Tagging API holds with the ownership tag.
// Security groups come back apart, by id, in the order listed.
func taggedResources(ctx context.Context, c *resourcegroupstaggingapi.Client, region string) ([]providers.Owned, []ownedGroup, error) {
	var out []providers.Owned
	var groups []ownedGroup
	p := resourcegroupstaggingapi.NewGetResourcesPaginator(c, &resourcegroupstaggingapi.GetResourcesInput{
		TagFilters: []tagtypes.TagFilter{{Key: aws.String(spec.OwnershipTagKey)}},
		// The most a page may hold. Pages are also cut by tag count, at
		// 100 tags unless told (the emulator applies that cap even beside
		// ResourcesPerPage: 25 resources carrying four); 500 is its most,
		// so a page holds 100 resources carrying up to four tags.
		ResourcesPerPage: aws.Int32(100),
		TagsPerPage:      aws.Int32(500),
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
				groups = append(groups, ownedGroup{id: groupID, owner: owner})
			default:
				out = append(out, providers.Owned{Kind: kind, Name: name, Region: region, Owner: owner, Tags: tags})
			}
		}
		return nil
	})
	return out, groups, err
}

// namedGroups names the tagged security groups: a group's ARN holds its
// id, and its name (our identity) needs one batched describe.
func namedGroups(ctx context.Context, c *ec2.Client, region string, groups []ownedGroup) ([]providers.Owned, error) {
	if len(groups) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(groups))
	owner := map[string]string{}
	for _, g := range groups {
		ids = append(ids, g.id)
		owner[g.id] = g.owner
	}
	var out []providers.Owned
	dp := ec2.NewDescribeSecurityGroupsPaginator(c, &ec2.DescribeSecurityGroupsInput{GroupIds: ids})
	err := eachPage(ctx, dp, spec.SecurityGroup, region, func(page *ec2.DescribeSecurityGroupsOutput) error {
		for _, g := range page.SecurityGroups {
			out = append(out, providers.Owned{Kind: spec.SecurityGroup, Name: aws.ToString(g.GroupName), Region: region,
				Owner: owner[aws.ToString(g.GroupId)]})
		}
		return nil
	})
	return out, err
}

// ownedOutsideTagAPI covers the kinds the Tagging API does not return (IAM
// is global, ECR is missing from it): their listings carry no tags, so a
// deep scan (discover) reads each one; a plan's shallow scan leaves them
// to the ledger.
func (b *Backend) ownedOutsideTagAPI(ctx context.Context, region string) ([]providers.Owned, error) {
	var out []providers.Owned
	for _, k := range kindsOutsideTagAPI() {
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
	return out, nil
}

package aws

// Helpers shared by the package's drivers: the tag set a driver writes and
// how to move to it, the page budget of a listing; and EC2's own tags,
// default VPC and security group lookups. Reading a target's fields is
// providers.FieldString and its siblings, shared with every cloud.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// listPageLimit bounds every listing. At 100 to 1000 items a page it is far
// beyond any account we manage; reaching it means a runaway paginator, and a
// listing that stops early would make every resource past it look absent.
const listPageLimit = 1000

func pageLimitError(k spec.Kind, region string) error {
	return fmt.Errorf("aws/%s: listing in %s passed %d pages; refusing to report a prefix of it", k, region, listPageLimit)
}

// pager is the shape of every SDK paginator.
type pager[Out, Opts any] interface {
	HasMorePages() bool
	NextPage(context.Context, ...func(*Opts)) (Out, error)
}

// eachPage hands every page of p to each, failing past listPageLimit rather
// than returning a prefix.
func eachPage[Out, Opts any](ctx context.Context, p pager[Out, Opts], k spec.Kind, region string, each func(Out) error) error {
	for pages := 0; p.HasMorePages(); pages++ {
		if pages == listPageLimit {
			return pageLimitError(k, region)
		}
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		if err := each(page); err != nil {
			return err
		}
	}
	return nil
}

// desiredTags is the tag set a driver writes: the user's tags and the
// ownership tag for t.Owner. Keys under "aws:" belong to AWS, which refuses
// them, so they are refused here with the reason.
func desiredTags(t providers.Target) (map[string]string, error) {
	tags, err := providers.FieldStringMap(t.Fields, spec.TagsField)
	if err != nil {
		return nil, err
	}
	for k := range tags {
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return nil, providers.Errorf(providers.InvalidArgument, "tag %q: keys starting with aws: are reserved by AWS", k)
		}
	}
	if t.Owner != "" {
		tags[spec.OwnershipTagKey] = t.Owner
	} else {
		delete(tags, spec.OwnershipTagKey)
	}
	return tags, nil
}

// reportedTags is the tags field a driver reports: every tag, the ownership
// tag included (the engine strips it), except AWS's own aws: tags, which no
// spec can declare and which would otherwise be drift for ever.
func reportedTags(tags map[string]string) map[string]any {
	out := make(map[string]any, len(tags))
	for k, v := range tags {
		if !strings.HasPrefix(strings.ToLower(k), "aws:") {
			out[k] = v
		}
	}
	return out
}

// tagChanges returns the tags to set and the keys to remove to go from have
// to want. AWS's aws: tags and the keys keep names are never removed.
func tagChanges(have, want map[string]string, keep ...string) (set map[string]string, remove []string) {
	set = map[string]string{}
	for k, v := range want {
		if cur, ok := have[k]; !ok || cur != v {
			set[k] = v
		}
	}
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	for k := range have {
		if _, ok := want[k]; ok || kept[k] || strings.HasPrefix(strings.ToLower(k), "aws:") {
			continue
		}
		remove = append(remove, k)
	}
	sort.Strings(remove)
	return set, remove
}

// tagList turns a tag map into an SDK's tag list, sorted by key so that
// requests are stable.
func tagList[T any](m map[string]string, mk func(k, v *string) T) []T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		out = append(out, mk(aws.String(k), aws.String(m[k])))
	}
	return out
}

// tagMapOf turns an SDK's tag list into a map.
func tagMapOf[T any](tags []T, kv func(T) (k, v *string)) map[string]string {
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		k, v := kv(t)
		out[aws.ToString(k)] = aws.ToString(v)
	}
	return out
}

func ec2Tags(m map[string]string) []ec2types.Tag {
	return tagList(m, func(k, v *string) ec2types.Tag { return ec2types.Tag{Key: k, Value: v} })
}

func ec2TagMap(tags []ec2types.Tag) map[string]string {
	return tagMapOf(tags, func(t ec2types.Tag) (k, v *string) { return t.Key, t.Value })
}

// retagEC2 moves an EC2 resource's tags from have to want.
func retagEC2(ctx context.Context, c *ec2.Client, id string, have, want map[string]string, keep ...string) error {
	set, remove := tagChanges(have, want, keep...)
	if len(set) > 0 {
		if _, err := c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: ec2Tags(set)}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		del := make([]ec2types.Tag, len(remove))
		for i, k := range remove {
			del[i] = ec2types.Tag{Key: aws.String(k)}
		}
		if _, err := c.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{id}, Tags: del}); err != nil {
			return err
		}
	}
	return nil
}

// filterPattern makes name safe as an EC2 filter value: AWS treats * and ?
// as wildcards (and a backslash as their escape); moto makes the value a
// regular expression without escaping the rest, so . ( ) [ ] + { } $ ^ |
// are not themselves there either (a security group's name may hold most
// of them). Each becomes ?, which matches any one character on AWS (and
// one or none on moto); the caller keeps only exact matches.
func filterPattern(name string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(`*?\[].()+{}$^|`, r) {
			return '?'
		}
		return r
	}, name)
}

// releaseEC2 removes the ownership tag from an EC2 resource if it names
// owner. DeleteTags with the value deletes only a tag that still has it, so
// a concurrent claim by another fleet survives.
func releaseEC2(ctx context.Context, c *ec2.Client, id string, tags map[string]string, owner string) error {
	if tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	_, err := c.DeleteTags(ctx, &ec2.DeleteTagsInput{
		Resources: []string{id},
		Tags:      []ec2types.Tag{{Key: aws.String(spec.OwnershipTagKey), Value: aws.String(owner)}},
	})
	return err
}

// defaultVPC returns the region's default VPC id, or "" when it has none.
// It is looked up when needed rather than cached: a default VPC can be
// deleted and made again, and an emulator reset makes a new one.
func defaultVPC(ctx context.Context, c *ec2.Client) (string, error) {
	out, err := c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{
		Filters: []ec2types.Filter{{Name: aws.String("is-default"), Values: []string{"true"}}},
	})
	if err != nil {
		return "", err
	}
	if len(out.Vpcs) == 0 {
		return "", nil
	}
	return aws.ToString(out.Vpcs[0].VpcId), nil
}

// securityGroupsNamed returns the default VPC's security group called
// name. It asks by GroupNames, which AWS answers from the default VPC only
// and which, unlike a group-name filter, takes * and ? literally. A missing
// group is InvalidGroup.NotFound.
func securityGroupsNamed(ctx context.Context, c *ec2.Client, name string) ([]ec2types.SecurityGroup, error) {
	out, err := c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupNames: []string{name}})
	if err != nil {
		return nil, err
	}
	return out.SecurityGroups, nil
}

// pickGroup chooses among security groups sharing a name, which EC2 allows
// in different VPCs: the one in vpc, or in the default VPC when vpc is
// empty. A single group is taken as is when vpc is empty: AWS answers
// GroupNames from the default VPC (moto from any VPC).
func pickGroup(ctx context.Context, c *ec2.Client, groups []ec2types.SecurityGroup, vpc string) (ec2types.SecurityGroup, bool, error) {
	if len(groups) == 0 {
		return ec2types.SecurityGroup{}, false, nil
	}
	if len(groups) == 1 && vpc == "" {
		return groups[0], true, nil
	}
	if vpc == "" {
		var err error
		if vpc, err = defaultVPC(ctx, c); err != nil {
			return ec2types.SecurityGroup{}, false, err
		}
	}
	for _, g := range groups {
		if aws.ToString(g.VpcId) == vpc {
			return g, true, nil
		}
	}
	return ec2types.SecurityGroup{}, false, nil
}

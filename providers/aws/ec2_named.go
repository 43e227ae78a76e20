package aws

// Helpers of the EC2 kinds named by their Name tag (vpc, subnet,
// internet-gateway): EC2 gives them an id and no name of their own, so
// infra names them by the tag, sent in the create request with the
// ownership tag, and refuses to guess between two that carry one name.

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// namedTags is the tag set of a resource of kind k named by its Name tag:
// the user's tags, the ownership tag, and Name, which is the name and so
// not a user tag. EC2 takes tag values of up to 256 characters.
func namedTags(k spec.Kind, t providers.Target) (map[string]string, error) {
	if len(t.Name) == 0 || len(t.Name) > 256 {
		return nil, providers.Errorf(providers.InvalidArgument, "aws/%s: a name is 1 to 256 characters (it is the Name tag), not %d", k, len(t.Name))
	}
	tags, err := desiredTags(t)
	if err != nil {
		return nil, err
	}
	if v, ok := tags["Name"]; ok && v != t.Name {
		return nil, providers.Errorf(providers.InvalidArgument, "aws/%s: %s: the Name tag is the name; remove it from tags", k, t.Name)
	}
	tags["Name"] = t.Name
	return tags, nil
}

// tagSpec is the TagSpecifications of a create: the tags go on in the
// request itself, so nothing infra makes exists untagged for a moment.
func tagSpec(rt ec2types.ResourceType, tags map[string]string) []ec2types.TagSpecification {
	return []ec2types.TagSpecification{{ResourceType: rt, Tags: ec2Tags(tags)}}
}

// userTags is the tags field of a resource named by its Name tag: every
// tag but Name (the ownership tag included; the engine strips it).
func userTags(tags map[string]string) map[string]any {
	out := reportedTags(tags)
	delete(out, "Name")
	return out
}

// nameFilter asks EC2 for the resources whose Name tag may be name; the
// caller keeps the exact matches (filterPattern).
func nameFilter(name string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String("tag:Name"), Values: []string{filterPattern(name)}}
}

// named is a resource found by its Name tag: its id and tags.
type named struct {
	id   string
	tags map[string]string
}

// theOne picks, among the candidates a Name filter returned, the one named
// exactly name: NotFound when none is, a Conflict naming every id when
// several are. Picking one would let infra change or delete the other.
func theOne[T any](k spec.Kind, region, name string, candidates []T, of func(T) named) (T, error) {
	var found []T
	var ids []string
	for _, x := range candidates {
		if n := of(x); n.tags["Name"] == name {
			found = append(found, x)
			ids = append(ids, n.id)
		}
	}
	var zero T
	switch len(found) {
	case 0:
		return zero, providers.Errorf(providers.NotFound, "aws/%s: %s: none in %s carries Name=%q", k, name, region, name)
	case 1:
		return found[0], nil
	}
	return zero, sameName(k, region, name, ids)
}

func sameName(k spec.Kind, region, name string, ids []string) error {
	sort.Strings(ids)
	return providers.Errorf(providers.Conflict, "aws/%s: %s: %d of them in %s carry Name=%q (%s); infra names a %s by its Name tag, so rename or delete all but one",
		k, name, len(ids), region, name, strings.Join(ids, ", "), k)
}

// listNamed turns a listing into resources: those without a Name tag are
// not listed (infra names nothing by an id). A name several carry is a
// Conflict naming their ids when any of them carries an ownership tag, so
// a fleet's resource is never reported as one of two; when none does,
// neither is listed: neither is any fleet's, and neither can be named.
func listNamed[T any](k spec.Kind, region string, all []T, of func(T) named, resource func(T) providers.Resource) ([]providers.Resource, error) {
	byName := map[string][]named{}
	for _, x := range all {
		if n := of(x); n.tags["Name"] != "" {
			byName[n.tags["Name"]] = append(byName[n.tags["Name"]], n)
		}
	}
	var out []providers.Resource
	for _, x := range all {
		n := of(x)
		same := byName[n.tags["Name"]]
		switch {
		case len(same) == 0:
			continue
		case len(same) > 1:
			for _, s := range same {
				if s.tags[spec.OwnershipTagKey] != "" {
					ids := make([]string, len(same))
					for i, s := range same {
						ids[i] = s.id
					}
					return nil, sameName(k, region, n.tags["Name"], ids)
				}
			}
			continue
		}
		out = append(out, resource(x))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ec2ARN is the ARN of an EC2 resource whose describe carries none, from
// its owner and id: arn:PARTITION:ec2:REGION:ACCOUNT:TYPE/ID.
func ec2ARN(region, owner, resourceType, id string) string {
	return fmt.Sprintf("arn:%s:ec2:%s:%s:%s/%s", Partition(region), region, owner, resourceType, id)
}

// nameTagARN is the tag scan's parser for a kind named by its Name tag:
// the resource part is TYPE/ID, and the name is the Name tag; one without
// is not infra's to name.
func nameTagARN(resourceType string) func(resource string, tags map[string]string) (string, string, bool) {
	return func(resource string, tags map[string]string) (string, string, bool) {
		if !strings.HasPrefix(resource, resourceType+"/") || tags["Name"] == "" {
			return "", "", false
		}
		return tags["Name"], "", true
	}
}

// blockSize checks an IPv4 block a VPC or subnet is made with: canonical
// (spec.ParseCIDR, which check applies too) and, as CreateVpc and
// CreateSubnet demand, from a /16 to a /28.
func blockSize(k spec.Kind, name, cidr string) (netip.Prefix, error) {
	p, bad := spec.ParseCIDR(cidr)
	if bad != nil {
		return p, providers.Errorf(providers.InvalidArgument, "aws/%s: %s: cidr %s; %s", k, name, bad.What, bad.Fix)
	}
	if p.Bits() < 16 || p.Bits() > 28 {
		return p, providers.Errorf(providers.InvalidArgument, "aws/%s: %s: cidr %s is a /%d; EC2 takes a /16 (65,536 addresses) to a /28 (16)", k, name, cidr, p.Bits())
	}
	return p, nil
}

// ec2Describe collects every item of every page of an EC2 describe.
func ec2Describe[Out, Opts, T any](ctx context.Context, p pager[Out, Opts], k spec.Kind, region string, items func(Out) []T) ([]T, error) {
	var out []T
	err := eachPage(ctx, p, k, region, func(page Out) error {
		out = append(out, items(page)...)
		return nil
	})
	return out, err
}

// untilVisible retries a call naming resources made a moment ago while
// EC2, eventually consistent, does not show them yet, within the call's
// retry budget: their ids came from a create or a listing, so NotFound
// there means "not yet". It costs nothing when EC2 already shows them.
func untilVisible(codes ...string) func(*ec2.Options) {
	return func(o *ec2.Options) { o.Retryer = retry.AddWithErrorCodes(o.Retryer, codes...) }
}

// releaseNamed removes owner's ownership tag from a resource found by its
// name, keeping every other tag.
func releaseNamed(ctx context.Context, c *ec2.Client, k spec.Kind, name string, n named, owner string) error {
	if err := releaseEC2(ctx, c, n.id, n.tags, owner); err != nil {
		return fmt.Errorf("aws/%s: %s: DeleteTags: %w", k, name, err)
	}
	return nil
}

// namedDespite is madeDespite for a kind named by its Name tag: after a
// create that may have been carried out, the resource find returns by
// that name is the create's if it carries t's ownership tag.
func namedDespite[T any](err error, t providers.Target, find func() (T, error), of func(T) named) (T, error) {
	return madeDespite(err, t.Owner, func() (T, string, error) {
		x, ferr := find()
		return x, of(x).tags[spec.OwnershipTagKey], ferr
	})
}

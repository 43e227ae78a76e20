package aws

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	ecrtypes "github.com/aws/aws-sdk-go-v2/service/ecr/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// registries is the image-registry kind: an ECR repository, named by its
// RepositoryName, with tag immutability.
type registries struct {
	clients  *regional[*ecr.Client]
	pageSize int32 // DescribeRepositories' MaxResults; 0 for the service's default
}

var (
	_ providers.Driver       = (*registries)(nil)
	_ providers.Releaser     = (*registries)(nil)
	_ providers.ListedReader = (*registries)(nil)
)

func init() {
	register(entry{
		kind: spec.ImageRegistry, service: "ecr",
		actions: []string{"ecr:DescribeRepositories", "ecr:ListTagsForResource", "ecr:CreateRepository",
			"ecr:PutImageTagMutability", "ecr:TagResource", "ecr:UntagResource", "ecr:DeleteRepository"},
		deepScan: true, // the Tagging API does not return ECR repositories
		errors: map[string]providers.Code{
			"RepositoryNotFoundException":      providers.NotFound,
			"RepositoryAlreadyExistsException": providers.AlreadyExists,
			"RepositoryNotEmptyException":      providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &registries{clients: newRegional(cfg, func(c aws.Config) *ecr.Client { return ecr.NewFromConfig(c) })}
		},
	})
}

// List is not complete: DescribeRepositories carries no tags.
func (d *registries) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &ecr.DescribeRepositoriesInput{}
	if d.pageSize > 0 {
		in.MaxResults = aws.Int32(d.pageSize)
	}
	var out []providers.Resource
	err := eachPage(ctx, ecr.NewDescribeRepositoriesPaginator(d.clients.get(region), in), spec.ImageRegistry, region, func(page *ecr.DescribeRepositoriesOutput) error {
		for _, r := range page.Repositories {
			out = append(out, repositoryResource(region, r))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func repositoryResource(region string, r ecrtypes.Repository) providers.Resource {
	return providers.Resource{
		Name: aws.ToString(r.RepositoryName), Region: region, Created: aws.ToTime(r.CreatedAt),
		// With exclusions, tags are immutable except those the exclusions
		// name, which infra does not manage: still immutable as declared.
		Fields: map[string]any{"immutableTags": r.ImageTagMutability == ecrtypes.ImageTagMutabilityImmutable ||
			r.ImageTagMutability == ecrtypes.ImageTagMutabilityImmutableWithExclusion},
		Attributes: map[string]string{"arn": aws.ToString(r.RepositoryArn), "uri": aws.ToString(r.RepositoryUri)},
	}
}

func (d *registries) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	out, err := c.DescribeRepositories(ctx, &ecr.DescribeRepositoriesInput{RepositoryNames: []string{name}})
	if err != nil {
		return providers.Resource{}, err
	}
	if len(out.Repositories) != 1 {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "repository %s: not found in %s", name, region)
	}
	res := repositoryResource(region, out.Repositories[0])
	tags, err := d.tags(ctx, c, out.Repositories[0].RepositoryArn)
	if err != nil {
		return providers.Resource{}, err
	}
	res.Fields[spec.TagsField] = reportedTags(tags)
	res.Owner = tags[spec.OwnershipTagKey]
	return res, nil
}

// ReadListed adds the tags to a listed repository: DescribeRepositories
// already gave its settings and ARN, so one call instead of Read's two, and
// none when the tag scan had them.
func (d *registries) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	arn := listed.Attributes["arn"]
	if arn == "" {
		return d.Read(ctx, listed.Region, listed.Name)
	}
	if tags == nil {
		var err error
		if tags, err = d.tags(ctx, d.clients.get(listed.Region), aws.String(arn)); err != nil {
			return providers.Resource{}, err
		}
	}
	res := listed
	res.Fields = make(map[string]any, len(listed.Fields)+1)
	for k, v := range listed.Fields {
		res.Fields[k] = v
	}
	res.Fields[spec.TagsField] = reportedTags(tags)
	res.Owner = tags[spec.OwnershipTagKey]
	return res, nil
}

func (d *registries) tags(ctx context.Context, c *ecr.Client, arn *string) (map[string]string, error) {
	out, err := c.ListTagsForResource(ctx, &ecr.ListTagsForResourceInput{ResourceArn: arn})
	if err != nil {
		return nil, err
	}
	return tagMapOf(out.Tags, func(t ecrtypes.Tag) (*string, *string) { return t.Key, t.Value }), nil
}

func mutability(t providers.Target) (ecrtypes.ImageTagMutability, error) {
	in, err := providers.DecodeImageRegistry(t.Fields)
	if err != nil || !in.ImmutableTags {
		return ecrtypes.ImageTagMutabilityMutable, err
	}
	return ecrtypes.ImageTagMutabilityImmutable, nil
}

func (d *registries) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	m, err := mutability(t)
	if err != nil {
		return providers.Resource{}, err
	}
	// Tags go with the create: the repository never exists without its
	// ownership tag.
	out, err := d.clients.get(t.Region).CreateRepository(ctx, &ecr.CreateRepositoryInput{
		RepositoryName: aws.String(t.Name), ImageTagMutability: m, Tags: ecrTags(tags),
	})
	if err != nil {
		return providers.Resource{}, err
	}
	if out.Repository == nil {
		return d.Read(ctx, t.Region, t.Name)
	}
	// CreateRepository describes the repository (its ARN and URI); the tags
	// are what was sent: no read back.
	res := repositoryResource(t.Region, *out.Repository)
	res.Fields[spec.TagsField] = reportedTags(tags)
	res.Owner = t.Owner
	return res, nil
}

func (d *registries) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c := d.clients.get(t.Region)
	for _, f := range changed {
		var err error
		switch f {
		case providers.ImageRegistryImmutableTags:
			var m ecrtypes.ImageTagMutability
			if m, err = mutability(t); err == nil {
				_, err = c.PutImageTagMutability(ctx, &ecr.PutImageTagMutabilityInput{RepositoryName: aws.String(t.Name), ImageTagMutability: m})
			}
		case spec.TagsField:
			err = d.retag(ctx, c, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "image-registry: field %q cannot be updated in place", f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *registries) arn(ctx context.Context, c *ecr.Client, region, name string) (*string, error) {
	out, err := c.DescribeRepositories(ctx, &ecr.DescribeRepositoriesInput{RepositoryNames: []string{name}})
	if err != nil {
		return nil, err
	}
	if len(out.Repositories) != 1 {
		return nil, providers.Errorf(providers.NotFound, "repository %s: not found in %s", name, region)
	}
	return out.Repositories[0].RepositoryArn, nil
}

func (d *registries) retag(ctx context.Context, c *ecr.Client, t providers.Target) error {
	arn, err := d.arn(ctx, c, t.Region, t.Name)
	if err != nil {
		return err
	}
	have, err := d.tags(ctx, c, arn)
	if err != nil {
		return err
	}
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have, want, spec.OwnershipTagKey)
	if len(set) > 0 {
		if _, err := c.TagResource(ctx, &ecr.TagResourceInput{ResourceArn: arn, Tags: ecrTags(set)}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &ecr.UntagResourceInput{ResourceArn: arn, TagKeys: remove}); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes an empty repository. One holding images refuses
// (RepositoryNotEmptyException, a Conflict): the kind has no forceDestroy,
// and images are data.
func (d *registries) Delete(ctx context.Context, t providers.Target) error {
	_, err := d.clients.get(t.Region).DeleteRepository(ctx, &ecr.DeleteRepositoryInput{RepositoryName: aws.String(t.Name)})
	return err
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *registries) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	arn, err := d.arn(ctx, c, region, name)
	if err != nil {
		return err
	}
	have, err := d.tags(ctx, c, arn)
	if err != nil {
		return err
	}
	if have[spec.OwnershipTagKey] != owner {
		return nil
	}
	_, err = c.UntagResource(ctx, &ecr.UntagResourceInput{ResourceArn: arn, TagKeys: []string{spec.OwnershipTagKey}})
	return err
}

func ecrTags(m map[string]string) []ecrtypes.Tag {
	return tagList(m, func(k, v *string) ecrtypes.Tag { return ecrtypes.Tag{Key: k, Value: v} })
}

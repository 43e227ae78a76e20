package gcp

import (
	"context"
	"errors"
	"fmt"

	artifactregistry "cloud.google.com/go/artifactregistry/apiv1"
	"cloud.google.com/go/artifactregistry/apiv1/artifactregistrypb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// registries is image-registry: an Artifact Registry repository of format
// DOCKER (standard mode) in the region, named
// projects/<p>/locations/<region>/repositories/<name>. immutableTags is
// the docker config's immutableTags; the mark and the user tags are
// labels, sent in the create request. Create and delete are long-running
// operations, waited for with the client's own op.Wait. A repository of
// another format under the name is not an image registry: it reads as
// not found, and nothing here changes or deletes it.
//
// Artifact Registry repositories carry no etag, so an update or a release
// cannot be made conditional on what was read: a label written by
// someone else between the two is overwritten (tags are the declaration's
// whole set anyway).
type registries struct {
	b *Backend
	c lazy[*artifactregistry.Client]
}

var (
	_ providers.Driver   = (*registries)(nil)
	_ providers.Releaser = (*registries)(nil)
)

func init() {
	register(entry{kind: spec.ImageRegistry, new: func(b *Backend) providers.Driver { return &registries{b: b} }})
}

// client is the Artifact Registry client (REST), made once, and the
// project.
func (d *registries) client(ctx context.Context) (*artifactregistry.Client, string, error) {
	project, err := d.b.scope(ctx)
	if err != nil {
		return nil, "", err
	}
	c, err := d.c.get("Artifact Registry", func() (*artifactregistry.Client, error) {
		return gapicClient(ctx, d.b, "artifactregistry", artifactregistry.NewRESTClient)
	})
	return c, project, err
}

func (d *registries) close() error { return d.c.close() }

func repositoryParent(project, region string) string {
	return "projects/" + project + "/locations/" + region
}

func repositoryName(project, region, name string) string {
	return repositoryParent(project, region) + "/repositories/" + name
}

func registryResource(project, region string, r *artifactregistrypb.Repository) providers.Resource {
	tags, owner := reported(r.Labels)
	name := shortName(r.Name)
	res := providers.Resource{Name: name, Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags, providers.ImageRegistryImmutableTags: r.GetDockerConfig().GetImmutableTags()},
		Attributes: map[string]string{"uri": region + "-docker.pkg.dev/" + project + "/" + name, "arn": r.Name},
		Unmodelled: registryUnmodelled(r)}
	if r.CreateTime != nil {
		res.Created = r.CreateTime.AsTime()
	}
	return res
}

// registryUnmodelled names the settings no field holds that differ from
// what a create here makes.
func registryUnmodelled(r *artifactregistrypb.Repository) []string {
	var out []string
	if r.Description != "" {
		out = append(out, "Description="+r.Description)
	}
	if r.KmsKeyName != "" {
		out = append(out, "KmsKeyName="+r.KmsKeyName)
	}
	if n := len(r.CleanupPolicies); n > 0 {
		out = append(out, fmt.Sprintf("CleanupPolicies=%d", n))
	}
	if r.Mode != artifactregistrypb.Repository_STANDARD_REPOSITORY && r.Mode != artifactregistrypb.Repository_MODE_UNSPECIFIED {
		out = append(out, "Mode="+r.Mode.String())
	}
	return out
}

func (d *registries) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	it := c.ListRepositories(ctx, &artifactregistrypb.ListRepositoriesRequest{Parent: repositoryParent(project, region), PageSize: int32(d.b.opts.PageSize)})
	err = drain(it.Next, func(r *artifactregistrypb.Repository) {
		if r.Format == artifactregistrypb.Repository_DOCKER {
			out = append(out, registryResource(project, region, r))
		}
	})
	return out, err
}

func (d *registries) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	r, err := d.get(ctx, c, project, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return registryResource(project, region, r), nil
}

// get reads the repository, which must be a docker one.
func (d *registries) get(ctx context.Context, c *artifactregistry.Client, project, region, name string) (*artifactregistrypb.Repository, error) {
	r, err := c.GetRepository(ctx, &artifactregistrypb.GetRepositoryRequest{Name: repositoryName(project, region, name)})
	if err != nil {
		return nil, err
	}
	if r.Format != artifactregistrypb.Repository_DOCKER {
		return nil, providers.Errorf(providers.NotFound, "gcp/image-registry/%s: the repository holds %s packages, not docker images", name, r.Format)
	}
	return r, nil
}

func (d *registries) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeImageRegistry(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	l, err := labels(t)
	if err != nil {
		return providers.Resource{}, err
	}
	op, err := c.CreateRepository(ctx, &artifactregistrypb.CreateRepositoryRequest{
		Parent: repositoryParent(project, t.Region), RepositoryId: t.Name,
		Repository: &artifactregistrypb.Repository{Format: artifactregistrypb.Repository_DOCKER,
			Mode: artifactregistrypb.Repository_STANDARD_REPOSITORY, Labels: l,
			FormatConfig: &artifactregistrypb.Repository_DockerConfig{DockerConfig: &artifactregistrypb.Repository_DockerRepositoryConfig{
				ImmutableTags: decl.ImmutableTags}}}})
	if err != nil {
		return providers.Resource{}, err
	}
	r, err := op.Wait(ctx)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("gcp/image-registry/%s: waiting for the create: %w", t.Name, err)
	}
	return registryResource(project, t.Region, r), nil
}

func (d *registries) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeImageRegistry(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	repo := &artifactregistrypb.Repository{Name: repositoryName(project, t.Region, t.Name)}
	var paths []string
	for _, f := range changed {
		switch f {
		case providers.ImageRegistryImmutableTags:
			repo.FormatConfig = &artifactregistrypb.Repository_DockerConfig{DockerConfig: &artifactregistrypb.Repository_DockerRepositoryConfig{
				ImmutableTags: decl.ImmutableTags}}
			paths = append(paths, "docker_config.immutable_tags")
		case spec.TagsField:
			if repo.Labels, err = labels(t); err != nil {
				return providers.Resource{}, err
			}
			paths = append(paths, "labels")
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "image-registry: field %q cannot be updated in place", f)
		}
	}
	if len(paths) == 0 {
		return d.Read(ctx, t.Region, t.Name)
	}
	if _, err := d.get(ctx, c, project, t.Region, t.Name); err != nil {
		return providers.Resource{}, err
	}
	r, err := c.UpdateRepository(ctx, &artifactregistrypb.UpdateRepositoryRequest{Repository: repo, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
	if err != nil {
		return providers.Resource{}, err
	}
	return registryResource(project, t.Region, r), nil
}

// Delete removes an empty repository only. Artifact Registry would
// delete the images with it; images are data, and the kind has no
// forceDestroy, so one holding any refuses, as ECR does.
func (d *registries) Delete(ctx context.Context, t providers.Target) error {
	c, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	r, err := d.get(ctx, c, project, t.Region, t.Name)
	if err != nil {
		return err
	}
	if err := d.refuseImages(ctx, c, t.Name, r.Name); err != nil {
		return err
	}
	op, err := c.DeleteRepository(ctx, &artifactregistrypb.DeleteRepositoryRequest{Name: r.Name})
	if err != nil {
		return err
	}
	if err := op.Wait(ctx); err != nil {
		return fmt.Errorf("gcp/image-registry/%s: waiting for the delete: %w", t.Name, err)
	}
	return nil
}

// refuseImages fails when the repository holds a package (an image).
func (d *registries) refuseImages(ctx context.Context, c *artifactregistry.Client, name, repo string) error {
	p, err := c.ListPackages(ctx, &artifactregistrypb.ListPackagesRequest{Parent: repo, PageSize: 1}).Next()
	if errors.Is(err, iterator.Done) {
		return nil
	}
	if err != nil {
		return err
	}
	return providers.Errorf(providers.Conflict, "gcp/image-registry/%s: the repository holds images (%s among them); delete them first: the kind has no forceDestroy, and images are data", name, shortName(p.Name))
}

// Release removes the ownership label and keeps every other one. Without
// an etag the patch is not conditional (see the type's comment).
func (d *registries) Release(ctx context.Context, region, name, owner string) error {
	c, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	r, err := d.get(ctx, c, project, region, name)
	if err != nil {
		return err
	}
	if r.Labels[spec.OwnershipTagKey] != owner {
		return nil
	}
	l := map[string]string{}
	for k, v := range r.Labels {
		if k != spec.OwnershipTagKey {
			l[k] = v
		}
	}
	_, err = c.UpdateRepository(ctx, &artifactregistrypb.UpdateRepositoryRequest{Repository: &artifactregistrypb.Repository{Name: r.Name, Labels: l},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"labels"}}})
	return err
}

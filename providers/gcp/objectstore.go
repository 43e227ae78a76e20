package gcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// objectStores is object-store: a Cloud Storage bucket in the project,
// located in the region, owned through its labels. The labels are part of
// the create request, so a bucket is never briefly unmarked. Bucket names
// are global across every project; the listing is the project's.
type objectStores struct{ b *Backend }

var (
	_ providers.Driver   = (*objectStores)(nil)
	_ providers.Releaser = (*objectStores)(nil)
)

func init() {
	register(entry{kind: spec.ObjectStore, new: func(b *Backend) providers.Driver { return &objectStores{b: b} }})
}

func (d *objectStores) client(ctx context.Context) (*storage.Client, string, error) {
	project, err := d.b.scope(ctx)
	if err != nil {
		return nil, "", err
	}
	c, err := d.b.storageClient(ctx)
	return c, project, err
}

// bucketResource reports a bucket. The listing carries every field, so
// what List returns is complete.
func bucketResource(region string, a *storage.BucketAttrs) providers.Resource {
	tags, owner := reported(a.Labels)
	return providers.Resource{Name: a.Name, Region: region, Owner: owner, Created: a.Created, Complete: true,
		Fields: map[string]any{"versioning": a.VersioningEnabled, spec.TagsField: tags},
		Attributes: map[string]string{
			"arn":    "//storage.googleapis.com/projects/_/buckets/" + a.Name,
			"url":    "https://storage.googleapis.com/" + a.Name,
			"region": region,
		}}
}

// inRegion reports whether a bucket is located in region: Cloud Storage
// reports locations in upper case (EUROPE-WEST9).
func inRegion(a *storage.BucketAttrs, region string) bool {
	return strings.EqualFold(a.Location, region)
}

func (d *objectStores) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	pager := iterator.NewPager(c.Buckets(ctx, project), d.b.opts.PageSize, "")
	var out []providers.Resource
	for pages := 0; ; pages++ {
		if pages == listPageLimit {
			return nil, errors.New("gcp/object-store: listing passed the page budget; refusing to report a prefix of it")
		}
		var page []*storage.BucketAttrs
		next, err := pager.NextPage(&page)
		if err != nil {
			return nil, err
		}
		for _, a := range page {
			if inRegion(a, region) {
				out = append(out, bucketResource(region, a))
			}
		}
		if next == "" {
			return out, nil
		}
	}
}

// attrs reads a bucket of the project. Bucket names are global, and a
// bucket of another project the credentials can see reads like one of
// ours: it is refused, so that nothing outside the project is changed.
func (d *objectStores) attrs(ctx context.Context, c *storage.Client, name string) (*storage.BucketAttrs, error) {
	a, err := c.Bucket(name).Attrs(ctx)
	if err != nil {
		return nil, err
	}
	if number := d.b.projectNumber(); a.ProjectNumber != number {
		return nil, providers.Errorf(providers.PermissionDenied, "gcp/object-store/%s: the bucket belongs to project number %d, not to the fleet's project (number %d); bucket names are global, so choose another name", name, a.ProjectNumber, number)
	}
	return a, nil
}

func (d *objectStores) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, _, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	a, err := d.attrs(ctx, c, name)
	if err != nil {
		return providers.Resource{}, err
	}
	if !inRegion(a, region) {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "gcp/object-store/%s: the bucket is in %s, not %s", name, strings.ToLower(a.Location), region)
	}
	return bucketResource(region, a), nil
}

func (d *objectStores) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeObjectStore(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	l, err := labels(t)
	if err != nil {
		return providers.Resource{}, err
	}
	attrs := &storage.BucketAttrs{Location: t.Region, Labels: l, VersioningEnabled: decl.Versioning,
		UniformBucketLevelAccess: storage.UniformBucketLevelAccess{Enabled: true},
		PublicAccessPrevention:   storage.PublicAccessPreventionEnforced}
	if err := c.Bucket(t.Name).Create(ctx, project, attrs); err != nil {
		return providers.Resource{}, err
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *objectStores) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, _, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeObjectStore(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	a, err := d.attrs(ctx, c, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	var u storage.BucketAttrsToUpdate
	for _, f := range changed {
		switch f {
		case providers.ObjectStoreVersioning:
			u.VersioningEnabled = decl.Versioning
		case spec.TagsField:
			if err := relabel(a, t, &u); err != nil {
				return providers.Resource{}, err
			}
		case providers.ObjectStoreForceDestroy:
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "object-store: field %q cannot be updated in place", f)
		}
	}
	// The update applies to the bucket as read, or fails as a conflict.
	a, err = c.Bucket(t.Name).If(storage.BucketConditions{MetagenerationMatch: a.MetaGeneration}).Update(ctx, u)
	if err != nil {
		return providers.Resource{}, err
	}
	return bucketResource(t.Region, a), nil
}

// relabel sets the target's labels and deletes the ones it dropped; the
// mark is rewritten, never removed.
func relabel(a *storage.BucketAttrs, t providers.Target, u *storage.BucketAttrsToUpdate) error {
	want, err := labels(t)
	if err != nil {
		return err
	}
	for k := range a.Labels {
		if _, keep := want[k]; !keep {
			u.DeleteLabel(k)
		}
	}
	for k, v := range want {
		u.SetLabel(k, v)
	}
	return nil
}

func (d *objectStores) Delete(ctx context.Context, t providers.Target) error {
	c, _, err := d.client(ctx)
	if err != nil {
		return err
	}
	decl, err := providers.DecodeObjectStore(t.Fields)
	if err != nil {
		return err
	}
	if _, err := d.attrs(ctx, c, t.Name); err != nil {
		return err
	}
	if decl.ForceDestroy {
		if err := emptyBucket(ctx, c.Bucket(t.Name)); err != nil {
			return err
		}
	}
	err = c.Bucket(t.Name).Delete(ctx)
	if errorCode(err) == providers.AlreadyExists {
		// 409 on a delete is a bucket that still holds objects.
		return providers.Errorf(providers.Conflict, "gcp/object-store/%s: the bucket is not empty (set forceDestroy to delete its objects with it): %v", t.Name, err)
	}
	return err
}

// emptyBucket deletes every object generation, live and noncurrent.
func emptyBucket(ctx context.Context, bk *storage.BucketHandle) error {
	it := bk.Objects(ctx, &storage.Query{Versions: true})
	for n := 0; ; n++ {
		if n == listPageLimit*1000 {
			return errors.New("gcp/object-store: emptying passed the listing budget")
		}
		o, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return err
		}
		err = bk.Object(o.Name).Generation(o.Generation).Delete(ctx)
		if err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
			return fmt.Errorf("delete gs://%s/%s#%d: %w", o.Bucket, o.Name, o.Generation, err)
		}
	}
}

func (d *objectStores) Release(ctx context.Context, region, name, owner string) error {
	c, _, err := d.client(ctx)
	if err != nil {
		return err
	}
	a, err := d.attrs(ctx, c, name)
	if err != nil {
		return err
	}
	if a.Labels[spec.OwnershipTagKey] != owner {
		return nil
	}
	var u storage.BucketAttrsToUpdate
	u.DeleteLabel(spec.OwnershipTagKey)
	_, err = c.Bucket(name).If(storage.BucketConditions{MetagenerationMatch: a.MetaGeneration}).Update(ctx, u)
	return err
}

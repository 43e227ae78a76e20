package scaleway

import (
	"context"
	"errors"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// objectStores is object-store: an Object Storage bucket through the S3
// API, owned through its bucket tags. A bucket lives in the region of the
// endpoint it was created at (no LocationConstraint body, as Scaleway
// expects).
type objectStores struct {
	b       *Backend
	clients *s3Clients
}

var (
	_ providers.Driver   = (*objectStores)(nil)
	_ providers.Releaser = (*objectStores)(nil)
)

func init() {
	register(entry{kind: spec.ObjectStore, scanReads: true, new: func(b *Backend) providers.Driver {
		return &objectStores{b: b, clients: &s3Clients{b: b}}
	}})
}

func (d *objectStores) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c, err := d.clients.get(ctx, region)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	// No MaxBuckets: emulators and some S3 implementations honour the
	// limit without returning a continuation token, which would silently
	// truncate the listing. Without it ListBuckets answers in one page, and
	// a token, if any, is followed.
	p := s3.NewListBucketsPaginator(c, &s3.ListBucketsInput{})
	for pages := 0; p.HasMorePages(); pages++ {
		if pages == listPageLimit {
			return nil, errors.New("scaleway/object-store: listing passed the page budget; refusing to report a prefix of it")
		}
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, bk := range page.Buckets {
			name := aws.ToString(bk.Name)
			// An endpoint may list buckets of other regions; keep this
			// region's.
			where := aws.ToString(bk.BucketRegion)
			if where == "" {
				loc, err := c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: bk.Name})
				if err != nil {
					if errorCode(err) == providers.NotFound {
						continue
					}
					return nil, err
				}
				where = bucketRegion(string(loc.LocationConstraint))
			}
			if where != region && !(where == "" && region == "us-east-1") {
				continue
			}
			r := providers.Resource{Name: name, Region: region}
			if bk.CreationDate != nil {
				r.Created = *bk.CreationDate
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func (d *objectStores) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, err := d.clients.get(ctx, region)
	if err != nil {
		return providers.Resource{}, err
	}
	return d.read(ctx, c, region, name)
}

func (d *objectStores) read(ctx context.Context, c *s3.Client, region, name string) (providers.Resource, error) {
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)}); err != nil {
		return providers.Resource{}, err
	}
	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(name)})
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := d.tags(ctx, c, name)
	if err != nil {
		return providers.Resource{}, err
	}
	reported := map[string]any{}
	for k, v := range tags {
		reported[k] = v
	}
	endpoint := "https://" + name + ".s3." + region + ".scw.cloud"
	return providers.Resource{Name: name, Region: region, Owner: tags[spec.OwnershipTagKey],
		Fields:     map[string]any{"versioning": v.Status == s3types.BucketVersioningStatusEnabled, spec.TagsField: reported},
		Attributes: map[string]string{"url": endpoint, "region": region}}, nil
}

// tags reads the bucket's tags; a bucket without any answers NoSuchTagSet.
func (d *objectStores) tags(ctx context.Context, c *s3.Client, name string) (map[string]string, error) {
	out, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "NoSuchTagSet" {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, t := range out.TagSet {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m, nil
}

func bucketTags(t providers.Target) ([]s3types.Tag, error) {
	m, err := providers.FieldStringMap(t.Fields, spec.TagsField)
	if err != nil {
		return nil, err
	}
	delete(m, spec.OwnershipTagKey)
	if t.Owner != "" {
		m[spec.OwnershipTagKey] = t.Owner
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]s3types.Tag, 0, len(keys))
	for _, k := range keys {
		out = append(out, s3types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out, nil
}

func (d *objectStores) putTags(ctx context.Context, c *s3.Client, name string, tags []s3types.Tag) error {
	if len(tags) == 0 {
		_, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String(name)})
		return err
	}
	_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(name), Tagging: &s3types.Tagging{TagSet: tags}})
	return err
}

func (d *objectStores) putVersioning(ctx context.Context, c *s3.Client, name string, t providers.Target, created bool) error {
	decl, err := providers.DecodeObjectStore(t.Fields)
	if err != nil {
		return err
	}
	on := decl.Versioning
	if !on && created {
		return nil // a new bucket is unversioned
	}
	status := s3types.BucketVersioningStatusSuspended
	if on {
		status = s3types.BucketVersioningStatusEnabled
	}
	_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(name),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: status}})
	return err
}

func (d *objectStores) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c, err := d.clients.get(ctx, t.Region)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := bucketTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(t.Name)}); err != nil {
		return providers.Resource{}, err
	}
	// The bucket exists untagged until the next call; should it fail, the
	// bucket is removed so that no unowned bucket stays behind.
	if err := d.putTags(ctx, c, t.Name, tags); err != nil {
		_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(t.Name)})
		return providers.Resource{}, err
	}
	if err := d.putVersioning(ctx, c, t.Name, t, true); err != nil {
		return providers.Resource{}, err
	}
	return d.read(ctx, c, t.Region, t.Name)
}

func (d *objectStores) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, err := d.clients.get(ctx, t.Region)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, f := range changed {
		switch f {
		case providers.ObjectStoreVersioning:
			err = d.putVersioning(ctx, c, t.Name, t, false)
		case spec.TagsField:
			var tags []s3types.Tag
			if tags, err = bucketTags(t); err == nil {
				err = d.putTags(ctx, c, t.Name, tags)
			}
		case providers.ObjectStoreForceDestroy:
		default:
			err = providers.Errorf(providers.InvalidArgument, "object-store: field %q cannot be updated in place", f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.read(ctx, c, t.Region, t.Name)
}

func (d *objectStores) Delete(ctx context.Context, t providers.Target) error {
	c, err := d.clients.get(ctx, t.Region)
	if err != nil {
		return err
	}
	decl, err := providers.DecodeObjectStore(t.Fields)
	if err != nil {
		return err
	}
	if decl.ForceDestroy {
		if err := emptyBucket(ctx, c, t.Name); err != nil {
			return err
		}
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(t.Name)})
	return err
}

// emptyBucket deletes every object version and delete marker.
func emptyBucket(ctx context.Context, c *s3.Client, name string) error {
	var keyMarker, versionMarker *string
	for pages := 0; ; pages++ {
		if pages == listPageLimit {
			return errors.New("scaleway/object-store: emptying the bucket passed the page budget")
		}
		out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(name), KeyMarker: keyMarker, VersionIdMarker: versionMarker})
		if err != nil {
			return err
		}
		var ids []s3types.ObjectIdentifier
		for _, v := range out.Versions {
			ids = append(ids, s3types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, m := range out.DeleteMarkers {
			ids = append(ids, s3types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
		for _, id := range ids {
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: id.Key, VersionId: id.VersionId}); err != nil {
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		keyMarker, versionMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
}

func (d *objectStores) Release(ctx context.Context, region, name, owner string) error {
	c, err := d.clients.get(ctx, region)
	if err != nil {
		return err
	}
	tags, err := d.tags(ctx, c, name)
	if err != nil {
		return err
	}
	if tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	delete(tags, spec.OwnershipTagKey)
	m := map[string]any{}
	for k, v := range tags {
		m[k] = v
	}
	set, err := bucketTags(providers.Target{Fields: map[string]any{spec.TagsField: m}})
	if err != nil {
		return err
	}
	return d.putTags(ctx, c, name, set)
}

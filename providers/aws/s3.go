package aws

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/s3control"
	s3controltypes "github.com/aws/aws-sdk-go-v2/service/s3control/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// buckets is an S3 bucket. Two kinds share it: object-store (portable:
// versioning, tags) and s3-bucket (the same bucket with object lock). One
// physical bucket lists under both; the engine knows they are one thing.
//
// Every bucket infra makes on AWS has ABAC on, so that S3 applies the
// executor's tag conditions to it (docs/executor.md); S3 then refuses
// PutBucketTagging, and tags are written through S3 Control, whose calls
// name the account. Tags are read with GetBucketTagging, which every
// S3-compatible service serves, ABAC or not.
//
// At an endpoint other than AWS's own (AWS_ENDPOINT_URL and the like: an
// emulator, an S3-compatible store) the first bucket a run creates in a
// region also tells what the endpoint serves, and the driver keeps to it
// (s3_endpoint.go): tags that CreateBucket dropped are written with
// PutBucketTagging, and where bucket ABAC is not served the bucket is made
// without it, with a caveat, never a failed create.
type buckets struct {
	kind spec.Kind
	// objectLock: the kind has the objectLock field (s3-bucket).
	objectLock bool
	clients    *regional[*s3.Client]
	control    *regional[*s3control.Client]
	account    accountOf
	// compatible: an endpoint other than AWS's own is configured.
	compatible bool
	// keepsTags and abacServed are what the endpoint turned out to serve,
	// by region (compatible only).
	keepsTags  learned[bool]
	abacServed learned[string]
}

var (
	_ providers.Driver       = (*buckets)(nil)
	_ providers.Releaser     = (*buckets)(nil)
	_ providers.ListedReader = (*buckets)(nil)
)

func init() {
	register(entry{kind: spec.ObjectStore, service: "s3", actions: bucketActions, errors: bucketErrors,
		// arn:aws:s3:::bucket, one physical bucket, is reported under the
		// portable kind; the engine matches its s3-bucket twin. An object
		// (bucket/key) is not a bucket.
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			return resource, "", !strings.Contains(resource, "/")
		},
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return newBuckets(cfg, account, spec.ObjectStore, false)
		},
	})
	register(entry{kind: spec.S3Bucket, service: "s3", errors: bucketErrors,
		actions: append(append([]string{}, bucketActions...), "s3:GetBucketObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration"),
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return newBuckets(cfg, account, spec.S3Bucket, true)
		},
	})
}

// bucketActions are the IAM actions both bucket kinds call.
// The calls made only at an endpoint other than AWS's (PutBucketTagging,
// DeleteBucketTagging, GetBucketAbac: s3_endpoint.go) are not here: the
// executor's role is AWS's.
var bucketActions = []string{"s3:ListAllMyBuckets", "s3:ListBucket", "s3:GetBucketLocation", "s3:CreateBucket",
	"s3:PutBucketAbac", "s3:GetBucketTagging", "s3:TagResource", "s3:UntagResource",
	"s3:GetBucketVersioning", "s3:PutBucketVersioning",
	"s3:ListBucketVersions", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:DeleteBucket"}

// bucketErrors are the S3 codes of buckets (the codes the state store
// meets too, NoSuchBucket and NoSuchKey, are errors.go's).
var bucketErrors = map[string]providers.Code{
	"BucketAlreadyOwnedByYou": providers.AlreadyExists, "BucketAlreadyExists": providers.AlreadyExists,
	"BucketNotEmpty": providers.Conflict, "OperationAborted": providers.Conflict,
	// A bucket without tags answers NoSuchTagSet, which the driver reads
	// as no tags before any classification.
	"NoSuchTagSet": providers.NotFound,
}

func newBuckets(cfg aws.Config, account accountOf, k spec.Kind, objectLock bool) *buckets {
	return &buckets{kind: k, objectLock: objectLock, clients: newRegional(cfg, newS3Client),
		control: newRegional(cfg, newControlClient), account: account,
		compatible: newS3Client(cfg).Options().BaseEndpoint != nil}
}

// newS3Client addresses buckets by path whenever an endpoint is configured
// (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, or BaseEndpoint): S3-compatible
// services and proxies serve one host, not a host per bucket. Against AWS's
// own endpoints the SDK keeps virtual-hosted addressing.
func newS3Client(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
	})
}

// List reads every page of ListBuckets, filtered to the region on the
// server. MaxBuckets is never set: some S3-compatible services truncate at
// it without a continuation token, and without it AWS still pages with
// one. The listing has no tags or settings, so it is not complete.
func (d *buckets) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.clients.get(region)
	in := &s3.ListBucketsInput{BucketRegion: aws.String(region)}
	var out []providers.Resource
	err := eachPage(ctx, s3.NewListBucketsPaginator(c, in), d.kind, region, func(page *s3.ListBucketsOutput) error {
		for _, b := range page.Buckets {
			// The filter is the server's; a service that ignores it would
			// hand back other regions' buckets, which must not be listed here.
			if r := aws.ToString(b.BucketRegion); r != "" && r != region {
				continue
			}
			name := aws.ToString(b.Name)
			out = append(out, providers.Resource{Name: name, Region: region, Created: aws.ToTime(b.CreationDate), Attributes: bucketAttributes(c, region, name)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func bucketAttributes(c *s3.Client, region, name string) map[string]string {
	u := "https://" + name + ".s3." + region + ".amazonaws.com"
	if ep := c.Options().BaseEndpoint; ep != nil {
		u = strings.TrimSuffix(*ep, "/") + "/" + name
	}
	return map[string]string{"arn": bucketARN(region, name), "url": u, "region": region}
}

func bucketARN(region, name string) string { return "arn:" + Partition(region) + ":s3:::" + name }

// Partition is the ARN partition of a region (aws, aws-cn, aws-us-gov).
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

func (d *buckets) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	head, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
	if err != nil {
		// S3 answers a bucket of another region with a redirect: the bucket
		// exists, but not here.
		if isCode(err, "MovedPermanently", "PermanentRedirect") {
			return providers.Resource{}, providers.Errorf(providers.NotFound, "bucket %s is not in %s", name, region)
		}
		return providers.Resource{}, err
	}
	if r := aws.ToString(head.BucketRegion); r != "" && r != region {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "bucket %s is in %s, not %s", name, r, region)
	}
	return d.settings(ctx, c, region, name, nil)
}

// ReadListed reads a bucket that ListBuckets, filtered to its region on
// the server, just reported: the HeadBucket a Read starts with would only
// say again that it exists there, and the tag scan's tags, when it has
// them, replace GetBucketTagging. A bucket of another region still answers
// the calls below with a redirect, which is absent here.
func (d *buckets) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	r, err := d.settings(ctx, d.clients.get(listed.Region), listed.Region, listed.Name, tags)
	if isCode(err, "MovedPermanently", "PermanentRedirect") {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "bucket %s is not in %s", listed.Name, listed.Region)
	}
	return r, err
}

// settings reads what the bucket listing cannot say and the engine wants:
// versioning, tags (unless known; they carry the mark) and, for
// s3-bucket, object lock.
func (d *buckets) settings(ctx context.Context, c *s3.Client, region, name string, tags map[string]string) (providers.Resource, error) {
	res := providers.Resource{Name: name, Region: region, Fields: map[string]any{}, Attributes: bucketAttributes(c, region, name)}
	if providers.WantsField(ctx, providers.S3BucketVersioning) {
		v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(name)})
		if err != nil {
			return providers.Resource{}, err
		}
		res.Fields[providers.S3BucketVersioning] = v.Status == s3types.BucketVersioningStatusEnabled
	}
	var err error
	if tags == nil {
		if tags, err = d.tags(ctx, region, name); err != nil {
			return providers.Resource{}, err
		}
	}
	res.Fields[spec.TagsField] = reportedTags(tags)
	res.Owner = tags[spec.OwnershipTagKey]
	if d.objectLock && providers.WantsField(ctx, providers.S3BucketObjectLock) {
		lock, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(name)})
		switch {
		case isCode(err, "ObjectLockConfigurationNotFoundError"):
			res.Fields[providers.S3BucketObjectLock] = false
		case err != nil:
			return providers.Resource{}, err
		default:
			res.Fields[providers.S3BucketObjectLock] = lock.ObjectLockConfiguration != nil &&
				lock.ObjectLockConfiguration.ObjectLockEnabled == s3types.ObjectLockEnabledEnabled
		}
	}
	return res, nil
}

// tags reads a bucket's tags. A bucket without any answers NoSuchTagSet.
func (d *buckets) tags(ctx context.Context, region, name string) (map[string]string, error) {
	out, err := d.clients.get(region).GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
	if isCode(err, "NoSuchTagSet") {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return tagMapOf(out.TagSet, func(t s3types.Tag) (*string, *string) { return t.Key, t.Value }), nil
}

// writeTags sets the keys of set and removes those of remove, through S3
// Control: once a bucket's ABAC is on, S3 refuses PutBucketTagging. An
// endpoint other than AWS's that serves no S3 Control serves no bucket
// ABAC either; there the bucket's own PutBucketTagging writes the whole
// set, what it has with the changes.
func (d *buckets) writeTags(ctx context.Context, region, name string, have, set map[string]string, remove []string) error {
	err := d.controlTags(ctx, region, name, set, remove)
	if err == nil || !d.compatible || !unserved(err) {
		return err
	}
	after := maps.Clone(have)
	maps.Copy(after, set)
	for _, k := range remove {
		delete(after, k)
	}
	return putTagSet(ctx, d.clients.get(region), name, after)
}

// controlTags is writeTags through S3 Control.
func (d *buckets) controlTags(ctx context.Context, region, name string, set map[string]string, remove []string) error {
	account, err := d.account(ctx)
	if err != nil {
		return err
	}
	c, arn := d.control.get(region), aws.String(bucketARN(region, name))
	if len(set) > 0 {
		tags := tagList(set, func(k, v *string) s3controltypes.Tag { return s3controltypes.Tag{Key: k, Value: v} })
		if _, err := c.TagResource(ctx, &s3control.TagResourceInput{AccountId: aws.String(account), ResourceArn: arn, Tags: tags}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		_, err = c.UntagResource(ctx, &s3control.UntagResourceInput{AccountId: aws.String(account), ResourceArn: arn, TagKeys: remove})
	}
	return err
}

func s3Tags(m map[string]string) []s3types.Tag {
	return tagList(m, func(k, v *string) s3types.Tag { return s3types.Tag{Key: k, Value: v} })
}

// decodeBucket reads an object-store or s3-bucket target: the two kinds
// share this driver, and s3-bucket's fields are object-store's and
// objectLock, which Create refuses on an object-store.
func decodeBucket(t providers.Target) (providers.S3BucketInput, error) {
	return providers.DecodeS3Bucket(t.Fields)
}

func (d *buckets) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := decodeBucket(t)
	if err != nil {
		return providers.Resource{}, err
	}
	versioning, lock := decl.Versioning, decl.ObjectLock
	if lock && !d.objectLock {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "%s has no object lock; declare an s3-bucket", d.kind)
	}
	if lock && !versioning {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "bucket %s: object lock needs versioning, and S3 cannot suspend it on a locked bucket", t.Name)
	}
	c := d.clients.get(t.Region)
	in := &s3.CreateBucketInput{
		Bucket: aws.String(t.Name),
		// Tags at create: on AWS the bucket never exists without its
		// ownership tag. keptTags below finds an endpoint that drops them.
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{Tags: s3Tags(tags)},
	}
	// us-east-1 is the one region S3 refuses to be named in.
	if t.Region != "us-east-1" {
		in.CreateBucketConfiguration.LocationConstraint = s3types.BucketLocationConstraint(t.Region)
	}
	if lock {
		in.ObjectLockEnabledForBucket = aws.Bool(true)
	}
	if _, err := c.CreateBucket(ctx, in); err != nil {
		return providers.Resource{}, err
	}
	// Tagged before ABAC is on, so that no bucket of infra's is ever
	// checked by its tags without them; PutBucketTagging is allowed until
	// then.
	kept, err := d.keptTags(ctx, c, t.Region, t.Name, tags)
	if err != nil {
		return providers.Resource{}, err
	}
	if !kept {
		if err := putTagSet(ctx, c, t.Name, tags); err != nil {
			return providers.Resource{}, err
		}
	}
	caveat, err := d.turnOnABAC(ctx, c, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	// A new bucket is unversioned; object lock turns versioning on by
	// itself.
	if versioning && !lock {
		if err := owned(ctx, c, t.Name, func() error { return setVersioning(ctx, c, t.Name, true) }); err != nil {
			return providers.Resource{}, err
		}
	}
	// What was sent is what the bucket is: no read back.
	res := d.made(c, t, tags, versioning, lock)
	res.Caveat = caveat
	return res, nil
}

// made is a bucket as a create or an update left it, from what was sent.
func (d *buckets) made(c *s3.Client, t providers.Target, tags map[string]string, versioning, lock bool) providers.Resource {
	res := providers.Resource{Name: t.Name, Region: t.Region, Owner: tags[spec.OwnershipTagKey],
		Fields:     map[string]any{providers.S3BucketVersioning: versioning, spec.TagsField: reportedTags(tags)},
		Attributes: bucketAttributes(c, t.Region, t.Name)}
	if d.objectLock {
		res.Fields[providers.S3BucketObjectLock] = lock
	}
	return res
}

func setVersioning(ctx context.Context, c *s3.Client, name string, on bool) error {
	status := s3types.BucketVersioningStatusSuspended
	if on {
		status = s3types.BucketVersioningStatusEnabled
	}
	_, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket: aws.String(name), VersioningConfiguration: &s3types.VersioningConfiguration{Status: status},
	})
	return err
}

func (d *buckets) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c := d.clients.get(t.Region)
	for _, f := range changed {
		var err error
		switch f {
		case providers.S3BucketVersioning:
			var decl providers.S3BucketInput
			if decl, err = decodeBucket(t); err == nil {
				err = owned(ctx, c, t.Name, func() error { return setVersioning(ctx, c, t.Name, decl.Versioning) })
			}
		case spec.TagsField:
			err = d.retag(ctx, c, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "%s: field %q cannot be updated in place", d.kind, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	if t.Owner == "" {
		return d.Read(ctx, t.Region, t.Name) // the mark is whatever it carried
	}
	// The declared fields are now as the target says, the mark is the
	// target's owner's: no read back.
	decl, err := decodeBucket(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	res := d.made(c, t, tags, decl.Versioning, decl.ObjectLock)
	res.Owner = t.Owner
	for _, f := range []string{providers.S3BucketVersioning, providers.S3BucketObjectLock, spec.TagsField} {
		if _, declared := t.Fields[f]; !declared {
			delete(res.Fields, f) // unknown, as it was
		}
	}
	return res, nil
}

// retag makes the bucket's tags the target's, keeping the ownership tag
// the bucket carries when the target names no owner.
func (d *buckets) retag(ctx context.Context, c *s3.Client, t providers.Target) error {
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	have, err := d.tags(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have, want, spec.OwnershipTagKey)
	return owned(ctx, c, t.Name, func() error { return d.writeTags(ctx, t.Region, t.Name, have, set, remove) })
}

// Delete removes the bucket. With forceDestroy it first deletes every
// object version and delete marker; without it S3's own refusal of a
// non-empty bucket (BucketNotEmpty, a Conflict) is returned. An orphan has
// no target fields, so it is never emptied.
func (d *buckets) Delete(ctx context.Context, t providers.Target) error {
	decl, err := decodeBucket(t)
	if err != nil {
		return err
	}
	c := d.clients.get(t.Region)
	// Try the delete first: an empty bucket needs no listing of its
	// versions. Only a refusal because of objects empties it, and only
	// with forceDestroy.
	err = owned(ctx, c, t.Name, func() error {
		_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(t.Name)})
		return err
	})
	if !isCode(err, "BucketNotEmpty") {
		return err
	}
	if !decl.ForceDestroy {
		return fmt.Errorf("%w (forceDestroy is not set, so infra does not delete the objects)", err)
	}
	if err := emptyBucket(ctx, c, d.kind, t.Region, t.Name); err != nil {
		return err
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(t.Name)})
	return err
}

// emptyBucket deletes every version of every object, and every delete
// marker, a page (at most 1,000 keys) per DeleteObjects call.
func emptyBucket(ctx context.Context, c *s3.Client, k spec.Kind, region, name string) error {
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(name)})
	return eachPage(ctx, p, k, region, func(page *s3.ListObjectVersionsOutput) error {
		var ids []s3types.ObjectIdentifier
		for _, v := range page.Versions {
			ids = append(ids, s3types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, m := range page.DeleteMarkers {
			ids = append(ids, s3types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
		if len(ids) == 0 {
			return nil
		}
		out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(name), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return err
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("empty bucket %s: %d objects refused deletion; %s (version %s): %s: %s",
				name, len(out.Errors), aws.ToString(e.Key), aws.ToString(e.VersionId), aws.ToString(e.Code), aws.ToString(e.Message))
		}
		return nil
	})
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *buckets) Release(ctx context.Context, region, name, owner string) error {
	tags, err := d.tags(ctx, region, name)
	if err != nil {
		return err
	}
	if tags[spec.OwnershipTagKey] != owner {
		return nil
	}
	return owned(ctx, d.clients.get(region), name, func() error {
		return d.writeTags(ctx, region, name, tags, nil, []string{spec.OwnershipTagKey})
	})
}

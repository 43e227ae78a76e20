package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/infra-iac/infra/spec"
)

// enableABAC turns a bucket's ABAC on: S3 applies tag conditions to a
// bucket, and the executor's role holds its changes to owned buckets, only
// then.
func enableABAC(ctx context.Context, c *s3.Client, name string) error {
	_, err := c.PutBucketAbac(ctx, &s3.PutBucketAbacInput{Bucket: aws.String(name),
		AbacStatus: &s3types.AbacStatus{Status: s3types.BucketAbacStatusEnabled}})
	return err
}

// owned makes call, which the executor's role allows only on a bucket
// tagged for a fleet. A bucket made before infra turned ABAC on at create,
// or adopted, shows IAM no tags and is refused (AccessDenied): then ABAC is
// turned on and the call made once more. A bucket that is not a fleet's is
// refused again, with the first refusal returned.
func owned(ctx context.Context, c *s3.Client, name string, call func() error) error {
	err := call()
	if !isCode(err, "AccessDenied") {
		return err
	}
	if enableABAC(ctx, c, name) != nil {
		return err
	}
	return call()
}

// EnableBucketABAC turns ABAC on for every bucket of the account that
// carries the ownership tag and has it off, and returns their names: made
// by infra before it turned ABAC on at create. Until then IAM sees no tags
// on such a bucket, so the executor's role could tag it for another fleet
// as it may adopt an untagged resource. `infra executor deploy` calls it
// with the deployer's credentials, which may read every bucket. It reads
// each bucket's ABAC status, and the tags only of those with it off.
func EnableBucketABAC(ctx context.Context, b *Backend) ([]string, error) {
	cfg := b.Config()
	d := newBuckets(cfg, b.Account, spec.ObjectStore, false)
	var turned []string
	p := s3.NewListBucketsPaginator(d.clients.get(cfg.Region), &s3.ListBucketsInput{})
	err := eachPage(ctx, p, spec.ObjectStore, cfg.Region, func(page *s3.ListBucketsOutput) error {
		for _, bucket := range page.Buckets {
			name, region := aws.ToString(bucket.Name), aws.ToString(bucket.BucketRegion)
			if region == "" {
				region = cfg.Region
			}
			on, err := d.turnABACOn(ctx, region, name)
			if err != nil {
				return fmt.Errorf("bucket %s: %w", name, err)
			}
			if on {
				turned = append(turned, name)
			}
		}
		return nil
	})
	return turned, err
}

// turnABACOn turns the bucket's ABAC on if it is off and the bucket carries
// the ownership tag, and says whether it did.
func (d *buckets) turnABACOn(ctx context.Context, region, name string) (bool, error) {
	c := d.clients.get(region)
	status, err := c.GetBucketAbac(ctx, &s3.GetBucketAbacInput{Bucket: aws.String(name)})
	if err != nil {
		return false, err
	}
	if status.AbacStatus != nil && status.AbacStatus.Status == s3types.BucketAbacStatusEnabled {
		return false, nil
	}
	tags, err := d.tags(ctx, region, name)
	if err != nil {
		return false, err
	}
	if tags[spec.OwnershipTagKey] == "" {
		return false, nil
	}
	return true, enableABAC(ctx, c, name)
}

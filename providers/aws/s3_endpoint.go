package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/s3control"
	"github.com/aws/smithy-go"
	smithyendpoints "github.com/aws/smithy-go/endpoints"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// This file is how buckets meet an endpoint other than AWS's own: an
// emulator (moto, LocalStack) or an S3-compatible store, configured by
// AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3(_CONTROL) or a profile's
// endpoint_url. Nothing here asks what the service is; it asks the
// endpoint, once a run and region, whether it did what AWS does.

// newControlClient is an S3 Control client that, at a configured endpoint,
// calls that endpoint's own host. S3 Control names the account as a
// subdomain (123456789012.s3-control.eu-west-3.amazonaws.com), and the
// SDK's endpoint rules put it in front of a configured endpoint's host
// too: http://123456789012.127.0.0.1:5000, a name no resolver answers.
// The account travels in the x-amz-account-id header as well, which is
// how a single-host service tells it.
func newControlClient(cfg aws.Config) *s3control.Client {
	return s3control.NewFromConfig(cfg, func(o *s3control.Options) {
		o.EndpointResolverV2 = endpointHost{o.EndpointResolverV2}
	})
}

// endpointHost is the SDK's resolver, with a configured endpoint's host
// kept as configured.
type endpointHost struct{ next s3control.EndpointResolverV2 }

func (r endpointHost) ResolveEndpoint(ctx context.Context, p s3control.EndpointParameters) (smithyendpoints.Endpoint, error) {
	ep, err := r.next.ResolveEndpoint(ctx, p)
	if err != nil || p.Endpoint == nil || p.AccountId == nil {
		return ep, err
	}
	ep.URI.Host = strings.TrimPrefix(ep.URI.Host, *p.AccountId+".")
	return ep, nil
}

// learned is a fact about the endpoint, by region, found by the first
// call that needs it: the others wait for it rather than probe again.
type learned[T any] struct {
	mu sync.Mutex
	by map[string]T
}

// get returns the region's fact, calling probe if none is known yet. A
// probe that fails teaches nothing; the next call probes again.
func (l *learned[T]) get(region string, probe func() (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.by[region]; ok {
		return v, nil
	}
	v, err := probe()
	if err != nil {
		return v, err
	}
	if l.by == nil {
		l.by = map[string]T{}
	}
	l.by[region] = v
	return v, nil
}

// unserved reports whether err is an endpoint's answer that it does not
// serve the call: a refusal that is not about the bucket, the caller's
// rights or the load (not found, denied, throttled, a conflict, a server
// error other than 501 Not Implemented). An emulator answers an API it
// lacks in many ways: moto takes PUT ?abac for a CreateBucket and names a
// location error, others say NotImplemented or MethodNotAllowed.
func unserved(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch errorCode(err) {
	case providers.NotFound, providers.PermissionDenied, providers.Throttled, providers.Conflict:
		return false
	}
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 && resp.HTTPStatusCode() != 501 {
		return false
	}
	return true
}

// putTagSet makes tags the bucket's whole tag set with the bucket API,
// which S3 allows while the bucket's ABAC is off.
func putTagSet(ctx context.Context, c *s3.Client, name string, tags map[string]string) error {
	if len(tags) == 0 {
		_, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String(name)})
		return err
	}
	_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(name), Tagging: &s3types.Tagging{TagSet: s3Tags(tags)}})
	return err
}

// keptTags says whether the bucket CreateBucket just made carries the
// tags it was sent. AWS keeps them; an endpoint other than AWS's is asked
// once per region, on the first bucket, and trusted after (moto 5.2
// drops them).
func (d *buckets) keptTags(ctx context.Context, c *s3.Client, region, name string, sent map[string]string) (bool, error) {
	if !d.compatible {
		return true, nil
	}
	return d.keepsTags.get(region, func() (bool, error) {
		got, err := d.tags(ctx, region, name)
		if err != nil {
			return false, err
		}
		return got[spec.OwnershipTagKey] == sent[spec.OwnershipTagKey], nil
	})
}

// turnOnABAC turns the new bucket's ABAC on. AWS serves it, and any
// refusal fails the create. An endpoint other than AWS's is asked on the
// first bucket of a region: PutBucketAbac, then GetBucketAbac (moto 5.2
// answers the first as a second CreateBucket, which in us-east-1 succeeds).
// Where it is not served, the buckets there are made without it, and the
// returned caveat says what that costs.
func (d *buckets) turnOnABAC(ctx context.Context, c *s3.Client, region, name string) (caveat string, err error) {
	if !d.compatible {
		return "", enableABAC(ctx, c, name)
	}
	probed := false
	why, err := d.abacServed.get(region, func() (string, error) {
		probed = true
		if err := enableABAC(ctx, c, name); err != nil {
			if unserved(err) {
				return "PutBucketAbac answered " + apiCode(err), nil
			}
			return "", err
		}
		out, err := c.GetBucketAbac(ctx, &s3.GetBucketAbacInput{Bucket: aws.String(name)})
		switch {
		case unserved(err):
			return "GetBucketAbac answered " + apiCode(err), nil
		case err != nil:
			return "", err
		case out.AbacStatus == nil || out.AbacStatus.Status != s3types.BucketAbacStatusEnabled:
			return "PutBucketAbac succeeded, but GetBucketAbac reports it off", nil
		}
		return "", nil
	})
	switch {
	case err != nil:
		return "", err
	case why != "":
		return noABAC(region, why), nil
	case probed:
		return "", nil // the probe turned it on
	}
	return "", enableABAC(ctx, c, name)
}

// noABAC is the caveat of a bucket made where bucket ABAC is not served.
// It is the same for every bucket of the region, so that the engine,
// which warns once per caveat, warns once.
func noABAC(region, why string) string {
	return fmt.Sprintf("bucket ABAC is not served at this S3 endpoint in %s (%s): the bucket is tagged, but IAM cannot see its tags, "+
		"so the executor's tag conditions do not hold for it (docs/providers.md, \"S3-compatible endpoints\")", region, why)
}

// apiCode is err's API error code, printable.
func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return spec.Printable(api.ErrorCode())
	}
	return "an error"
}

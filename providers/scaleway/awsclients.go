package scaleway

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/infra-iac/infra/providers/sdkcall"
	"github.com/infra-iac/infra/spec"
)

// s3Clients holds one S3 client per region. Object Storage speaks S3 at
// https://s3.<region>.scw.cloud, signed with the Scaleway API key; the
// access key is written "<access key>@<project>" so that Object Storage
// acts in the fleet's project rather than the key's default one.
type s3Clients struct {
	b  *Backend
	mu sync.Mutex
	m  map[string]*s3.Client
}

func (c *s3Clients) get(ctx context.Context, region string) (*s3.Client, error) {
	project, _, err := c.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.m[region]; ok {
		return cl, nil
	}
	access, _ := c.b.client.GetAccessKey()
	secret, _ := c.b.client.GetSecretKey()
	if access == "" || secret == "" {
		return nil, fmt.Errorf("scaleway: Object Storage needs an access key and a secret key (SCW_ACCESS_KEY, SCW_SECRET_KEY)")
	}
	cfg := awsConfig(region, access+"@"+project, secret, c.b)
	endpoint := c.b.opts.S3Endpoint
	if endpoint == "" {
		endpoint = "https://s3." + region + ".scw.cloud"
	}
	cl := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = c.b.opts.S3Endpoint != ""
	})
	if c.m == nil {
		c.m = map[string]*s3.Client{}
	}
	c.m[region] = cl
	return cl, nil
}

// awsConfig is an aws-sdk-go-v2 configuration for a Scaleway S3 or SQS
// endpoint: static credentials, the Scaleway region as the signing
// region, and checksums only where the API requires them (Scaleway does
// not accept the newer default CRC trailers everywhere).
func awsConfig(region, access, secret string, b *Backend) aws.Config {
	cfg := aws.Config{
		Region:                     region,
		Credentials:                credentials.NewStaticCredentialsProvider(access, secret, ""),
		HTTPClient:                 b.opts.HTTPClient,
		RetryMaxAttempts:           5,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	// The same call log as the REST products' (INFRA_LOG).
	sdkcall.Configure(&cfg, spec.Scaleway, b.opts.Log, b.opts.Trace)
	return cfg
}

// bucketRegion normalises what GetBucketLocation says.
func bucketRegion(s string) string { return strings.TrimSpace(s) }

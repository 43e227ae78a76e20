package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// refuseAll answers every call with an access-denied error of the given
// code, as the service would, without reaching any endpoint.
func refuseAll(code string) func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("refuse", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return middleware.InitializeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: code, Message: "not allowed"}
		}), middleware.Before)
	}})
}

// Access denied is never absent: a refused read or listing is
// PermissionDenied, which fails the run, and not NotFound, which would
// plan a create (or hide an orphan).
func TestAccessDeniedIsNeverAbsent(t *testing.T) {
	kinds := map[spec.Kind]string{
		spec.ObjectStore:   "Forbidden", // HeadBucket has no body: the SDK names the status
		spec.S3Bucket:      "AccessDenied",
		spec.Queues:        "AccessDenied",
		spec.Secrets:       "AccessDeniedException",
		spec.IAM:           "AccessDenied",
		spec.ImageRegistry: "AccessDeniedException",
		spec.Route53Zone:   "AccessDenied",
	}
	for k, code := range kinds {
		t.Run(string(k), func(t *testing.T) {
			b, err := New(t.Context(), Options{ConfigOptions: []func(*config.LoadOptions) error{
				config.WithRegion(testRegion), config.WithCredentialsProvider(aws.AnonymousCredentials{}), refuseAll(code),
			}})
			if err != nil {
				t.Fatal(err)
			}
			d, _ := b.Driver(k)
			if _, err := d.Read(t.Context(), testRegion, "x"); b.ErrorCode(err) != providers.PermissionDenied {
				t.Errorf("read: %v (code %s), want permission denied", err, b.ErrorCode(err))
			}
			if _, err := d.List(t.Context(), testRegion); b.ErrorCode(err) != providers.PermissionDenied {
				t.Errorf("list: %v (code %s), want permission denied", err, b.ErrorCode(err))
			}
		})
	}
}

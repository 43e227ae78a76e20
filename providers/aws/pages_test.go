package aws

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	ecrtypes "github.com/aws/aws-sdk-go-v2/service/ecr/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// moto pages only ListSecrets; it answers ListQueues, ListUsers,
// DescribeRepositories and ListBuckets in one page whatever the page size.
// splitPages cuts those whole answers into pages of size, with the
// service's own token fields, so the drivers are shown to follow tokens to
// the end.
func splitPages(size int) func(*config.LoadOptions) error {
	cut := func(token *string, n int) (lo, hi int, next *string) {
		lo, _ = strconv.Atoi(aws.ToString(token))
		hi = min(lo+size, n)
		if hi < n {
			next = aws.String(strconv.Itoa(hi))
		}
		return lo, hi, next
	}
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("splitPages", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			var token *string
			switch p := in.Parameters.(type) {
			case *sqs.ListQueuesInput:
				c := *p
				token, c.NextToken = c.NextToken, nil
				in.Parameters = &c
			case *iam.ListUsersInput:
				c := *p
				token, c.Marker = c.Marker, nil
				in.Parameters = &c
			case *ecr.DescribeRepositoriesInput:
				c := *p
				token, c.NextToken = c.NextToken, nil
				in.Parameters = &c
			case *s3.ListBucketsInput:
				c := *p
				token, c.ContinuationToken = c.ContinuationToken, nil
				in.Parameters = &c
			}
			out, md, err := next.HandleInitialize(ctx, in)
			if err != nil {
				return out, md, err
			}
			switch o := out.Result.(type) {
			case *sqs.ListQueuesOutput:
				lo, hi, nt := cut(token, len(o.QueueUrls))
				o.QueueUrls, o.NextToken = o.QueueUrls[lo:hi], nt
			case *iam.ListUsersOutput:
				lo, hi, nt := cut(token, len(o.Users))
				o.Users, o.Marker, o.IsTruncated = o.Users[lo:hi], nt, nt != nil
			case *ecr.DescribeRepositoriesOutput:
				lo, hi, nt := cut(token, len(o.Repositories))
				o.Repositories, o.NextToken = o.Repositories[lo:hi], nt
			case *s3.ListBucketsOutput:
				lo, hi, nt := cut(token, len(o.Buckets))
				o.Buckets, o.ContinuationToken = o.Buckets[lo:hi], nt
			}
			return out, md, err
		}), middleware.Before)
	}})
}

// pagedKinds are the kinds whose listings page, with a create target.
var pagedKinds = []struct {
	kind   spec.Kind
	fields map[string]any
}{
	{spec.Queues, map[string]any{}},
	{spec.Secrets, map[string]any{"value": spec.NewSensitive("v")}},
	{spec.IAM, map[string]any{}},
	{spec.ImageRegistry, map[string]any{}},
	{spec.ObjectStore, map[string]any{"versioning": false}},
}

// Every listing reads every page: seven resources in pages of two are four
// list calls, and all seven are listed.
func TestListingsReadEveryPage(t *testing.T) {
	for _, k := range pagedKinds {
		t.Run(string(k.kind), func(t *testing.T) {
			var calls callCounter
			b, _ := newTestBackend(t, calls.option(), splitPages(2))
			d, _ := b.Driver(k.kind)
			if s, ok := d.(*secrets); ok {
				s.pageSize = 2 // moto pages secrets itself
			}
			for i := range 7 {
				tg := providers.Target{Name: fmt.Sprintf("paged-%d", i), Region: testRegion, Owner: "shop", Fields: k.fields}
				if _, err := d.Create(t.Context(), tg); err != nil {
					t.Fatal(err)
				}
			}
			before := calls.total()
			rs, err := d.List(t.Context(), testRegion)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 7 {
				t.Errorf("listed %d, want 7", len(rs))
			}
			if n := calls.total() - before; n != 4 {
				t.Errorf("%d list calls for 7 resources in pages of 2, want 4", n)
			}
		})
	}
}

// endlessPages answers every listing with one more page, for ever, without
// reaching the emulator.
func endlessPages() func(*config.LoadOptions) error {
	n := 0
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("endless", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			n++
			name, token := fmt.Sprintf("r%d", n), aws.String(fmt.Sprintf("t%d", n))
			var out any
			switch in.Parameters.(type) {
			case *sqs.ListQueuesInput:
				out = &sqs.ListQueuesOutput{QueueUrls: []string{"https://sqs.example/1/" + name}, NextToken: token}
			case *secretsmanager.ListSecretsInput:
				out = &secretsmanager.ListSecretsOutput{SecretList: []smtypes.SecretListEntry{{Name: &name}}, NextToken: token}
			case *iam.ListUsersInput:
				out = &iam.ListUsersOutput{Users: []iamtypes.User{{UserName: &name}}, Marker: token, IsTruncated: true}
			case *ecr.DescribeRepositoriesInput:
				out = &ecr.DescribeRepositoriesOutput{Repositories: []ecrtypes.Repository{{RepositoryName: &name}}, NextToken: token}
			case *s3.ListBucketsInput:
				out = &s3.ListBucketsOutput{Buckets: []s3types.Bucket{{Name: &name}}, ContinuationToken: token}
			default:
				return next.HandleInitialize(ctx, in)
			}
			return middleware.InitializeOutput{Result: out}, middleware.Metadata{}, nil
		}), middleware.Before)
	}})
}

// Past the page budget a listing fails; it never returns what it has.
func TestListingPastPageBudgetFails(t *testing.T) {
	for _, k := range append(pagedKinds, struct {
		kind   spec.Kind
		fields map[string]any
	}{spec.S3Bucket, nil}) {
		t.Run(string(k.kind), func(t *testing.T) {
			b, err := New(t.Context(), Options{ConfigOptions: []func(*config.LoadOptions) error{
				config.WithRegion(testRegion), config.WithCredentialsProvider(aws.AnonymousCredentials{}), endlessPages(),
			}})
			if err != nil {
				t.Fatal(err)
			}
			d, _ := b.Driver(k.kind)
			rs, err := d.List(t.Context(), testRegion)
			if err == nil || !strings.Contains(err.Error(), "refusing to report a prefix") {
				t.Fatalf("endless listing: %d resources, error %v; want the page budget's refusal", len(rs), err)
			}
			if rs != nil {
				t.Errorf("a failed listing returned %d resources", len(rs))
			}
		})
	}
}

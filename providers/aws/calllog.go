package aws

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// withCallLog adds the call log: a middleware at the start of every
// operation's stack, so that it sees the operation once, after the SDK's
// retries, with their count (the retryer's attempt results) and the last
// status.
func withCallLog(log providers.CallLog) func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("infra.CallLog", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleInitialize(ctx, in)
			log(callOf(ctx, md, err, time.Since(start)))
			return out, md, err
		}), middleware.Before)
	}})
}

func callOf(ctx context.Context, md middleware.Metadata, err error, took time.Duration) providers.Call {
	c := providers.Call{Provider: spec.AWS, Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx),
		Region: awsmiddleware.GetRegion(ctx), Address: providers.AddressIn(ctx), Duration: took, Err: err}
	if attempts, ok := retry.GetAttemptResults(md); ok && len(attempts.Results) > 0 {
		c.Retries = len(attempts.Results) - 1
	}
	if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && resp != nil {
		c.Status = resp.StatusCode
	}
	var re *awshttp.ResponseError
	if c.Status == 0 && errors.As(err, &re) {
		c.Status = re.HTTPStatusCode()
	}
	return c
}

// withTrace has the SDK log each request and response with its body, as
// its own client log mode does, through trace, with every field that
// carries a secret masked first.
func withTrace(trace func(string)) []func(*config.LoadOptions) error {
	return []func(*config.LoadOptions) error{
		config.WithClientLogMode(aws.LogRequestWithBody | aws.LogResponseWithBody | aws.LogRetries),
		config.WithLogger(logging.LoggerFunc(func(_ logging.Classification, format string, v ...interface{}) {
			trace(providers.MaskSecrets(fmt.Sprintf(format, v...)))
		})),
	}
}

// Package sdkcall is the call log (INFRA_LOG) for clients of
// aws-sdk-go-v2: AWS itself, and the Scaleway products that speak an AWS
// protocol (Object Storage's S3, Queues' SQS). It lives under providers
// so neither provider imports the other.
package sdkcall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// Middleware adds the call log to an operation's stack: at its start, so
// that it sees the operation once, after the SDK's retries, with their
// count (the retryer's attempt results) and the last status.
func Middleware(p spec.Provider, log providers.CallLog) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("infra.CallLog", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleInitialize(ctx, in)
			log(callOf(ctx, p, md, err, time.Since(start)))
			return out, md, err
		}), middleware.Before)
	}
}

func callOf(ctx context.Context, p spec.Provider, md middleware.Metadata, err error, took time.Duration) providers.Call {
	c := providers.Call{Provider: p, Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx),
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

// TraceMode is the SDK's client log mode for trace: each request and
// response with its body, and each retry.
const TraceMode = aws.LogRequestWithBody | aws.LogResponseWithBody | aws.LogRetries

// TraceLogger writes what the SDK logs in TraceMode to trace, with every
// field that carries a secret masked first.
func TraceLogger(trace func(string)) logging.Logger {
	return logging.LoggerFunc(func(_ logging.Classification, format string, v ...interface{}) {
		trace(providers.MaskSecrets(fmt.Sprintf(format, v...)))
	})
}

// Configure adds the call log and, when trace is set, the traced
// requests and responses to cfg.
func Configure(cfg *aws.Config, p spec.Provider, log providers.CallLog, trace func(string)) {
	if log != nil {
		cfg.APIOptions = append(cfg.APIOptions, Middleware(p, log))
	}
	if trace != nil {
		cfg.ClientLogMode = TraceMode
		cfg.Logger = TraceLogger(trace)
	}
}

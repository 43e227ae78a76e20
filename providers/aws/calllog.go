package aws

import (
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/sdkcall"
	"github.com/infra-iac/infra/spec"
)

// withCallLog adds the call log to every client's operations.
func withCallLog(log providers.CallLog) func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{sdkcall.Middleware(spec.AWS, log)})
}

// withTrace has the SDK log each request and response with its body, as
// its own client log mode does, through trace, with every field that
// carries a secret masked first.
func withTrace(trace func(string)) []func(*config.LoadOptions) error {
	return []func(*config.LoadOptions) error{config.WithClientLogMode(sdkcall.TraceMode), config.WithLogger(sdkcall.TraceLogger(trace))}
}

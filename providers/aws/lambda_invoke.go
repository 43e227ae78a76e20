package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// Invoker calls a Lambda function synchronously. It is how CI reaches the
// executor: the GitHub Action's role may invoke the function and do
// nothing else, so CI holds no admin keys. It lives here because only
// providers/ may import cloud SDKs.
type Invoker struct {
	client *lambda.Client
}

// NewInvoker loads the SDK's default configuration (credentials from the
// environment, OIDC web identity, profiles; the endpoint from
// AWS_ENDPOINT_URL, which is how tests reach the runtime emulator).
func NewInvoker(ctx context.Context, opts Options) (*Invoker, error) {
	b, err := New(ctx, opts)
	if err != nil {
		return nil, err
	}
	// Only a throttled invoke is retried: Lambda refused it before the
	// function ran. A dropped connection may come after the function
	// started an apply, and a blind retry would start a second one (the lock
	// would refuse it, and its refusal would hide the first one's result).
	client := lambda.NewFromConfig(b.cfg, func(o *lambda.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 5
			so.Retryables = []retry.IsErrorRetryable{retry.RetryableErrorCode{Codes: map[string]struct{}{
				"TooManyRequestsException": {}, "ThrottlingException": {}, "EC2ThrottledException": {},
			}}}
		})
	})
	return &Invoker{client: client}, nil
}

// FunctionError is a failure the function itself reported: it ran and
// returned an error (or timed out), as opposed to the call not reaching it.
type FunctionError struct {
	Function string
	Type     string
	Message  string
}

func (e *FunctionError) Error() string {
	if e.Type != "" {
		return fmt.Sprintf("lambda %s failed: %s: %s", e.Function, e.Type, e.Message)
	}
	return fmt.Sprintf("lambda %s failed: %s", e.Function, e.Message)
}

// Invoke sends payload to function (a name or an ARN) and returns the
// function's result. A function error is a *FunctionError: Lambda marks it
// with a header, the runtime interface emulator only with an errorMessage
// body, so both are recognised.
func (i *Invoker) Invoke(ctx context.Context, function string, payload []byte) ([]byte, error) {
	out, err := i.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(function),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return nil, fmt.Errorf("invoke lambda %s: %w", function, err)
	}
	if fe := functionError(function, out.Payload); fe != nil || out.FunctionError != nil {
		if fe == nil {
			fe = &FunctionError{Function: function, Type: aws.ToString(out.FunctionError), Message: strings.TrimSpace(string(out.Payload))}
		}
		return nil, fe
	}
	return out.Payload, nil
}

// functionError reads the body Lambda runtimes send for an error:
// {"errorMessage": ..., "errorType": ...} and nothing else of note.
func functionError(function string, body []byte) *FunctionError {
	var e struct {
		Message *string `json:"errorMessage"`
		Type    string  `json:"errorType"`
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(body, &keys) != nil || json.Unmarshal(body, &e) != nil || e.Message == nil {
		return nil
	}
	for k := range keys {
		switch k {
		case "errorMessage", "errorType", "stackTrace", "requestId", "cause":
		default:
			// A result that happens to have an errorMessage field among
			// its own is a result.
			return nil
		}
	}
	return &FunctionError{Function: function, Type: e.Type, Message: *e.Message}
}

package aws

import (
	"errors"
	"fmt"

	"github.com/aws/smithy-go"

	"github.com/infra-iac/infra/providers"
)

// errorCodes maps AWS error codes to infra's codes. Codes, never HTTP
// statuses: a missing secret is 400 on AWS and 404 on some emulators.
//
// These are the codes every service shares, and the S3 codes the state
// store meets too; a code of one kind's API is in that kind's registry
// entry (registry.go), which register adds here.
var errorCodes = map[string]providers.Code{
	// Not found.
	"NotFound": providers.NotFound, "NoSuchBucket": providers.NotFound, "NoSuchKey": providers.NotFound,
	"ResourceNotFoundException": providers.NotFound,
	// Refused.
	"AccessDenied": providers.PermissionDenied, "AccessDeniedException": providers.PermissionDenied,
	"UnauthorizedOperation": providers.PermissionDenied, "InvalidClientTokenId": providers.PermissionDenied,
	"UnrecognizedClientException": providers.PermissionDenied, "ExpiredToken": providers.PermissionDenied,
	"SignatureDoesNotMatch": providers.PermissionDenied, "AuthFailure": providers.PermissionDenied,
	// S3 answers a HEAD without a body; the SDK names the status instead.
	"Forbidden": providers.PermissionDenied,
	// Blocked for now by a dependant or a state.
	"ConcurrentModification": providers.Conflict, "ResourceInUseException": providers.Conflict,
	// Throttled.
	"Throttling": providers.Throttled, "ThrottlingException": providers.Throttled,
	"RequestLimitExceeded": providers.Throttled, "TooManyRequestsException": providers.Throttled,
	"SlowDown": providers.Throttled, "RequestThrottled": providers.Throttled,
	// Invalid.
	"ValidationError": providers.InvalidArgument, "ValidationException": providers.InvalidArgument,
	"InvalidParameterValue": providers.InvalidArgument, "InvalidParameterValueException": providers.InvalidArgument,
	"InvalidParameterException": providers.InvalidArgument, "InvalidParameterCombination": providers.InvalidArgument,
	"InvalidParameter": providers.InvalidArgument, "MissingParameter": providers.InvalidArgument,
	"Unsupported": providers.InvalidArgument,
}

// ErrorCode classifies an error from any AWS driver.
func (b *Backend) ErrorCode(err error) providers.Code { return errorCode(err) }

func errorCode(err error) providers.Code {
	if code, ok := providers.CodeFromError(err); ok {
		return code
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if code, ok := errorCodes[api.ErrorCode()]; ok {
			return code
		}
	}
	return providers.Unknown
}

// coded is cause under a message and a code of infra's own, where the
// cloud's code says less than the driver knows (a create of a name in use
// that DynamoDB calls busy); errors.As still reaches the cause.
func coded(code providers.Code, cause error, format string, args ...any) error {
	return fmt.Errorf("%w: %w", providers.Errorf(code, format, args...), cause)
}

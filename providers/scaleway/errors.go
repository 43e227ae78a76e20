package scaleway

import (
	"errors"
	"net/http"

	"github.com/aws/smithy-go"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
)

// ErrorCode classifies an error from any Scaleway driver: the SDK's typed
// errors, its untyped ResponseError by HTTP status (Functions and Registry
// answer a 404 with no type), and the S3 and SQS codes of the
// aws-sdk-go-v2 clients.
func (b *Backend) ErrorCode(err error) providers.Code { return errorCode(err) }

func errorCode(err error) providers.Code {
	if code, ok := providers.CodeFromError(err); ok {
		return code
	}
	var (
		notFound  *scw.ResourceNotFoundError
		denied    *scw.PermissionsDeniedError
		authn     *scw.DeniedAuthenticationError
		invalid   *scw.InvalidArgumentsError
		quota     *scw.QuotasExceededError
		transient *scw.TransientStateError
		locked    *scw.ResourceLockedError
		precond   *scw.PreconditionFailedError
		resp      *scw.ResponseError
		api       smithy.APIError
	)
	switch {
	case errors.As(err, &notFound):
		return providers.NotFound
	case errors.As(err, &denied), errors.As(err, &authn):
		return providers.PermissionDenied
	case errors.As(err, &invalid), errors.As(err, &quota):
		return providers.InvalidArgument
	case errors.As(err, &transient), errors.As(err, &locked), errors.As(err, &precond):
		return providers.Conflict
	case errors.As(err, &resp):
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return providers.NotFound
		case resp.StatusCode == http.StatusConflict && resp.Type == "already_exists":
			return providers.AlreadyExists
		case resp.StatusCode == http.StatusConflict:
			return providers.Conflict
		case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
			return providers.PermissionDenied
		case resp.StatusCode == http.StatusTooManyRequests:
			return providers.Throttled
		case resp.StatusCode == http.StatusBadRequest:
			return providers.InvalidArgument
		}
	case errors.As(err, &api):
		if code, ok := awsCodes[api.ErrorCode()]; ok {
			return code
		}
	}
	return providers.Unknown
}

// awsCodes are the S3 and SQS error codes Object Storage and Queues answer
// (a copy of the few the AWS drivers know, for the same APIs).
var awsCodes = map[string]providers.Code{
	"NoSuchBucket": providers.NotFound, "NotFound": providers.NotFound, "NoSuchTagSet": providers.NotFound,
	"QueueDoesNotExist": providers.NotFound, "AWS.SimpleQueueService.NonExistentQueue": providers.NotFound,
	"BucketAlreadyOwnedByYou": providers.AlreadyExists, "BucketAlreadyExists": providers.AlreadyExists,
	"QueueAlreadyExists": providers.AlreadyExists, "QueueNameExists": providers.AlreadyExists,
	"AccessDenied": providers.PermissionDenied, "Forbidden": providers.PermissionDenied,
	"InvalidClientTokenId": providers.PermissionDenied, "SignatureDoesNotMatch": providers.PermissionDenied,
	"InvalidAccessKeyId": providers.PermissionDenied,
	"BucketNotEmpty":     providers.Conflict, "OperationAborted": providers.Conflict,
	"SlowDown": providers.Throttled, "RequestThrottled": providers.Throttled, "Throttling": providers.Throttled,
	"InvalidParameterValue": providers.InvalidArgument, "InvalidAttributeValue": providers.InvalidArgument,
	"InvalidBucketName": providers.InvalidArgument, "MalformedXML": providers.InvalidArgument,
}

// gone reports whether an error after a delete means the resource is gone:
// a 404 of any shape, or the 403 Serverless SQL answers for a deleted
// database.
func gone(err error, denialMeansGone bool) bool {
	switch errorCode(err) {
	case providers.NotFound:
		return true
	case providers.PermissionDenied:
		return denialMeansGone
	}
	return false
}

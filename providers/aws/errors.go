package aws

import (
	"errors"

	"github.com/aws/smithy-go"

	"github.com/infra-iac/infra/providers"
)

// errorCodes maps AWS error codes to infra's codes. Codes, never HTTP
// statuses: a missing secret is 400 on AWS and 404 on some emulators.
var errorCodes = map[string]providers.Code{
	// Not found.
	"NoSuchBucket": providers.NotFound, "NotFound": providers.NotFound, "NoSuchKey": providers.NotFound,
	"NoSuchEntity": providers.NotFound, "ResourceNotFoundException": providers.NotFound,
	"AWS.SimpleQueueService.NonExistentQueue": providers.NotFound, "QueueDoesNotExist": providers.NotFound,
	"RepositoryNotFoundException": providers.NotFound, "DBClusterNotFoundFault": providers.NotFound,
	"InvalidGroup.NotFound": providers.NotFound, "InvalidInstanceID.NotFound": providers.NotFound,
	"InvalidGroupId.Malformed": providers.NotFound, "NoSuchTagSet": providers.NotFound,
	// Already exists.
	"BucketAlreadyOwnedByYou": providers.AlreadyExists, "BucketAlreadyExists": providers.AlreadyExists,
	"EntityAlreadyExists": providers.AlreadyExists, "ResourceExistsException": providers.AlreadyExists,
	"RepositoryAlreadyExistsException": providers.AlreadyExists, "DBClusterAlreadyExistsFault": providers.AlreadyExists,
	"InvalidGroup.Duplicate": providers.AlreadyExists, "QueueAlreadyExists": providers.AlreadyExists,
	"ResourceConflictException": providers.Conflict,
	// Refused.
	"AccessDenied": providers.PermissionDenied, "AccessDeniedException": providers.PermissionDenied,
	"UnauthorizedOperation": providers.PermissionDenied, "InvalidClientTokenId": providers.PermissionDenied,
	"UnrecognizedClientException": providers.PermissionDenied, "ExpiredToken": providers.PermissionDenied,
	"SignatureDoesNotMatch": providers.PermissionDenied, "AuthFailure": providers.PermissionDenied,
	// S3 answers a HEAD without a body; the SDK names the status instead.
	"Forbidden": providers.PermissionDenied,
	// Blocked for now by a dependant or a state.
	"DeleteConflict": providers.Conflict, "DependencyViolation": providers.Conflict,
	"BucketNotEmpty": providers.Conflict, "InvalidDBClusterStateFault": providers.Conflict,
	"RepositoryNotEmptyException": providers.Conflict, "InvalidRequestException": providers.Conflict,
	"OperationAborted": providers.Conflict,
	// SQS keeps a deleted queue's name for 60 s; a replace waits it out.
	"AWS.SimpleQueueService.QueueDeletedRecently": providers.Conflict, "QueueDeletedRecently": providers.Conflict,
	"ConcurrentModification": providers.Conflict,
	// Throttled.
	"Throttling": providers.Throttled, "ThrottlingException": providers.Throttled,
	"RequestLimitExceeded": providers.Throttled, "TooManyRequestsException": providers.Throttled,
	"SlowDown": providers.Throttled, "RequestThrottled": providers.Throttled,
	// Invalid.
	"ValidationError": providers.InvalidArgument, "ValidationException": providers.InvalidArgument,
	"InvalidParameterValue": providers.InvalidArgument, "InvalidParameterValueException": providers.InvalidArgument,
	"InvalidParameterException": providers.InvalidArgument, "MalformedPolicyDocument": providers.InvalidArgument,
	// EC2, RDS and Lambda codes the security-group, aws-instance, postgres
	// and compute drivers meet. A missing AMI, key pair or subnet named in
	// a target is a wrong argument, never the resource being absent.
	"DBInstanceNotFound": providers.NotFound, "InvalidPermission.NotFound": providers.NotFound,
	"DBInstanceAlreadyExists": providers.AlreadyExists, "InvalidPermission.Duplicate": providers.AlreadyExists,
	"InvalidDBInstanceState": providers.Conflict, "ResourceInUseException": providers.Conflict,
	"InsufficientInstanceCapacity": providers.Conflict, "IncorrectInstanceState": providers.Conflict,
	"InvalidParameterCombination": providers.InvalidArgument, "InvalidParameter": providers.InvalidArgument,
	"MissingParameter": providers.InvalidArgument, "Unsupported": providers.InvalidArgument,
	"InvalidAMIID.NotFound": providers.InvalidArgument, "InvalidAMIID.Malformed": providers.InvalidArgument,
	"InvalidKeyPair.NotFound": providers.InvalidArgument, "InvalidSubnetID.NotFound": providers.InvalidArgument,
	"InvalidInstanceType": providers.InvalidArgument, "InvalidGroup.Reserved": providers.InvalidArgument,
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

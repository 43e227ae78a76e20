package gcp

import (
	"errors"
	"net/http"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/infra-iac/infra/providers"
)

// ErrorCode classifies an error from any GCP driver: the gRPC status of
// the gRPC and GAPIC clients (Pub/Sub; an apierror carries one too), the
// HTTP status of a googleapi.Error (Cloud Storage's JSON API, the
// google.golang.org/api clients), and Cloud Storage's sentinel errors.
func (b *Backend) ErrorCode(err error) providers.Code { return errorCode(err) }

func errorCode(err error) providers.Code {
	if code, ok := providers.CodeFromError(err); ok {
		return code
	}
	if errors.Is(err, storage.ErrBucketNotExist) || errors.Is(err, storage.ErrObjectNotExist) {
		return providers.NotFound
	}
	var g *googleapi.Error
	if errors.As(err, &g) {
		return httpCode(g.Code)
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return grpcCode(s.Code())
	}
	return providers.Unknown
}

func httpCode(code int) providers.Code {
	switch code {
	case http.StatusNotFound:
		return providers.NotFound
	case http.StatusConflict:
		return providers.AlreadyExists
	case http.StatusForbidden, http.StatusUnauthorized:
		return providers.PermissionDenied
	case http.StatusTooManyRequests:
		return providers.Throttled
	case http.StatusBadRequest:
		return providers.InvalidArgument
	case http.StatusPreconditionFailed:
		return providers.Conflict
	}
	return providers.Unknown
}

func grpcCode(c codes.Code) providers.Code {
	switch c {
	case codes.NotFound:
		return providers.NotFound
	case codes.AlreadyExists:
		return providers.AlreadyExists
	case codes.PermissionDenied, codes.Unauthenticated:
		return providers.PermissionDenied
	case codes.ResourceExhausted:
		return providers.Throttled
	case codes.InvalidArgument, codes.OutOfRange:
		return providers.InvalidArgument
	case codes.FailedPrecondition, codes.Aborted:
		return providers.Conflict
	case codes.Canceled, codes.DeadlineExceeded:
		return providers.Canceled
	}
	return providers.Unknown
}

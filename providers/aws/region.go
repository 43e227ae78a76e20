package aws

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
)

// ErrNoRegion is the error of a call made without a region. Every region
// comes from a declaration or a ledger row, so a call without one is a bug
// in infra. The SDK would send it anyway, signed for region "", and retry
// the answer for the whole retry budget; refusing it at once names the
// resource instead (the engine wraps the error with its address).
var ErrNoRegion = errors.New("called without a region (a bug in infra)")

// refuseWithoutRegion makes every call of a client configured without a
// region fail before it is sent, and so before any retry.
func refuseWithoutRegion(cfg *aws.Config) {
	cfg.APIOptions = append(append([]func(*middleware.Stack) error{}, cfg.APIOptions...), func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("infraRefuseWithoutRegion", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			// The SDK's error around it names the service and operation.
			return middleware.InitializeOutput{}, middleware.Metadata{}, ErrNoRegion
		}), middleware.Before)
	})
}

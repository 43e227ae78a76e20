package providers

import (
	"context"
	"errors"
	"fmt"
)

// Code classifies a provider error. The engine decides on codes, never on
// provider-specific strings.
type Code int

const (
	Unknown Code = iota
	NotFound
	AlreadyExists
	PermissionDenied
	// Conflict: the cloud refuses now but may accept later, such as a delete
	// blocked by a dependant (DependencyViolation, DeleteConflict,
	// BucketNotEmpty).
	Conflict
	Throttled
	InvalidArgument
	Canceled
)

func (c Code) String() string {
	switch c {
	case NotFound:
		return "not found"
	case AlreadyExists:
		return "already exists"
	case PermissionDenied:
		return "permission denied"
	case Conflict:
		return "conflict"
	case Throttled:
		return "throttled"
	case InvalidArgument:
		return "invalid argument"
	case Canceled:
		return "canceled"
	}
	return "unknown"
}

// CodeOf classifies err with the backend, recognising context cancellation
// first.
func CodeOf(b Backend, err error) Code {
	if err == nil {
		return Unknown
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Canceled
	}
	if b == nil {
		return Unknown
	}
	return b.ErrorCode(err)
}

// Error is an error with a code, for drivers whose cloud has no error type of
// its own (the memory driver, the fakes).
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Errorf builds an Error.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// CodeFromError returns the code of an *Error in err's chain.
func CodeFromError(err error) (Code, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return Unknown, false
}

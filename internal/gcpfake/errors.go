package gcpfake

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is an error in Google's JSON shape, which no discovery
// document describes:
//
//	{"error": {"code": 404, "message": "…", "status": "NOT_FOUND", "details": […]}}
//
// googleapi.CheckResponse reads code and message into a *googleapi.Error;
// gax's apierror then parses the body with protojson (strictly: an
// unknown key and it drops the details) and takes the gRPC code from the
// HTTP status alone, not from "status". So the HTTP status must be the
// one Google maps each status to, and the body must hold nothing else.
type apiError struct {
	status  string
	message string
	details []map[string]any
}

func (e *apiError) Error() string { return e.status + ": " + e.message }

// httpStatus is google.rpc.Code's HTTP mapping (google/rpc/code.proto).
var httpStatus = map[string]int{
	"INVALID_ARGUMENT":    http.StatusBadRequest,
	"FAILED_PRECONDITION": http.StatusBadRequest,
	"OUT_OF_RANGE":        http.StatusBadRequest,
	"UNAUTHENTICATED":     http.StatusUnauthorized,
	"PERMISSION_DENIED":   http.StatusForbidden,
	"NOT_FOUND":           http.StatusNotFound,
	"ABORTED":             http.StatusConflict,
	"ALREADY_EXISTS":      http.StatusConflict,
	"RESOURCE_EXHAUSTED":  http.StatusTooManyRequests,
	"INTERNAL":            http.StatusInternalServerError,
	"UNIMPLEMENTED":       http.StatusNotImplemented,
	"UNAVAILABLE":         http.StatusServiceUnavailable,
	// Cloud SQL's answer to a stale settingsVersion, 412 "Condition does
	// not match.", which no google.rpc.Code maps to (sqladmin.go).
	staleData: http.StatusPreconditionFailed,
}

func errorf(status, format string, args ...any) *apiError {
	return &apiError{status: status, message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError { return errorf("NOT_FOUND", format, args...) }

func invalid(format string, args ...any) *apiError {
	return errorf("INVALID_ARGUMENT", format, args...)
}

func precondition(format string, args ...any) *apiError {
	return errorf("FAILED_PRECONDITION", format, args...)
}

// unmodelled answers a valid request the fake does not implement: a
// limit of the fake, said as such, never a made-up answer.
func unmodelled(format string, args ...any) *apiError {
	return errorf("UNIMPLEMENTED", "gcpfake does not model "+format, args...)
}

// permissionDenied is GCP's answer for a resource the caller may not see,
// whether or not it exists; the ErrorInfo detail is what apierror.Reason
// reads.
func permissionDenied(service, resource string) *apiError {
	e := errorf("PERMISSION_DENIED", "Permission denied on resource '%s' (or it may not exist).", resource)
	e.details = []map[string]any{{
		"@type":    "type.googleapis.com/google.rpc.ErrorInfo",
		"reason":   "IAM_PERMISSION_DENIED",
		"domain":   service,
		"metadata": map[string]any{"resource": resource},
	}}
	return e
}

func unauthenticated() *apiError {
	return errorf("UNAUTHENTICATED", "Request is missing required authentication credential. "+
		"Expected OAuth 2 access token, login cookie or other valid authentication credential.")
}

func writeError(w http.ResponseWriter, e *apiError) {
	code := httpStatus[e.status]
	if code == 0 {
		code = http.StatusInternalServerError
	}
	body := map[string]any{"code": code, "message": e.message, "status": e.status}
	if len(e.details) > 0 {
		body["details"] = e.details
	}
	if e.status == "UNAUTHENTICATED" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
	}
	writeJSON(w, code, map[string]any{"error": body}, true)
}

func writeJSON(w http.ResponseWriter, code int, v any, pretty bool) {
	b, err := json.Marshal(v)
	if pretty && err == nil {
		b, err = json.MarshalIndent(v, "", "  ")
	}
	if err != nil { // a value the fake built itself: its bug, said plainly
		http.Error(w, "gcpfake: encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

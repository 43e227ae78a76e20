package httpcall

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
)

// What may be sent again: anything that never arrived whole, or was
// refused unprocessed (429); a GET, HEAD or DELETE after any lost answer
// too; a POST never after the API may have acted on it.
func TestRetryable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	noSuchHost := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}
	// Writing the body to a kept-alive connection the server had closed,
	// as net/http reports it.
	brokenPipe := &net.OpError{Op: "readfrom", Net: "tcp", Err: &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, c := range []struct {
		method string
		status int
		err    error
		want   bool
	}{
		{http.MethodPost, 0, refused, true},
		{http.MethodPost, 0, fmt.Errorf("Post %q: %w", "http://x", brokenPipe), true},
		{http.MethodPost, 0, noSuchHost, false},
		{http.MethodPost, 0, reset, false},
		{http.MethodPost, 0, io.ErrUnexpectedEOF, false},
		{http.MethodGet, 0, reset, true},
		{http.MethodDelete, 0, io.EOF, true},
		{http.MethodGet, 0, errors.New("tls: bad certificate"), false},
		{http.MethodPost, http.StatusTooManyRequests, nil, true},
		{http.MethodPatch, http.StatusServiceUnavailable, nil, false},
		{http.MethodGet, http.StatusServiceUnavailable, nil, true},
		{http.MethodGet, http.StatusNotFound, nil, false},
		{http.MethodDelete, http.StatusBadGateway, nil, true},
	} {
		var resp *http.Response
		if c.err == nil {
			resp = &http.Response{StatusCode: c.status, Header: http.Header{}}
		}
		if got, _ := retryable(c.method, resp, c.err); got != c.want {
			t.Errorf("%s answered %d, error %v: retryable %v; want %v", c.method, c.status, c.err, got, c.want)
		}
	}
}

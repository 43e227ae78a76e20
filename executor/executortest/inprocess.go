package executortest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/infra-iac/infra/state"
)

// MemBlobs is state.Blobs in memory, with S3's conditional writes: the
// executor's state in a test that runs the handler in-process.
type MemBlobs struct {
	mu   sync.Mutex
	objs map[string][]byte
}

// NewMemBlobs returns an empty store.
func NewMemBlobs() *MemBlobs { return &MemBlobs{objs: map[string][]byte{}} }

func tagOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// Get reads an object and its tag.
func (m *MemBlobs) Get(ctx context.Context, key string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objs[key]
	if !ok {
		return nil, "", fmt.Errorf("%s: %w", key, state.ErrBlobNotFound)
	}
	return append([]byte{}, b...), tagOf(b), nil
}

// Put writes an object when c holds.
func (m *MemBlobs) Put(ctx context.Context, key string, data []byte, c state.Condition) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, exists := m.objs[key]
	if (c.IfNoneMatch && exists) || (c.IfMatch != "" && (!exists || tagOf(old) != c.IfMatch)) {
		return "", fmt.Errorf("%s: %w", key, state.ErrPrecondition)
	}
	m.objs[key] = append([]byte{}, data...)
	return tagOf(data), nil
}

// Delete removes an object.
func (m *MemBlobs) Delete(ctx context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

// Where names the store.
func (m *MemBlobs) Where() string { return "mem://state" }

// Has says whether an object exists.
func (m *MemBlobs) Has(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.objs[key]
	return ok
}

// Len is how many objects there are.
func (m *MemBlobs) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objs)
}

// ServeLambda answers Lambda's Invoke API on loopback with handle, one
// invocation at a time as a function instance does, and points this
// process's Lambda clients at it (with test credentials): a caller such
// as `infra executor invoke` goes through the SDK to a handler that runs
// in the test. handle takes the payload and returns the result.
func ServeLambda(t *testing.T, handle func(ctx context.Context, payload []byte) ([]byte, error)) {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/invocations") {
			http.Error(w, "not the Invoke API: "+r.URL.Path, http.StatusNotFound)
			return
		}
		payload, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		out, err := handle(r.Context(), payload)
		mu.Unlock()
		if err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			out = []byte(fmt.Sprintf(`{"errorType": "error", "errorMessage": %q}`, err.Error()))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "eu-west-3")
	t.Setenv("AWS_PROFILE", "")
}

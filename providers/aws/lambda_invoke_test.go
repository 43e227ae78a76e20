package aws

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The invoker against a server that answers like Lambda and like the
// runtime interface emulator: a result, an error marked by the header, and
// an error marked only by its body.
func TestInvokerTellsResultsFromFunctionErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/2015-03-31/functions/function/invocations" {
			http.Error(w, "no such function", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		switch string(body) {
		case `"header"`:
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			_, _ = io.WriteString(w, `{"errorMessage":"boom","errorType":"Panic"}`)
		case `"body"`:
			_, _ = io.WriteString(w, `{"errorMessage":"Task timed out after 3.00 seconds","errorType":"Runtime.ExitError"}`)
		default:
			_, _ = w.Write(body)
		}
	}))
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "eu-west-3")
	inv, err := NewInvoker(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := inv.Invoke(ctx, "function", []byte(`{"status":"done","errorMessage":"kept"}`))
	if err != nil || string(out) != `{"status":"done","errorMessage":"kept"}` {
		t.Fatalf("result: %s, %v", out, err)
	}
	for _, payload := range []string{`"header"`, `"body"`} {
		_, err := inv.Invoke(ctx, "function", []byte(payload))
		var fe *FunctionError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: want a FunctionError, got %v", payload, err)
		}
		t.Logf("%s: %v", payload, err)
	}
	if _, err := inv.Invoke(ctx, "other", []byte(`{}`)); err == nil {
		t.Fatal("an unknown function did not fail")
	}
}

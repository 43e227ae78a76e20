package operations

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/infra-iac/infra/state"
)

// Output reads a fleet's record where it is asked to: at a wire's state
// location through StoreAt, else beside this front end's state; a front
// end that opens no other location says so.
func TestOutputOpensTheAskedLocation(t *testing.T) {
	errHere, errThere := errors.New("opened here"), errors.New("opened there")
	var at string
	env := Env{
		Store: func(context.Context, string) (state.Store, error) { return nil, errHere },
		StoreAt: func(_ context.Context, location, fleet string) (state.Store, error) {
			at = location + " " + fleet
			return nil, errThere
		},
	}
	ctx := context.Background()
	if _, err := New(env).Output(ctx, OutputRequest{Fleet: "pg-shared"}); !errors.Is(err, errHere) {
		t.Errorf("without a location: %v, want the own store", err)
	}
	if _, err := New(env).Output(ctx, OutputRequest{Fleet: "pg-shared", State: "s3://b/p"}); !errors.Is(err, errThere) || at != "s3://b/p pg-shared" {
		t.Errorf("with a location: %v at %q, want StoreAt at s3://b/p for pg-shared", err, at)
	}
	env.StoreAt = nil
	if _, err := New(env).Output(ctx, OutputRequest{Fleet: "pg-shared", State: "s3://b/p"}); err == nil || !strings.Contains(err.Error(), "not at s3://b/p") {
		t.Errorf("without StoreAt: %v, want a refusal naming the location", err)
	}
}

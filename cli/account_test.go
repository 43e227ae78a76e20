package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// A fleet for another account is refused before any listing request
// reaches the cloud: the only call the emulator sees is the identity check.
func TestWrongAccountIsRefusedBeforeAnyListingOnAWS(t *testing.T) {
	srv := moto.Shared(t)
	srv.Setenv()
	var mu sync.Mutex
	calls := map[string]int{}
	count := config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			mu.Lock()
			calls[middleware.GetServiceID(ctx)+"."+middleware.GetOperationName(ctx)]++
			mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	}})
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet.json")
	os.WriteFile(fleet, []byte(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "999999999999"},
	  "placement": {"aws": "eu-west-3"}, "resources": [{"address": "aws/queues/jobs", "spec": {}},
	  {"address": "aws/object-store/assets", "spec": {}}]}`), 0o644)
	var out, errb bytes.Buffer
	f := DefaultFactory()
	f.IO = Test(nil, &out, &errb)
	f.Backends = func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		b, err := awsprovider.New(ctx, awsprovider.Options{ConfigOptions: []func(*config.LoadOptions) error{count}})
		return map[spec.Provider]providers.Backend{spec.AWS: b}, nil, err
	}
	code := RunWith(f, []string{"plan", "--fleet", fleet, "--state", filepath.Join(dir, "state")}, nil)
	if code != ExitError {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "the credentials belong to account 123456789012, but the fleet is for 999999999999") {
		t.Fatalf("stderr: %s", errb.String())
	}
	if len(calls) != 1 || calls["STS.GetCallerIdentity"] != 1 {
		t.Fatalf("calls that reached the emulator: %v", calls)
	}
}

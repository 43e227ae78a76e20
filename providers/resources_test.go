package providers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
)

// The portable type writes once what every caller of a driver needed:
// not found as an answer, and errors wrapped with the address, the
// operation and the code.
func TestResources(t *testing.T) {
	ctx := context.Background()
	cloud := memory.NewCloud(map[spec.Provider]string{spec.AWS: "123456789012"})
	b := cloud.Backend(spec.AWS)
	rs, ok := providers.ResourcesOf(b, spec.Queues)
	if !ok {
		t.Fatal("no queues")
	}
	if _, ok := providers.ResourcesOf(b, spec.ScalewayContainer); ok {
		t.Fatal("a Scaleway kind on AWS")
	}
	if _, found, err := rs.Read(ctx, "eu-west-3", "jobs"); found || err != nil {
		t.Fatalf("a missing queue: found %v, err %v", found, err)
	}
	if err := rs.Delete(ctx, providers.Target{Name: "jobs", Region: "eu-west-3"}); err != nil {
		t.Fatalf("deleting what is gone: %v", err)
	}
	if _, err := rs.Create(ctx, providers.Target{Name: "mail", Region: "eu-west-3", Owner: "shop"}); err != nil {
		t.Fatal(err)
	}
	got, found, err := rs.Read(ctx, "eu-west-3", "mail")
	if err != nil || !found || got.Region != "eu-west-3" {
		t.Fatalf("read: %+v %v %v", got, found, err)
	}
	cloud.Inject(memory.Fault{Op: "update", Err: providers.Errorf(providers.Throttled, "ThrottlingException: Rate exceeded"), Times: 1})
	_, err = rs.Update(ctx, providers.Target{Name: "mail", Region: "eu-west-3"}, []string{"visibilityTimeoutSec"})
	var call *providers.CallError
	if !errors.As(err, &call) || providers.CallCode(err) != providers.Throttled ||
		err.Error() != "aws/queues/mail: update: throttled: ThrottlingException: Rate exceeded" {
		t.Fatalf("update error: %v", err)
	}
	cloud.Inject(memory.Fault{Op: "list", Err: providers.Errorf(providers.PermissionDenied, "AccessDenied"), Times: 1})
	if _, err := rs.List(ctx, "eu-west-3"); err == nil || err.Error() != "aws/queues in eu-west-3: list: permission denied: AccessDenied" {
		t.Fatalf("list error: %v", err)
	}
	if !rs.Releases() || rs.Release(ctx, "eu-west-3", "gone", "shop") != nil {
		t.Fatal("releasing what is gone")
	}
}

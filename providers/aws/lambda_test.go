package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

const (
	testImage1 = moto.Account + ".dkr.ecr.eu-west-3.amazonaws.com/app:1"
	testImage2 = moto.Account + ".dkr.ecr.eu-west-3.amazonaws.com/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	roleA      = "arn:aws:iam::" + moto.Account + ":role/ct-fn-a"
	roleB      = "arn:aws:iam::" + moto.Account + ":role/ct-fn-b"
)

// lambdaFixture turns off moto's Docker for Lambda and makes the two
// execution roles the targets name (moto checks that a role exists); the
// roles a run without resets made already are kept.
func lambdaFixture(t *testing.T, b *Backend, srv *moto.Server) {
	t.Helper()
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	c := iam.NewFromConfig(b.Config())
	for _, r := range []string{"ct-fn-a", "ct-fn-b"} {
		if _, err := c.CreateRole(context.Background(), &iam.CreateRoleInput{
			RoleName:                 aws.String(r),
			AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
		}); err != nil && errorCode(err) != providers.AlreadyExists {
			t.Fatal(err)
		}
	}
}

func TestComputeConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	drivertest.RunConformanceTests(t, drivertest.Harness{
		Backend: b, Region: testRegion, OtherRegion: otherRegion,
		Reset: func(t *testing.T) {
			if err := srv.Reset(); err != nil {
				t.Fatal(err)
			}
		},
		// No PageSize: moto answers ListFunctions in one page whatever
		// MaxItems says.
		Cases: []drivertest.Case{{
			Kind:  spec.Compute,
			Setup: func(t *testing.T) { lambdaFixture(t, b, srv) },
			Create: map[string]any{
				"image": testImage1, "executionRole": roleA, "memoryMb": 256.0, "timeoutSec": 30.0,
				"env": map[string]any{"A": "1", "B": "two words"},
			},
			Updates: []map[string]any{
				{"image": testImage2},
				{"executionRole": roleB},
				{"memoryMb": 512.0},
				{"timeoutSec": 60.0},
				{"env": map[string]any{"A": "1", "C": "x=y:z"}},
				{"env": map[string]any{}},
				{"memoryMb": 1024.0, "timeoutSec": 5.0, "env": map[string]any{"K": "v"}},
			},
			Untested: map[string]string{"namespace": "Scaleway's containers namespace; AWS has none"},
			OddNames: []string{"Fn_Mixed-Case_0", strings.Repeat("f", 64)},
		}},
	})
}

func fnTarget(name string) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: map[string]any{
		"image": testImage1, "executionRole": roleA, "memoryMb": 256.0, "timeoutSec": 30.0,
	}}
}

// TestComputeBehaviour runs the driver's own cases on one emulator reset and
// fixture. Each subtest removes what it made.
func TestComputeBehaviour(t *testing.T) {
	var calls callCounter
	b, srv := newTestBackend(t, calls.option())
	lambdaFixture(t, b, srv)
	dr, _ := b.Driver(spec.Compute)
	d := dr.(*functions)
	ctx := context.Background()
	create := creator(d)

	// A missing execution role is refused before any call, with the
	// reason; so are names Lambda would refuse.
	t.Run("RequiresRoleBeforeAnyCall", func(t *testing.T) {
		before := calls.count("CreateFunction")
		tg := fnTarget("api")
		delete(tg.Fields, "executionRole")
		_, err := d.Create(ctx, tg)
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "executionRole") {
			t.Fatalf("Create = %v, want invalid argument naming executionRole", err)
		}
		for _, name := range []string{"has space", "dot.ted", strings.Repeat("f", 65)} {
			if _, err := d.Create(ctx, fnTarget(name)); errorCode(err) != providers.InvalidArgument {
				t.Errorf("Create(%q) = %v, want invalid argument", name, err)
			}
		}
		if n := calls.count("CreateFunction") - before; n != 0 {
			t.Errorf("CreateFunction was called %d times", n)
		}
	})

	// The url attribute is a function URL that only signed IAM callers can
	// invoke: the attribute exists without the function being public.
	t.Run("URLIsPrivate", func(t *testing.T) {
		res := create(t, fnTarget("api"))
		if res.Attributes["url"] == "" || !strings.HasSuffix(res.Attributes["arn"], ":function:api") {
			t.Errorf("attributes = %v", res.Attributes)
		}
		u, err := d.clients.get(testRegion).GetFunctionUrlConfig(ctx, &lambda.GetFunctionUrlConfigInput{FunctionName: aws.String("api")})
		if err != nil {
			t.Fatal(err)
		}
		if u.AuthType != lambdatypes.FunctionUrlAuthTypeAwsIam {
			t.Errorf("function URL auth = %s, want AWS_IAM", u.AuthType)
		}
		if got, _ := d.Read(ctx, testRegion, "api"); got.Attributes["url"] != aws.ToString(u.FunctionUrl) {
			t.Errorf("Read url = %q, want %q", got.Attributes["url"], aws.ToString(u.FunctionUrl))
		}
	})

	// ListFunctions carries no tags and no image: the engine must read.
	t.Run("ListIsNotComplete", func(t *testing.T) {
		create(t, fnTarget("listed"))
		rs, err := d.List(ctx, testRegion)
		if err != nil {
			t.Fatal(err)
		}
		if names := drivertest.Names(rs); len(names) != 1 || names[0] != "listed" {
			t.Fatalf("List = %v", names)
		}
		if rs[0].Complete || rs[0].Owner != "" {
			t.Errorf("listed %+v: want incomplete, owner unknown", rs[0])
		}
	})

	// A role Lambda "cannot assume" (just made, not yet propagated) is
	// retried by the SDK's retryer, then reported as Lambda worded it.
	t.Run("RetriesUnassumableRole", func(t *testing.T) {
		d.roleAttempts = 3
		defer func() { d.roleAttempts = 15 }()
		before := calls.count("CreateFunction")
		tg := fnTarget("api")
		tg.Fields["executionRole"] = "arn:aws:iam::" + moto.Account + ":role/not-yet"
		_, err := d.Create(ctx, tg)
		if err == nil || !strings.Contains(err.Error(), "cannot be assumed") {
			t.Fatalf("Create = %v, want Lambda's refusal", err)
		}
		// The counter sits before the retry loop, so it sees one operation;
		// the attempts show in the error.
		if !strings.Contains(err.Error(), "exceeded maximum number of attempts, 3") {
			t.Errorf("Create = %v, want 3 attempts", err)
		}
		if n := calls.count("CreateFunction") - before; n != 1 {
			t.Errorf("CreateFunction operations = %d, want 1", n)
		}
	})
}

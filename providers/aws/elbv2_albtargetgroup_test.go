package aws

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestALBTargetGroupConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	one := makeNet(t, b, "tgone", "10.30.0.0/16", "10.30.1.0/24", "10.30.2.0/24", "10.30.3.0/24")
	two := makeNet(t, b, "tgtwo", "10.31.0.0/16", "10.31.1.0/24", "10.31.2.0/24", "10.31.3.0/24")
	lambda := map[string]string{"reason": "a lambda target group takes none of them (the driver refuses them)"}
	tgFunctions(t, b, srv, "tg-fn-a", "tg-fn-b")
	conformance(t, netReads{b}, srv, drivertest.Case{
		Kind:   spec.ALBTargetGroup,
		Create: map[string]any{"vpc": one.vpc, "protocol": "HTTP", "port": 80.0},
		Updates: []map[string]any{
			{"healthCheckPath": "/health"},
			{"healthCheckIntervalSec": 300.0, "healthyThreshold": 10.0},
			{"healthCheckPath": "/ready?deep=1", "healthCheckIntervalSec": 7.0, "healthyThreshold": 2.0},
		},
		Replaces: []map[string]any{
			{"port": 8080.0},
			{"protocol": "HTTPS", "port": 443.0},
			{"targetType": "ip"},
			{"vpc": two.vpc},
		},
		OddNames: []string{"Mixed-Case-0", strings.Repeat("t", 32), "internal-tg"},
		Untested: map[string]string{"function": "the lambda case's (refused for instance and ip targets)"},
	}, drivertest.Case{
		Kind: spec.ALBTargetGroup, Name: "lambda",
		Create:  map[string]any{"targetType": "lambda", "function": "tg-fn-a"},
		Updates: []map[string]any{{"function": "tg-fn-b"}, {"function": "tg-fn-a"}},
		Untested: map[string]string{"vpc": lambda["reason"], "protocol": lambda["reason"], "port": lambda["reason"],
			"healthCheckPath": lambda["reason"], "healthCheckIntervalSec": lambda["reason"], "healthyThreshold": lambda["reason"],
			"targetType": "the other case replaces it"},
	})
}

// What CreateTargetGroup's reference refuses is refused before any call.
func TestALBTargetGroupRefusesBadValuesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.ALBTargetGroup)
	ok := func(extra map[string]any) map[string]any {
		f := map[string]any{"vpc": "v", "protocol": "HTTP", "port": 80.0}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	wantRefused(t, d, []refusal{
		{"tg-", ok(nil), "begin or end with a hyphen"},
		{"tg.1", ok(nil), `character '.'`},
		{strings.Repeat("t", 33), ok(nil), "1 to 32 characters"},
		{"tg", map[string]any{"protocol": "HTTP", "port": 80.0}, "vpc, protocol and port are required for instance targets"},
		{"tg", ok(map[string]any{"protocol": "TCP"}), "takes HTTP or HTTPS"},
		{"tg", ok(map[string]any{"targetType": "alb"}), "write instance, ip or lambda"},
		{"tg", ok(map[string]any{"port": 0.0}), "from 1 to 65535"},
		{"tg", ok(map[string]any{"healthCheckPath": "health"}), "starting with /"},
		{"tg", ok(map[string]any{"healthCheckIntervalSec": 301.0}), "from 5 to 300"},
		{"tg", ok(map[string]any{"healthCheckIntervalSec": 6.0}), "longer than the health check's timeout, 6 s for HTTP"},
		{"tg", ok(map[string]any{"protocol": "HTTPS", "healthCheckIntervalSec": 10.0}), "10 s for HTTPS"},
		{"tg", ok(map[string]any{"healthyThreshold": 1.0}), "from 2 to 10"},
		{"tg", map[string]any{"targetType": "lambda", "port": 80.0}, "port does not apply to a lambda target group"},
		{"tg", map[string]any{"targetType": "lambda", "healthCheckPath": "/"}, "healthCheckPath does not apply"},
		{"tg", ok(map[string]any{"function": "fn"}), "function is for lambda target groups only (targetType instance"},
		{"tg", ok(map[string]any{"targetType": "ip", "function": "fn"}), "function is for lambda target groups only (targetType ip"},
	})
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// tgFunctions makes zip functions of the given names (role ct-fn-a), for
// lambda target groups to register.
func tgFunctions(t *testing.T, b *Backend, srv *moto.Server, names ...string) {
	t.Helper()
	lambdaFixture(t, b, srv)
	d, _ := b.Driver(spec.LambdaFunction)
	path, sha := writeZip(t, t.TempDir(), "tg.zip", "def handler(e, c): return {'statusCode': 200}\n")
	for _, n := range names {
		if _, err := d.Create(context.Background(), zipTarget(n, path, sha)); err != nil {
			t.Fatal(err)
		}
	}
}

// ordered records the name of every call, attempts included, in order.
type ordered struct {
	mu  sync.Mutex
	ops []string
}

func (o *ordered) option() func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("order", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			o.mu.Lock()
			o.ops = append(o.ops, middleware.GetOperationName(ctx))
			o.mu.Unlock()
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
	}})
}

// take returns the calls since the last take.
func (o *ordered) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	ops := o.ops
	o.ops = nil
	return ops
}

// calledInOrder fails unless each op of want is called, in want's order.
func calledInOrder(t *testing.T, ops []string, want ...string) {
	t.Helper()
	at := -1
	for _, w := range want {
		i := slices.Index(ops[at+1:], w)
		if i < 0 {
			t.Fatalf("calls %v: want %v in that order", ops, want)
		}
		at += i + 1
	}
}

// grantsOf are the statements of fn's policy that carry sid: none when the
// function has no policy.
func grantsOf(t *testing.T, b *Backend, fn, sid string) []invokeGrant {
	t.Helper()
	out, err := lambda.NewFromConfig(b.Config()).GetPolicy(context.Background(), &lambda.GetPolicyInput{FunctionName: aws.String(fn)})
	if errorCode(err) == providers.NotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Statement []invokeGrant }
	if err := json.Unmarshal([]byte(aws.ToString(out.Policy)), &p); err != nil {
		t.Fatal(err)
	}
	var gs []invokeGrant
	for _, g := range p.Statement {
		if g.Sid == sid {
			gs = append(gs, g)
		}
	}
	return gs
}

// A lambda target group's function: granted Elastic Load Balancing's
// invocation before it is registered, moved with the grant ahead of it and
// the old one's grant removed after, and its statement removed at delete,
// as the group's declaration has it and as an orphan.
func TestALBTargetGroupLambdaFunction(t *testing.T) {
	var calls ordered
	b, srv := newTestBackend(t, calls.option())
	tgFunctions(t, b, srv, "fn-a", "fn-b")
	d, _ := b.Driver(spec.ALBTargetGroup)
	ctx := context.Background()
	sid := invokeStatementID("web")
	tg := providers.Target{Name: "web", Region: testRegion, Owner: "fleet", Fields: map[string]any{"targetType": "lambda", "function": "fn-a"}}
	calls.take()
	res, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	calledInOrder(t, calls.take(), "CreateTargetGroup", "AddPermission", "RegisterTargets")
	gs := grantsOf(t, b, "fn-a", sid)
	if len(gs) != 1 || !gs[0].grants(res.Attributes["arn"]) {
		t.Fatalf("fn-a's statements %s: %+v; want one granting %s", sid, gs, res.Attributes["arn"])
	}

	tg.Fields["function"] = "fn-b"
	got, err := d.Update(ctx, tg, []string{providers.ALBTargetGroupFunction})
	if err != nil {
		t.Fatal(err)
	}
	// A group takes one function: the old one leaves before the new one
	// is registered, and only once the new one's grant is in place.
	calledInOrder(t, calls.take(), "AddPermission", "DeregisterTargets", "RegisterTargets", "RemovePermission")
	if got.Fields["function"] != "fn-b" {
		t.Errorf("after the move, function = %v; want fn-b", got.Fields["function"])
	}
	if gs := grantsOf(t, b, "fn-a", sid); len(gs) != 0 {
		t.Errorf("fn-a keeps %+v after the move", gs)
	}
	if gs := grantsOf(t, b, "fn-b", sid); len(gs) != 1 || !gs[0].grants(res.Attributes["arn"]) {
		t.Errorf("fn-b's statements %s: %+v; want one", sid, gs)
	}

	if err := d.Delete(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if gs := grantsOf(t, b, "fn-b", sid); len(gs) != 0 {
		t.Errorf("fn-b keeps %+v after the delete", gs)
	}
	if _, err := d.Read(ctx, testRegion, "web"); errorCode(err) != providers.NotFound {
		t.Errorf("Read after delete = %v", err)
	}

	// An orphan (no fields) finds its function by its registration.
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, providers.Target{Name: "web", Region: testRegion, Owner: "fleet"}); err != nil {
		t.Fatal(err)
	}
	if gs := grantsOf(t, b, "fn-b", sid); len(gs) != 0 {
		t.Errorf("fn-b keeps %+v after the orphan's delete", gs)
	}

	// A function deleted beside the group is no error of the group's
	// delete.
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	fd, _ := b.Driver(spec.LambdaFunction)
	if err := fd.Delete(ctx, providers.Target{Name: "fn-b", Region: testRegion}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, tg); err != nil {
		t.Fatalf("delete with its function gone: %v", err)
	}

	// A delete that stopped between the group and the statement: its
	// retry finds no group and removes the declared function's statement.
	tg.Fields["function"] = "fn-a"
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	raw := d.(*albTargetGroups).elb.get(testRegion)
	if _, err := raw.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(grantsOf(t, b, "fn-a", sid)[0].Condition["ArnLike"]["AWS:SourceArn"])}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, tg); err != nil && errorCode(err) != providers.NotFound {
		t.Fatalf("delete of a group gone = %v; want nil or NotFound", err)
	}
	if gs := grantsOf(t, b, "fn-a", sid); len(gs) != 0 {
		t.Errorf("fn-a keeps %+v after the retried delete", gs)
	}

	// A statement of the id left granting another group (a deleted one of
	// the name) is replaced by this group's.
	stale := "arn:aws:elasticloadbalancing:" + testRegion + ":123456789012:targetgroup/web/0123456789abcdef"
	if _, err := lambda.NewFromConfig(b.Config()).AddPermission(ctx, &lambda.AddPermissionInput{FunctionName: aws.String("fn-a"),
		StatementId: aws.String(sid), Action: aws.String(invokeAction), Principal: aws.String(elbPrincipal), SourceArn: aws.String(stale)}); err != nil {
		t.Fatal(err)
	}
	res, err = d.Create(ctx, tg)
	if err != nil {
		t.Fatalf("create over a stale statement: %v", err)
	}
	if gs := grantsOf(t, b, "fn-a", sid); len(gs) != 1 || !gs[0].grants(res.Attributes["arn"]) {
		t.Errorf("fn-a's statements %s: %+v; want this group's only", sid, gs)
	}
}

// A grant whose answer was lost is resent by the SDK and found made: one
// statement, and the create succeeds. Lambda refuses the resend
// (ResourceConflictException, the statement id being taken), and the
// driver finds the statement its own.
func TestALBTargetGroupGrantWhoseAnswerIsLostIsMadeOnce(t *testing.T) {
	var calls ordered
	b, srv, proxy := proxiedBackend(t, calls.option())
	tgFunctions(t, b, srv, "fn-a")
	d, _ := b.Driver(spec.ALBTargetGroup)
	ctx := context.Background()
	tg := func(name string) providers.Target {
		return providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: map[string]any{"targetType": "lambda", "function": "fn-a"}}
	}
	// The first create shows where AddPermission falls; the second loses
	// its answer.
	calls.take()
	start := proxy.Calls()
	if _, err := d.Create(ctx, tg("first")); err != nil {
		t.Fatal(err)
	}
	ops := calls.take()
	k := slices.Index(ops, "AddPermission")
	if k < 0 || proxy.Calls()-start != len(ops) {
		t.Fatalf("the create's calls: %v over %d requests", ops, proxy.Calls()-start)
	}
	proxy.DropResponse(proxy.Calls() + k + 1)
	res, err := d.Create(ctx, tg("second"))
	if err != nil {
		t.Fatalf("create with AddPermission's answer lost: %v (calls %v)", err, calls.take())
	}
	if n := slices.Index(calls.take(), "GetPolicy"); n < 0 {
		t.Errorf("the resent grant was not looked up; was the answer lost?")
	}
	if gs := grantsOf(t, b, "fn-a", invokeStatementID("second")); len(gs) != 1 || !gs[0].grants(res.Attributes["arn"]) {
		t.Errorf("statements %+v; want exactly one", gs)
	}
	got, err := d.Read(ctx, testRegion, "second")
	if err != nil || got.Fields["function"] != "fn-a" {
		t.Errorf("Read = %v, %v; want function fn-a", got.Fields, err)
	}
}

// Lambda refuses a statement id a function's policy holds already; the
// harness does as Lambda does (stock moto appends a second statement).
func TestLambdaStatementIDIsTakenOnce(t *testing.T) {
	b, srv := newTestBackend(t)
	tgFunctions(t, b, srv, "fn-once")
	c := lambda.NewFromConfig(b.Config())
	add := func() error {
		_, err := c.AddPermission(context.Background(), &lambda.AddPermissionInput{FunctionName: aws.String("fn-once"), StatementId: aws.String("once"),
			Action: aws.String(invokeAction), Principal: aws.String(elbPrincipal)})
		return err
	}
	if err := add(); err != nil {
		t.Fatal(err)
	}
	if err := add(); !isCode(err, "ResourceConflictException") {
		t.Fatalf("a second statement of the id = %v; want ResourceConflictException", err)
	}
	if gs := grantsOf(t, b, "fn-once", "once"); len(gs) != 1 {
		t.Errorf("%d statements of the id; want 1", len(gs))
	}
}

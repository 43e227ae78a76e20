package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
	"io"
	"slices"
)

// downEndpoint points the SDK at a loopback port nothing listens on, so
// every attempt is refused (ECONNREFUSED): an endpoint that stays down.
func downEndpoint(t *testing.T) {
	t.Helper()
	port, err := moto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	sendTo(t, fmt.Sprintf("http://127.0.0.1:%d", port))
}

// sendTo points the SDK at url for the length of the test.
func sendTo(t *testing.T, url string) {
	t.Helper()
	srv := &moto.Server{URL: url}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// droppingProxy is a fault proxy in front of a wiped emulator, with the
// SDK pointed at it, and a backend made after.
func droppingProxy(t *testing.T) (*Backend, *faultproxy.Proxy) {
	t.Helper()
	b, _, proxy := proxiedBackend(t)
	return b, proxy
}

// proxiedBackend is droppingProxy's, with the emulator and the backend's
// configuration options.
func proxiedBackend(t *testing.T, opts ...func(*config.LoadOptions) error) (*Backend, *moto.Server, *faultproxy.Proxy) {
	t.Helper()
	srv := moto.Fresh(t)
	proxy, err := faultproxy.Start(srv.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	sendTo(t, proxy.URL)
	b, err := New(context.Background(), Options{RetryBudget: 3 * time.Second, ConfigOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return b, srv, proxy
}

func vpcsNamed(t *testing.T, c *ec2.Client, name string) []ec2types.Vpc {
	t.Helper()
	all, err := describeVPCs(context.Background(), c, testRegion, nameFilter(name))
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// A create under noBlindResend is still retried while its connection is
// refused, which the service never saw, until the budget is spent.
func TestNoBlindResendRetriesARefusedConnection(t *testing.T) {
	downEndpoint(t)
	b, err := New(context.Background(), Options{RetryBudget: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ec2Client(b).CreateVpc(context.Background(), &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")}, noBlindResend)
	var be *RetryBudgetError
	if !errors.As(err, &be) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("CreateVpc against a down endpoint: %v; want a *RetryBudgetError over refused connections", err)
	}
	if be.Attempts < 3 {
		t.Errorf("gave up after %d attempts; want the refused connection retried", be.Attempts)
	}
	if mayHaveActed(err) {
		t.Errorf("a refused connection reads as a call that may have been carried out: %v", err)
	}
}

// A create whose answer is lost after EC2 made the VPC is not sent again
// under noBlindResend: one attempt, one VPC, and an error that says the
// create may have been carried out. Without the option the SDK resends it
// and EC2 makes a second VPC, which is what the option is for.
func TestNoBlindResendDoesNotResendADroppedAnswer(t *testing.T) {
	b, proxy := droppingProxy(t)
	c := ec2Client(b)
	ctx := context.Background()
	create := func(name string, opts ...func(*ec2.Options)) error {
		proxy.DropResponse(proxy.Calls() + 1)
		_, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16"),
			TagSpecifications: tagSpec(ec2types.ResourceTypeVpc, map[string]string{"Name": name})}, opts...)
		return err
	}
	before := proxy.Calls()
	err := create("once", noBlindResend)
	if err == nil || !mayHaveActed(err) {
		t.Fatalf("CreateVpc with its answer dropped: %v; want an error that may have acted", err)
	}
	if n := proxy.Calls() - before; n != 1 {
		t.Errorf("CreateVpc was sent %d times; want once", n)
	}
	if n := len(vpcsNamed(t, c, "once")); n != 1 {
		t.Errorf("%d VPCs named once; want 1", n)
	}
	if err := create("twice"); err != nil {
		t.Fatalf("CreateVpc resent by the SDK: %v", err)
	}
	if n := len(vpcsNamed(t, c, "twice")); n != 2 {
		t.Errorf("without noBlindResend, %d VPCs named twice; want the 2 that show what the option prevents", n)
	}
}

// A create of each kind whose create call's answer is lost finds what the
// call made, by its name and this fleet's ownership tag, and reports it as
// made: no second resource, and the create succeeds.
func TestCreateWhoseAnswerIsLostFindsWhatItMade(t *testing.T) {
	for _, c := range []struct {
		kind   spec.Kind
		fields map[string]any
	}{
		{spec.VPC, map[string]any{"cidr": "10.1.0.0/16"}},
		{spec.KMSKey, map[string]any{"description": "lost answer"}},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			b, proxy := droppingProxy(t)
			d, _ := b.Driver(c.kind)
			ctx := context.Background()
			tg := providers.Target{Name: "lost-" + string(c.kind), Region: testRegion, Owner: "fleet", Fields: c.fields}
			// The create call is the driver's first.
			proxy.DropResponse(proxy.Calls() + 1)
			res, err := d.Create(ctx, tg)
			if err != nil {
				t.Fatalf("Create with its create call's answer lost: %v", err)
			}
			if res.Name != tg.Name || res.Owner != "fleet" {
				t.Errorf("Create reported %s owned by %q", res.Name, res.Owner)
			}
			all, err := d.List(ctx, testRegion)
			if err != nil {
				t.Fatalf("List after the create: %v", err)
			}
			if len(all) != 1 {
				t.Errorf("%d resources listed; want the 1 made", len(all))
			}
		})
	}
}

// A call to an endpoint that is down is retried with backoff until its
// budget is spent, then fails saying it gave up after how many attempts
// over how long, with the last attempt's error (the refused connection)
// still in the chain.
func TestRetryBudgetEndsACallToAnEndpointThatIsDown(t *testing.T) {
	downEndpoint(t)
	const budget = 3 * time.Second
	b, err := New(context.Background(), Options{RetryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = b.Account(context.Background())
	took := time.Since(began)
	var be *RetryBudgetError
	if !errors.As(err, &be) {
		t.Fatalf("account against a down endpoint: %v; want a *RetryBudgetError", err)
	}
	t.Logf("%v after %v", err, took)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("the refused connection is not in the chain: %v", err)
	}
	if be.Budget != budget || be.Elapsed < budget || be.Attempts < 5 {
		t.Errorf("gave up after %d attempts over %v with a budget of %v; want at least 5 attempts over at least the budget", be.Attempts, be.Elapsed, be.Budget)
	}
	// Past the budget, at most one more delay (the maximum, 5 s) and one
	// refused attempt.
	if took > budget+maxRetryDelay+time.Second {
		t.Errorf("took %v; want at most the budget plus one backoff", took)
	}
	for _, want := range []string{"GetCallerIdentity", "gave up after", "attempts over", "retry budget 3s", RetryBudgetEnv, "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// The budget comes from Options, else from INFRA_RETRY_BUDGET, else the
// default; a value that is not a positive duration is refused by name.
func TestRetryBudgetSetting(t *testing.T) {
	downEndpoint(t)
	ctx := context.Background()
	for _, c := range []struct {
		env  string
		opt  time.Duration
		want time.Duration
		err  string
	}{
		{want: DefaultRetryBudget},
		{env: "90s", want: 90 * time.Second},
		{env: "90s", opt: 5 * time.Second, want: 5 * time.Second},
		{env: "soon", err: `INFRA_RETRY_BUDGET="soon"`},
		{env: "-1s", err: `INFRA_RETRY_BUDGET="-1s"`},
		{opt: -time.Second, err: "retry budget -1s"},
	} {
		t.Setenv(RetryBudgetEnv, c.env)
		b, err := New(ctx, Options{RetryBudget: c.opt})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("env %q, option %v: %v; want an error naming %s", c.env, c.opt, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("env %q, option %v: %v", c.env, c.opt, err)
		}
		if b.budget != c.want {
			t.Errorf("env %q, option %v: budget %v; want %v", c.env, c.opt, b.budget, c.want)
		}
	}
}

// A policy's new version whose answer is lost is not made twice: IAM does
// not dedupe CreatePolicyVersion, so the SDK may not resend it, and the
// update finds the version it made the default.
func TestPolicyVersionWhoseAnswerIsLostIsMadeOnce(t *testing.T) {
	srv := moto.Fresh(t)
	proxy, err := faultproxy.Start(srv.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	sendTo(t, proxy.URL)
	var ops []string
	record := config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("record", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			ops = append(ops, middleware.GetOperationName(ctx))
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
	}})
	b, err := New(context.Background(), Options{RetryBudget: 3 * time.Second, ConfigOptions: []func(*config.LoadOptions) error{record}})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := b.Driver(spec.IAMPolicy)
	ctx := context.Background()
	tg := providers.Target{Name: "lost-version", Region: testRegion, Owner: "fleet", Fields: map[string]any{"document": allowDoc("a:V1")}}
	res, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	update := func(doc string) error {
		tg.Fields["document"] = allowDoc(doc)
		_, err := d.Update(ctx, tg, []string{providers.IAMPolicyDocument})
		return err
	}
	// The second update shows where its CreatePolicyVersion falls (the
	// first also looks the account up); the third loses that call's
	// answer.
	if err := update("a:V2"); err != nil {
		t.Fatal(err)
	}
	ops = nil
	before := proxy.Calls()
	if err := update("a:V3"); err != nil {
		t.Fatal(err)
	}
	k := slices.Index(ops, "CreatePolicyVersion")
	if k < 0 || proxy.Calls()-before != len(ops) {
		t.Fatalf("the update's calls: %v over %d requests", ops, proxy.Calls()-before)
	}
	proxy.DropResponse(proxy.Calls() + k + 1)
	ops = nil
	if err := update("a:V4"); err != nil {
		t.Fatalf("update with CreatePolicyVersion's answer lost: %v", err)
	}
	vs, err := newIAMClient(b).ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(res.Attributes["arn"])})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Versions) != 4 {
		t.Errorf("%d versions after four documents; want 4 (calls %v)", len(vs.Versions), ops)
	}
}

// After a create that may have acted, madeDespite keeps what it finds only
// when this fleet's mark is on it; a lookup that finds nothing leaves the
// create's error, and one that fails adds its own to it.
func TestMadeDespite(t *testing.T) {
	lost := &smithyhttp.RequestSendError{Err: io.EOF}
	refused := errors.New("refused")
	for _, c := range []struct {
		what    string
		err     error
		found   string
		mark    string
		ferr    error
		want    string
		wantErr string
	}{
		{"the fleet's, found", lost, "vpc-1", "fleet", nil, "vpc-1", ""},
		{"another fleet's, found", lost, "vpc-1", "other", nil, "", "EOF"},
		{"nothing found", lost, "", "", providers.Errorf(providers.NotFound, "none"), "", "EOF"},
		{"the lookup failed", lost, "", "", errors.New("throttled"), "", "looking for what it may have made: throttled"},
		{"surely not acted", refused, "vpc-1", "fleet", nil, "", "refused"},
	} {
		got, err := madeDespite(c.err, "fleet", func() (string, string, error) { return c.found, c.mark, c.ferr })
		switch {
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.what, got, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, c.err)):
			t.Errorf("%s: %q, %v; want the create's error with %q", c.what, got, err, c.wantErr)
		}
	}
}

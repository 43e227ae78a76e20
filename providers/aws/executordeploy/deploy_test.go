package executordeploy

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/infra-iac/infra/internal/moto"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// TestMain stops the package's moto_server at the end.
func TestMain(m *testing.M) { moto.Main(m) }

// newTestBackend points the SDK at the shared emulator, wipes it, and
// returns a backend on it.
func newTestBackend(t *testing.T) (*awsprovider.Backend, *moto.Server) {
	t.Helper()
	srv := moto.Fresh(t)
	b, err := awsprovider.New(context.Background(), awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b, srv
}

func testZip(t *testing.T, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.Create("bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(content))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExecutorPolicyCoversEveryKind(t *testing.T) {
	for _, k := range awsprovider.Kinds() {
		if scopes, ok, err := awsprovider.ExecutorScopes(k); !ok || err != nil || len(scopes) == 0 {
			t.Errorf("kind %s has a driver but no executor permissions (%v): add them to its registry entry and executorScopes", k, err)
		}
	}
	p, err := executorPolicy(policyInput{Region: "eu-west-3", Account: moto.Account, Function: "infra-executor",
		Bucket: "st", Prefix: "/teams/", CredentialsSecret: "infra/creds", Kinds: []spec.Kind{spec.Queues}})
	if err != nil {
		t.Fatal(err)
	}
	var doc policyDocument
	if err := json.Unmarshal([]byte(p), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]policyStatement{}
	for _, s := range doc.Statement {
		got[s.Sid] = s
	}
	if r := got["State"].Resource[0]; r != "arn:aws:s3:::st/teams/*" {
		t.Errorf("state resource %s", r)
	}
	if r := got["Credentials"].Resource[0]; r != "arn:aws:secretsmanager:eu-west-3:"+moto.Account+":secret:infra/creds-??????" {
		t.Errorf("credentials resource %s", r)
	}
	for _, st := range doc.Statement {
		if st.Sid == "Logs" || st.Sid == "State" || st.Sid == "StateList" || st.Sid == "Credentials" {
			continue
		}
		for _, a := range st.Action {
			if !strings.HasPrefix(a, "sqs:") && a != "tag:GetResources" {
				t.Errorf("queues only, yet %s is granted (%s)", a, st.Sid)
			}
		}
	}
	if _, ok := got["PassTaggedRoleToLambda"]; ok {
		t.Error("PassRole granted without the compute kind")
	}
	if _, err := executorPolicy(policyInput{Kinds: []spec.Kind{spec.ScalewayFunction}}); err == nil {
		t.Error("a Scaleway kind was accepted")
	}
}

func TestDeployExecutorOnMoto(t *testing.T) {
	b, srv := newTestBackend(t)
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := Spec{Function: "infra-executor", Bucket: "infra-state-test", Prefix: "fleets", Zip: testZip(t, "v1"),
		CredentialsSecret: "infra/creds", GitHubRepo: "acme/shop", Env: map[string]string{"INFRA_STOP_MARGIN": "45s"}}
	out, err := Deploy(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(out.Changes, "\n")
	for _, want := range []string{"created the state bucket infra-state-test", "enabled versioning", "blocked public access",
		"created role infra-executor-role", "set policy infra-executor", "created function infra-executor",
		"created the OIDC provider", "created role infra-executor-invoker"} {
		if !strings.Contains(joined, want) {
			t.Errorf("changes lack %q:\n%s", want, joined)
		}
	}
	if out.State != "s3://infra-state-test/fleets" || !strings.HasSuffix(out.FunctionARN, ":function:infra-executor") {
		t.Errorf("deployed: %+v", out)
	}

	cfg := b.Config()
	v, err := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }).GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("infra-state-test")})
	if err != nil || v.Status != s3types.BucketVersioningStatusEnabled {
		t.Fatalf("versioning: %v %v", v, err)
	}
	fn, err := lambda.NewFromConfig(cfg).GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String("infra-executor")})
	if err != nil {
		t.Fatal(err)
	}
	c := fn.Configuration
	if string(c.Runtime) != "provided.al2023" || aws.ToString(c.Handler) != "bootstrap" || aws.ToInt32(c.Timeout) != 900 ||
		c.Environment.Variables["INFRA_STATE"] != "s3://infra-state-test/fleets" ||
		c.Environment.Variables["INFRA_CREDENTIALS_SECRET"] != "infra/creds" || c.Environment.Variables["INFRA_STOP_MARGIN"] != "45s" ||
		aws.ToString(c.Role) != out.RoleARN || string(c.Architectures[0]) != "arm64" {
		t.Errorf("function: %+v", c)
	}
	inv, err := iam.NewFromConfig(cfg).GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("infra-executor-invoker"), PolicyName: aws.String("invoke-infra-executor")})
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(decodePolicy(aws.ToString(inv.PolicyDocument)), invokerPolicy(out.FunctionARN)) {
		t.Errorf("invoker policy: %s", decodePolicy(aws.ToString(inv.PolicyDocument)))
	}
	role, err := iam.NewFromConfig(cfg).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("infra-executor-invoker")})
	if err != nil {
		t.Fatal(err)
	}
	if trust := decodePolicy(aws.ToString(role.Role.AssumeRolePolicyDocument)); !strings.Contains(trust, "repo:acme/shop:ref:refs/heads/main") {
		t.Errorf("invoker trust: %s", trust)
	}

	// The same spec again changes nothing.
	again, err := Deploy(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Changes) != 0 {
		t.Errorf("a second deploy changed: %v", again.Changes)
	}
	// A new build updates the code only; a new setting the configuration.
	spec.Zip = testZip(t, "v2")
	spec.TimeoutSec = 600
	third, err := Deploy(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(third.Changes, "; "); !strings.Contains(got, "updated the code") || !strings.Contains(got, "updated the configuration") || strings.Contains(got, "created") {
		t.Errorf("third deploy: %s", got)
	}
	// Naming the fleets narrows the role's conditions to their tags: the
	// policy is set again, and only it.
	spec.Fleets = []string{"shop"}
	fourth, err := Deploy(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fourth.Changes, "; "); got != "set policy infra-executor on role infra-executor-role" {
		t.Errorf("deploy with --fleets: %s", got)
	}
	exec, err := iam.NewFromConfig(cfg).GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("infra-executor-role"), PolicyName: aws.String("infra-executor")})
	if err != nil {
		t.Fatal(err)
	}
	if p := decodePolicy(aws.ToString(exec.PolicyDocument)); !strings.Contains(p, `"aws:ResourceTag/managed-by-infra": "shop"`) || strings.Contains(p, `"?*"`) {
		t.Errorf("the role's policy is not narrowed to the fleet shop:\n%s", p)
	}
}

// TestExecutorDocsShowThePolicies keeps docs/executor.md true: the policies
// it shows are the ones deploy writes.
func TestExecutorDocsShowThePolicies(t *testing.T) {
	data, err := os.ReadFile("../../../docs/executor.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	exec, err := executorPolicy(policyInput{Region: "eu-west-3", Account: "123456789012", Function: "infra-executor",
		Bucket: "acme-infra-state", Prefix: "fleets", CredentialsSecret: "infra/executor",
		Kinds: []spec.Kind{spec.ObjectStore, spec.Queues, spec.Secrets}})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]string{
		"the execution role's trust":  lambdaTrustPolicy(),
		"the execution role's policy": exec,
		"the GitHub OIDC trust":       gitHubTrustPolicy("aws", "123456789012", "acme/shop", "ref:refs/heads/main"),
		"the invoker's policy":        invokerPolicy("arn:aws:lambda:eu-west-3:123456789012:function:infra-executor"),
	} {
		if !strings.Contains(doc, "```json\n"+p+"\n```") {
			t.Errorf("docs/executor.md does not show %s as deploy writes it:\n%s", name, p)
		}
	}
}

// A sweeper is deployed only with the account named as a test account,
// and its role gets the sweep's policy, not the executor's.
func TestDeploySweeperOnMoto(t *testing.T) {
	b, srv := newTestBackend(t)
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := Spec{Function: "infra-sweeper", Bucket: "infra-state-test", Zip: testZip(t, "v1"), SweepPrefix: "ci-tests-", TestAccount: "210987654321"}
	if _, err := Deploy(ctx, b, s); err == nil || !strings.Contains(err.Error(), "the credentials are for account "+moto.Account+": pass --test-account "+moto.Account) {
		t.Fatalf("a sweeper in an account not named as a test account: %v", err)
	}
	s.TestAccount = moto.Account
	out, err := Deploy(ctx, b, s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sweepPolicy(policyInput{Partition: "aws", Region: out.Region, Account: moto.Account, Function: "infra-sweeper", Bucket: "infra-state-test"}, "ci-tests-")
	if err != nil {
		t.Fatal(err)
	}
	got, err := iam.NewFromConfig(b.Config()).GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("infra-sweeper-role"), PolicyName: aws.String("infra-executor")})
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(decodePolicy(aws.ToString(got.PolicyDocument)), want) {
		t.Errorf("the sweeper's role policy is not the sweep's:\n%s", decodePolicy(aws.ToString(got.PolicyDocument)))
	}
	if again, err := Deploy(ctx, b, s); err != nil || len(again.Changes) != 0 {
		t.Errorf("a second deploy: %v %v", again.Changes, err)
	}
}

// Buckets infra tagged before it turned ABAC on at create get it at
// deploy, so that the role's conditions see their tags; an untagged bucket,
// or one tagged by anyone else, is left as it is. A second deploy finds
// nothing to do.
func TestDeployTurnsABACOnForTheFleetsBuckets(t *testing.T) {
	b, srv := newTestBackend(t)
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := s3.NewFromConfig(b.Config(), func(o *s3.Options) { o.UsePathStyle = true })
	for name, tags := range map[string][]s3types.Tag{
		"old-shop-assets": {{Key: aws.String(spec.OwnershipTagKey), Value: aws.String("shop")}},
		"someone-elses":   {{Key: aws.String("team"), Value: aws.String("data")}},
		"untagged":        nil,
	} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name), CreateBucketConfiguration: &s3types.CreateBucketConfiguration{
			LocationConstraint: s3types.BucketLocationConstraint(b.Config().Region)}}); err != nil {
			t.Fatal(err)
		}
		if tags != nil {
			if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(name), Tagging: &s3types.Tagging{TagSet: tags}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := Spec{Function: "infra-executor", Bucket: "infra-state-test", Zip: testZip(t, "v1")}
	out, err := Deploy(ctx, b, s)
	if err != nil {
		t.Fatal(err)
	}
	want := "turned ABAC on for the bucket old-shop-assets, tagged managed-by-infra, so that the role's conditions see its tags"
	if got := strings.Join(out.Changes, "\n"); !strings.Contains(got, want) {
		t.Errorf("changes lack %q:\n%s", want, got)
	}
	for name, on := range map[string]bool{"old-shop-assets": true, "someone-elses": false, "untagged": false, "infra-state-test": false} {
		st, err := c.GetBucketAbac(ctx, &s3.GetBucketAbacInput{Bucket: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.AbacStatus.Status == s3types.BucketAbacStatusEnabled; got != on {
			t.Errorf("bucket %s: ABAC %s, want on: %v", name, st.AbacStatus.Status, on)
		}
	}
	again, err := Deploy(ctx, b, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Changes) != 0 {
		t.Errorf("a second deploy changed: %v", again.Changes)
	}
	// An executor of queues alone has no business with buckets.
	if _, err := c.PutBucketAbac(ctx, &s3.PutBucketAbacInput{Bucket: aws.String("old-shop-assets"), AbacStatus: &s3types.AbacStatus{Status: s3types.BucketAbacStatusDisabled}}); err != nil {
		t.Fatal(err)
	}
	s.Kinds = []spec.Kind{spec.Queues}
	queues, err := Deploy(ctx, b, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(queues.Changes, "\n"); strings.Contains(got, "ABAC") {
		t.Errorf("an executor of queues turned ABAC on:\n%s", got)
	}
}

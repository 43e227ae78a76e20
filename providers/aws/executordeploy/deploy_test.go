package executordeploy

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// TestMain stops the package's moto_server at the end.
func TestMain(m *testing.M) { moto.Main(m) }

// newDeployBackend points the SDK at the shared emulator, wipes it, runs
// its Lambda without Docker (a deploy runs no function), and returns a
// backend on it.
func newDeployBackend(t *testing.T) *awsprovider.Backend {
	t.Helper()
	srv := moto.Fresh(t)
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	b, err := awsprovider.New(context.Background(), awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// redeployChangesNothing deploys s again, which must change nothing.
func redeployChangesNothing(t *testing.T, b *awsprovider.Backend, s Spec) {
	t.Helper()
	again, err := Deploy(context.Background(), b, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Changes) != 0 {
		t.Errorf("a second deploy changed: %v", again.Changes)
	}
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
	doc, err := executorPolicy(policyInput{Region: "eu-west-3", Account: moto.Account, Function: "infra-executor",
		Bucket: "st", Prefix: "/teams/", CredentialsSecret: "infra/creds", Kinds: []spec.Kind{spec.Queues}})
	if err != nil {
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
	b := newDeployBackend(t)
	ctx := context.Background()
	spec := Spec{Function: "infra-executor", Bucket: "infra-state-test", Prefix: "fleets", Zip: testZip(t, "v1"),
		CredentialsSecret: "infra/creds", GitHubRepo: "acme/shop", Env: map[string]string{"INFRA_STOP_MARGIN": "45s"}}
	out, err := Deploy(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(out.Changes, "\n")
	for _, want := range []string{"created the state bucket infra-state-test", "enabled versioning", "blocked public access",
		"created role infra-executor-role", "created policy /infra/infra-executor-1", "attached policy infra-executor-1 to role infra-executor-role",
		"created function infra-executor",
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

	before := wantPolicies(t, b, spec, out)

	redeployChangesNothing(t, b, spec)
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
	// policies whose documents change get a new version, and only they.
	spec.Fleets = []string{"shop"}
	fourth, err := Deploy(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	after := wantPolicies(t, b, spec, fourth)
	var want []string
	for i := range after {
		if i >= len(before) || !sameJSON(before[i], after[i]) {
			want = append(want, fmt.Sprintf("updated policy infra-executor-%d (version v2)", i+1))
		}
	}
	if got, want := strings.Join(fourth.Changes, "; "), strings.Join(want, "; "); len(after) != len(before) || got != want {
		t.Errorf("deploy with --fleets: %s, want %s", got, want)
	}
	if p := strings.Join(after, "\n"); !strings.Contains(p, `"aws:ResourceTag/managed-by-infra": "shop"`) || strings.Contains(p, `"?*"`) {
		t.Errorf("the role's policies are not narrowed to the fleet shop:\n%s", p)
	}
}

// specPolicy is the whole policy deploy writes for s, the executor's or
// the sweep's.
func specPolicy(t *testing.T, b *awsprovider.Backend, s Spec) policyDocument {
	t.Helper()
	in := policyInput{Partition: "aws", Region: b.Config().Region, Account: moto.Account, Function: s.Function,
		Bucket: s.Bucket, Prefix: s.Prefix, CredentialsSecret: s.CredentialsSecret, Kinds: s.Kinds, Fleets: s.Fleets}
	doc, err := executorPolicy(in)
	if s.SweepPrefix != "" {
		doc, err = sweepPolicy(in, s.SweepPrefix)
	}
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// wantPolicies checks that the execution role holds exactly s's managed
// policies, as deploy reported them in out: <function>-1, … under
// /infra/, tagged for the executor, attached, their default versions the
// documents of specPolicy, and no inline policy. It returns the documents
// the role holds.
func wantPolicies(t *testing.T, b *awsprovider.Backend, s Spec, out *Deployed) []string {
	t.Helper()
	ctx := context.Background()
	c := iam.NewFromConfig(b.Config())
	function, role := s.Function, s.Function+"-role"
	docs := managedDocuments(t, specPolicy(t, b, s))
	var arns, held []string
	for i, doc := range docs {
		arn := fmt.Sprintf("arn:aws:iam::%s:policy/infra/%s-%d", moto.Account, function, i+1)
		arns = append(arns, arn)
		p, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
		if err != nil {
			t.Fatalf("policy %d of %d: %v", i+1, len(docs), err)
		}
		if tags := p.Policy.Tags; len(tags) != 1 || aws.ToString(tags[0].Key) != "infra-executor" || aws.ToString(tags[0].Value) != function {
			t.Errorf("policy %s is tagged %v", arn, tags)
		}
		v, err := c.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: p.Policy.DefaultVersionId})
		if err != nil {
			t.Fatal(err)
		}
		got := decodePolicy(aws.ToString(v.PolicyVersion.Document))
		if !sameJSON(got, doc) {
			t.Errorf("policy %s is not deploy's document %d:\n%s", arn, i+1, got)
		}
		held = append(held, got)
	}
	if !reflect.DeepEqual(out.PolicyARNs, arns) {
		t.Errorf("deploy reported the policies %v, want %v", out.PolicyARNs, arns)
	}
	attached, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(role)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range attached.AttachedPolicies {
		names = append(names, aws.ToString(p.PolicyArn))
	}
	slices.Sort(names)
	if sorted := slices.Sorted(slices.Values(arns)); !reflect.DeepEqual(names, sorted) {
		t.Errorf("role %s has %v attached, want %v", role, names, sorted)
	}
	inline, err := c.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String(role)})
	if err != nil {
		t.Fatal(err)
	}
	if len(inline.PolicyNames) != 0 {
		t.Errorf("role %s keeps the inline policies %v", role, inline.PolicyNames)
	}
	return held
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
	shown := map[string]string{
		"the execution role's trust": lambdaTrustPolicy(),
		"the GitHub OIDC trust":      gitHubTrustPolicy("aws", "123456789012", "acme/shop", "ref:refs/heads/main"),
		"the invoker's policy":       invokerPolicy("arn:aws:lambda:eu-west-3:123456789012:function:infra-executor"),
	}
	for i, p := range managedDocuments(t, exec) {
		shown[fmt.Sprintf("the execution role's policy infra-executor-%d", i+1)] = p
	}
	for name, p := range shown {
		if !strings.Contains(doc, "```json\n"+p+"\n```") {
			t.Errorf("docs/executor.md does not show %s as deploy writes it:\n%s", name, p)
		}
	}
}

// A sweeper is deployed only with the account named as a test account,
// and its role gets the sweep's policy, not the executor's.
func TestDeploySweeperOnMoto(t *testing.T) {
	b := newDeployBackend(t)
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
	wantPolicies(t, b, s, out)
	redeployChangesNothing(t, b, s)
}

// Buckets infra tagged before it turned ABAC on at create get it at
// deploy, so that the role's conditions see their tags; an untagged bucket,
// or one tagged by anyone else, is left as it is. A second deploy finds
// nothing to do.
func TestDeployTurnsABACOnForTheFleetsBuckets(t *testing.T) {
	b := newDeployBackend(t)
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
	redeployChangesNothing(t, b, s)
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

// A role deployed before the permissions became managed policies carries
// the inline policy infra-executor: a deploy deletes it, after the managed
// policies are attached, and keeps those.
func TestDeployReplacesTheInlinePolicy(t *testing.T) {
	b := newDeployBackend(t)
	ctx := context.Background()
	c := iam.NewFromConfig(b.Config())
	s := Spec{Function: "infra-executor", Bucket: "infra-state-test", Zip: testZip(t, "v1"), Kinds: []spec.Kind{spec.Queues}}
	// What the previous deploy left: the role with its one inline policy.
	if _, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("infra-executor-role"), AssumeRolePolicyDocument: aws.String(lambdaTrustPolicy())}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("infra-executor-role"), PolicyName: aws.String("infra-executor"),
		PolicyDocument: aws.String(specPolicy(t, b, s).String())}); err != nil {
		t.Fatal(err)
	}
	out, err := Deploy(ctx, b, s)
	if err != nil {
		t.Fatal(err)
	}
	attach := slices.Index(out.Changes, "attached policy infra-executor-1 to role infra-executor-role")
	drop := slices.Index(out.Changes, "deleted the inline policy infra-executor of role infra-executor-role: the managed policies replace it")
	if attach < 0 || drop < attach {
		t.Errorf("the inline policy is not deleted after the managed policies are attached:\n%s", strings.Join(out.Changes, "\n"))
	}
	wantPolicies(t, b, s, out)
	redeployChangesNothing(t, b, s)
}

// A deploy of fewer kinds needs fewer policies: those beyond the count are
// detached and deleted, with their older versions; a policy named as one
// of them that is not the executor's is left alone.
func TestDeployWithFewerKindsDeletesTheSurplusPolicies(t *testing.T) {
	b := newDeployBackend(t)
	ctx := context.Background()
	c := iam.NewFromConfig(b.Config())
	s := Spec{Function: "infra-executor", Bucket: "infra-state-test", Zip: testZip(t, "v1")}
	first, err := Deploy(ctx, b, s)
	if err != nil {
		t.Fatal(err)
	}
	n := len(wantPolicies(t, b, s, first))
	if n < 2 {
		t.Fatalf("every kind fits in %d policy: nothing to shrink", n)
	}
	// A second version of each, so that a delete must take the older first.
	s.Fleets = []string{"shop"}
	if _, err := Deploy(ctx, b, s); err != nil {
		t.Fatal(err)
	}
	// Someone else's policy, named as a surplus one would be.
	foreign := fmt.Sprintf("infra-executor-%d", n+1)
	if _, err := c.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String(foreign), Path: aws.String("/infra/"),
		PolicyDocument: aws.String(invokerPolicy("arn:aws:lambda:eu-west-3:" + moto.Account + ":function:other"))}); err != nil {
		t.Fatal(err)
	}
	s.Kinds = []spec.Kind{spec.Queues}
	out, err := Deploy(ctx, b, s)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(out.Changes, "\n")
	for i := 2; i <= n; i++ {
		for _, want := range []string{fmt.Sprintf("detached policy infra-executor-%d from role infra-executor-role", i),
			fmt.Sprintf("deleted policy infra-executor-%d: the permissions fit in 1 now", i)} {
			if !strings.Contains(joined, want) {
				t.Errorf("changes lack %q:\n%s", want, joined)
			}
		}
		arn := fmt.Sprintf("arn:aws:iam::%s:policy/infra/infra-executor-%d", moto.Account, i)
		if _, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)}); b.ErrorCode(err) != providers.NotFound {
			t.Errorf("policy %s after the shrink: %v", arn, err)
		}
	}
	if strings.Contains(joined, foreign) {
		t.Errorf("deploy touched someone else's policy %s:\n%s", foreign, joined)
	}
	wantPolicies(t, b, s, out)
	redeployChangesNothing(t, b, s)
}

// IAM keeps five versions of a policy: the sixth change deletes the oldest
// that is not the default first.
func TestDeployKeepsFivePolicyVersions(t *testing.T) {
	b := newDeployBackend(t)
	ctx := context.Background()
	s := Spec{Function: "infra-executor", Bucket: "infra-state-test", Zip: testZip(t, "v1"), Kinds: []spec.Kind{spec.Queues}}
	var last *Deployed
	for i := 1; i <= 6; i++ {
		s.Fleets = []string{fmt.Sprintf("fleet%d", i)}
		out, err := Deploy(ctx, b, s)
		if err != nil {
			t.Fatalf("deploy %d: %v", i, err)
		}
		deleted := slices.Contains(out.Changes, "deleted version v1 of policy infra-executor-1, its oldest: IAM keeps 5")
		if deleted != (i == 6) {
			t.Errorf("deploy %d: %v", i, out.Changes)
		}
		last = out
	}
	if !slices.Contains(last.Changes, "updated policy infra-executor-1 (version v6)") {
		t.Errorf("the sixth deploy: %v", last.Changes)
	}
	vs, err := iam.NewFromConfig(b.Config()).ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(last.PolicyARNs[0])})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range vs.Versions {
		ids = append(ids, aws.ToString(v.VersionId))
	}
	if slices.Sort(ids); !reflect.DeepEqual(ids, []string{"v2", "v3", "v4", "v5", "v6"}) {
		t.Errorf("versions %v", ids)
	}
}

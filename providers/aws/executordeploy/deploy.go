// Package executordeploy deploys the executor Lambda (docs/executor.md):
// its state bucket, its execution role, the function, and the role GitHub
// Actions assumes to invoke it. It is tooling for `infra executor deploy`,
// not a kind driver: infra has no kind for an IAM role (the iam kind is a
// user) and its compute kind runs container images, not a zip on
// provided.al2023, so it makes direct SDK calls through the AWS backend's
// configuration.
package executordeploy

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// Spec is the executor's own infrastructure: the state bucket, the
// execution role and the function, and optionally the role GitHub Actions
// assumes to invoke it.
type Spec struct {
	Function string
	// Role is the execution role's name; Function + "-role" when empty.
	Role string
	// Bucket and Prefix hold the state (INFRA_STATE=s3://Bucket/Prefix).
	Bucket, Prefix string
	// Zip is the deployment package: a zip holding bootstrap.
	Zip []byte
	// Architecture is arm64 or x86_64; arm64 when empty.
	Architecture string
	// TimeoutSec and MemoryMB size the function; 900 and 1024 when zero.
	TimeoutSec, MemoryMB int32
	// CredentialsSecret names the Secrets Manager secret the function reads
	// at cold start (INFRA_CREDENTIALS_SECRET); empty for none.
	CredentialsSecret string
	// Kinds are the kinds the executor may manage; empty for every kind.
	Kinds []spec.Kind
	// Fleets are the fleets the executor acts for: its role may change only
	// resources whose ownership tag names one of them. Empty is any fleet:
	// whatever carries the ownership tag.
	Fleets []string
	// SweepPrefix, when set, makes the function a sweeper: its role may
	// list and read, and delete only what is named with the prefix, even
	// untagged (docs/executor.md, "The sweep's role"). Serve only the
	// sweep, through Env. TestAccount must then be the credentials'
	// account: such a role belongs in an account that holds only tests.
	SweepPrefix, TestAccount string
	// Env adds variables to the function's environment (INFRA_OPERATIONS,
	// INFRA_STOP_MARGIN, …). Never put a secret here: the configuration
	// is readable by anyone who may read the function.
	Env map[string]string
	// GitHubRepo ("owner/name"), when set, also deploys the invoker role:
	// assumable by that repository's workflows through GitHub's OIDC
	// provider, allowed only to invoke the function.
	GitHubRepo string
	// GitHubSubject is what the token's subject must be after
	// "repo:owner/name:"; "ref:refs/heads/main" when empty.
	GitHubSubject string
}

// Deployed is what a deploy made or found.
type Deployed struct {
	Region         string   `json:"region"`
	FunctionARN    string   `json:"functionArn"`
	RoleARN        string   `json:"roleArn"`
	InvokerRoleARN string   `json:"invokerRoleArn,omitempty"`
	State          string   `json:"state"`
	Changes        []string `json:"changes"`
	// PolicyARNs are the execution role's managed policies, in order.
	PolicyARNs []string `json:"policyArns"`
}

const executorTagKey = "infra-executor"

// Deploy creates or updates the executor's infrastructure with b's
// configuration and credentials. It is idempotent: a second deploy of the
// same spec changes nothing and says so.
func Deploy(ctx context.Context, b *awsprovider.Backend, s Spec) (*Deployed, error) {
	if err := awsprovider.CheckFunctionName(s.Function); err != nil {
		return nil, fmt.Errorf("executor deploy: %w", err)
	}
	if s.Bucket == "" {
		return nil, fmt.Errorf("executor deploy: no state bucket")
	}
	if len(s.Zip) == 0 {
		return nil, fmt.Errorf("executor deploy: no deployment package")
	}
	if s.Role == "" {
		s.Role = s.Function + "-role"
	}
	if s.Architecture == "" {
		s.Architecture = "arm64"
	}
	if s.TimeoutSec == 0 {
		s.TimeoutSec = 900
	}
	if s.MemoryMB == 0 {
		s.MemoryMB = 1024
	}
	if s.GitHubSubject == "" {
		s.GitHubSubject = "ref:refs/heads/main"
	}
	cfg := b.Config()
	region := cfg.Region
	if region == "" {
		return nil, fmt.Errorf("executor deploy: no region: set AWS_REGION or pass --region")
	}
	account, err := b.Account(ctx)
	if err != nil {
		return nil, fmt.Errorf("executor deploy: %w", err)
	}
	if s.SweepPrefix != "" && s.TestAccount != account {
		return nil, fmt.Errorf("executor deploy: --sweep-prefix makes a role that deletes untagged resources named %s*, so it belongs only in an account that holds nothing but tests; the credentials are for account %s: pass --test-account %s to say it is one", s.SweepPrefix, account, account)
	}
	d := &deployer{b: b, cfg: cfg, s: s, region: region, account: account, partition: awsprovider.Partition(region),
		out: &Deployed{Region: region, Changes: []string{}}}
	d.out.State = "s3://" + s.Bucket
	if p := strings.Trim(s.Prefix, "/"); p != "" {
		d.out.State += "/" + p
	}
	for _, step := range []func(context.Context) error{d.bucket, d.role, d.function, d.invoker, d.bucketABAC} {
		if err := step(ctx); err != nil {
			return d.out, fmt.Errorf("executor deploy: %w", err)
		}
	}
	return d.out, nil
}

type deployer struct {
	b                          *awsprovider.Backend
	cfg                        aws.Config
	s                          Spec
	region, account, partition string
	out                        *Deployed
}

func (d *deployer) changed(format string, args ...any) {
	d.out.Changes = append(d.out.Changes, fmt.Sprintf(format, args...))
}

// bucketABAC turns ABAC on for the buckets infra tagged before it did so at
// create, when the executor may manage buckets: until then IAM sees no tags
// on them, and the role's conditions cannot tell them from untagged ones
// (docs/executor.md). A sweeper's role holds no condition on tags.
func (d *deployer) bucketABAC(ctx context.Context) error {
	if d.s.SweepPrefix != "" || !d.managesBuckets() {
		return nil
	}
	turned, err := awsprovider.EnableBucketABAC(ctx, d.b)
	if err != nil {
		return fmt.Errorf("turn ABAC on for the fleets' buckets: %w", err)
	}
	switch len(turned) {
	case 0:
	case 1:
		d.changed("turned ABAC on for the bucket %s, tagged %s, so that the role's conditions see its tags", turned[0], spec.OwnershipTagKey)
	default:
		d.changed("turned ABAC on for %d buckets tagged %s, so that the role's conditions see their tags: %s",
			len(turned), spec.OwnershipTagKey, strings.Join(turned, ", "))
	}
	return nil
}

// managesBuckets says whether the executor may manage a bucket kind.
func (d *deployer) managesBuckets() bool {
	if len(d.s.Kinds) == 0 {
		return true
	}
	for _, k := range d.s.Kinds {
		if k == spec.ObjectStore || k == spec.S3Bucket {
			return true
		}
	}
	return false
}

// bucket makes the state bucket versioned (every ledger ever saved can be
// recovered) and closed to the public.
func (d *deployer) bucket(ctx context.Context) error {
	c := s3.NewFromConfig(d.cfg, func(o *s3.Options) { o.UsePathStyle = d.cfg.BaseEndpoint != nil })
	name := aws.String(d.s.Bucket)
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: name}); err != nil {
		if d.b.ErrorCode(err) != providers.NotFound {
			return fmt.Errorf("state bucket %s: %w", d.s.Bucket, err)
		}
		in := &s3.CreateBucketInput{Bucket: name}
		if d.region != "us-east-1" {
			in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(d.region)}
		}
		if _, err := c.CreateBucket(ctx, in); err != nil {
			return fmt.Errorf("create the state bucket %s: %w", d.s.Bucket, err)
		}
		if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: name, Tagging: &s3types.Tagging{
			TagSet: []s3types.Tag{{Key: aws.String(executorTagKey), Value: aws.String(d.s.Function)}}}}); err != nil {
			return fmt.Errorf("tag the state bucket %s: %w", d.s.Bucket, err)
		}
		d.changed("created the state bucket %s", d.s.Bucket)
	}
	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: name})
	if err != nil {
		return fmt.Errorf("state bucket %s: read versioning: %w", d.s.Bucket, err)
	}
	if v.Status != s3types.BucketVersioningStatusEnabled {
		if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: name,
			VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
			return fmt.Errorf("state bucket %s: enable versioning: %w", d.s.Bucket, err)
		}
		d.changed("enabled versioning on %s", d.s.Bucket)
	}
	pab, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: name})
	closed := err == nil && pab.PublicAccessBlockConfiguration != nil &&
		aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicAcls) && aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicPolicy) &&
		aws.ToBool(pab.PublicAccessBlockConfiguration.IgnorePublicAcls) && aws.ToBool(pab.PublicAccessBlockConfiguration.RestrictPublicBuckets)
	if !closed {
		if _, err := c.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: name,
			PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(true),
				BlockPublicPolicy: aws.Bool(true), IgnorePublicAcls: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true)}}); err != nil {
			return fmt.Errorf("state bucket %s: block public access: %w", d.s.Bucket, err)
		}
		d.changed("blocked public access to %s", d.s.Bucket)
	}
	return nil
}

// ensureRole creates role with trust, or brings its trust policy up to
// date; it returns the role's ARN.
func (d *deployer) ensureRole(ctx context.Context, c *iam.Client, role, description, trust string) (string, error) {
	got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)})
	switch {
	case err == nil:
		if !sameJSON(decodePolicy(aws.ToString(got.Role.AssumeRolePolicyDocument)), trust) {
			if _, err := c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(role), PolicyDocument: aws.String(trust)}); err != nil {
				return "", fmt.Errorf("role %s: update its trust policy: %w", role, err)
			}
			d.changed("updated the trust policy of role %s", role)
		}
		return aws.ToString(got.Role.Arn), nil
	case d.b.ErrorCode(err) == providers.NotFound:
		out, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role), AssumeRolePolicyDocument: aws.String(trust),
			Description: aws.String(description), Tags: d.tags()})
		if err != nil {
			return "", fmt.Errorf("create role %s: %w", role, err)
		}
		d.changed("created role %s", role)
		return aws.ToString(out.Role.Arn), nil
	default:
		return "", fmt.Errorf("role %s: %w", role, err)
	}
}

// ensureInlinePolicy sets role's inline policy policyName to policy,
// unless it says the same already.
func (d *deployer) ensureInlinePolicy(ctx context.Context, c *iam.Client, role, policyName, policy string) error {
	cur, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(policyName)})
	if err != nil && d.b.ErrorCode(err) != providers.NotFound {
		return fmt.Errorf("role %s: read policy %s: %w", role, policyName, err)
	}
	if err == nil && sameJSON(decodePolicy(aws.ToString(cur.PolicyDocument)), policy) {
		return nil
	}
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(policyName),
		PolicyDocument: aws.String(policy)}); err != nil {
		return fmt.Errorf("role %s: set policy %s: %w", role, policyName, err)
	}
	d.changed("set policy %s on role %s", policyName, role)
	return nil
}

// tags mark what deploy makes as this executor's.
func (d *deployer) tags() []iamtypes.Tag {
	return []iamtypes.Tag{{Key: aws.String(executorTagKey), Value: aws.String(d.s.Function)}}
}

// role deploys the execution role: its permissions, the executor's or the
// sweep's, cut into managed policies before any call, so that too many of
// them fail the deploy before it changes anything.
func (d *deployer) role(ctx context.Context) error {
	in := policyInput{Partition: d.partition, Region: d.region, Account: d.account,
		Function: d.s.Function, Bucket: d.s.Bucket, Prefix: d.s.Prefix, CredentialsSecret: d.s.CredentialsSecret, Kinds: d.s.Kinds, Fleets: d.s.Fleets}
	policy, err := executorPolicy(in)
	does := "runs plans and applies"
	if d.s.SweepPrefix != "" {
		policy, err = sweepPolicy(in, d.s.SweepPrefix)
		does = "sweeps debris named " + d.s.SweepPrefix + "*"
	}
	if err != nil {
		return err
	}
	docs, err := splitPolicy(policy)
	if err != nil {
		return fmt.Errorf("role %s: %w", d.s.Role, err)
	}
	c := iam.NewFromConfig(d.cfg)
	arn, err := d.ensureRole(ctx, c, d.s.Role, "infra executor "+d.s.Function+": "+does, lambdaTrustPolicy())
	d.out.RoleARN = arn
	if err != nil {
		return err
	}
	return d.managedPolicies(ctx, c, d.s.Role, docs)
}

// function creates the function, or updates its code when the package's
// hash differs and its configuration when any setting does.
func (d *deployer) function(ctx context.Context) error {
	c := lambda.NewFromConfig(d.cfg)
	name := aws.String(d.s.Function)
	env := map[string]string{"INFRA_STATE": d.out.State}
	if d.s.CredentialsSecret != "" {
		env["INFRA_CREDENTIALS_SECRET"] = d.s.CredentialsSecret
	}
	for k, v := range d.s.Env {
		env[k] = v
	}
	sum := sha256.Sum256(d.s.Zip)
	codeSha := base64.StdEncoding.EncodeToString(sum[:])
	arch := lambdatypes.Architecture(d.s.Architecture)
	got, err := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: name})
	if err != nil {
		if d.b.ErrorCode(err) != providers.NotFound {
			return fmt.Errorf("function %s: %w", d.s.Function, err)
		}
		out, err := c.CreateFunction(ctx, &lambda.CreateFunctionInput{
			FunctionName: name, Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
			Role: aws.String(d.out.RoleARN), Code: &lambdatypes.FunctionCode{ZipFile: d.s.Zip},
			Architectures: []lambdatypes.Architecture{arch}, Timeout: aws.Int32(d.s.TimeoutSec), MemorySize: aws.Int32(d.s.MemoryMB),
			Environment: &lambdatypes.Environment{Variables: env},
			Description: aws.String("infra executor: plans and applies fleets (docs/executor.md)"),
			Tags:        map[string]string{executorTagKey: d.s.Function},
		}, awsprovider.RoleRetry)
		if err != nil {
			return fmt.Errorf("create function %s: %w", d.s.Function, err)
		}
		d.out.FunctionARN = aws.ToString(out.FunctionArn)
		d.changed("created function %s", d.s.Function)
		return d.waitFunction(ctx, c, true)
	}
	conf := got.Configuration
	d.out.FunctionARN = aws.ToString(conf.FunctionArn)
	if aws.ToString(conf.CodeSha256) != codeSha || !reflect.DeepEqual(conf.Architectures, []lambdatypes.Architecture{arch}) {
		if _, err := c.UpdateFunctionCode(ctx, &lambda.UpdateFunctionCodeInput{FunctionName: name, ZipFile: d.s.Zip,
			Architectures: []lambdatypes.Architecture{arch}}); err != nil {
			return fmt.Errorf("function %s: update its code: %w", d.s.Function, err)
		}
		d.changed("updated the code of function %s", d.s.Function)
		if err := d.waitFunction(ctx, c, false); err != nil {
			return err
		}
	}
	var have map[string]string
	if conf.Environment != nil {
		have = conf.Environment.Variables
	}
	if aws.ToString(conf.Role) != d.out.RoleARN || aws.ToInt32(conf.Timeout) != d.s.TimeoutSec ||
		aws.ToInt32(conf.MemorySize) != d.s.MemoryMB || conf.Runtime != lambdatypes.RuntimeProvidedal2023 ||
		aws.ToString(conf.Handler) != "bootstrap" || !sameStrings(have, env) {
		if _, err := c.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: name,
			Role: aws.String(d.out.RoleARN), Timeout: aws.Int32(d.s.TimeoutSec), MemorySize: aws.Int32(d.s.MemoryMB),
			Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
			Environment: &lambdatypes.Environment{Variables: env}}, awsprovider.RoleRetry); err != nil {
			return fmt.Errorf("function %s: update its configuration: %w", d.s.Function, err)
		}
		d.changed("updated the configuration of function %s (%s)", d.s.Function, strings.Join(sortedKeys(env), ", "))
		return d.waitFunction(ctx, c, false)
	}
	return nil
}

func (d *deployer) waitFunction(ctx context.Context, c *lambda.Client, created bool) error {
	in := &lambda.GetFunctionInput{FunctionName: aws.String(d.s.Function)}
	var err error
	if created {
		err = lambda.NewFunctionActiveV2Waiter(c, func(o *lambda.FunctionActiveV2WaiterOptions) { o.MaxDelay = 5 * time.Second }).Wait(ctx, in, 5*time.Minute)
	} else {
		err = lambda.NewFunctionUpdatedV2Waiter(c, func(o *lambda.FunctionUpdatedV2WaiterOptions) { o.MaxDelay = 5 * time.Second }).Wait(ctx, in, 5*time.Minute)
	}
	if err != nil {
		return fmt.Errorf("function %s: wait until it is ready: %w", d.s.Function, err)
	}
	return nil
}

// invoker deploys the role GitHub Actions assumes: trusted only for the
// repository's workflows whose token subject matches, allowed only to
// invoke the function. The account's GitHub OIDC provider is created if
// missing.
func (d *deployer) invoker(ctx context.Context) error {
	if d.s.GitHubRepo == "" {
		return nil
	}
	if strings.Count(d.s.GitHubRepo, "/") != 1 {
		return fmt.Errorf("--github-repo %q: want owner/name", d.s.GitHubRepo)
	}
	c := iam.NewFromConfig(d.cfg)
	if err := d.oidcProvider(ctx, c); err != nil {
		return err
	}
	role := d.s.Function + "-invoker"
	arn, err := d.ensureRole(ctx, c, role, "GitHub Actions of "+d.s.GitHubRepo+": may only invoke "+d.s.Function,
		gitHubTrustPolicy(d.partition, d.account, d.s.GitHubRepo, d.s.GitHubSubject))
	d.out.InvokerRoleARN = arn
	if err != nil {
		return err
	}
	// One short statement: an inline policy, as it always was.
	return d.ensureInlinePolicy(ctx, c, role, "invoke-"+d.s.Function, invokerPolicy(d.out.FunctionARN))
}

func (d *deployer) oidcProvider(ctx context.Context, c *iam.Client) error {
	list, err := c.ListOpenIDConnectProviders(ctx, &iam.ListOpenIDConnectProvidersInput{})
	if err != nil {
		return fmt.Errorf("list the OIDC providers: %w", err)
	}
	for _, p := range list.OpenIDConnectProviderList {
		if strings.HasSuffix(aws.ToString(p.Arn), "oidc-provider/"+gitHubOIDCHost) {
			return nil
		}
	}
	if _, err := c.CreateOpenIDConnectProvider(ctx, &iam.CreateOpenIDConnectProviderInput{
		Url: aws.String("https://" + gitHubOIDCHost), ClientIDList: []string{"sts.amazonaws.com"},
		// IAM no longer checks this for GitHub (it trusts its CA), but the
		// field is still required by some partitions.
		ThumbprintList: []string{"6938fd4d98bab03faadb97b34396831e3780aea1"},
	}); err != nil {
		return fmt.Errorf("create the GitHub OIDC provider: %w", err)
	}
	d.changed("created the OIDC provider %s", gitHubOIDCHost)
	return nil
}

// decodePolicy undoes IAM's URL encoding of policy documents.
func decodePolicy(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func sameStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

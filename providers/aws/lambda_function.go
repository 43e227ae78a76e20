package aws

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// lambdaFunctions is the lambda-function kind: a Lambda function from a
// .zip file or a container image, named by its function name. It is the
// same physical function as compute (spec's Physical "function"), whose
// entry the tag scan reports functions under.
type lambdaFunctions struct {
	clients *regional[*lambda.Client]
	account accountOf
	// role retries the calls that name a role Lambda cannot assume yet,
	// with compute's retryer (lambda.go).
	role functions
}

var (
	_ providers.Driver       = (*lambdaFunctions)(nil)
	_ providers.Releaser     = (*lambdaFunctions)(nil)
	_ providers.ListedReader = (*lambdaFunctions)(nil)
)

func init() {
	register(entry{
		kind: spec.LambdaFunction, service: "lambda",
		// Every action is compute's too, with the same scope, so the
		// scopes stay in executorScopes. An image is pulled with the
		// caller's rights; the role is passed (iam:PassRole).
		actions: []string{"lambda:ListFunctions", "lambda:GetFunction", "lambda:CreateFunction", "lambda:UpdateFunctionCode",
			"lambda:UpdateFunctionConfiguration", "lambda:TagResource", "lambda:UntagResource", "lambda:DeleteFunction",
			"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "iam:PassRole"},
		arnFormat: "arn:{partition}:lambda:{region}:{account}:function:{name}",
		// No arn: the tag scan reports a function as compute, its twin.
		errors: map[string]providers.Code{"ResourceConflictException": providers.Conflict},
		new: func(cfg aws.Config, account accountOf) providers.Driver {
			return &lambdaFunctions{
				clients: newLambda(cfg),
				account: account,
				role:    functions{roleAttempts: 15},
			}
		},
	})
}

// CodeSHA256 is what Lambda reports as a zip function's CodeSha256: the
// base64 of the SHA-256 of the zip's bytes. The operations fill a
// document's codeSha256 with it, and apply holds the file to it.
func CodeSHA256(zip []byte) string {
	sum := sha256.Sum256(zip)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// fnFail wraps err, naming the function and the operation.
func fnFail(name, op string, err error) error {
	return fmt.Errorf("aws/lambda-function: %s: %s: %w", name, op, err)
}

// fnRefuse is an invalid argument naming the function, before any call.
func fnRefuse(name, format string, args ...any) error {
	return providers.Errorf(providers.InvalidArgument, "aws/lambda-function: %s: %s", name, fmt.Sprintf(format, args...))
}

// target decodes a target and refuses what Lambda would, before any call.
// check refuses the shapes of code already (spec's lambda-code row); the
// driver says it again for a target that did not come through check.
func (d *lambdaFunctions) target(t providers.Target, create bool) (providers.LambdaFunctionInput, error) {
	in, err := providers.DecodeLambdaFunction(t.Fields)
	if err != nil {
		return in, fnRefuse(t.Name, "%v", err)
	}
	if err := CheckFunctionName(t.Name); err != nil {
		return in, fnRefuse(t.Name, "%v", err)
	}
	switch {
	case create && in.HasZip() == in.HasImage():
		return in, fnRefuse(t.Name, "exactly one of zip and image is needed")
	case create && in.HasZip() && (in.Runtime == "" || in.Handler == ""):
		return in, fnRefuse(t.Name, "a zip function needs runtime and handler")
	case create && in.Role == "":
		return in, fnRefuse(t.Name, "role is required: the IAM role the function runs as")
	case in.HasArchitecture() && in.Architecture != string(lambdatypes.ArchitectureX8664) && in.Architecture != string(lambdatypes.ArchitectureArm64):
		return in, fnRefuse(t.Name, "architecture %q: Lambda has x86_64 and arm64", in.Architecture)
	case in.HasMemoryMB() && (in.MemoryMB < 128 || in.MemoryMB > 10240 || in.MemoryMB != float64(int32(in.MemoryMB))):
		return in, fnRefuse(t.Name, "memoryMb %v: Lambda takes whole MB from 128 to 10240", in.MemoryMB)
	case in.HasTimeoutSec() && (in.TimeoutSec < 1 || in.TimeoutSec > 900 || in.TimeoutSec != float64(int32(in.TimeoutSec))):
		return in, fnRefuse(t.Name, "timeoutSec %v: Lambda takes whole seconds from 1 to 900", in.TimeoutSec)
	}
	return in, nil
}

// zipBytes reads the target's zip and holds it to the codeSha256 the plan
// was made with: a file that changed since (or a hash written by hand that
// is not the file's) is refused, so apply never sends code the plan did
// not show. The file is read where infra runs: the executor, which applies
// without the checkout, has none (docs/providers.md).
func zipBytes(name string, in providers.LambdaFunctionInput) ([]byte, error) {
	if in.CodeSha256 == "" {
		return nil, fnRefuse(name, "zip %s has no codeSha256: infra fills it when it loads the document", in.Zip)
	}
	b, err := os.ReadFile(in.Zip)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", fnRefuse(name, "zip %s cannot be read here, where apply runs (the executor has no checkout: apply a zip function where the file is)", in.Zip), err)
	}
	if got := CodeSHA256(b); got != in.CodeSha256 {
		return nil, fnRefuse(name, "zip %s has the SHA-256 %s, but the plan was made with %s: the file changed since; plan again", in.Zip, got, in.CodeSha256)
	}
	return b, nil
}

// roleARN is the ARN of the role the target names: the identity this run
// observed, where iam-role has one, or the ARN of the role of that name at
// the path / (the only path iam-role makes) in this account.
func (d *lambdaFunctions) roleARN(ctx context.Context, t providers.Target, role string) (string, error) {
	if id := t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.IAMRole, Name: role}]; strings.HasPrefix(id, "arn:") {
		return id, nil
	}
	if strings.HasPrefix(role, "arn:") {
		return role, nil
	}
	account, err := d.account(ctx)
	if err != nil {
		return "", fnFail(t.Name, "the account, for the role's ARN", err)
	}
	return "arn:" + Partition(t.Region) + ":iam::" + account + ":role/" + role, nil
}

// roleReported is what a function's role ARN compares as with a reference
// to an iam-role: what such a reference resolves to (the role's identity
// attribute, or its name). A name stands for the role at the path / of
// this account only; any other role is reported as its ARN, which no name
// equals.
func (d *lambdaFunctions) roleReported(ctx context.Context, arn string) (string, error) {
	if info, _ := spec.Lookup(spec.IAMRole); info != nil && info.Identity == "arn" {
		return arn, nil
	}
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 || parts[2] != "iam" {
		return arn, nil
	}
	name, ok := strings.CutPrefix(parts[5], "role/")
	if !ok || strings.Contains(name, "/") {
		return arn, nil
	}
	return nameInAccount(ctx, d.account, arn, parts[4], name)
}

// nameInAccount is what an ARN of account arnAccount naming name compares
// as with a reference, which resolves to a name of this account: the name
// when the account is the caller's, else the ARN itself, which no name
// equals.
func nameInAccount(ctx context.Context, account accountOf, arn, arnAccount, name string) (string, error) {
	own, err := account(ctx)
	if err != nil {
		return "", err
	}
	if arnAccount != own {
		return arn, nil
	}
	return name, nil
}

// List reports each function with what ListFunctions' configuration
// carries, which is every field Read reports but the tags (so no owner)
// and an image function's image (GetFunction's Code alone has it).
func (d *lambdaFunctions) List(ctx context.Context, region string) ([]providers.Resource, error) {
	var ferr error
	rs, err := listFunctions(ctx, d.clients.get(region), spec.LambdaFunction, region, 0, func(f lambdatypes.FunctionConfiguration) providers.Resource {
		fields, err := d.configFields(ctx, f)
		if err != nil && ferr == nil {
			ferr = err
		}
		return providers.Resource{Name: aws.ToString(f.FunctionName), Region: region, Fields: fields,
			Attributes: map[string]string{"arn": aws.ToString(f.FunctionArn)}}
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("aws/lambda-function: ListFunctions in %s: %w", region, err)
	}
	return rs, nil
}

func (d *lambdaFunctions) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	out, err := d.clients.get(region).GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)})
	if err != nil {
		return providers.Resource{}, fnFail(name, "GetFunction", err)
	}
	f := out.Configuration
	if f == nil {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "aws/lambda-function: %s: no such function in %s", name, region)
	}
	fields, err := d.configFields(ctx, *f)
	if err != nil {
		return providers.Resource{}, err
	}
	if f.PackageType == lambdatypes.PackageTypeImage && out.Code != nil {
		fields[providers.LambdaFunctionImage] = aws.ToString(out.Code.ImageUri)
	}
	fields[spec.TagsField] = reportedTags(out.Tags)
	return providers.Resource{Name: name, Region: region, Owner: out.Tags[spec.OwnershipTagKey], Fields: fields,
		Attributes: map[string]string{"arn": aws.ToString(f.FunctionArn)}}, nil
}

// ReadListed finishes a function List reported. With the tag scan's tags
// it makes no call, unless it is an image function whose image the engine
// wants. Without them it reads: GetFunction is one call, as ListTags
// would be, and has the image too.
func (d *lambdaFunctions) ReadListed(ctx context.Context, listed providers.Resource, tags map[string]string) (providers.Resource, error) {
	pt, listedHere := listed.Fields[providers.LambdaFunctionPackageType].(string)
	if tags == nil || !listedHere || (pt == string(lambdatypes.PackageTypeImage) && providers.WantsField(ctx, providers.LambdaFunctionImage)) {
		return d.Read(ctx, listed.Region, listed.Name)
	}
	res := listed
	res.Fields = maps.Clone(listed.Fields)
	res.Fields[spec.TagsField] = reportedTags(tags)
	res.Owner = tags[spec.OwnershipTagKey]
	return res, nil
}

// configFields are the fields a function's configuration (ListFunctions'
// and GetFunction's) gives, as Read reports them: all but the tags and an
// image function's image.
func (d *lambdaFunctions) configFields(ctx context.Context, f lambdatypes.FunctionConfiguration) (map[string]any, error) {
	name := aws.ToString(f.FunctionName)
	role, err := d.roleReported(ctx, aws.ToString(f.Role))
	if err != nil {
		return nil, fnFail(name, "the account, for the role", err)
	}
	env := map[string]any{}
	if f.Environment != nil {
		for k, v := range f.Environment.Variables {
			env[k] = v
		}
	}
	fields := map[string]any{
		providers.LambdaFunctionRole:        role,
		providers.LambdaFunctionPackageType: string(f.PackageType),
		providers.LambdaFunctionEnv:         env,
	}
	// The zip's path is never reported: the cloud knows its hash only.
	if f.PackageType != lambdatypes.PackageTypeImage {
		fields[providers.LambdaFunctionCodeSha256] = aws.ToString(f.CodeSha256)
		fields[providers.LambdaFunctionRuntime] = string(f.Runtime)
		fields[providers.LambdaFunctionHandler] = aws.ToString(f.Handler)
	}
	if f.MemorySize != nil {
		fields[providers.LambdaFunctionMemoryMB] = float64(*f.MemorySize)
	}
	if f.Timeout != nil {
		fields[providers.LambdaFunctionTimeoutSec] = float64(*f.Timeout)
	}
	if len(f.Architectures) == 1 {
		fields[providers.LambdaFunctionArchitecture] = string(f.Architectures[0])
	}
	return fields, nil
}

func (d *lambdaFunctions) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := d.target(t, true)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	role, err := d.roleARN(ctx, t, in.Role)
	if err != nil {
		return providers.Resource{}, err
	}
	// The ownership tag is in the create, so the function never exists
	// unowned.
	req := &lambda.CreateFunctionInput{FunctionName: aws.String(t.Name), Role: aws.String(role), Tags: tags,
		Environment: &lambdatypes.Environment{Variables: in.Env}}
	if in.HasZip() {
		b, err := zipBytes(t.Name, in)
		if err != nil {
			return providers.Resource{}, err
		}
		req.PackageType, req.Code = lambdatypes.PackageTypeZip, &lambdatypes.FunctionCode{ZipFile: b}
		req.Runtime, req.Handler = lambdatypes.Runtime(in.Runtime), aws.String(in.Handler)
	} else {
		req.PackageType, req.Code = lambdatypes.PackageTypeImage, &lambdatypes.FunctionCode{ImageUri: aws.String(in.Image)}
	}
	if in.HasMemoryMB() {
		req.MemorySize = aws.Int32(int32(in.MemoryMB))
	}
	if in.HasTimeoutSec() {
		req.Timeout = aws.Int32(int32(in.TimeoutSec))
	}
	if in.HasArchitecture() {
		req.Architectures = []lambdatypes.Architecture{lambdatypes.Architecture(in.Architecture)}
	}
	c := d.clients.get(t.Region)
	if _, err := c.CreateFunction(ctx, req, d.role.roleRetry, lambdaNoBlindResend); err != nil {
		// An answer lost after Lambda made it: the function is this
		// create's when it carries this fleet's tag, which went on with it.
		_, err = madeDespite(err, t.Owner, func() (struct{}, string, error) {
			out, gerr := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(t.Name)})
			if gerr != nil {
				return struct{}{}, "", gerr
			}
			return struct{}{}, out.Tags[spec.OwnershipTagKey], nil
		})
		if err != nil {
			return providers.Resource{}, fnFail(t.Name, "CreateFunction", err)
		}
	}
	if err := waitActive(ctx, c, spec.LambdaFunction, t.Name); err != nil {
		return providers.Resource{}, err
	}
	return d.Read(ctx, t.Region, t.Name)
}

// configFields and codeFields are what UpdateFunctionConfiguration and
// UpdateFunctionCode change.
var (
	configFields = []string{providers.LambdaFunctionRole, providers.LambdaFunctionRuntime, providers.LambdaFunctionHandler,
		providers.LambdaFunctionMemoryMB, providers.LambdaFunctionTimeoutSec, providers.LambdaFunctionEnv}
	codeFields = []string{providers.LambdaFunctionZip, providers.LambdaFunctionCodeSha256, providers.LambdaFunctionImage,
		providers.LambdaFunctionArchitecture}
)

func (d *lambdaFunctions) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := d.target(t, false)
	if err != nil {
		return providers.Resource{}, err
	}
	var doConf, doCode, doTags bool
	for _, f := range changed {
		switch {
		case slices.Contains(configFields, f):
			doConf = true
		case slices.Contains(codeFields, f):
			doCode = true
		case f == providers.LambdaFunctionTags:
			doTags = true
		default:
			// packageType: Lambda cannot change it, so the plan replaces.
			return providers.Resource{}, fnRefuse(t.Name, "field %q cannot be updated in place", f)
		}
	}
	// Everything that can be refused is, before the first change: a zip
	// that is not the planned one stops the update before its
	// configuration half.
	var code *lambda.UpdateFunctionCodeInput
	if doCode {
		if code, err = d.codeUpdate(t.Name, in); err != nil {
			return providers.Resource{}, err
		}
	}
	var conf *lambda.UpdateFunctionConfigurationInput
	if doConf {
		if conf, err = d.configUpdate(ctx, t, in); err != nil {
			return providers.Resource{}, err
		}
	}
	c := d.clients.get(t.Region)
	cur, err := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(t.Name)})
	if err != nil {
		return providers.Resource{}, fnFail(t.Name, "GetFunction", err)
	}
	if cur.Configuration == nil {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "aws/lambda-function: %s: no such function in %s", t.Name, t.Region)
	}
	// Lambda refuses a change while the last one is in progress (one an
	// interrupted apply left, or the one just made): each waits.
	if cur.Configuration.LastUpdateStatus == lambdatypes.LastUpdateStatusInProgress || cur.Configuration.State == lambdatypes.StatePending {
		if err := waitUpdated(ctx, c, spec.LambdaFunction, t.Name); err != nil {
			return providers.Resource{}, err
		}
	}
	if conf != nil {
		if _, err := c.UpdateFunctionConfiguration(ctx, conf, d.role.roleRetry); err != nil {
			return providers.Resource{}, fnFail(t.Name, "UpdateFunctionConfiguration", err)
		}
		if err := waitUpdated(ctx, c, spec.LambdaFunction, t.Name); err != nil {
			return providers.Resource{}, err
		}
	}
	if code != nil {
		if _, err := c.UpdateFunctionCode(ctx, code); err != nil {
			return providers.Resource{}, fnFail(t.Name, "UpdateFunctionCode", err)
		}
		if err := waitUpdated(ctx, c, spec.LambdaFunction, t.Name); err != nil {
			return providers.Resource{}, err
		}
	}
	if doTags {
		want, err := desiredTags(t)
		if err != nil {
			return providers.Resource{}, err
		}
		if err := retagFunction(ctx, c, cur.Configuration.FunctionArn, cur.Tags, want); err != nil {
			return providers.Resource{}, fnFail(t.Name, "TagResource", err)
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// codeUpdate is the UpdateFunctionCode of a target: the zip's bytes or the
// image, with the architecture, which Lambda changes with the code.
func (d *lambdaFunctions) codeUpdate(name string, in providers.LambdaFunctionInput) (*lambda.UpdateFunctionCodeInput, error) {
	req := &lambda.UpdateFunctionCodeInput{FunctionName: aws.String(name)}
	switch {
	case in.HasZip():
		b, err := zipBytes(name, in)
		if err != nil {
			return nil, err
		}
		req.ZipFile = b
	case in.HasImage():
		req.ImageUri = aws.String(in.Image)
	default:
		return nil, fnRefuse(name, "a code update needs zip or image")
	}
	if in.HasArchitecture() {
		req.Architectures = []lambdatypes.Architecture{lambdatypes.Architecture(in.Architecture)}
	}
	return req, nil
}

// configUpdate is the UpdateFunctionConfiguration of a target: every
// configuration field it sets, so that one call makes them all true.
func (d *lambdaFunctions) configUpdate(ctx context.Context, t providers.Target, in providers.LambdaFunctionInput) (*lambda.UpdateFunctionConfigurationInput, error) {
	req := &lambda.UpdateFunctionConfigurationInput{FunctionName: aws.String(t.Name)}
	if in.HasRole() {
		role, err := d.roleARN(ctx, t, in.Role)
		if err != nil {
			return nil, err
		}
		req.Role = aws.String(role)
	}
	if in.HasRuntime() {
		req.Runtime = lambdatypes.Runtime(in.Runtime)
	}
	if in.HasHandler() {
		req.Handler = aws.String(in.Handler)
	}
	if in.HasMemoryMB() {
		req.MemorySize = aws.Int32(int32(in.MemoryMB))
	}
	if in.HasTimeoutSec() {
		req.Timeout = aws.Int32(int32(in.TimeoutSec))
	}
	if in.HasEnv() {
		// The whole set: an empty map clears the variables.
		req.Environment = &lambdatypes.Environment{Variables: in.Env}
	}
	return req, nil
}

// Delete deletes the function; the deletion is immediate.
func (d *lambdaFunctions) Delete(ctx context.Context, t providers.Target) error {
	if _, err := d.clients.get(t.Region).DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(t.Name)}); err != nil {
		return fnFail(t.Name, "DeleteFunction", err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *lambdaFunctions) Release(ctx context.Context, region, name, owner string) error {
	if err := releaseFunction(ctx, d.clients.get(region), name, owner); err != nil {
		return fnFail(name, "release", err)
	}
	return nil
}

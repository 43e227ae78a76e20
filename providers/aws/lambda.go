package aws

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// functions is the compute kind on AWS: a Lambda function from a container
// image (PackageType Image), with a function URL whose auth type is
// AWS_IAM, so that the url attribute exists without the function being
// public.
type functions struct {
	clients *regional[*lambda.Client]
	// roleAttempts bounds the calls that name an execution role while IAM
	// has not yet propagated a new role to Lambda.
	roleAttempts int
	// pageSize is ListFunctions' MaxItems; zero leaves Lambda's default
	// of 50.
	pageSize int32
}

var (
	_ providers.Driver   = (*functions)(nil)
	_ providers.Releaser = (*functions)(nil)
)

func init() {
	register(entry{
		kind: spec.Compute, service: "lambda",
		// A function's image is pulled with the caller's rights, and its
		// execution role is passed (iam:PassRole, which the executor's
		// policy limits to Lambda).
		actions: []string{"lambda:ListFunctions", "lambda:GetFunction", "lambda:GetFunctionConfiguration", "lambda:GetFunctionUrlConfig",
			"lambda:ListTags", "lambda:CreateFunction", "lambda:CreateFunctionUrlConfig", "lambda:UpdateFunctionCode",
			"lambda:UpdateFunctionConfiguration", "lambda:TagResource", "lambda:UntagResource", "lambda:DeleteFunction",
			"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "iam:PassRole"},
		// function:NAME, or function:NAME:QUALIFIER for a version or alias.
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			n, ok := strings.CutPrefix(resource, "function:")
			n, _, _ = strings.Cut(n, ":")
			return n, "", ok
		},
		errors: map[string]providers.Code{"ResourceConflictException": providers.Conflict},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &functions{
				clients:      newLambda(cfg),
				roleAttempts: 15,
			}
		},
	})
}

// newLambda is the Lambda client of every kind that calls Lambda (compute,
// lambda-function, and alb-target-group, which grants its function's
// invocation).
func newLambda(cfg aws.Config) *regional[*lambda.Client] {
	return newRegional(cfg, func(c aws.Config) *lambda.Client { return lambda.NewFromConfig(c) })
}

const (
	// functionWait bounds the wait for Active or for an update to finish;
	// an image function's first activation pulls the image and can take
	// minutes.
	functionWait = 15 * time.Minute
	// functionPoll caps the pause between polls: the SDK's default of five
	// minutes would turn a thirty-second activation into several minutes.
	functionPoll = 10 * time.Second
)

// CheckFunctionName refuses a name Lambda would refuse, before any call:
// the compute driver and the executor's deploy (providers/aws/executordeploy)
// check their function names with it.
func CheckFunctionName(name string) error {
	if len(name) == 0 || len(name) > 64 {
		return providers.Errorf(providers.InvalidArgument, "function name %q: Lambda function names are 1 to 64 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return providers.Errorf(providers.InvalidArgument, "function name %q: character %q; Lambda allows letters, digits, - and _", name, r)
		}
	}
	return nil
}

// RoleRetry is roleRetry with the compute driver's bound (15 attempts),
// for a Lambda call outside the drivers that names an execution role made
// moments ago (the executor's deploy, providers/aws/executordeploy):
// pass it as the call's option.
func RoleRetry(o *lambda.Options) { (&functions{roleAttempts: 15}).roleRetry(o) }

// roleRetry makes a call that names an execution role retry while Lambda
// says the role "cannot be assumed": a role made moments ago takes a few
// seconds to reach Lambda. It is the SDK's retryer with one more retryable
// error, not a loop of our own.
func (d *functions) roleRetry(o *lambda.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = d.roleAttempts
		so.MaxBackoff = 10 * time.Second
		so.Retryables = append(so.Retryables, retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			var api smithy.APIError
			if errors.As(err, &api) && api.ErrorCode() == "InvalidParameterValueException" &&
				strings.Contains(api.ErrorMessage(), "cannot be assumed") {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}))
	})
}

func (d *functions) List(ctx context.Context, region string) ([]providers.Resource, error) {
	// ListFunctions carries neither tags (so neither owner) nor the image
	// URI: the engine reads each function it needs.
	return listFunctions(ctx, d.clients.get(region), spec.Compute, region, d.pageSize, func(f lambdatypes.FunctionConfiguration) providers.Resource {
		return functionResource(region, f)
	})
}

// listFunctions lists every function of the region, as kind k reports one;
// pageSize is ListFunctions' MaxItems, zero for Lambda's default of 50. A
// function is one physical thing whichever kind declares it (compute,
// lambda-function), so both list every function.
func listFunctions(ctx context.Context, c *lambda.Client, k spec.Kind, region string, pageSize int32,
	report func(lambdatypes.FunctionConfiguration) providers.Resource) ([]providers.Resource, error) {
	in := &lambda.ListFunctionsInput{}
	if pageSize > 0 {
		in.MaxItems = aws.Int32(pageSize)
	}
	var out []providers.Resource
	err := eachPage(ctx, lambda.NewListFunctionsPaginator(c, in), k, region, func(page *lambda.ListFunctionsOutput) error {
		for _, f := range page.Functions {
			out = append(out, report(f))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (d *functions) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	out, err := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)})
	if err != nil {
		return providers.Resource{}, err
	}
	if out.Configuration == nil {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "no function %s in %s", name, region)
	}
	r := functionResource(region, *out.Configuration)
	image := ""
	if out.Code != nil && out.Configuration.PackageType == lambdatypes.PackageTypeImage {
		image = aws.ToString(out.Code.ImageUri)
	}
	// A zip function reports an empty image: it is not what this kind
	// makes, and no declared image equals it.
	r.Fields[providers.ComputeImage] = image
	r.Fields[spec.TagsField] = reportedTags(out.Tags)
	r.Owner = out.Tags[spec.OwnershipTagKey]
	u, err := c.GetFunctionUrlConfig(ctx, &lambda.GetFunctionUrlConfigInput{FunctionName: aws.String(name)})
	switch {
	case err == nil:
		r.Attributes["url"] = aws.ToString(u.FunctionUrl)
	case errorCode(err) != providers.NotFound:
		return providers.Resource{}, err
	}
	return r, nil
}

// functionResource reports what a function's configuration says; Read adds
// the image, tags, owner and url.
func functionResource(region string, f lambdatypes.FunctionConfiguration) providers.Resource {
	env := map[string]any{}
	if f.Environment != nil {
		for k, v := range f.Environment.Variables {
			env[k] = v
		}
	}
	fields := map[string]any{
		"executionRole": aws.ToString(f.Role),
		"env":           env,
	}
	if f.MemorySize != nil {
		fields["memoryMb"] = float64(*f.MemorySize)
	}
	if f.Timeout != nil {
		fields["timeoutSec"] = float64(*f.Timeout)
	}
	return providers.Resource{
		Name:       aws.ToString(f.FunctionName),
		Region:     region,
		Fields:     fields,
		Attributes: map[string]string{"arn": aws.ToString(f.FunctionArn)},
		// Complete: GetFunction and GetFunctionUrlConfig report more than
		// any listing.
	}
}

func (d *functions) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	if err := CheckFunctionName(t.Name); err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeCompute(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	image, role := decl.Image, decl.ExecutionRole
	if image == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "compute %s: image is required", t.Name)
	}
	if role == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "compute %s: executionRole is required on AWS (the IAM role ARN the function runs as)", t.Name)
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	in := &lambda.CreateFunctionInput{
		FunctionName: aws.String(t.Name),
		PackageType:  lambdatypes.PackageTypeImage,
		Code:         &lambdatypes.FunctionCode{ImageUri: aws.String(image)},
		Role:         aws.String(role),
		Environment:  &lambdatypes.Environment{Variables: decl.Env},
		Tags:         tags,
	}
	if decl.HasMemoryMB() {
		in.MemorySize = aws.Int32(int32(decl.MemoryMB))
	}
	if decl.HasTimeoutSec() {
		in.Timeout = aws.Int32(int32(decl.TimeoutSec))
	}
	c := d.clients.get(t.Region)
	if _, err := c.CreateFunction(ctx, in, d.roleRetry); err != nil {
		return providers.Resource{}, err
	}
	if err := waitActive(ctx, c, spec.Compute, t.Name); err != nil {
		return providers.Resource{}, err
	}
	if _, err := c.CreateFunctionUrlConfig(ctx, &lambda.CreateFunctionUrlConfigInput{
		FunctionName: aws.String(t.Name),
		AuthType:     lambdatypes.FunctionUrlAuthTypeAwsIam,
	}); err != nil && errorCode(err) != providers.Conflict {
		return providers.Resource{}, err
	}
	return d.Read(ctx, t.Region, t.Name)
}

// waitActive waits for a function just made to be Active (the SDK's
// FunctionActiveV2 waiter): Lambda refuses changes to a function still
// Pending.
func waitActive(ctx context.Context, c *lambda.Client, k spec.Kind, name string) error {
	if err := lambda.NewFunctionActiveV2Waiter(c, func(o *lambda.FunctionActiveV2WaiterOptions) {
		o.MaxDelay = functionPoll
	}).Wait(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)}, functionWait); err != nil {
		return fmt.Errorf("aws/%s: %s: wait for Active: %w", k, name, err)
	}
	return nil
}

// waitUpdated waits for a function's last update to be Successful (the
// SDK's FunctionUpdatedV2 waiter): Lambda refuses a change while
// LastUpdateStatus is InProgress.
func waitUpdated(ctx context.Context, c *lambda.Client, k spec.Kind, name string) error {
	if err := lambda.NewFunctionUpdatedV2Waiter(c, func(o *lambda.FunctionUpdatedV2WaiterOptions) {
		o.MaxDelay = functionPoll
	}).Wait(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)}, functionWait); err != nil {
		return fmt.Errorf("aws/%s: %s: wait for the update: %w", k, name, err)
	}
	return nil
}

func (d *functions) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	decl, err := providers.DecodeCompute(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	conf := &lambda.UpdateFunctionConfigurationInput{FunctionName: aws.String(t.Name)}
	var doConf, doImage, doTags bool
	for _, f := range changed {
		switch f {
		case providers.ComputeExecutionRole:
			role := decl.ExecutionRole
			if role == "" {
				return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "compute %s: executionRole is required on AWS", t.Name)
			}
			conf.Role, doConf = aws.String(role), true
		case providers.ComputeMemoryMB:
			if decl.HasMemoryMB() {
				conf.MemorySize, doConf = aws.Int32(int32(decl.MemoryMB)), true
			}
		case providers.ComputeTimeoutSec:
			if decl.HasTimeoutSec() {
				conf.Timeout, doConf = aws.Int32(int32(decl.TimeoutSec)), true
			}
		case providers.ComputeEnv:
			// The whole set: an empty map clears the variables.
			conf.Environment, doConf = &lambdatypes.Environment{Variables: decl.Env}, true
		case providers.ComputeImage:
			doImage = true
		case spec.TagsField:
			doTags = true
		case providers.ComputeNamespace:
			// Scaleway only; never sent to AWS.
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "compute %s: unknown field %q", t.Name, f)
		}
	}
	c := d.clients.get(t.Region)
	cur, err := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(t.Name)})
	if err != nil {
		return providers.Resource{}, err
	}
	// Lambda refuses a change while the previous one is still being
	// applied (ResourceConflictException), so each waits for the last.
	if doConf {
		if _, err := c.UpdateFunctionConfiguration(ctx, conf, d.roleRetry); err != nil {
			return providers.Resource{}, err
		}
		if err := waitUpdated(ctx, c, spec.Compute, t.Name); err != nil {
			return providers.Resource{}, err
		}
	}
	if doImage {
		if _, err := c.UpdateFunctionCode(ctx, &lambda.UpdateFunctionCodeInput{FunctionName: aws.String(t.Name), ImageUri: aws.String(decl.Image)}); err != nil {
			return providers.Resource{}, err
		}
		if err := waitUpdated(ctx, c, spec.Compute, t.Name); err != nil {
			return providers.Resource{}, err
		}
	}
	if doTags && cur.Configuration != nil {
		want, err := desiredTags(t)
		if err != nil {
			return providers.Resource{}, err
		}
		if err := retagFunction(ctx, c, cur.Configuration.FunctionArn, cur.Tags, want); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// retagFunction makes a function's tags want, from have.
func retagFunction(ctx context.Context, c *lambda.Client, arn *string, have, want map[string]string) error {
	set, remove := tagChanges(have, want)
	if len(set) > 0 {
		if _, err := c.TagResource(ctx, &lambda.TagResourceInput{Resource: arn, Tags: set}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &lambda.UntagResourceInput{Resource: arn, TagKeys: remove}); err != nil {
			return err
		}
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *functions) Release(ctx context.Context, region, name, owner string) error {
	return releaseFunction(ctx, d.clients.get(region), name, owner)
}

// releaseFunction removes owner's ownership tag from a function and keeps
// every other tag.
func releaseFunction(ctx context.Context, c *lambda.Client, name, owner string) error {
	cur, err := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)})
	if err != nil {
		return err
	}
	if cur.Tags[spec.OwnershipTagKey] != owner || cur.Configuration == nil {
		return nil
	}
	_, err = c.UntagResource(ctx, &lambda.UntagResourceInput{Resource: cur.Configuration.FunctionArn, TagKeys: []string{spec.OwnershipTagKey}})
	return err
}

func (d *functions) Delete(ctx context.Context, t providers.Target) error {
	// The function URL goes with the function. Deletion is immediate.
	_, err := d.clients.get(t.Region).DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(t.Name)})
	return err
}

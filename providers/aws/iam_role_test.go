package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// Trust policies as a user writes them: spaced out, single values in lists.
// IAM hands them back URL-encoded, in its own form; they compare by meaning.
const (
	lambdaTrust = `{
  "Version": "2012-10-17",
  "Statement": [{"Effect": "Allow", "Principal": {"Service": ["lambda.amazonaws.com"]}, "Action": ["sts:AssumeRole"]}]
}`
	ec2Trust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
)

func TestIAMRoleConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:   spec.IAMRole,
		Create: map[string]any{"trust": lambdaTrust, "description": "conformance", "maxSessionDurationSec": 3600.0, "policies": []any{readOnly}},
		Updates: []map[string]any{
			{"trust": ec2Trust},
			{"maxSessionDurationSec": 43200.0},
			{"description": "changed"},
			{"policies": []any{s3ReadOnly, sqsFull}},
			{"policies": []any{}},
			{"description": "", "maxSessionDurationSec": 7200.0},
		},
		OddNames: []string{"role+tag=x,y.z@example-com", "Mixed_Case", strings.Repeat("r", 64)},
		Global:   true,
	})
}

// A value IAM would refuse, or that is not what the field holds, is
// refused before any call, naming it.
func TestIAMRoleRefusesBadValuesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.IAMRole)
	for _, c := range []struct {
		fields map[string]any
		want   string
	}{
		{map[string]any{"trust": lambdaTrust, "maxSessionDurationSec": 600.0}, "maxSessionDurationSec 600 is not a whole number of seconds from 3600 to 43200"},
		{map[string]any{"trust": lambdaTrust, "maxSessionDurationSec": 43201.0}, "maxSessionDurationSec 43201"},
		{map[string]any{"trust": lambdaTrust, "maxSessionDurationSec": 3600.5}, "maxSessionDurationSec 3600.5"},
		{map[string]any{"trust": "lambda.amazonaws.com"}, "trust is not a JSON policy document"},
		{map[string]any{"trust": lambdaTrust, "policies": []any{"ReadOnlyAccess"}}, `policies: "ReadOnlyAccess" is not a managed policy ARN`},
	} {
		_, err := d.Create(context.Background(), providers.Target{Name: "bad", Region: testRegion, Owner: "f", Fields: c.fields})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "aws/iam-role: bad: "+c.want) {
			t.Errorf("Create(%v) = %v (code %s), want invalid argument: %s", c.fields, err, errorCode(err), c.want)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// Delete clears what IAM refuses to delete a role with (attached and
// inline policies); a role in an instance profile is refused, naming it,
// with the role left as it was.
func TestIAMRoleDeleteClearsPoliciesAndRefusesInstanceProfiles(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.IAMRole)
	c := newIAMClient(b)
	ctx := context.Background()
	mk := func(name string) providers.Target {
		t.Helper()
		tg := providers.Target{Name: name, Region: testRegion, Owner: "f", Fields: map[string]any{"trust": ec2Trust, "policies": []any{readOnly}}}
		if _, err := d.Create(ctx, tg); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("inline"),
			PolicyDocument: aws.String(allowDoc("s3:GetObject"))}); err != nil {
			t.Fatal(err)
		}
		return tg
	}
	plain := mk("plain")
	if err := d.Delete(ctx, plain); err != nil {
		t.Fatalf("Delete of a role with an attached and an inline policy: %v", err)
	}
	if _, err := d.Read(ctx, testRegion, "plain"); b.ErrorCode(err) != providers.NotFound {
		t.Errorf("Read after delete: %v, want not found", err)
	}

	held := mk("held")
	if _, err := c.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("web-profile")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("web-profile"), RoleName: aws.String("held")}); err != nil {
		t.Fatal(err)
	}
	err := d.Delete(ctx, held)
	if b.ErrorCode(err) != providers.Conflict || !strings.Contains(err.Error(), "aws/iam-role: held: the role is in the instance profiles web-profile") {
		t.Fatalf("Delete of a role in an instance profile = %v (code %s), want a conflict naming the profile", err, b.ErrorCode(err))
	}
	res, err := d.Read(ctx, testRegion, "held")
	if err != nil {
		t.Fatalf("the refused role is gone: %v", err)
	}
	if got := res.Fields["policies"]; len(got.([]any)) != 1 {
		t.Errorf("the refused delete detached %v", got)
	}
}

// UpdateRole without MaxSessionDuration sets IAM's default hour (its doc
// says so, and moto does it): a description change to a target that does
// not set the bound keeps the one the role has.
func TestIAMRoleDescriptionKeepsTheSessionBound(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.IAMRole)
	ctx := context.Background()
	tg := providers.Target{Name: "bounded", Region: testRegion, Owner: "f", Fields: map[string]any{"trust": lambdaTrust, "maxSessionDurationSec": 7200.0}}
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	tg.Fields = map[string]any{"trust": lambdaTrust, "description": "now described"}
	res, err := d.Update(ctx, tg, []string{providers.IAMRoleDescription})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Fields["maxSessionDurationSec"]; got != 7200.0 || res.Fields["description"] != "now described" {
		t.Errorf("after a description change: maxSessionDurationSec %v, description %v; want 7200 kept", got, res.Fields["description"])
	}
}

// The policy's own delete detaches it from the fleet's roles, and may run
// beside the role's: a detach that finds the policy detached already is
// done, and the role is deleted (commit 8f28568; before it the
// NoSuchEntity came back as the role's, which the engine read as the role
// gone).
func TestIAMRoleDeleteWhileThePolicyIsDetached(t *testing.T) {
	var (
		b        *Backend
		raw      *iam.Client
		detached bool
	)
	b, _ = newTestBackend(t, before("DetachRolePolicy", func(any) error {
		if detached {
			return nil
		}
		detached = true
		_, err := raw.DetachRolePolicy(context.Background(), &iam.DetachRolePolicyInput{RoleName: aws.String("leaving"), PolicyArn: aws.String(readOnly)})
		return err
	}))
	raw = newIAMClient(b)
	d, _ := b.Driver(spec.IAMRole)
	ctx := context.Background()
	tg := providers.Target{Name: "leaving", Region: testRegion, Owner: "f", Fields: map[string]any{"trust": lambdaTrust, "policies": []any{readOnly}}}
	if _, err := d.Create(ctx, tg); err != nil {
		t.Fatal(err)
	}
	deletedDespite(t, b, d, tg, func() bool { return detached })
}

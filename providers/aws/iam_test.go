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

// AWS-managed policies; moto has them when started with
// MOTO_IAM_LOAD_MANAGED_POLICIES=true, as internal/moto does.
const (
	readOnly   = "arn:aws:iam::aws:policy/ReadOnlyAccess"
	s3ReadOnly = "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"
	sqsFull    = "arn:aws:iam::aws:policy/AmazonSQSFullAccess"
)

func TestIAMConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	conformance(t, b, srv, drivertest.Case{
		Kind:   spec.IAM,
		Create: map[string]any{"policies": []any{s3ReadOnly, readOnly}},
		Updates: []map[string]any{
			{"policies": []any{readOnly, sqsFull}}, // one goes, one comes, order differs
			{"policies": []any{}},
			{"policies": []any{sqsFull}},
		},
		OddNames: []string{"user+tag=x,y.z@example-com", "Mixed_Case", strings.Repeat("u", 64)},
		Global:   true,
	})
}

// Delete takes away what IAM refuses to delete a user with: attached and
// inline policies, access keys, the console password.
func TestIAMDeleteDetachesFirst(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.IAM)
	tg := providers.Target{Name: "deployer", Region: testRegion, Owner: "shop", Fields: map[string]any{"policies": []any{readOnly, sqsFull}}}
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	c := d.(*users).clients.get(testRegion)
	name := aws.String("deployer")
	if _, err := c.CreateAccessKey(t.Context(), &iam.CreateAccessKeyInput{UserName: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateLoginProfile(t.Context(), &iam.CreateLoginProfileInput{UserName: name, Password: aws.String("Pa55word!long")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutUserPolicy(t.Context(), &iam.PutUserPolicyInput{UserName: name, PolicyName: aws.String("inline"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:ListAllMyBuckets","Resource":"*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	// IAM itself refuses: this is what the driver must clear.
	if _, err := c.DeleteUser(t.Context(), &iam.DeleteUserInput{UserName: name}); b.ErrorCode(err) != providers.Conflict {
		t.Fatalf("plain DeleteUser: %v (code %s), want IAM's DeleteConflict", err, b.ErrorCode(err))
	}
	// As an orphan: the declaration (and its policy list) is gone.
	if err := d.Delete(t.Context(), providers.Target{Name: "deployer", Region: testRegion}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := d.Read(t.Context(), testRegion, "deployer"); b.ErrorCode(err) != providers.NotFound {
		t.Fatalf("read after delete: %v, want not found", err)
	}
	// The policies still exist; only the attachments went.
	if _, err := c.GetPolicy(t.Context(), &iam.GetPolicyInput{PolicyArn: aws.String(readOnly)}); err != nil {
		t.Errorf("the managed policy itself: %v", err)
	}
}

// A policy that does not exist is IAM's own not-found, not a silent skip.
func TestIAMUnknownPolicy(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.IAM)
	_, err := d.Create(t.Context(), providers.Target{Name: "u", Region: testRegion, Owner: "shop",
		Fields: map[string]any{"policies": []any{"arn:aws:iam::aws:policy/NoSuchPolicy"}}})
	if err == nil || !strings.Contains(err.Error(), "NoSuchPolicy") {
		t.Fatalf("create with a missing policy: %v", err)
	}
}

// What a user's delete clears may go while it runs: the policy detached by
// the policy's own delete beside it, an inline policy deleted by a first
// attempt whose answer was lost. Each is done, and the user is deleted;
// their NoSuchEntity once came back as the user's, and the engine
// recorded a user deleted that was still there.
func TestIAMDeleteWhileWhatItClearsGoes(t *testing.T) {
	var (
		b          *Backend
		raw        *iam.Client
		detached   bool
		inlineGone bool
	)
	name := aws.String("leaving")
	b, _ = newTestBackend(t,
		before("DetachUserPolicy", func(any) error {
			if detached {
				return nil
			}
			detached = true
			_, err := raw.DetachUserPolicy(context.Background(), &iam.DetachUserPolicyInput{UserName: name, PolicyArn: aws.String(readOnly)})
			return err
		}),
		before("DeleteUserPolicy", func(any) error {
			if inlineGone {
				return nil
			}
			inlineGone = true
			_, err := raw.DeleteUserPolicy(context.Background(), &iam.DeleteUserPolicyInput{UserName: name, PolicyName: aws.String("inline")})
			return err
		}))
	raw = newIAMClient(b)
	d, _ := b.Driver(spec.IAM)
	tg := providers.Target{Name: "leaving", Region: testRegion, Owner: "shop", Fields: map[string]any{"policies": []any{readOnly}}}
	if _, err := d.Create(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.PutUserPolicy(t.Context(), &iam.PutUserPolicyInput{UserName: name, PolicyName: aws.String("inline"),
		PolicyDocument: aws.String(allowDoc("s3:ListAllMyBuckets"))}); err != nil {
		t.Fatal(err)
	}
	deletedDespite(t, b, d, tg, func() bool { return detached && inlineGone })
}

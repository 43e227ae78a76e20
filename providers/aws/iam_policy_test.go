package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// allowDoc is a policy document allowing action on every resource, written
// as a user would: spaced out, the action in a list of one.
func allowDoc(action string) string {
	return fmt.Sprintf(`{
  "Version": "2012-10-17",
  "Statement": [{"Effect": "Allow", "Action": [%q], "Resource": "*"}]
}`, action)
}

func TestIAMPolicyConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	// Six documents after the first: the policy passes IAM's five versions,
	// so the oldest goes before the sixth is made.
	var updates []map[string]any
	for _, a := range []string{"s3:PutObject", "sqs:SendMessage", "sqs:ReceiveMessage", "logs:PutLogEvents", "ecr:BatchGetImage", "s3:ListBucket"} {
		updates = append(updates, map[string]any{"document": allowDoc(a)})
	}
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.IAMPolicy,
		Create:   map[string]any{"document": allowDoc("s3:GetObject"), "description": "conformance"},
		Updates:  updates,
		Replaces: []map[string]any{{"description": "replaced"}, {"description": "replaced again", "document": allowDoc("s3:GetObject")}},
		OddNames: []string{"policy+tag=x,y.z@example-com", "Mixed_Case", strings.Repeat("p", 128)},
		Global:   true,
	})
}

// newIAMClient is a raw client on the emulator, for what the drivers do
// not make.
func newIAMClient(b *Backend) *iam.Client { return iam.NewFromConfig(b.Config()) }

// Past IAM's five versions, the oldest that is not the default is deleted
// before the next is made; the default is the newest document.
func TestIAMPolicyKeepsFiveVersions(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.IAMPolicy)
	ctx := context.Background()
	tg := providers.Target{Name: "versions", Region: testRegion, Owner: "fleet", Fields: map[string]any{"document": allowDoc("a:V1")}}
	res, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 7; i++ {
		tg.Fields["document"] = allowDoc(fmt.Sprintf("a:V%d", i))
		if _, err := d.Update(ctx, tg, []string{providers.IAMPolicyDocument}); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	vs, err := newIAMClient(b).ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(res.Attributes["arn"])})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range vs.Versions {
		id := aws.ToString(v.VersionId)
		if v.IsDefaultVersion {
			id += "*"
		}
		ids = append(ids, id)
	}
	if got, want := strings.Join(slices.Sorted(slices.Values(ids)), ","), "v3,v4,v5,v6,v7*"; got != want {
		t.Errorf("versions %s, want %s (the two oldest deleted, the newest the default)", got, want)
	}
	read, err := d.Read(ctx, testRegion, "versions")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := spec.Lookup(spec.IAMPolicy); !spec.Equal(mustField(t, f, "document"), allowDoc("a:V7"), read.Fields["document"]) {
		t.Errorf("document %v, want the seventh", read.Fields["document"])
	}
}

func mustField(t *testing.T, info *spec.KindInfo, name string) spec.Field {
	t.Helper()
	f, ok := info.Field(name)
	if !ok {
		t.Fatalf("%s has no field %s", info.Kind, name)
	}
	return f
}

// A policy attached to a role of another fleet, or of no fleet, is not
// deleted: the refusal names the role, and nothing was detached. Attached
// to this fleet's own role, it is detached and deleted.
func TestIAMPolicyDeleteDetachesOnlyWhatIsOurs(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.IAMPolicy)
	c := newIAMClient(b)
	ctx := context.Background()
	tg, arn := shopPolicy(t, d, "shared")
	attachedRole(t, c, "ours", arn, mark("shop"))
	attachedRole(t, c, "theirs", arn, mark("billing"))
	attachedRole(t, c, "nobodys", arn)
	err := d.Delete(ctx, tg)
	if b.ErrorCode(err) != providers.Conflict || !strings.Contains(err.Error(), "role nobodys, role theirs") || strings.Contains(err.Error(), "role ours") {
		t.Fatalf("Delete = %v (code %s), want a conflict naming the two foreign roles", err, b.ErrorCode(err))
	}
	ents, err := c.ListEntitiesForPolicy(ctx, &iam.ListEntitiesForPolicyInput{PolicyArn: arn})
	if err != nil || len(ents.PolicyRoles) != 3 {
		t.Fatalf("after the refusal the policy is attached to %v (%v), want all three roles still", ents, err)
	}
	for _, r := range []string{"theirs", "nobodys"} {
		if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(r), PolicyArn: arn}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Delete(ctx, tg); err != nil {
		t.Fatalf("Delete with only this fleet's role attached: %v", err)
	}
	if _, err := d.Read(ctx, testRegion, "shared"); b.ErrorCode(err) != providers.NotFound {
		t.Errorf("Read after delete: %v, want not found", err)
	}
	left, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ours")})
	if err != nil || len(left.AttachedPolicies) != 0 {
		t.Errorf("this fleet's role still has %v (%v)", left, err)
	}
}

// IAM hands documents back in its own form, which the comparison reads by
// meaning: a document written otherwise is equal, a changed one is not.
func TestIAMDocumentsComparedAsIAMAnswers(t *testing.T) {
	b, _ := newTestBackend(t)
	ctx := context.Background()
	pd, _ := b.Driver(spec.IAMPolicy)
	rd, _ := b.Driver(spec.IAMRole)
	if _, err := pd.Create(ctx, providers.Target{Name: "doc", Region: testRegion, Owner: "f", Fields: map[string]any{"document": allowDoc("s3:GetObject")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Create(ctx, providers.Target{Name: "trusting", Region: testRegion, Owner: "f", Fields: map[string]any{"trust": lambdaTrust}}); err != nil {
		t.Fatal(err)
	}
	// What IAM itself answers: GetRole's trust is URL-encoded.
	raw, err := newIAMClient(b).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("trusting")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(raw.Role.AssumeRolePolicyDocument); strings.HasPrefix(got, "{") {
		t.Logf("this IAM answers the trust as plain JSON: %s", got)
	}
	policy, err := pd.Read(ctx, testRegion, "doc")
	if err != nil {
		t.Fatal(err)
	}
	role, err := rd.Read(ctx, testRegion, "trusting")
	if err != nil {
		t.Fatal(err)
	}
	pinfo, _ := spec.Lookup(spec.IAMPolicy)
	rinfo, _ := spec.Lookup(spec.IAMRole)
	document, trust := mustField(t, pinfo, "document"), mustField(t, rinfo, "trust")
	for _, c := range []struct {
		what     string
		f        spec.Field
		target   string
		reported any
		want     bool
	}{
		{"the policy as written", document, allowDoc("s3:GetObject"), policy.Fields["document"], true},
		{"the policy minified, the action a string", document,
			`{"Statement":[{"Resource":"*","Action":"s3:GetObject","Effect":"Allow"}],"Version":"2012-10-17"}`, policy.Fields["document"], true},
		{"another action", document, allowDoc("s3:PutObject"), policy.Fields["document"], false},
		{"the trust as written", trust, lambdaTrust, role.Fields["trust"], true},
		{"the trust minified", trust,
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`, role.Fields["trust"], true},
		{"another service trusted", trust, ec2Trust, role.Fields["trust"], false},
	} {
		if got := spec.Equal(c.f, c.target, c.reported); got != c.want {
			t.Errorf("%s: Equal(%s, reported %v) = %v, want %v", c.what, c.target, c.reported, got, c.want)
		}
	}
}

// A document that is not JSON is refused before any call.
func TestIAMPolicyRefusesBadDocumentBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.IAMPolicy)
	_, err := d.Create(context.Background(), providers.Target{Name: "bad", Region: testRegion, Owner: "f",
		Fields: map[string]any{"document": `{"Statement": [`}})
	if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "aws/iam-policy: bad: document is not a JSON policy document") {
		t.Fatalf("Create = %v (code %s), want invalid argument naming the document", err, errorCode(err))
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// A role the policy is attached to may be deleted while the policy's own
// delete runs (the role's delete, beside it, detaches the policy first).
// Gone between ListEntitiesForPolicy and GetRole, it holds the policy no
// more: the policy is deleted, where the NoSuchEntity of the role once
// came back as this policy's, and the engine recorded a policy deleted
// that was still there.
func TestIAMPolicyDeleteWhileAnAttachedRoleGoes(t *testing.T) {
	var (
		b    *Backend
		arn  *string // the policy's, once made
		gone bool
	)
	b, _ = newTestBackend(t, before("GetRole", func(in any) error {
		if name := aws.ToString(in.(*iam.GetRoleInput).RoleName); name != "leaving" || gone {
			return nil
		}
		gone = true
		c := newIAMClient(b)
		if _, err := c.DetachRolePolicy(context.Background(), &iam.DetachRolePolicyInput{RoleName: aws.String("leaving"), PolicyArn: arn}); err != nil {
			return err
		}
		_, err := c.DeleteRole(context.Background(), &iam.DeleteRoleInput{RoleName: aws.String("leaving")})
		return err
	}))
	d, _ := b.Driver(spec.IAMPolicy)
	var tg providers.Target
	tg, arn = shopPolicy(t, d, "in-use")
	attachedRole(t, newIAMClient(b), "leaving", arn, mark("shop"))
	deletedDespite(t, b, d, tg, func() bool { return gone })
}

// shopPolicy makes the policy name of the fleet "shop" with d, and returns
// its target and ARN.
func shopPolicy(t *testing.T, d providers.Driver, name string) (providers.Target, *string) {
	t.Helper()
	tg := providers.Target{Name: name, Region: testRegion, Owner: "shop", Fields: map[string]any{"document": allowDoc("s3:GetObject")}}
	res, err := d.Create(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	return tg, aws.String(res.Attributes["arn"])
}

// attachedRole makes the role name with tags through c, outside any
// driver, and attaches the policy arn to it.
func attachedRole(t *testing.T, c *iam.Client, name string, arn *string, tags ...iamtypes.Tag) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(lambdaTrust), Tags: tags}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(name), PolicyArn: arn}); err != nil {
		t.Fatal(err)
	}
}

// mark is fleet's ownership tag.
func mark(fleet string) iamtypes.Tag {
	return iamtypes.Tag{Key: aws.String(spec.OwnershipTagKey), Value: aws.String(fleet)}
}

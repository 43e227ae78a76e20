package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// users is the iam kind: an IAM user, named by its UserName, with attached
// managed policies compared as a set of ARNs. IAM is global: a listing in
// any region shows every user of the account, reported in the region
// asked.
type users struct {
	clients  *regional[*iam.Client]
	pageSize int32 // ListUsers' MaxItems; 0 for the service's default
}

var (
	_ providers.Driver   = (*users)(nil)
	_ providers.Releaser = (*users)(nil)
)

func init() {
	register(entry{
		kind: spec.IAM, service: "iam",
		// The iam kind is an IAM user with managed policies: whoever may
		// attach a policy to a user may grant that user anything. Leave the
		// kind out of the executor (--kinds) unless the fleet really manages
		// users.
		actions: []string{"iam:ListUsers", "iam:GetUser", "iam:ListAttachedUserPolicies", "iam:ListUserPolicies", "iam:ListAccessKeys",
			"iam:CreateUser", "iam:TagUser", "iam:UntagUser", "iam:AttachUserPolicy", "iam:DetachUserPolicy",
			"iam:DeleteUserPolicy", "iam:DeleteAccessKey", "iam:DeleteLoginProfile", "iam:DeleteUser"},
		deepScan: true, // IAM is global: the regional Tagging API never returns users
		errors:   iamErrors,
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &users{clients: newRegional(cfg, func(c aws.Config) *iam.Client { return iam.NewFromConfig(c) })}
		},
	})
}

// List is not complete: ListUsers carries neither tags nor policies.
func (d *users) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &iam.ListUsersInput{}
	if d.pageSize > 0 {
		in.MaxItems = aws.Int32(d.pageSize)
	}
	var out []providers.Resource
	err := eachPage(ctx, iam.NewListUsersPaginator(d.clients.get(region), in), spec.IAM, region, func(page *iam.ListUsersOutput) error {
		for _, u := range page.Users {
			out = append(out, providers.Resource{
				Name: aws.ToString(u.UserName), Region: region, Created: aws.ToTime(u.CreateDate),
				Attributes: map[string]string{"arn": aws.ToString(u.Arn), "id": aws.ToString(u.UserId)},
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d *users) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c := d.clients.get(region)
	u, err := c.GetUser(ctx, &iam.GetUserInput{UserName: aws.String(name)})
	if err != nil {
		return providers.Resource{}, err
	}
	// GetUser carries the tags (ListUsers does not).
	res := userResource(region, u.User, iamTagMap(u.User.Tags))
	if providers.WantsField(ctx, providers.IAMPolicies) {
		policies, err := attachedPolicies(ctx, c, region, name)
		if err != nil {
			return providers.Resource{}, err
		}
		res.Fields[providers.IAMPolicies] = reportedPolicies(policies)
	}
	return res, nil
}

// userResource is a user as GetUser or CreateUser describes it, with its
// tags; the attached policies are another call.
func userResource(region string, u *iamtypes.User, tags map[string]string) providers.Resource {
	return providers.Resource{
		Name: aws.ToString(u.UserName), Region: region, Created: aws.ToTime(u.CreateDate),
		Fields:     map[string]any{spec.TagsField: reportedTags(tags)},
		Attributes: map[string]string{"arn": aws.ToString(u.Arn), "id": aws.ToString(u.UserId)},
		Owner:      tags[spec.OwnershipTagKey],
	}
}

func reportedPolicies(policies []string) []any {
	out := make([]any, len(policies))
	for i, p := range policies {
		out[i] = p
	}
	return out
}

// attachedPolicies returns the ARNs of the user's attached managed
// policies, sorted.
func attachedPolicies(ctx context.Context, c *iam.Client, region, name string) ([]string, error) {
	var arns []string
	p := iam.NewListAttachedUserPoliciesPaginator(c, &iam.ListAttachedUserPoliciesInput{UserName: aws.String(name)})
	err := eachPage(ctx, p, spec.IAM, region, func(page *iam.ListAttachedUserPoliciesOutput) error {
		for _, a := range page.AttachedPolicies {
			arns = append(arns, aws.ToString(a.PolicyArn))
		}
		return nil
	})
	sort.Strings(arns)
	return arns, err
}

func (d *users) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	want, err := targetPolicies(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	// Tags go with the create: the user never exists without its ownership
	// tag. A failed attach below leaves a user this fleet owns, which the
	// next apply finishes.
	out, err := c.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String(t.Name), Tags: iamTags(tags)})
	if err != nil {
		return providers.Resource{}, err
	}
	// A new user has no policy attached: nothing to list first.
	if err := d.attach(ctx, c, t.Name, nil, want); err != nil {
		return providers.Resource{}, err
	}
	// CreateUser describes the user, and the policies are what was
	// attached: no read back.
	res := userResource(t.Region, out.User, tags)
	sort.Strings(want)
	res.Fields[providers.IAMPolicies] = reportedPolicies(want)
	return res, nil
}

// targetPolicies reads the policies field: a list of ARNs.
func targetPolicies(t providers.Target) ([]string, error) {
	in, err := providers.DecodeIAM(t.Fields)
	if err != nil {
		return nil, err
	}
	return in.Policies, nil
}

// setPolicies attaches and detaches managed policies until the user has
// exactly want.
func (d *users) setPolicies(ctx context.Context, c *iam.Client, region, name string, want []string) error {
	have, err := attachedPolicies(ctx, c, region, name)
	if err != nil {
		return err
	}
	return d.attach(ctx, c, name, have, want)
}

// attach detaches what the user has and should not, and attaches what it
// should and has not.
func (d *users) attach(ctx context.Context, c *iam.Client, name string, have, want []string) error {
	return syncPolicies(have, want, func(p string) error {
		// Detached already is done: the policy's own delete detaches it
		// from the fleet's users, and may run beside this. Returned, the
		// NoSuchEntity would read as this user being gone.
		if _, err := c.DetachUserPolicy(ctx, &iam.DetachUserPolicyInput{UserName: aws.String(name), PolicyArn: aws.String(p)}); err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("aws/iam: %s: DetachUserPolicy %s: %w", name, p, err)
		}
		return nil
	}, func(p string) error {
		_, err := c.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String(name), PolicyArn: aws.String(p)})
		return err
	})
}

// syncPolicies detaches each of have that want lacks, then attaches each of
// want that have lacks, once.
func syncPolicies(have, want []string, detach, attach func(arn string) error) error {
	wanted := map[string]bool{}
	for _, p := range want {
		wanted[p] = true
	}
	had := map[string]bool{}
	for _, p := range have {
		had[p] = true
		if !wanted[p] {
			if err := detach(p); err != nil {
				return err
			}
		}
	}
	for _, p := range want {
		if !had[p] {
			had[p] = true
			if err := attach(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *users) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c := d.clients.get(t.Region)
	for _, f := range changed {
		var err error
		switch f {
		case providers.IAMPolicies:
			var want []string
			if want, err = targetPolicies(t); err == nil {
				err = d.setPolicies(ctx, c, t.Region, t.Name, want)
			}
		case spec.TagsField:
			err = d.retag(ctx, c, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "iam: field %q cannot be updated in place", f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *users) retag(ctx context.Context, c *iam.Client, t providers.Target) error {
	u, err := c.GetUser(ctx, &iam.GetUserInput{UserName: aws.String(t.Name)})
	if err != nil {
		return err
	}
	name := aws.String(t.Name)
	return retagIAM(t, iamTagMap(u.User.Tags), func(set []iamtypes.Tag) error {
		_, err := c.TagUser(ctx, &iam.TagUserInput{UserName: name, Tags: set})
		return err
	}, func(keys []string) error {
		_, err := c.UntagUser(ctx, &iam.UntagUserInput{UserName: name, TagKeys: keys})
		return err
	})
}

// retagIAM moves an IAM entity's tags from have to t's, with its kind's
// tag and untag calls; the ownership tag stays.
func retagIAM(t providers.Target, have map[string]string, tag func([]iamtypes.Tag) error, untag func([]string) error) error {
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have, want, spec.OwnershipTagKey)
	if len(set) > 0 {
		if err := tag(iamTags(set)); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		return untag(remove)
	}
	return nil
}

// Delete removes what IAM refuses to delete a user with and infra can
// answer for: attached and inline policies, access keys, the console
// password. Group memberships, MFA devices, SSH keys, signing certificates
// and service credentials are left: they belong to someone's setup, and
// IAM's DeleteConflict names them.
func (d *users) Delete(ctx context.Context, t providers.Target) error {
	c := d.clients.get(t.Region)
	name := aws.String(t.Name)
	// Most users have nothing attached: try the delete first, and clear
	// what IAM says is in the way only when it refuses.
	_, err := c.DeleteUser(ctx, &iam.DeleteUserInput{UserName: name})
	if !isCode(err, "DeleteConflict") {
		return err
	}
	return d.clearAndDelete(ctx, c, t)
}

// clearAndDelete detaches and deletes what keeps a user from being
// deleted (managed and inline policies, access keys, the login profile),
// then deletes it.
func (d *users) clearAndDelete(ctx context.Context, c *iam.Client, t providers.Target) error {
	name := aws.String(t.Name)
	if err := d.setPolicies(ctx, c, t.Region, t.Name, nil); err != nil {
		return err
	}
	var inline []string
	err := eachPage(ctx, iam.NewListUserPoliciesPaginator(c, &iam.ListUserPoliciesInput{UserName: name}), spec.IAM, t.Region,
		func(page *iam.ListUserPoliciesOutput) error { inline = append(inline, page.PolicyNames...); return nil })
	if err != nil {
		return err
	}
	for _, p := range inline {
		// Gone already is done: a retry whose answer was lost finds it gone.
		if _, err := c.DeleteUserPolicy(ctx, &iam.DeleteUserPolicyInput{UserName: name, PolicyName: aws.String(p)}); err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("aws/iam: %s: DeleteUserPolicy %s: %w", t.Name, p, err)
		}
	}
	var keys []iamtypes.AccessKeyMetadata
	err = eachPage(ctx, iam.NewListAccessKeysPaginator(c, &iam.ListAccessKeysInput{UserName: name}), spec.IAM, t.Region,
		func(page *iam.ListAccessKeysOutput) error { keys = append(keys, page.AccessKeyMetadata...); return nil })
	if err != nil {
		return err
	}
	for _, k := range keys {
		// Gone already is done: a retry of a delete whose answer was lost
		// finds nothing to delete.
		if _, err := c.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: name, AccessKeyId: k.AccessKeyId}); err != nil && !isCode(err, "NoSuchEntity") {
			return err
		}
	}
	if _, err := c.DeleteLoginProfile(ctx, &iam.DeleteLoginProfileInput{UserName: name}); err != nil && !isCode(err, "NoSuchEntity") {
		return err
	}
	_, err = c.DeleteUser(ctx, &iam.DeleteUserInput{UserName: name})
	return err
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *users) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	u, err := c.GetUser(ctx, &iam.GetUserInput{UserName: aws.String(name)})
	if err != nil {
		return err
	}
	return releaseIAM(u.User.Tags, owner, func(keys []string) error {
		_, err := c.UntagUser(ctx, &iam.UntagUserInput{UserName: aws.String(name), TagKeys: keys})
		return err
	})
}

// releaseIAM removes the ownership tag with untag when tags hold owner's.
func releaseIAM(tags []iamtypes.Tag, owner string, untag func([]string) error) error {
	if iamTagMap(tags)[spec.OwnershipTagKey] != owner {
		return nil
	}
	return untag([]string{spec.OwnershipTagKey})
}

// iamErrors are the error codes of IAM's API, which every IAM kind shares.
var iamErrors = map[string]providers.Code{
	"NoSuchEntity": providers.NotFound, "EntityAlreadyExists": providers.AlreadyExists,
	"DeleteConflict": providers.Conflict, "MalformedPolicyDocument": providers.InvalidArgument,
	// Too many of something: versions of a policy, policies on a role.
	"LimitExceeded": providers.Conflict, "InvalidInput": providers.InvalidArgument,
	// A service-linked role, which only its service may change.
	"UnmodifiableEntity": providers.Conflict, "PolicyNotAttachable": providers.InvalidArgument,
}

// iamDocument is a policy document as IAM hands it back: URL-encoded (RFC
// 3986, so '+' is a plus), which the SDK does not undo. A document that
// already reads as JSON is taken as it is, so that one holding a literal %
// is never decoded twice.
func iamDocument(encoded *string) string {
	s := aws.ToString(encoded)
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		return s
	}
	if plain, err := url.PathUnescape(s); err == nil {
		return plain
	}
	return s
}

// checkDocument refuses, before any call, a policy document that is not
// one JSON object: IAM would refuse it too, after the role or the policy
// was half made.
func checkDocument(kind spec.Kind, name, field, doc string) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		return providers.Errorf(providers.InvalidArgument, "aws/%s: %s: %s is not a JSON policy document: %v", kind, name, field, err)
	}
	return nil
}

func iamTags(m map[string]string) []iamtypes.Tag {
	return tagList(m, func(k, v *string) iamtypes.Tag { return iamtypes.Tag{Key: k, Value: v} })
}

func iamTagMap(tags []iamtypes.Tag) map[string]string {
	return tagMapOf(tags, func(t iamtypes.Tag) (*string, *string) { return t.Key, t.Value })
}

package aws

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// secrets is the secrets kind: a Secrets Manager secret, named by its Name.
// Its value is written at create and on an update that names it, and read
// only through ReadSecretValue; Read never reports it.
type secrets struct {
	clients  *regional[*secretsmanager.Client]
	pageSize int32 // ListSecrets' MaxResults; 0 for the service's default
}

var (
	_ providers.Driver       = (*secrets)(nil)
	_ providers.SecretReader = (*secrets)(nil)
	_ providers.Releaser     = (*secrets)(nil)
)

func init() {
	register(entry{
		kind: spec.Secrets, service: "secretsmanager",
		actions: []string{"secretsmanager:ListSecrets", "secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue",
			"secretsmanager:CreateSecret", "secretsmanager:PutSecretValue", "secretsmanager:UpdateSecret",
			"secretsmanager:TagResource", "secretsmanager:UntagResource", "secretsmanager:DeleteSecret"},
		// secret:NAME-AbCdEf: AWS appends a dash and six characters.
		arn: func(resource string, _ map[string]string) (string, string, bool) {
			n := strings.TrimPrefix(resource, "secret:")
			if i := strings.LastIndexByte(n, '-'); i > 0 && len(n)-i == 7 {
				n = n[:i]
			}
			return n, "", true
		},
		errors: map[string]providers.Code{
			"ResourceExistsException": providers.AlreadyExists,
			// A secret scheduled for deletion refuses changes until it is gone.
			"InvalidRequestException": providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &secrets{clients: newRegional(cfg, func(c aws.Config) *secretsmanager.Client { return secretsmanager.NewFromConfig(c) })}
		},
	})
}

// List is complete: ListSecrets carries the name, description, tags and
// versions, everything Read reports. Secrets scheduled for deletion are
// left out, as Read calls them absent.
func (d *secrets) List(ctx context.Context, region string) ([]providers.Resource, error) {
	in := &secretsmanager.ListSecretsInput{}
	if d.pageSize > 0 {
		in.MaxResults = aws.Int32(d.pageSize)
	}
	var out []providers.Resource
	err := eachPage(ctx, secretsmanager.NewListSecretsPaginator(d.clients.get(region), in), spec.Secrets, region, func(page *secretsmanager.ListSecretsOutput) error {
		for _, s := range page.SecretList {
			if s.DeletedDate != nil {
				continue
			}
			r := secretResource(region, s.Name, s.ARN, s.Description, s.Tags, s.CreatedDate, s.SecretVersionsToStages)
			r.Unmodelled = secretUnmodelled(s.KmsKeyId, s.RotationEnabled, s.OwningService)
			r.Complete = true
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d *secrets) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	s, err := d.clients.get(region).DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(name)})
	if err != nil {
		return providers.Resource{}, err
	}
	// A secret scheduled for deletion cannot be used or updated, and goes
	// by itself: it is absent.
	if s.DeletedDate != nil {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "secret %s is scheduled for deletion on %s", name, s.DeletedDate.Format(time.RFC3339))
	}
	r := secretResource(region, s.Name, s.ARN, s.Description, s.Tags, s.CreatedDate, s.VersionIdsToStages)
	r.Unmodelled = secretUnmodelled(s.KmsKeyId, s.RotationEnabled, s.OwningService)
	return r, nil
}

// secretUnmodelled names what a secret sets that the spec does not hold:
// its own KMS key, rotation, and the AWS service that manages it (an RDS
// master password), which import never offers.
func secretUnmodelled(kmsKey *string, rotation *bool, owningService *string) []string {
	var out []string
	if svc := aws.ToString(owningService); svc != "" {
		out = append(out, providers.OwningService+"="+svc)
	}
	if k := aws.ToString(kmsKey); k != "" {
		out = append(out, "KmsKeyId="+k)
	}
	if aws.ToBool(rotation) {
		out = append(out, "RotationEnabled=true")
	}
	return out
}

// secretResource builds the report shared by Read and List.
func secretResource(region string, name, arn, description *string, tags []smtypes.Tag, created *time.Time, versions map[string][]string) providers.Resource {
	tm := secretTagMap(tags)
	r := providers.Resource{
		Name: aws.ToString(name), Region: region,
		Fields:     map[string]any{"description": aws.ToString(description), spec.TagsField: reportedTags(tm)},
		Attributes: map[string]string{"arn": aws.ToString(arn), "id": aws.ToString(arn)},
		Owner:      tm[spec.OwnershipTagKey],
		Created:    aws.ToTime(created),
	}
	for id, stages := range versions {
		for _, s := range stages {
			if s == "AWSCURRENT" {
				r.Attributes["version"] = id
			}
		}
	}
	return r
}

func (d *secrets) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	decl, err := providers.DecodeSecrets(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	value := decl.Value
	if !decl.HasValue() {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "secret %s: the value is missing (it must arrive resolved, as a sensitive value)", t.Name)
	}
	tags, err := desiredTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	in := &secretsmanager.CreateSecretInput{
		Name:         aws.String(t.Name),
		SecretString: aws.String(value.Reveal()),
		// Derived from the fleet and the name, so a create retried after a
		// crash or a lost answer finds the first one instead of making a
		// second version (or failing).
		ClientRequestToken: aws.String(createToken(t.Owner, t.Name)),
		Tags:               secretTags(tags),
	}
	if desc := decl.Description; desc != "" {
		in.Description = aws.String(desc)
	}
	c := d.clients.get(t.Region)
	out, err := c.CreateSecret(ctx, in)
	if err != nil {
		return providers.Resource{}, err
	}
	// CreateSecret names the ARN and the version; the rest is what was
	// sent: no read back.
	res := providers.Resource{Name: t.Name, Region: t.Region, Owner: t.Owner,
		Fields:     map[string]any{"description": decl.Description, spec.TagsField: reportedTags(tags)},
		Attributes: map[string]string{"arn": aws.ToString(out.ARN), "id": aws.ToString(out.ARN), "version": aws.ToString(out.VersionId)}}
	return res, nil
}

// createToken is the ClientRequestToken of a create: a UUID-shaped hash of
// the fleet and the name. It carries nothing of the value, since tokens
// are logged.
func createToken(owner, name string) string {
	h := sha256.Sum256([]byte("infra/secrets/create\x00" + owner + "\x00" + name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func (d *secrets) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	decl, err := providers.DecodeSecrets(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	for _, f := range changed {
		var err error
		switch f {
		case providers.SecretsValue:
			if !decl.HasValue() {
				return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "secret %s: the value is missing", t.Name)
			}
			// The SDK fills ClientRequestToken: a new version each time.
			_, err = c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(t.Name), SecretString: aws.String(decl.Value.Reveal())})
		case providers.SecretsDescription:
			_, err = c.UpdateSecret(ctx, &secretsmanager.UpdateSecretInput{SecretId: aws.String(t.Name), Description: aws.String(decl.Description)})
		case spec.TagsField:
			err = d.retag(ctx, c, t)
		default:
			err = providers.Errorf(providers.InvalidArgument, "secrets: field %q cannot be updated in place", f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *secrets) retag(ctx context.Context, c *secretsmanager.Client, t providers.Target) error {
	cur, err := c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(t.Name)})
	if err != nil {
		return err
	}
	want, err := desiredTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(secretTagMap(cur.Tags), want, spec.OwnershipTagKey)
	if len(set) > 0 {
		if _, err := c.TagResource(ctx, &secretsmanager.TagResourceInput{SecretId: aws.String(t.Name), Tags: secretTags(set)}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &secretsmanager.UntagResourceInput{SecretId: aws.String(t.Name), TagKeys: remove}); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes the secret at once: a recovery window would keep the
// name taken, and a re-create (a replace) would fail until it ends.
func (d *secrets) Delete(ctx context.Context, t providers.Target) error {
	_, err := d.clients.get(t.Region).DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{
		SecretId: aws.String(t.Name), ForceDeleteWithoutRecovery: aws.Bool(true),
	})
	return err
}

// ReadSecretValue returns the current value. The engine calls it only to
// settle a composed secret at apply time.
func (d *secrets) ReadSecretValue(ctx context.Context, region, name string) (spec.Sensitive, error) {
	out, err := d.clients.get(region).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)})
	if err != nil {
		return spec.Sensitive{}, err
	}
	if out.SecretString == nil {
		return spec.Sensitive{}, providers.Errorf(providers.InvalidArgument, "secret %s holds a binary value, which infra does not read", name)
	}
	return spec.NewSensitive(aws.ToString(out.SecretString)), nil
}

// Release removes this fleet's ownership tag and keeps every other tag.
func (d *secrets) Release(ctx context.Context, region, name, owner string) error {
	c := d.clients.get(region)
	cur, err := c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(name)})
	if err != nil {
		return err
	}
	if secretTagMap(cur.Tags)[spec.OwnershipTagKey] != owner {
		return nil
	}
	_, err = c.UntagResource(ctx, &secretsmanager.UntagResourceInput{SecretId: aws.String(name), TagKeys: []string{spec.OwnershipTagKey}})
	return err
}

func secretTags(m map[string]string) []smtypes.Tag {
	return tagList(m, func(k, v *string) smtypes.Tag { return smtypes.Tag{Key: k, Value: v} })
}

func secretTagMap(tags []smtypes.Tag) map[string]string {
	return tagMapOf(tags, func(t smtypes.Tag) (*string, *string) { return t.Key, t.Value })
}

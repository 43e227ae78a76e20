package gcp

import (
	"context"
	"fmt"
	"hash/crc32"

	secretmanager "cloud.google.com/go/secretmanager/apiv1"
	"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// secrets is secrets: a Secret Manager secret replicated in the region
// alone (user-managed replication with one replica), which is what places
// a secret in a region, since a secret itself is global. The value is a
// version; the description is the annotation "description"; the mark and
// the user tags are labels. Every call names the project.
type secrets struct{ b *Backend }

var (
	_ providers.Driver       = (*secrets)(nil)
	_ providers.SecretReader = (*secrets)(nil)
	_ providers.Releaser     = (*secrets)(nil)
)

// descriptionAnnotation holds the secret's description.
const descriptionAnnotation = "description"

func init() {
	register(entry{kind: spec.Secrets, new: func(b *Backend) providers.Driver { return &secrets{b: b} }})
}

func (d *secrets) client(ctx context.Context) (*secretmanager.Client, string, error) {
	project, err := d.b.scope(ctx)
	if err != nil {
		return nil, "", err
	}
	c, err := d.b.secretManager(ctx)
	return c, project, err
}

func secretName(project, name string) string { return "projects/" + project + "/secrets/" + name }

// replicaRegion is the one region a secret is replicated in; empty when
// automatic or several.
func replicaRegion(s *secretmanagerpb.Secret) string {
	um := s.GetReplication().GetUserManaged()
	if um == nil || len(um.Replicas) != 1 {
		return ""
	}
	return um.Replicas[0].Location
}

func secretResource(region string, s *secretmanagerpb.Secret) providers.Resource {
	tags, owner := reported(s.Labels)
	r := providers.Resource{Name: shortName(s.Name), Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags, "description": s.Annotations[descriptionAnnotation]},
		Attributes: map[string]string{"arn": s.Name, "id": s.Name, "version": "latest"}}
	if s.CreateTime != nil {
		r.Created = s.CreateTime.AsTime()
	}
	return r
}

func (d *secrets) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	it := c.ListSecrets(ctx, &secretmanagerpb.ListSecretsRequest{Parent: "projects/" + project, PageSize: int32(d.b.opts.PageSize)})
	err = drain(it.Next, func(s *secretmanagerpb.Secret) {
		if replicaRegion(s) == region {
			out = append(out, secretResource(region, s))
		}
	})
	return out, err
}

func (d *secrets) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	s, err := d.get(ctx, c, project, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return secretResource(region, s), nil
}

func (d *secrets) get(ctx context.Context, c *secretmanager.Client, project, region, name string) (*secretmanagerpb.Secret, error) {
	s, err := c.GetSecret(ctx, &secretmanagerpb.GetSecretRequest{Name: secretName(project, name)})
	if err != nil {
		return nil, err
	}
	if got := replicaRegion(s); got != region {
		return nil, providers.Errorf(providers.NotFound, "gcp/secrets/%s: the secret is replicated in %q, not %s", name, got, region)
	}
	return s, nil
}

func payload(decl providers.SecretsInput) (*secretmanagerpb.SecretPayload, error) {
	if !decl.HasValue() {
		return nil, providers.Errorf(providers.InvalidArgument, "secrets: the value is missing, want a secret")
	}
	data := []byte(decl.Value.Reveal())
	sum := int64(crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	return &secretmanagerpb.SecretPayload{Data: data, DataCrc32C: &sum}, nil
}

func (d *secrets) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeSecrets(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	p, err := payload(decl)
	if err != nil {
		return providers.Resource{}, err
	}
	l, err := labels(t)
	if err != nil {
		return providers.Resource{}, err
	}
	secret := &secretmanagerpb.Secret{Labels: l, Replication: &secretmanagerpb.Replication{
		Replication: &secretmanagerpb.Replication_UserManaged_{UserManaged: &secretmanagerpb.Replication_UserManaged{
			Replicas: []*secretmanagerpb.Replication_UserManaged_Replica{{Location: t.Region}}}}}}
	if decl.HasDescription() {
		secret.Annotations = map[string]string{descriptionAnnotation: decl.Description}
	}
	s, err := c.CreateSecret(ctx, &secretmanagerpb.CreateSecretRequest{Parent: "projects/" + project, SecretId: t.Name, Secret: secret})
	if err != nil {
		return providers.Resource{}, err
	}
	if _, err := c.AddSecretVersion(ctx, &secretmanagerpb.AddSecretVersionRequest{Parent: s.Name, Payload: p}); err != nil {
		// A secret without a value is worth nothing: take it back, so
		// that the retry creates it whole.
		_ = c.DeleteSecret(context.WithoutCancel(ctx), &secretmanagerpb.DeleteSecretRequest{Name: s.Name})
		return providers.Resource{}, err
	}
	return secretResource(t.Region, s), nil
}

func (d *secrets) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	s, err := d.get(ctx, c, project, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeSecrets(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	patch := &secretmanagerpb.Secret{Name: s.Name, Etag: s.Etag, Annotations: s.Annotations}
	var paths []string
	for _, f := range changed {
		switch f {
		case providers.SecretsValue:
			if err := d.addVersion(ctx, c, s.Name, decl); err != nil {
				return providers.Resource{}, err
			}
		case providers.SecretsDescription:
			if patch.Annotations == nil {
				patch.Annotations = map[string]string{}
			}
			patch.Annotations[descriptionAnnotation] = decl.Description
			paths = append(paths, "annotations")
		case spec.TagsField:
			if patch.Labels, err = labels(t); err != nil {
				return providers.Resource{}, err
			}
			paths = append(paths, "labels")
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "secrets: field %q cannot be updated in place", f)
		}
	}
	if len(paths) > 0 {
		// The etag makes the patch apply to the secret as read, or fail.
		if s, err = c.UpdateSecret(ctx, &secretmanagerpb.UpdateSecretRequest{Secret: patch, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}}); err != nil {
			return providers.Resource{}, err
		}
	}
	return secretResource(t.Region, s), nil
}

// addVersion adds the new value and disables every earlier enabled
// version: one value is current.
func (d *secrets) addVersion(ctx context.Context, c *secretmanager.Client, secret string, decl providers.SecretsInput) error {
	p, err := payload(decl)
	if err != nil {
		return err
	}
	v, err := c.AddSecretVersion(ctx, &secretmanagerpb.AddSecretVersionRequest{Parent: secret, Payload: p})
	if err != nil {
		return err
	}
	var earlier []string
	it := c.ListSecretVersions(ctx, &secretmanagerpb.ListSecretVersionsRequest{Parent: secret, Filter: "state:ENABLED", PageSize: int32(d.b.opts.PageSize)})
	if err := drain(it.Next, func(sv *secretmanagerpb.SecretVersion) {
		if sv.Name != v.Name {
			earlier = append(earlier, sv.Name)
		}
	}); err != nil {
		return err
	}
	for _, name := range earlier {
		if _, err := c.DisableSecretVersion(ctx, &secretmanagerpb.DisableSecretVersionRequest{Name: name}); err != nil {
			return fmt.Errorf("disable the earlier version %s: %w", name, err)
		}
	}
	return nil
}

func (d *secrets) Delete(ctx context.Context, t providers.Target) error {
	c, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	s, err := d.get(ctx, c, project, t.Region, t.Name)
	if err != nil {
		return err
	}
	return c.DeleteSecret(ctx, &secretmanagerpb.DeleteSecretRequest{Name: s.Name, Etag: s.Etag})
}

// ReadSecretValue reads the latest version.
func (d *secrets) ReadSecretValue(ctx context.Context, region, name string) (spec.Sensitive, error) {
	c, project, err := d.client(ctx)
	if err != nil {
		return spec.Sensitive{}, err
	}
	if _, err := d.get(ctx, c, project, region, name); err != nil {
		return spec.Sensitive{}, err
	}
	v, err := c.AccessSecretVersion(ctx, &secretmanagerpb.AccessSecretVersionRequest{Name: secretName(project, name) + "/versions/latest"})
	if err != nil {
		return spec.Sensitive{}, err
	}
	return spec.NewSensitive(string(v.GetPayload().GetData())), nil
}

func (d *secrets) Release(ctx context.Context, region, name, owner string) error {
	c, project, err := d.client(ctx)
	if err != nil {
		return err
	}
	s, err := d.get(ctx, c, project, region, name)
	if err != nil {
		return err
	}
	if s.Labels[spec.OwnershipTagKey] != owner {
		return nil
	}
	l := map[string]string{}
	for k, v := range s.Labels {
		if k != spec.OwnershipTagKey {
			l[k] = v
		}
	}
	_, err = c.UpdateSecret(ctx, &secretmanagerpb.UpdateSecretRequest{Secret: &secretmanagerpb.Secret{Name: s.Name, Etag: s.Etag, Labels: l},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"labels"}}})
	return err
}

package scaleway

import (
	"context"

	secret "github.com/scaleway/scaleway-sdk-go/api/secret/v1beta1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// secrets is the secrets kind: a Secret Manager secret (type opaque, path
// "/") holding one enabled version per value written, owned through its
// tags. Deleting a secret is a soft delete: it still reads "ready", with
// deletion_requested_at set, so such a secret is gone for infra.
type secrets struct {
	b   *Backend
	api *secret.API
}

var (
	_ providers.Driver       = (*secrets)(nil)
	_ providers.SecretReader = (*secrets)(nil)
	_ providers.Releaser     = (*secrets)(nil)
)

func init() {
	register(entry{kind: spec.Secrets, new: func(b *Backend) providers.Driver { return &secrets{b: b, api: secret.NewAPI(b.client)} }})
}

func (d *secrets) all(ctx context.Context, region string, name *string) ([]*secret.Secret, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, err
	}
	ss, err := allPages(ctx, spec.Secrets, region, func(page int32) ([]*secret.Secret, uint64, error) {
		out, err := d.api.ListSecrets(&secret.ListSecretsRequest{Region: scw.Region(region), ProjectID: &project, Name: name,
			Path: ptr("/"), ScheduledForDeletion: false, Page: &page, PageSize: &d.b.opts.PageSize,
			OrderBy: secret.ListSecretsRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Secrets, out.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	var live []*secret.Secret
	for _, s := range ss {
		if s.DeletionRequestedAt == nil {
			live = append(live, s)
		}
	}
	return live, nil
}

func (d *secrets) find(ctx context.Context, region, name string) (*secret.Secret, error) {
	ss, err := d.all(ctx, region, &name)
	if err != nil {
		return nil, err
	}
	return byName(spec.Secrets, region, name, ss, func(s *secret.Secret) string { return s.Name })
}

func secretResource(region string, s *secret.Secret) providers.Resource {
	tags, owner := readTags(s.Tags)
	r := providers.Resource{Name: s.Name, Region: region, Owner: owner, Complete: true,
		Fields:     map[string]any{spec.TagsField: tags, "description": deref(s.Description)},
		Attributes: map[string]string{"id": s.ID}}
	if s.VersionCount > 0 {
		r.Attributes["version"] = "latest"
	}
	if s.CreatedAt != nil {
		r.Created = *s.CreatedAt
	}
	return r
}

func (d *secrets) List(ctx context.Context, region string) ([]providers.Resource, error) {
	ss, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	var out []providers.Resource
	for _, s := range ss {
		out = append(out, secretResource(region, s))
	}
	return out, nil
}

func (d *secrets) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	s, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return secretResource(region, s), nil
}

func secretValue(decl providers.SecretsInput) ([]byte, error) {
	if !decl.HasValue() {
		return nil, providers.Errorf(providers.InvalidArgument, "secrets: the value is missing, want a secret")
	}
	return []byte(decl.Value.Reveal()), nil
}

func (d *secrets) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return providers.Resource{}, err
	}
	decl, err := providers.DecodeSecrets(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	value, err := secretValue(decl)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := tagList(t)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &secret.CreateSecretRequest{Region: scw.Region(t.Region), ProjectID: project, Name: t.Name, Tags: tags,
		Type: secret.SecretTypeOpaque, Path: ptr("/")}
	if decl.HasDescription() {
		req.Description = &decl.Description
	}
	s, err := d.api.CreateSecret(req, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if _, err := d.api.CreateSecretVersion(&secret.CreateSecretVersionRequest{Region: scw.Region(t.Region), SecretID: s.ID,
		Data: value}, scw.WithContext(ctx)); err != nil {
		// A secret without a value is worth nothing: take it back, so
		// that the retry creates it whole.
		_ = d.api.DeleteSecret(&secret.DeleteSecretRequest{Region: scw.Region(t.Region), SecretID: s.ID}, scw.WithContext(ctx))
		return providers.Resource{}, err
	}
	s.VersionCount = 1
	return secretResource(t.Region, s), nil
}

func (d *secrets) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	s, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	req := &secret.UpdateSecretRequest{Region: scw.Region(t.Region), SecretID: s.ID}
	patch := false
	decl, err := providers.DecodeSecrets(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, f := range changed {
		switch f {
		case providers.SecretsValue:
			value, err := secretValue(decl)
			if err != nil {
				return providers.Resource{}, err
			}
			// The previous version is disabled: one value is current.
			if _, err := d.api.CreateSecretVersion(&secret.CreateSecretVersionRequest{Region: scw.Region(t.Region), SecretID: s.ID,
				Data: value, DisablePrevious: ptr(true)}, scw.WithContext(ctx)); err != nil {
				return providers.Resource{}, err
			}
		case providers.SecretsDescription:
			req.Description, patch = &decl.Description, true
		case spec.TagsField:
			tags, err := tagList(t)
			if err != nil {
				return providers.Resource{}, err
			}
			req.Tags, patch = &tags, true
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "secrets: field %q cannot be updated in place", f)
		}
	}
	if patch {
		if s, err = d.api.UpdateSecret(req, scw.WithContext(ctx)); err != nil {
			return providers.Resource{}, err
		}
	}
	return secretResource(t.Region, s), nil
}

func (d *secrets) Delete(ctx context.Context, t providers.Target) error {
	s, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	return d.api.DeleteSecret(&secret.DeleteSecretRequest{Region: scw.Region(t.Region), SecretID: s.ID}, scw.WithContext(ctx))
}

// ReadSecretValue reads the latest enabled version.
func (d *secrets) ReadSecretValue(ctx context.Context, region, name string) (spec.Sensitive, error) {
	s, err := d.find(ctx, region, name)
	if err != nil {
		return spec.Sensitive{}, err
	}
	v, err := d.api.AccessSecretVersion(&secret.AccessSecretVersionRequest{Region: scw.Region(region), SecretID: s.ID,
		Revision: "latest_enabled"}, scw.WithContext(ctx))
	if err != nil {
		return spec.Sensitive{}, err
	}
	return spec.NewSensitive(string(v.Data)), nil
}

func (d *secrets) Release(ctx context.Context, region, name, owner string) error {
	s, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	tags, found := withoutOwner(s.Tags, owner)
	if !found {
		return nil
	}
	_, err = d.api.UpdateSecret(&secret.UpdateSecretRequest{Region: scw.Region(region), SecretID: s.ID, Tags: &tags}, scw.WithContext(ctx))
	return err
}

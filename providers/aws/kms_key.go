package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// kmsKeys is the kms-key kind: a customer managed KMS key, named by its
// Name tag, as EC2 instances are. A key has only an id; an alias is a
// resource of its own, of which a key may have none or many, so it cannot
// be the key's name. A key pending deletion is absent: KMS deletes it at
// the end of its waiting period, and nothing infra does can use it.
type kmsKeys struct {
	clients *regional[*kms.Client]
	// pageSize is ListKeys' Limit (1 to 1,000); zero leaves KMS's 100.
	pageSize int32
}

var (
	_ providers.Driver   = (*kmsKeys)(nil)
	_ providers.Releaser = (*kmsKeys)(nil)
)

// kmsNameTag is the tag whose value is a key's name.
const kmsNameTag = "Name"

func init() {
	register(entry{
		kind: spec.KMSKey, service: "kms",
		actions: []string{"kms:ListKeys", "kms:ListResourceTags", "kms:DescribeKey", "kms:GetKeyRotationStatus", "kms:CreateKey",
			"kms:TagResource", "kms:UntagResource", "kms:UpdateKeyDescription", "kms:EnableKeyRotation", "kms:DisableKeyRotation",
			"kms:ScheduleKeyDeletion"},
		scopes: map[string][]ActionScope{
			"kms:ListKeys":             {{Scope: ScopeAny}},
			"kms:ListResourceTags":     {{Scope: ScopeAny}},
			"kms:DescribeKey":          {{Scope: ScopeAny}},
			"kms:GetKeyRotationStatus": {{Scope: ScopeAny}},
			// CreateKey's Tags need kms:TagResource too (the SDK's
			// documentation of CreateKey): the tagging scope's adoption
			// statement allows it on the untagged key being made.
			"kms:CreateKey":            {{Scope: ScopeCreate}},
			"kms:TagResource":          {{Scope: ScopeTagging}},
			"kms:UntagResource":        {{Scope: ScopeOwned}},
			"kms:UpdateKeyDescription": {{Scope: ScopeOwned}},
			"kms:EnableKeyRotation":    {{Scope: ScopeOwned}},
			"kms:DisableKeyRotation":   {{Scope: ScopeOwned}},
			"kms:ScheduleKeyDeletion":  {{Scope: ScopeOwned}},
		},
		arnFormat: "arn:{partition}:kms:{region}:{account}:key/{id}",
		sweep:     &SweepTarget{NameTag: kmsNameTag, Why: "a key's ARN holds its id; its name is its Name tag"},
		// The Tagging API returns keys as key/ID with their tags; a key
		// without a Name tag is not one infra can name.
		arn: func(resource string, tags map[string]string) (string, string, bool) {
			id, ok := strings.CutPrefix(resource, "key/")
			return tags[kmsNameTag], "", ok && id != "" && tags[kmsNameTag] != ""
		},
		errors: map[string]providers.Code{
			"NotFoundException": providers.NotFound,
			// A key pending deletion, or disabled, refuses most calls.
			"KMSInvalidStateException": providers.Conflict, "DisabledException": providers.Conflict,
			"LimitExceededException": providers.Conflict,
			"TagException":           providers.InvalidArgument, "InvalidArnException": providers.InvalidArgument,
			"UnsupportedOperationException": providers.InvalidArgument,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			return &kmsKeys{clients: newKMSClients(cfg)}
		},
	})
}

func newKMSClients(cfg aws.Config) *regional[*kms.Client] {
	return newRegional(cfg, func(c aws.Config) *kms.Client { return kms.NewFromConfig(c) })
}

// kmsDeletionWindow is ScheduleKeyDeletion's PendingWindowInDays: 7 to
// 30, 30 when not given (the SDK's documentation of the field).
const (
	kmsMinWindow     = 7
	kmsMaxWindow     = 30
	kmsDefaultWindow = 30
)

// keyTarget decodes a target and refuses, before any call, what CreateKey
// and EnableKeyRotation would refuse.
func keyTarget(t providers.Target) (providers.KmsKeyInput, error) {
	in, err := providers.DecodeKmsKey(t.Fields)
	refuse := func(format string, args ...any) (providers.KmsKeyInput, error) {
		return in, providers.Errorf(providers.InvalidArgument, "aws/kms-key: %s: "+format, append([]any{t.Name}, args...)...)
	}
	if err != nil {
		return refuse("%v", err)
	}
	usage, keySpec := kmstypes.KeyUsageType(in.KeyUsage), kmstypes.KeySpec(in.KeySpec)
	if usage == "" {
		usage = kmstypes.KeyUsageTypeEncryptDecrypt
	}
	if keySpec == "" {
		keySpec = kmstypes.KeySpecSymmetricDefault
	}
	if !slices.Contains(usage.Values(), usage) {
		return refuse("keyUsage is %q; KMS takes %s", in.KeyUsage, joinQuoted(usage.Values()))
	}
	if !slices.Contains(keySpec.Values(), keySpec) {
		return refuse("keySpec is %q; KMS takes %s", in.KeySpec, joinQuoted(keySpec.Values()))
	}
	switch {
	case keySpec == kmstypes.KeySpecSymmetricDefault && usage != kmstypes.KeyUsageTypeEncryptDecrypt:
		return refuse("keySpec SYMMETRIC_DEFAULT is for keyUsage ENCRYPT_DECRYPT only, not %s", usage)
	case strings.HasPrefix(string(keySpec), "HMAC_") != (usage == kmstypes.KeyUsageTypeGenerateVerifyMac):
		return refuse("keyUsage GENERATE_VERIFY_MAC goes with an HMAC_ keySpec and only with one, not %s with %s", usage, keySpec)
	case in.EnableKeyRotation && keySpec != kmstypes.KeySpecSymmetricDefault:
		return refuse("enableKeyRotation is for symmetric encryption keys (keySpec SYMMETRIC_DEFAULT) only; KMS cannot rotate a %s key", keySpec)
	}
	if in.HasDeletionWindowDays() && (in.DeletionWindowDays < kmsMinWindow || in.DeletionWindowDays > kmsMaxWindow ||
		in.DeletionWindowDays != float64(int(in.DeletionWindowDays))) {
		return refuse("deletionWindowDays is %v; KMS waits 7 to 30 whole days before it deletes a key", in.DeletionWindowDays)
	}
	in.KeyUsage, in.KeySpec = string(usage), string(keySpec)
	return in, nil
}

func joinQuoted[T ~string](vs []T) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = `"` + string(v) + `"`
	}
	return strings.Join(out, ", ")
}

// keyTags is the tag set of a key: the user's, the ownership tag, and
// Name, which is the key's name and so not a user tag.
func keyTags(t providers.Target) (map[string]string, error) {
	tags, err := desiredTags(t)
	if err != nil {
		return nil, err
	}
	if v, ok := tags[kmsNameTag]; ok && v != t.Name {
		return nil, providers.Errorf(providers.InvalidArgument, "aws/kms-key: %s: the Name tag is the key's name; remove it from tags", t.Name)
	}
	// A KMS tag value is at most 256 characters.
	if len(t.Name) == 0 || len(t.Name) > 256 {
		return nil, providers.Errorf(providers.InvalidArgument, "aws/kms-key: %s: a key's name is 1 to 256 characters (it is the Name tag)", t.Name)
	}
	tags[kmsNameTag] = t.Name
	return tags, nil
}

func kmsTags(m map[string]string) []kmstypes.Tag {
	return tagList(m, func(k, v *string) kmstypes.Tag { return kmstypes.Tag{TagKey: k, TagValue: v} })
}

// keyTagsOf reads every tag of a key.
func keyTagsOf(ctx context.Context, c *kms.Client, region, id string) (map[string]string, error) {
	tags := map[string]string{}
	p := kms.NewListResourceTagsPaginator(c, &kms.ListResourceTagsInput{KeyId: aws.String(id)})
	err := eachPage(ctx, p, spec.KMSKey, region, func(page *kms.ListResourceTagsOutput) error {
		for _, tg := range page.Tags {
			tags[aws.ToString(tg.TagKey)] = aws.ToString(tg.TagValue)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/kms-key: key %s: ListResourceTags: %w", id, err)
	}
	return tags, nil
}

// live says whether a key exists for infra: a customer managed key not
// pending deletion. AWS managed keys are AWS's.
func live(m *kmstypes.KeyMetadata) bool {
	return m.KeyManager == kmstypes.KeyManagerTypeCustomer &&
		m.KeyState != kmstypes.KeyStatePendingDeletion && m.KeyState != kmstypes.KeyStatePendingReplicaDeletion
}

// describeKey reads a key whole: its metadata, tags and rotation status.
// A key that is not live is not found.
func (d *kmsKeys) describeKey(ctx context.Context, c *kms.Client, region, id string, tags map[string]string) (providers.Resource, error) {
	out, err := c.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(id)})
	if err != nil {
		return providers.Resource{}, fmt.Errorf("aws/kms-key: key %s: DescribeKey: %w", id, err)
	}
	m := out.KeyMetadata
	if !live(m) {
		return providers.Resource{}, providers.Errorf(providers.NotFound, "aws/kms-key: key %s is %s", id, m.KeyState)
	}
	if tags == nil {
		if tags, err = keyTagsOf(ctx, c, region, id); err != nil {
			return providers.Resource{}, err
		}
	}
	rotation := false
	// Only a symmetric encryption key with KMS's own material rotates;
	// the status of any other is false.
	if m.KeySpec == kmstypes.KeySpecSymmetricDefault && m.Origin == kmstypes.OriginTypeAwsKms {
		st, err := c.GetKeyRotationStatus(ctx, &kms.GetKeyRotationStatusInput{KeyId: aws.String(id)})
		if err != nil {
			return providers.Resource{}, fmt.Errorf("aws/kms-key: %s: GetKeyRotationStatus: %w", tags[kmsNameTag], err)
		}
		rotation = st.KeyRotationEnabled
	}
	user := reportedTags(tags)
	delete(user, kmsNameTag)
	res := providers.Resource{Name: tags[kmsNameTag], Region: region, Owner: tags[spec.OwnershipTagKey], Complete: true,
		Fields: map[string]any{
			providers.KmsKeyDescription: aws.ToString(m.Description), providers.KmsKeyKeyUsage: string(m.KeyUsage),
			providers.KmsKeyKeySpec: string(m.KeySpec), providers.KmsKeyEnableKeyRotation: rotation, spec.TagsField: user,
		},
		Attributes: map[string]string{"arn": aws.ToString(m.Arn), "keyId": aws.ToString(m.KeyId)}}
	if m.CreationDate != nil {
		res.Created = *m.CreationDate
	}
	if m.Origin != kmstypes.OriginTypeAwsKms {
		res.Unmodelled = append(res.Unmodelled, "Origin="+string(m.Origin))
	}
	if aws.ToBool(m.MultiRegion) {
		res.Unmodelled = append(res.Unmodelled, "MultiRegion=true")
	}
	if m.KeyState != kmstypes.KeyStateEnabled {
		res.Unmodelled = append(res.Unmodelled, "KeyState="+string(m.KeyState))
	}
	return res, nil
}

// List lists the live keys that have a Name tag, each read whole: one
// ListResourceTags per key of the account, and a DescribeKey and a
// GetKeyRotationStatus per named one. A key whose key policy denies these
// reads fails the listing rather than go missing from it.
func (d *kmsKeys) List(ctx context.Context, region string) ([]providers.Resource, error) {
	c := d.clients.get(region)
	var ids []string
	in := &kms.ListKeysInput{}
	if d.pageSize > 0 {
		in.Limit = aws.Int32(d.pageSize)
	}
	err := eachPage(ctx, kms.NewListKeysPaginator(c, in), spec.KMSKey, region, func(page *kms.ListKeysOutput) error {
		for _, k := range page.Keys {
			ids = append(ids, aws.ToString(k.KeyId))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/kms-key: ListKeys in %s: %w", region, err)
	}
	var out []providers.Resource
	for _, id := range ids {
		tags, err := keyTagsOf(ctx, c, region, id)
		if errorCode(err) == providers.NotFound {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		if tags[kmsNameTag] == "" || strings.Contains(tags[kmsNameTag], "/") {
			// No name infra could give it, nor read back from an address.
			continue
		}
		res, err := d.describeKey(ctx, c, region, id, tags)
		if errorCode(err) == providers.NotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// find is the live key named name; two are a conflict infra does not
// guess about.
func (d *kmsKeys) find(ctx context.Context, region, name string) (providers.Resource, error) {
	all, err := d.List(ctx, region)
	if err != nil {
		return providers.Resource{}, err
	}
	// Picking one would let the other be changed or deleted by mistake.
	return theOne(spec.KMSKey, region, name, all, func(r providers.Resource) named {
		return named{id: r.Attributes["keyId"], tags: map[string]string{"Name": r.Name}}
	})
}

func (d *kmsKeys) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	return d.find(ctx, region, name)
}

// keyID is the key's id: the one the engine observed, else the listing's.
func (d *kmsKeys) keyID(ctx context.Context, t providers.Target) (string, error) {
	if id := t.Attributes["keyId"]; id != "" {
		return id, nil
	}
	res, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return "", err
	}
	return res.Attributes["keyId"], nil
}

// readByID reads the key made or changed under name.
func (d *kmsKeys) readByID(ctx context.Context, c *kms.Client, region, name, id string) (providers.Resource, error) {
	res, err := d.describeKey(ctx, c, region, id, nil)
	if err != nil {
		return providers.Resource{}, err
	}
	if res.Name != name {
		return providers.Resource{}, fmt.Errorf("aws/kms-key: %s: key %s has the Name tag %q", name, id, res.Name)
	}
	return res, nil
}

func (d *kmsKeys) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	in, err := keyTarget(t)
	if err != nil {
		return providers.Resource{}, err
	}
	tags, err := keyTags(t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	// The Name and ownership tags go with the create, so a key never
	// exists unnamed or unowned. No Policy: the default key policy lets the
	// account's IAM policies, and so the executor's, govern the key.
	// CreateKey takes no client token: a resend of a create whose answer
	// was lost makes a second key of the name.
	out, err := c.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String(in.Description), KeyUsage: kmstypes.KeyUsageType(in.KeyUsage),
		KeySpec: kmstypes.KeySpec(in.KeySpec), Tags: kmsTags(tags)}, kmsNoBlindResend)
	var id string
	if err == nil {
		id = aws.ToString(out.KeyMetadata.KeyId)
	} else {
		found, ferr := madeDespite(err, t.Owner, func() (providers.Resource, string, error) {
			res, err := d.find(ctx, t.Region, t.Name)
			return res, res.Owner, err
		})
		if ferr != nil {
			return providers.Resource{}, fmt.Errorf("aws/kms-key: %s: CreateKey: %w", t.Name, ferr)
		}
		id = found.Attributes["keyId"]
	}
	if in.EnableKeyRotation {
		if err := d.rotate(ctx, c, t.Name, id, true); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.readByID(ctx, c, t.Region, t.Name, id)
}

func (d *kmsKeys) rotate(ctx context.Context, c *kms.Client, name, id string, on bool) error {
	if on {
		if _, err := c.EnableKeyRotation(ctx, &kms.EnableKeyRotationInput{KeyId: aws.String(id)}); err != nil {
			return fmt.Errorf("aws/kms-key: %s: EnableKeyRotation: %w", name, err)
		}
		return nil
	}
	if _, err := c.DisableKeyRotation(ctx, &kms.DisableKeyRotationInput{KeyId: aws.String(id)}); err != nil {
		return fmt.Errorf("aws/kms-key: %s: DisableKeyRotation: %w", name, err)
	}
	return nil
}

func (d *kmsKeys) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	in, err := keyTarget(t)
	if err != nil {
		return providers.Resource{}, err
	}
	id, err := d.keyID(ctx, t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	for _, f := range changed {
		switch f {
		case providers.KmsKeyDescription:
			if _, err = c.UpdateKeyDescription(ctx, &kms.UpdateKeyDescriptionInput{KeyId: aws.String(id), Description: aws.String(in.Description)}); err != nil {
				err = fmt.Errorf("aws/kms-key: %s: UpdateKeyDescription: %w", t.Name, err)
			}
		case providers.KmsKeyEnableKeyRotation:
			err = d.rotate(ctx, c, t.Name, id, in.EnableKeyRotation)
		case providers.KmsKeyTags:
			err = d.retag(ctx, c, t, id)
		case providers.KmsKeyDeletionWindowDays:
			// Only a delete reads it.
		default:
			err = providers.Errorf(providers.InvalidArgument, "aws/kms-key: %s: field %q cannot be updated in place", t.Name, f)
		}
		if err != nil {
			return providers.Resource{}, err
		}
	}
	return d.readByID(ctx, c, t.Region, t.Name, id)
}

func (d *kmsKeys) retag(ctx context.Context, c *kms.Client, t providers.Target, id string) error {
	have, err := keyTagsOf(ctx, c, t.Region, id)
	if err != nil {
		return err
	}
	want, err := keyTags(t)
	if err != nil {
		return err
	}
	set, remove := tagChanges(have, want, spec.OwnershipTagKey, kmsNameTag)
	if len(set) > 0 {
		if _, err := c.TagResource(ctx, &kms.TagResourceInput{KeyId: aws.String(id), Tags: kmsTags(set)}); err != nil {
			return fmt.Errorf("aws/kms-key: %s: TagResource: %w", t.Name, err)
		}
	}
	if len(remove) > 0 {
		if _, err := c.UntagResource(ctx, &kms.UntagResourceInput{KeyId: aws.String(id), TagKeys: remove}); err != nil {
			return fmt.Errorf("aws/kms-key: %s: UntagResource: %w", t.Name, err)
		}
	}
	return nil
}

// Delete schedules the key's deletion after its deletionWindowDays (30 for
// an orphan, whose declaration is gone, as KMS's own default): KMS never
// deletes a key at once. From then on the key reads as absent; until the
// window ends, CancelKeyDeletion brings it back (disabled).
func (d *kmsKeys) Delete(ctx context.Context, t providers.Target) error {
	window := int32(kmsDefaultWindow)
	if t.Fields != nil {
		in, err := keyTarget(t)
		if err != nil {
			return err
		}
		if in.HasDeletionWindowDays() {
			window = int32(in.DeletionWindowDays)
		}
	}
	id, err := d.keyID(ctx, t)
	if err != nil {
		return err
	}
	_, err = d.clients.get(t.Region).ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{KeyId: aws.String(id), PendingWindowInDays: aws.Int32(window)})
	if err != nil {
		return fmt.Errorf("aws/kms-key: %s: ScheduleKeyDeletion of %s in %d days: %w", t.Name, id, window, err)
	}
	return nil
}

// Release removes this fleet's ownership tag and keeps every other tag,
// Name too.
func (d *kmsKeys) Release(ctx context.Context, region, name, owner string) error {
	res, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	if res.Owner != owner {
		return nil
	}
	id := res.Attributes["keyId"]
	if _, err := d.clients.get(region).UntagResource(ctx, &kms.UntagResourceInput{KeyId: aws.String(id), TagKeys: []string{spec.OwnershipTagKey}}); err != nil {
		return fmt.Errorf("aws/kms-key: %s: UntagResource: %w", name, err)
	}
	return nil
}

package aws

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// kmsAliases is the kms-alias kind: a KMS alias, alias/NAME, naming one
// key. KMS aliases take no tags and have no description, so the ownership
// mark is the name prefix <fleet>- (spec's MarkNamePrefix): an alias is
// the fleet's when its name starts with it, and the driver makes no alias
// whose name does not.
type kmsAliases struct {
	clients *regional[*kms.Client]
	// keys finds a key by name where the engine has no id for it.
	keys *kmsKeys
	mu   sync.Mutex
	// fleet is the fleet the backend serves; without it no alias is
	// anyone's.
	fleet string
}

var (
	_ providers.Driver      = (*kmsAliases)(nil)
	_ providers.FleetScoped = (*kmsAliases)(nil)
)

// aliasPrefix is the part of every alias name that is not infra's name.
const aliasPrefix = "alias/"

// aliasName is what CreateAlias accepts after alias/ (letters, digits, '_'
// and '-', and '/', which an address's name cannot hold), up to 256
// characters in all.
var aliasName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,250}$`)

// whyAlias is why the alias half of an alias action is not conditioned on
// the ownership tag.
const whyAlias = "an alias takes no tags, so IAM sees no owner on it; the key it names must be the fleet's"

func init() {
	aliasScopes := []ActionScope{{Resource: "alias/*", Scope: ScopeAny, Why: whyAlias}, {Resource: "key/*", Scope: ScopeOwned}}
	register(entry{
		kind: spec.KMSAlias, service: "kms",
		actions: []string{"kms:ListAliases", "kms:ListKeys", "kms:ListResourceTags", "kms:DescribeKey", "kms:GetKeyRotationStatus",
			"kms:CreateAlias", "kms:UpdateAlias", "kms:DeleteAlias"},
		// CreateAlias, UpdateAlias and DeleteAlias need the action on the
		// alias and on each key involved (the SDK's documentation of
		// each); UpdateAlias on the key it leaves and the key it takes.
		scopes: map[string][]ActionScope{
			"kms:ListAliases": {{Scope: ScopeAny}},
			// The key's reads, to find the key by name.
			"kms:ListKeys": {{Scope: ScopeAny}}, "kms:ListResourceTags": {{Scope: ScopeAny}},
			"kms:DescribeKey": {{Scope: ScopeAny}}, "kms:GetKeyRotationStatus": {{Scope: ScopeAny}},
			"kms:CreateAlias": aliasScopes,
			"kms:UpdateAlias": aliasScopes,
			"kms:DeleteAlias": aliasScopes,
		},
		arnFormat: "arn:{partition}:kms:{region}:{account}:alias/{name}",
		// DeleteAlias is authorized on the alias and on its key: the alias
		// by the prefix, and any key, which the alias's half bounds.
		sweep: &SweepTarget{ARNs: []string{"arn:{partition}:kms:*:{account}:alias/{prefix}*", "arn:{partition}:kms:*:{account}:key/*"}},
		// The Tagging API returns no aliases (they take no tags); the
		// listing names the owner by the prefix.
		deepScan: true,
		errors: map[string]providers.Code{
			"NotFoundException": providers.NotFound, "AlreadyExistsException": providers.AlreadyExists,
			"InvalidAliasNameException": providers.InvalidArgument,
			"KMSInvalidStateException":  providers.Conflict, "LimitExceededException": providers.Conflict,
		},
		new: func(cfg aws.Config, _ accountOf) providers.Driver {
			clients := newKMSClients(cfg)
			return &kmsAliases{clients: clients, keys: &kmsKeys{clients: clients}}
		},
	})
}

// SetFleet names the fleet whose prefix marks its aliases.
func (d *kmsAliases) SetFleet(fleet string) {
	d.mu.Lock()
	d.fleet = fleet
	d.mu.Unlock()
}

// prefixOwner is fleet when name starts with fleet and '-' and goes on
// (ownership.OwnerFromPrefix, which providers may not import).
func prefixOwner(fleet, name string) string {
	if fleet != "" && len(name) > len(fleet)+1 && strings.HasPrefix(name, fleet+"-") {
		return fleet
	}
	return ""
}

func (d *kmsAliases) owner(name string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return prefixOwner(d.fleet, name)
}

// List lists the region's aliases but AWS's own (alias/aws/…) and those
// whose name holds a '/', which no address can hold. The listing carries
// everything a read reports.
func (d *kmsAliases) List(ctx context.Context, region string) ([]providers.Resource, error) {
	var out []providers.Resource
	p := kms.NewListAliasesPaginator(d.clients.get(region), &kms.ListAliasesInput{})
	err := eachPage(ctx, p, spec.KMSAlias, region, func(page *kms.ListAliasesOutput) error {
		for _, a := range page.Aliases {
			name, ok := strings.CutPrefix(aws.ToString(a.AliasName), aliasPrefix)
			if !ok || name == "" || strings.Contains(name, "/") {
				continue
			}
			res := providers.Resource{Name: name, Region: region, Owner: d.owner(name), Complete: true,
				Fields: map[string]any{}, Attributes: map[string]string{"arn": aws.ToString(a.AliasArn)}}
			// An alias made for a service before its key exists names none.
			if k := aws.ToString(a.TargetKeyId); k != "" {
				res.Fields[providers.KmsAliasKey] = k
			}
			if a.CreationDate != nil {
				res.Created = *a.CreationDate
			}
			out = append(out, res)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("aws/kms-alias: ListAliases in %s: %w", region, err)
	}
	return out, nil
}

// Read finds the alias in the listing: KMS reads an alias only through
// ListAliases.
func (d *kmsAliases) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	all, err := d.List(ctx, region)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, r := range all {
		if r.Name == name {
			return r, nil
		}
	}
	return providers.Resource{}, providers.Errorf(providers.NotFound, "aws/kms-alias: %s: no alias %s%s in %s", name, aliasPrefix, name, region)
}

// target decodes t and finds the id of the key it names: the one the
// engine observed or made, else the key driver's.
func (d *kmsAliases) target(ctx context.Context, t providers.Target) (string, error) {
	in, err := providers.DecodeKmsAlias(t.Fields)
	if err != nil {
		return "", providers.Errorf(providers.InvalidArgument, "aws/kms-alias: %s: %v", t.Name, err)
	}
	if in.Key == "" {
		return "", providers.Errorf(providers.InvalidArgument, "aws/kms-alias: %s: key is required", t.Name)
	}
	if id := t.Identities[spec.Address{Provider: spec.AWS, Kind: spec.KMSKey, Name: in.Key}]; id != "" {
		return id, nil
	}
	key, err := d.keys.find(ctx, t.Region, in.Key)
	if err != nil {
		return "", fmt.Errorf("aws/kms-alias: %s: the key: %w", t.Name, err)
	}
	return key.Attributes["keyId"], nil
}

func (d *kmsAliases) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	// Refused before any call: a name CreateAlias refuses, or one that
	// would not carry the mark.
	if !aliasName.MatchString(t.Name) {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument,
			"aws/kms-alias: %s: an alias name here is 1 to 250 of a-z, A-Z, 0-9, '_' and '-' (it becomes %s%s)", t.Name, aliasPrefix, t.Name)
	}
	if prefixOwner(t.Owner, t.Name) == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument,
			"aws/kms-alias: %s: KMS aliases take no tags, so the name is the ownership mark: it must start with %q", t.Name, t.Owner+"-")
	}
	id, err := d.target(ctx, t)
	if err != nil {
		return providers.Resource{}, err
	}
	c := d.clients.get(t.Region)
	if _, err := c.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String(aliasPrefix + t.Name), TargetKeyId: aws.String(id)}); err != nil {
		return providers.Resource{}, fmt.Errorf("aws/kms-alias: %s: CreateAlias: %w", t.Name, err)
	}
	return d.Read(ctx, t.Region, t.Name)
}

func (d *kmsAliases) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	for _, f := range changed {
		if f != providers.KmsAliasKey {
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "aws/kms-alias: %s: field %q cannot be updated in place", t.Name, f)
		}
		id, err := d.target(ctx, t)
		if err != nil {
			return providers.Resource{}, err
		}
		if _, err := d.clients.get(t.Region).UpdateAlias(ctx, &kms.UpdateAliasInput{AliasName: aws.String(aliasPrefix + t.Name), TargetKeyId: aws.String(id)}); err != nil {
			return providers.Resource{}, fmt.Errorf("aws/kms-alias: %s: UpdateAlias: %w", t.Name, err)
		}
	}
	return d.Read(ctx, t.Region, t.Name)
}

// Delete deletes the alias at once; the key it named is untouched.
func (d *kmsAliases) Delete(ctx context.Context, t providers.Target) error {
	if _, err := d.clients.get(t.Region).DeleteAlias(ctx, &kms.DeleteAliasInput{AliasName: aws.String(aliasPrefix + t.Name)}); err != nil {
		return fmt.Errorf("aws/kms-alias: %s: DeleteAlias: %w", t.Name, err)
	}
	return nil
}

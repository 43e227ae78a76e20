package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// entry is one kind's registration, as aws-nuke registers its resources:
// the kind's file says from init everything the backend, the tag scan and
// the executor's policy know of the kind. Adding a kind is its spec row,
// its file (driver and entry), its test and its docs section; nothing else
// in this package names kinds.
type entry struct {
	kind spec.Kind
	// service is the AWS service whose rate limits the kind's calls spend
	// (the engine bounds concurrent work per service). It is also the
	// service the Tagging API's ARNs of the kind name.
	service string
	// actions are the IAM actions the driver calls, and nothing else: the
	// executor's role is granted those of the kinds it manages. The one
	// exception is an action AWS authorizes on the caller for a call the
	// driver makes (ELB's iam:CreateServiceLinkedRole, for alb's create).
	actions []string
	// scopes are the executor scopes of the kind's own actions, kept in the
	// kind's file; an action shared with other kinds (ec2:CreateTags) may
	// stay in executorScopes. Two statements of one action that differ
	// stop the package at load.
	scopes map[string][]ActionScope
	// arnFormat is the ARN of a resource of the kind, with {partition},
	// {region}, {account} and {name} (or {id}, where the ARN holds an id
	// rather than the name): the conformance suite holds the ARN the cloud
	// reports to it, the sweep's name patterns come from it where it holds
	// {name}, and the policy tests take their sample resources from it.
	arnFormat string
	// sweep is how the sweep's role reaches the kind's debris, where the
	// arnFormat cannot say (the ARN holds an id: SweepTarget.NameTag).
	sweep *SweepTarget
	// elsewhere are the actions among actions that act on another kind's
	// resources, not on this kind's, with that kind (a policy's delete
	// detaches it from roles and users, which DetachRolePolicy authorizes
	// on the role): the sweep's statement on this kind's names leaves them
	// out, as they never match there, and ActsOn names the kind.
	elsewhere map[string]spec.Kind
	// arn names the resource behind the resource part of a Tagging API ARN
	// of service, or says it is not one of this kind's. A security group's
	// ARN holds its id (groupID), named by a describe. Nil: the scan never
	// reports the kind under its own name (s3-bucket's buckets come back as
	// object-store, their portable twin), or the API does not return it.
	arn func(resource string, tags map[string]string) (name, groupID string, ok bool)
	// deepScan: the Tagging API does not return the kind (IAM is global,
	// ECR is missing from it) and its listing carries no tags, so only a
	// deep scan finds its marks, with a read per resource.
	deepScan bool
	// errors are the error codes of the kind's own API; the codes every
	// service shares stay in errors.go.
	errors map[string]providers.Code
	new    factory
}

// factory makes one kind's driver from the SDK configuration and the
// account's id, which a driver asks for only when an API needs it.
type factory func(cfg aws.Config, account accountOf) providers.Driver

// accountOf returns the id of the account the credentials belong to.
type accountOf func(context.Context) (string, error)

// registry holds every kind's entry, filled by init functions before main.
var registry = map[spec.Kind]*entry{}

// register adds a kind's entry; each kind's file calls it from init. A
// kind registered twice, or an error code two entries classify
// differently, is a programming error caught the moment the package loads.
func register(e entry) {
	if _, dup := registry[e.kind]; dup {
		panic(fmt.Sprintf("aws: kind %s registered twice", e.kind))
	}
	for code, c := range e.errors {
		if prev, ok := errorCodes[code]; ok && prev != c {
			panic(fmt.Sprintf("aws: %s classifies %s as %v, already %v", e.kind, code, c, prev))
		}
		errorCodes[code] = c
	}
	for action, scopes := range e.scopes {
		if prev, ok := executorScopes[action]; ok && !slices.Equal(prev, scopes) {
			panic(fmt.Sprintf("aws: %s gives %s the scope %v, already %v", e.kind, action, scopes, prev))
		}
		executorScopes[action] = scopes
	}
	if e.sweep != nil {
		sweepTargets[e.kind] = *e.sweep
	} else if strings.Contains(e.arnFormat, "{name}") {
		// An id beside the name (a load balancer's) is any id.
		sweepTargets[e.kind] = SweepTarget{ARNs: []string{strings.NewReplacer("{region}", "*", "{name}", "{prefix}*", "{id}", "*").Replace(e.arnFormat)}}
	}
	registry[e.kind] = &e
}

// ActsOn is the kind whose resources action acts on when kind k's driver
// calls it: k, unless k's entry says another (iam-policy's DetachRolePolicy
// acts on an iam-role). A policy test samples the action on that kind's
// ARN.
func ActsOn(k spec.Kind, action string) spec.Kind {
	if e, ok := registry[k]; ok {
		if other, ok := e.elsewhere[action]; ok {
			return other
		}
	}
	return k
}

// Kinds lists the kinds this backend has drivers for, sorted.
func Kinds() []spec.Kind { return slices.Sorted(maps.Keys(registry)) }

// kindOfARN maps an ARN from the Tagging API to a kind and a name, asking
// each entry of the ARN's service. A security group comes back with its id,
// to be named by a describe.
func kindOfARN(arn string, tags map[string]string) (kind spec.Kind, name, groupID string, ok bool) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return "", "", "", false
	}
	service, resource := parts[2], parts[5]
	for _, k := range Kinds() {
		e := registry[k]
		if e.service != service || e.arn == nil {
			continue
		}
		if name, groupID, ok := e.arn(resource, tags); ok {
			return k, name, groupID, true
		}
	}
	return "", "", "", false
}

// kindsOutsideTagAPI are the kinds a deep scan lists and reads, sorted.
func kindsOutsideTagAPI() []spec.Kind {
	var out []spec.Kind
	for _, k := range Kinds() {
		if registry[k].deepScan {
			out = append(out, k)
		}
	}
	return out
}

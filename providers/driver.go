// Package providers holds the small interfaces every cloud driver
// implements, and the error codes the engine understands. Drivers know
// clouds, never plans: the engine decides, a driver carries out one call.
package providers

import (
	"context"
	"time"

	"github.com/infra-iac/infra/spec"
)

// Driver manages one kind on one provider. Its methods are synchronous: the
// engine owns concurrency. Errors are the cloud SDK's own; the backend's
// ErrorCode classifies them, and the engine wraps each once with the
// address and the operation.
type Driver interface {
	// List returns every resource of the kind in region, reading every page.
	// Past a page budget it fails; it never returns a prefix of the truth.
	List(ctx context.Context, region string) ([]Resource, error)
	// Read returns one resource. A resource that does not exist is an error
	// whose code is NotFound.
	Read(ctx context.Context, region, name string) (Resource, error)
	// Create makes the resource, writing the ownership mark for t.Owner.
	Create(ctx context.Context, t Target) (Resource, error)
	// Update changes the named mutable fields in place, keeping the
	// ownership mark.
	Update(ctx context.Context, t Target, changed []string) (Resource, error)
	// Delete removes the resource. t.Fields is nil for an orphan, whose
	// declaration is gone. An error whose code is NotFound means the
	// resource itself is gone, and counts as deleted: a driver must not
	// return the NotFound of a call about something else (a policy it
	// detaches, a rule it revokes) as it is.
	Delete(ctx context.Context, t Target) error
}

// Resource is what a driver reports about one resource.
type Resource struct {
	Name   string
	Region string
	// Fields holds the configuration the cloud reports, under the spec's
	// field names, as JSON-like values: string, float64, bool, []any,
	// map[string]any. A field the driver cannot report is absent, and an
	// absent field is never drift. A reference field reports the referenced
	// resource's name. Tags include the ownership tag; the engine strips it
	// before comparing.
	Fields map[string]any
	// Attributes are the values expressions may read: endpoint, arn, url.
	Attributes map[string]string
	// Owner is the fleet named by the resource's ownership mark (tag,
	// description or name prefix); empty when it carries none.
	Owner string
	// Created is when the cloud says it was created; zero when unknown.
	Created time.Time
	// Complete is set by List when the listing already carries everything
	// Read would report, so the engine need not read it again.
	Complete bool
	// Unmodelled names settings the cloud reported that no spec field
	// holds, each at other than its default, as "Name=value": never
	// compared, never changed, told by `infra import` so that a reader
	// knows what the declaration leaves as it is.
	Unmodelled []string
	// Caveat, set by a create, is a promise of infra's that the cloud
	// cannot keep for this resource, in a sentence a person should read:
	// a bucket on an S3-compatible endpoint that serves no bucket ABAC,
	// whose tags IAM then cannot see. The engine warns of it once a run
	// and records it in the ledger, so that later plans say it too.
	Caveat string
}

// OwningService names, in Resource.Unmodelled, the cloud service that
// manages the resource itself (an RDS-managed secret): it is that
// service's, and import never offers it.
const OwningService = "OwningService"

// Target is what the engine asks a driver to make true.
type Target struct {
	Name   string
	Region string
	// Fields are resolved: expressions evaluated, references replaced by the
	// referenced resource's name, defaults filled at create. A secret is a
	// spec.Sensitive.
	Fields map[string]any
	// Owner is the fleet whose ownership mark the driver writes.
	Owner string
	// Attributes are what the engine observed of the resource, for a
	// delete (a queue's URL), so that the driver need not look it up
	// again; nil when nothing was observed.
	Attributes map[string]string
	// Identities holds the identity (a security group's groupId) of each
	// resource the fields refer to, as this run observed or made it, so
	// that a driver need not look the reference up by name; a reference
	// missing here is looked up.
	Identities map[spec.Address]string
}

// Backend is one provider's set of drivers.
type Backend interface {
	Provider() spec.Provider
	// Driver returns the driver for kind k, or false if the backend does not
	// manage it.
	Driver(k spec.Kind) (Driver, bool)
	// ErrorCode classifies an error returned by one of the drivers.
	ErrorCode(err error) Code
	// Account returns the account the credentials belong to (AWS account
	// id, Scaleway project id). An identity that cannot be established is an
	// error, never a pass.
	Account(ctx context.Context) (string, error)
}

// SecretReader is implemented by a secrets driver that can read a stored
// value. The engine uses it only to settle a composed secret at apply time
// when the source value is not in the environment; the value is never
// stored.
type SecretReader interface {
	ReadSecretValue(ctx context.Context, region, name string) (spec.Sensitive, error)
}

// Releaser is implemented by a driver that can remove this fleet's
// ownership mark while keeping every other tag (forget).
type Releaser interface {
	Release(ctx context.Context, region, name, owner string) error
}

// Owned is a resource that carries an ownership mark, as a tag scan finds
// it.
type Owned struct {
	Kind   spec.Kind
	Name   string
	Region string
	// Owner is the fleet the mark names.
	Owner string
	// Tags are every tag the scan saw on the resource, when the scan
	// carries them (nil otherwise), so that observing it need not read
	// them again.
	Tags map[string]string
}

// Discoverer is implemented by a backend that can list, per region, every
// resource carrying an ownership mark, of every kind it manages, in few
// calls (AWS: the Resource Groups Tagging API). A tag scan may return
// resources that once existed; the engine reads each before believing it.
//
// deep asks for the kinds no cheap scan covers too, at one read per
// resource in the account (AWS: IAM users and ECR repositories, whose
// listings carry no tags). Every plan scans shallow; discover scans deep.
type Discoverer interface {
	Owned(ctx context.Context, region string, deep bool) ([]Owned, error)
}

// ListingDiscoverer is implemented by a Discoverer whose scan is its
// kinds' own listings, for want of a tag-scan API (Scaleway, GCP). With
// what they found marked, it returns the listings themselves, each
// complete, so that observing the same kind in the same region in the
// same run takes them instead of listing again.
type ListingDiscoverer interface {
	Discoverer
	OwnedListed(ctx context.Context, region string, deep bool) ([]Owned, []Listed, error)
}

// Listed is one kind's listing in one region, as Driver.List returned it.
type Listed struct {
	Kind      spec.Kind
	Region    string
	Resources []Resource
}

// MarkedIn is what listings found marked, as a scan reports it: each
// listed resource whose mark names an owner, with its tags when tags (may
// be nil) says what they are.
func MarkedIn(listed []Listed, tags func(Resource) map[string]string) []Owned {
	var out []Owned
	for _, l := range listed {
		for _, r := range l.Resources {
			if r.Owner == "" {
				continue
			}
			o := Owned{Kind: l.Kind, Name: r.Name, Region: l.Region, Owner: r.Owner}
			if tags != nil {
				o.Tags = tags(r)
			}
			out = append(out, o)
		}
	}
	return out
}

// ListedReader is implemented by a driver that can finish a listed
// resource in fewer calls than Read, from what its listing already said (a
// queue's URL, a repository's settings and ARN). The engine calls it, in the
// same run as the listing, for a resource the listing did not fully answer.
// tags, when not nil, are every tag of the resource as this run's tag scan
// returned them (Owned.Tags): the driver reports them instead of reading
// them again. A resource gone since the listing is an error whose code is
// NotFound, as with Read.
type ListedReader interface {
	ReadListed(ctx context.Context, listed Resource, tags map[string]string) (Resource, error)
}

// ListerFrom is implemented by a driver whose listing starts from another
// kind's listing: a Route 53 record's from the zones, a listener's from
// the load balancers. When the engine lists both kinds in one region, it
// lists that kind first and hands its listing over, so the calls it made
// are not made again.
type ListerFrom interface {
	// ListsFrom is the kind whose listing this kind's starts from.
	ListsFrom() spec.Kind
	// ListFrom reports what List reports, given base, that kind's
	// listing in region, which it must not change. ok is false when
	// base cannot serve (a resource it reports without what the listing
	// needs); then the engine calls List.
	ListFrom(ctx context.Context, region string, base []Resource) (rs []Resource, ok bool, err error)
}

// Services is implemented by a backend whose kinds share a service's rate
// limits (EC2 serves both security groups and instances): the engine then
// bounds concurrent work per service, not only overall. A kind it does not
// name is its own service.
type Services interface {
	Service(k spec.Kind) string
}

// FleetScoped is implemented by a backend that must know the fleet it
// serves to read ownership: where a product has neither tags nor a
// description, the name prefix <fleet>- is the mark (Scaleway queues and
// Serverless SQL databases). The engine sets it before anything is read.
type FleetScoped interface {
	SetFleet(fleet string)
}

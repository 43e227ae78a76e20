package providers

import (
	"context"
	"errors"
	"fmt"

	"github.com/infra-iac/infra/spec"
)

// Resources is one kind's resources on one provider: the portable type over
// a Driver, as gocloud's blob.Bucket is over driver.Bucket. The engine and
// the sweep call drivers only through it, so that every call is written
// once: its error wrapped with the address, the operation and the code; a
// resource reported without a region given the one it was asked in; and
// not found an answer (found=false, or a delete already done), never an
// error to test for at each call site.
type Resources struct {
	provider spec.Provider
	kind     spec.Kind
	backend  Backend
	driver   Driver
}

// ResourcesOf returns backend b's resources of kind k, or false when b has
// no driver for k.
func ResourcesOf(b Backend, k spec.Kind) (*Resources, bool) {
	d, ok := b.Driver(k)
	if !ok {
		return nil, false
	}
	return &Resources{provider: b.Provider(), kind: k, backend: b, driver: d}, true
}

// CallError is a driver call that failed: "aws/queues/jobs: update:
// throttled: …", or for a listing "aws/queues in eu-west-3: list: …".
// errors.As still reaches the cloud SDK's error.
type CallError struct {
	// Address names the resource; its Name is empty for a listing.
	Address spec.Address
	Region  string
	Op      string
	Code    Code
	Err     error
}

func (e *CallError) Error() string {
	where := e.Address.String()
	if e.Address.Name == "" {
		where = fmt.Sprintf("%s/%s in %s", e.Address.Provider, e.Address.Kind, e.Region)
	}
	if e.Code == Unknown {
		return fmt.Sprintf("%s: %s: %v", where, e.Op, e.Err)
	}
	return fmt.Sprintf("%s: %s: %s: %v", where, e.Op, e.Code, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// CallCode returns the code of the *CallError in err's chain, or Unknown.
func CallCode(err error) Code {
	var c *CallError
	if errors.As(err, &c) {
		return c.Code
	}
	return Unknown
}

func (r *Resources) fail(name, region, op string, err error) error {
	return &CallError{Address: spec.Address{Provider: r.provider, Kind: r.kind, Name: name}, Region: region,
		Op: op, Code: CodeOf(r.backend, err), Err: err}
}

func (r *Resources) notFound(err error) bool { return CodeOf(r.backend, err) == NotFound }

func inRegion(res Resource, region string) Resource {
	if res.Region == "" {
		res.Region = region
	}
	return res
}

// List returns every resource of the kind in region (see Driver.List).
func (r *Resources) List(ctx context.Context, region string) ([]Resource, error) {
	rs, err := r.driver.List(ctx, region)
	if err != nil {
		return nil, r.fail("", region, "list", err)
	}
	return InRegion(rs, region), nil
}

// InRegion places a listing's resources that name no region in the region
// it was made in, as List does: for a listing a scan made
// (ListingDiscoverer).
func InRegion(rs []Resource, region string) []Resource {
	for i := range rs {
		rs[i] = inRegion(rs[i], region)
	}
	return rs
}

// ListsFrom is the kind whose listing this kind's starts from, when the
// driver can start from one (ListerFrom).
func (r *Resources) ListsFrom() (spec.Kind, bool) {
	lf, ok := r.driver.(ListerFrom)
	if !ok {
		return "", false
	}
	return lf.ListsFrom(), true
}

// ListFrom lists as List does, starting from base, the listing of the
// kind ListsFrom names in region; a driver base cannot serve lists anew.
func (r *Resources) ListFrom(ctx context.Context, region string, base []Resource) ([]Resource, error) {
	lf, ok := r.driver.(ListerFrom)
	if !ok {
		return r.List(ctx, region)
	}
	rs, ok, err := lf.ListFrom(ctx, region, base)
	switch {
	case err != nil:
		return nil, r.fail("", region, "list", err)
	case !ok:
		return r.List(ctx, region)
	}
	return InRegion(rs, region), nil
}

// Read returns the named resource, or found=false when it does not exist.
func (r *Resources) Read(ctx context.Context, region, name string) (res Resource, found bool, err error) {
	res, err = r.driver.Read(ctx, region, name)
	switch {
	case err == nil:
		return inRegion(res, region), true, nil
	case r.notFound(err):
		return Resource{}, false, nil
	}
	return Resource{}, false, r.fail(name, region, "read", err)
}

// ReadsListed reports whether the driver finishes a listed resource in
// fewer calls than a read, taking the tag scan's tags (ListedReader).
func (r *Resources) ReadsListed() bool {
	_, ok := r.driver.(ListedReader)
	return ok
}

// ReadListed finishes a resource its listing did not fully answer: from
// what the listing said and the tag scan's tags when the driver can, by a
// read otherwise. Gone since the listing is found=false.
func (r *Resources) ReadListed(ctx context.Context, listed Resource, tags map[string]string) (res Resource, found bool, err error) {
	lr, ok := r.driver.(ListedReader)
	if !ok {
		return r.Read(ctx, listed.Region, listed.Name)
	}
	res, err = lr.ReadListed(ctx, listed, tags)
	switch {
	case err == nil:
		return inRegion(res, listed.Region), true, nil
	case r.notFound(err):
		return Resource{}, false, nil
	}
	return Resource{}, false, r.fail(listed.Name, listed.Region, "read", err)
}

// Create makes the resource (see Driver.Create). An error keeps its code:
// AlreadyExists is the caller's to judge.
func (r *Resources) Create(ctx context.Context, t Target) (Resource, error) {
	res, err := r.driver.Create(ctx, t)
	if err != nil {
		return Resource{}, r.fail(t.Name, t.Region, "create", err)
	}
	return inRegion(res, t.Region), nil
}

// Update changes the named mutable fields (see Driver.Update).
func (r *Resources) Update(ctx context.Context, t Target, changed []string) (Resource, error) {
	res, err := r.driver.Update(ctx, t, changed)
	if err != nil {
		return Resource{}, r.fail(t.Name, t.Region, "update", err)
	}
	return inRegion(res, t.Region), nil
}

// Delete removes the resource; one that is already gone is deleted.
func (r *Resources) Delete(ctx context.Context, t Target) error {
	if err := r.driver.Delete(ctx, t); err != nil && !r.notFound(err) {
		return r.fail(t.Name, t.Region, "delete", err)
	}
	return nil
}

// Releases reports whether the driver can remove an ownership mark while
// keeping every other tag (Releaser).
func (r *Resources) Releases() bool {
	_, ok := r.driver.(Releaser)
	return ok
}

// Release removes owner's ownership mark; a resource already gone has
// none. A driver that cannot release fails with InvalidArgument.
func (r *Resources) Release(ctx context.Context, region, name, owner string) error {
	rel, ok := r.driver.(Releaser)
	if !ok {
		return r.fail(name, region, "release", Errorf(InvalidArgument, "the %s driver cannot remove the ownership mark", r.kind))
	}
	if err := rel.Release(ctx, region, name, owner); err != nil && !r.notFound(err) {
		return r.fail(name, region, "release", err)
	}
	return nil
}

// ReadsSecrets reports whether the driver can read a stored secret value
// back (SecretReader).
func (r *Resources) ReadsSecrets() bool {
	_, ok := r.driver.(SecretReader)
	return ok
}

// ReadSecretValue reads a stored secret value (see SecretReader).
func (r *Resources) ReadSecretValue(ctx context.Context, region, name string) (spec.Sensitive, error) {
	sr, ok := r.driver.(SecretReader)
	if !ok {
		return spec.Sensitive{}, r.fail(name, region, "read the value", Errorf(InvalidArgument, "the %s driver cannot read a value back", r.kind))
	}
	v, err := sr.ReadSecretValue(ctx, region, name)
	if err != nil {
		return spec.Sensitive{}, r.fail(name, region, "read the value", err)
	}
	return v, nil
}

package engine

import (
	"context"
	"fmt"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// confirmScannedTags reads again every declared resource whose tags came
// from the tag scan and differ from the declaration. The scan saves a tag
// read per resource, but it lags behind the cloud (seconds on AWS): right
// after an apply that changed tags it may still show the old ones. Tags
// that agree with the declaration are taken as they are; a difference is
// confirmed from the resource itself before it becomes an update, so a
// stale scan never proposes a change.
func (e *Engine) confirmScannedTags(ctx context.Context, m *spec.Model, w *world) error {
	res := &resolver{e: e, m: m, w: w, fleet: m.Fleet, pending: map[spec.Address]bool{}}
	wants := wantsOf(m)
	var jobs []job
	for _, a := range w.scanTaggedAddresses() {
		d, declared := m.Lookup(a)
		if !declared {
			continue
		}
		v, set := d.Fields[spec.TagsField]
		if !set {
			continue // undeclared tags are never drift
		}
		info, _ := spec.Lookup(a.Kind)
		var field spec.Field
		for _, f := range info.Fields {
			if f.Name == spec.TagsField {
				field = f
			}
		}
		obs, observed := w.get(a)
		if !observed || obs.Region == "" {
			// read marks only what it puts in w.m, with its region: a
			// read without one would be a bug, and on AWS a retry loop.
			return fmt.Errorf("%s: internal error: tags from the scan, but no observation in a region to confirm them by", a)
		}
		want, known := res.planValue(v)
		if known && spec.Equal(field, want, spec.WithoutOwnershipTag(obs.Fields[spec.TagsField])) {
			continue
		}
		a, region := a, obs.Region
		jobs = append(jobs, job{service: e.service(a.Provider, a.Kind), do: func(ctx context.Context) error {
			rs, err := e.resources(a)
			if err != nil {
				return err
			}
			r, found, err := rs.Read(providers.WithWant(providers.WithAddress(ctx, a), wants[a]), region, a.Name)
			if err != nil {
				return err
			}
			if !found {
				w.drop(a)
				return nil
			}
			w.set(a, r)
			w.readTags(a)
			return nil
		}})
	}
	return e.runBounded(ctx, jobs)
}

// scanTaggedAddresses lists, under the world's lock (the one the observer
// marks them under), the resources whose tags came from the scan.
func (w *world) scanTaggedAddresses() []spec.Address {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]spec.Address, 0, len(w.scanTagged))
	for a := range w.scanTagged {
		out = append(out, a)
	}
	return out
}

// readTags records that a's tags were read from the resource itself.
func (w *world) readTags(a spec.Address) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.scanTagged, a)
}

package gcp

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// entry is one kind's registration, made from init in the kind's file.
type entry struct {
	kind spec.Kind
	new  func(b *Backend) providers.Driver
}

// entries holds every kind's entry, filled by init functions before main.
var entries = map[spec.Kind]*entry{}

// register adds a kind's entry; a kind registered twice is a programming
// error, caught the moment the package loads.
func register(e entry) {
	if _, dup := entries[e.kind]; dup {
		panic(fmt.Sprintf("gcp: kind %s registered twice", e.kind))
	}
	entries[e.kind] = &e
}

// Kinds lists the kinds this backend has drivers for, sorted.
func Kinds() []spec.Kind { return slices.Sorted(maps.Keys(entries)) }

// listPageLimit bounds every listing: past it the driver fails rather than
// report a prefix of the truth.
const listPageLimit = 1000

// labels are the labels a target's resource carries: its user tags, and
// the ownership mark for t.Owner, which no user tag can replace.
func labels(t providers.Target) (map[string]string, error) {
	m, err := providers.FieldStringMap(t.Fields, spec.TagsField)
	if err != nil {
		return nil, err
	}
	delete(m, spec.OwnershipTagKey)
	if t.Owner != "" {
		m[spec.OwnershipTagKey] = t.Owner
	}
	return m, nil
}

// reported turns a resource's labels into the reported tags field, the
// mark included (the engine strips it), and the owner the mark names.
func reported(l map[string]string) (map[string]any, string) {
	out := make(map[string]any, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out, l[spec.OwnershipTagKey]
}

// lazy is a client a driver makes once, on first use; Backend.Close
// closes it.
type lazy[T any] struct {
	mu   sync.Mutex
	c    T
	made bool
}

// get returns the client, making it with make the first time; what names
// it in an error.
func (l *lazy[T]) get(what string, make func() (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.made {
		c, err := make()
		if err != nil {
			var zero T
			return zero, fmt.Errorf("gcp: %s client: %w", what, err)
		}
		l.c, l.made = c, true
	}
	return l.c, nil
}

// close closes the client if it was made and has a Close.
func (l *lazy[T]) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := any(l.c).(io.Closer); ok && l.made {
		return c.Close()
	}
	return nil
}

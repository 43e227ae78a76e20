package providers

import (
	"sync"

	"github.com/infra-iac/infra/spec"
)

// Drivers are a backend's drivers, each made once, on first use, from the
// backend's registry of kinds. The zero value is ready.
type Drivers struct {
	mu   sync.Mutex
	made map[spec.Kind]Driver
}

// Get returns kind k's driver, made by make the first time; make answers
// false for a kind the backend has no driver for.
func (s *Drivers) Get(k spec.Kind, make func() (Driver, bool)) (Driver, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.made[k]; ok {
		return d, true
	}
	d, ok := make()
	if !ok {
		return nil, false
	}
	if s.made == nil {
		s.made = map[spec.Kind]Driver{}
	}
	s.made[k] = d
	return d, true
}

// Made returns the drivers made so far.
func (s *Drivers) Made() []Driver {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Driver, 0, len(s.made))
	for _, d := range s.made {
		out = append(out, d)
	}
	return out
}

package engine

import (
	"context"

	"github.com/infra-iac/infra/internal/walk"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// service names the rate-limit domain of a kind: the backend's service
// (EC2 for security groups and instances alike) when it says, else the
// kind's physical class (object-store and s3-bucket are one S3).
func (e *Engine) service(p spec.Provider, k spec.Kind) string {
	if s, ok := e.opts.Backends[p].(providers.Services); ok {
		if name := s.Service(k); name != "" {
			return string(p) + "/" + name
		}
	}
	return string(p) + "/" + spec.PhysicalClass(p, k)
}

// job is one unit of bounded work on a service.
type job struct {
	service string
	do      func(ctx context.Context) error
}

// runBounded runs jobs with at most Parallelism running overall and at
// most PerService on any one service, the first error cancelling the rest.
// It is a walk of a graph without edges: a service at its bound waits
// without holding a slot another service could use, and no more
// goroutines run than jobs do.
func (e *Engine) runBounded(ctx context.Context, jobs []job) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	steps := make([]walk.Step, len(jobs))
	for i, j := range jobs {
		steps[i] = walk.Step{Service: j.service}
	}
	var first error
	walk.New(walk.Config{
		Steps: steps, Parallelism: e.opts.Parallelism, PerService: e.opts.PerService,
		Run:  func(ctx context.Context, i int) error { return jobs[i].do(ctx) },
		Stop: func() bool { return ctx.Err() != nil },
		Settled: func(_ int, r walk.Result) {
			if r.State == walk.Failed && first == nil {
				first = r.Err
				cancel()
			}
		},
	}).Walk(ctx)
	if first != nil {
		return first
	}
	return ctx.Err()
}

package engine

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

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
// Each service gets its own few workers, which take an overall slot only
// for the call itself: a service at its bound waits without holding a
// slot another service could use, and the number of goroutines stays
// services × PerService however many jobs there are.
func (e *Engine) runBounded(ctx context.Context, jobs []job) error {
	byService := map[string][]job{}
	var order []string
	for _, j := range jobs {
		if _, seen := byService[j.service]; !seen {
			order = append(order, j.service)
		}
		byService[j.service] = append(byService[j.service], j)
	}
	slots := make(chan struct{}, e.opts.Parallelism)
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range order {
		queue := byService[s]
		var mu sync.Mutex
		next := 0
		take := func() (job, bool) {
			mu.Lock()
			defer mu.Unlock()
			if next == len(queue) {
				return job{}, false
			}
			next++
			return queue[next-1], true
		}
		workers := min(e.opts.PerService, len(queue))
		for w := 0; w < workers; w++ {
			g.Go(func() error {
				for {
					j, ok := take()
					if !ok {
						return nil
					}
					select {
					case slots <- struct{}{}:
					case <-gctx.Done():
						return gctx.Err()
					}
					err := j.do(gctx)
					<-slots
					if err != nil {
						return err
					}
				}
			})
		}
	}
	return g.Wait()
}

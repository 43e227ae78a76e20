package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// concResult is the fresh apply of independent resources at two
// parallelisms, run after run.
type concResult struct {
	n       int
	latency time.Duration
	// wall[p] lists the apply's wall time at parallelism p, per run.
	wall  map[int][]time.Duration
	calls map[int][]int
}

// parallelisms are compared: the engine's default, and one at a time.
var parallelisms = []int{8, 1}

// measureConcurrency applies the same n independent resources with the
// same engine at each parallelism, alternating which goes first so that
// neither always meets a warmer emulator. With latency, every call goes
// through a proxy that adds that round trip, as a real region would.
func measureConcurrency(ctx context.Context, srv *moto.Server, work string, n, runs int, latency time.Duration) (*concResult, error) {
	endpoint := srv.URL
	if latency > 0 {
		p, err := faultproxy.Start(srv.URL, faultproxy.Options{Delay: latency})
		if err != nil {
			return nil, err
		}
		defer p.Close()
		endpoint = p.URL
	}
	os.Setenv("AWS_ENDPOINT_URL", endpoint)
	defer os.Setenv("AWS_ENDPOINT_URL", srv.URL)

	doc := independentDocument(n)
	m, diags := spec.Compile(doc)
	if spec.HasErrors(diags) {
		return nil, fmt.Errorf("the independent fleet does not compile: %v", diags)
	}
	res := &concResult{n: n, latency: latency, wall: map[int][]time.Duration{}, calls: map[int][]int{}}
	for r := 0; r < runs; r++ {
		order := parallelisms
		if r%2 == 1 {
			order = []int{parallelisms[1], parallelisms[0]}
		}
		for _, par := range order {
			wall, calls, err := applyOnce(ctx, srv, m, filepath.Join(work, fmt.Sprintf("conc-%d-%d-%d", latency, r, par)), par)
			if err != nil {
				return nil, fmt.Errorf("parallelism %d: %w", par, err)
			}
			fmt.Fprintf(os.Stderr, "  latency %s run %d parallelism %d: %s, %d calls\n", latency, r+1, par, wall.Round(time.Millisecond), calls)
			res.wall[par] = append(res.wall[par], wall)
			res.calls[par] = append(res.calls[par], calls)
		}
	}
	return res, nil
}

// applyOnce plans and applies m on an emptied emulator and times the
// apply alone.
func applyOnce(ctx context.Context, srv *moto.Server, m *spec.Model, dir string, parallelism int) (time.Duration, int, error) {
	if err := srv.Reset(); err != nil {
		return 0, 0, err
	}
	c := newCounter()
	b, err := awsprovider.New(ctx, awsprovider.Options{ConfigOptions: []func(*config.LoadOptions) error{c.option()}})
	if err != nil {
		return 0, 0, err
	}
	store, err := state.OpenFile(dir, m.Fleet)
	if err != nil {
		return 0, 0, err
	}
	e := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}, Parallelism: parallelism})
	p, err := e.Plan(ctx, m, nil, nil, engine.PlanOptions{})
	if err != nil {
		return 0, 0, err
	}
	if p.Summary.Create != len(m.Resources) {
		return 0, 0, fmt.Errorf("the plan creates %d of %d", p.Summary.Create, len(m.Resources))
	}
	before := total(c.Ops)
	start := time.Now()
	if _, err := e.Apply(ctx, p, engine.ApplyOptions{Store: store}); err != nil {
		return 0, 0, err
	}
	return time.Since(start), total(c.Ops) - before, nil
}

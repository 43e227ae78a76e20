package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// runChild is the measured process: the infra command line itself
// (cli.RunWith), whose AWS backend counts every call through SDK
// middleware. The counts go to countsFile when the command ends, and the
// parent reads this process's peak RSS from the kernel. With
// BENCH_CPUPROFILE set to a folder, each command writes its CPU profile
// there, named by its process id, for go tool pprof.
func runChild(countsFile string, args []string) int {
	if dir := os.Getenv("BENCH_CPUPROFILE"); dir != "" {
		stop, err := profileCPU(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 1
		}
		defer stop()
	}
	c := newCounter()
	f := &cli.Factory{
		IO:     cli.System(),
		Getenv: os.Getenv,
		Backends: func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
			out := map[spec.Provider]providers.Backend{}
			why := map[spec.Provider]string{}
			for _, p := range ps {
				if p != spec.AWS {
					why[p] = "the benchmark reaches AWS only"
					continue
				}
				b, err := awsprovider.New(ctx, awsprovider.Options{ConfigOptions: []func(*config.LoadOptions) error{c.option()}})
				if err != nil {
					return nil, nil, err
				}
				out[p] = b
			}
			return out, why, nil
		},
		Store: func(ctx context.Context, location, fleet string) (state.Store, error) {
			return state.OpenFile(location, fleet)
		},
		Synth: func(ctx context.Context, dir string) ([]byte, error) {
			return nil, fmt.Errorf("the benchmark passes a document, not a fleet program")
		},
	}
	code := cli.RunWith(f, args, nil)
	b, err := json.Marshal(c)
	if err == nil {
		err = os.WriteFile(countsFile, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: write the counts: %v\n", err)
		return 1
	}
	return code
}

func profileCPU(dir string) (stop func(), err error) {
	f, err := os.Create(fmt.Sprintf("%s/cpu-%d.pprof", dir, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("the CPU profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
